/**
 * The sandbox provider's defaults, its route paths and the provider's documented SMS codes
 * (provider.md §1.3). A client configured with these talks to the sandbox out of the box.
 */

/** The API key client id the sandbox accepts unless told otherwise. */
export const SANDBOX_CLIENT_ID = 'sandbox-client';

/** The API key secret the sandbox accepts unless told otherwise. */
export const SANDBOX_CLIENT_SECRET = 'sandbox-secret';

/** The sender number (`from`) of the sandbox's business account. */
export const SANDBOX_SENDER = '15550000001';

/** The `phone_number_id` the sandbox puts in webhook metadata. */
export const SANDBOX_PHONE_NUMBER_ID = '100000000000001';

/** The WhatsApp Business Account id the sandbox puts in webhook entries. */
export const SANDBOX_BUSINESS_ACCOUNT_ID = '200000000000001';

/** Token lifetime in seconds: "about 10 minutes" (seed §4.2). */
export const SANDBOX_TOKEN_LIFETIME_SECONDS = 600;

/** The provider routes, relative to where the sandbox's router is mounted. */
export const SANDBOX_PATHS = {
  /** `{auth_url}/token` */
  token: '/token',
  /** `{base_url}/messaging-bsp-api-endpoint-ws/services/v1/messaging` */
  messaging: '/messaging-bsp-api-endpoint-ws/services/v1/messaging',
  /** `{base_url}/services/messaging` */
  sms: '/services/messaging',
  /** `{cloud base URL}` without the version: messages go to `/cloud/{version}/{phone_number_id}/messages`. */
  cloud: '/cloud',
  /** The sandbox's own control routes (not the provider's). */
  control: '/_sandbox',
} as const;

/** The access token the Cloud API mode accepts unless told otherwise (`Authorization: Bearer …`). */
export const SANDBOX_CLOUD_API_TOKEN = 'sandbox-cloud-api-token';

/** The Graph API version the sandbox suggests; any `v{major}.{minor}` is accepted. */
export const SANDBOX_CLOUD_API_VERSION = 'v23.0';

/** The customer service window: 24 hours, in milliseconds. */
export const SANDBOX_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Meta's "Re-engagement message" error: more than 24 h since the user last wrote. */
export const REENGAGEMENT_ERROR_CODE = 131047;

/** The details Meta gives with {@link REENGAGEMENT_ERROR_CODE}. */
export const REENGAGEMENT_DETAILS = 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.';

/** The SMS endpoint's documented result codes (provider.md §1.3), by absolute value. */
export const SMS_ERROR_CODES: Readonly<Record<number, { readonly message: string; readonly hint: string }>> = {
  1: { message: 'Unauthorized', hint: 'The request carries no valid credentials' },
  2: { message: 'Missing configuration', hint: 'The account is not configured for SMS' },
  3: { message: 'Bad authentication', hint: 'The access token is invalid or expired' },
  4: { message: 'Required field empty', hint: 'msisdns is empty' },
  5: { message: 'Required field empty', hint: 'message is empty' },
  6: { message: 'Required field empty', hint: 'tag is empty' },
  7: { message: 'Required field empty', hint: 'country is empty' },
  8: { message: 'Required field empty', hint: 'dial is empty' },
  9: { message: 'Required field empty', hint: 'a required field is empty' },
  10: { message: 'Bad schedule', hint: 'The schedule date is not valid' },
  11: { message: 'Bad schedule', hint: 'The schedule date is in the past' },
  12: { message: 'Invalid dial', hint: 'The dial is not valid' },
  13: { message: 'Bad request format', hint: 'The request body does not have the expected format' },
  14: { message: 'Client not found', hint: 'No client matches these credentials' },
  15: { message: 'Insufficient credit', hint: 'The account has no credit left for this mailing' },
  16: { message: 'Multiple accounts', hint: 'The credentials match more than one account' },
  17: { message: 'Country or carrier not found', hint: 'No route to this country or carrier' },
  18: { message: 'Dial not assigned', hint: 'The dial is not assigned to this account' },
  19: { message: 'Server error', hint: 'Try again later' },
};

/** The provider's message and hint for an SMS code (negative codes mean the same as positive). */
export function smsErrorText(code: number): { message: string; hint: string } {
  return SMS_ERROR_CODES[Math.abs(code)] ?? { message: 'Error', hint: `Provider code ${code}` };
}
