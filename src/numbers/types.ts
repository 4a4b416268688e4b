/**
 * Several numbers in one deployment (COLLOQUY_NUMBERS_FILE): per WhatsApp number its bot, its
 * provider, its credentials, its app secret and its pace. Loaded and validated at start.
 */

/** One number, resolved: secrets read from the environment, defaults filled in. */
export interface NumberConfig {
  /** The Cloud API `phone_number_id` (digits); inbound is routed by it. */
  readonly phoneNumberId: string;
  /** The number users write to, digits only (`display_phone_number`); the bot's `from`. */
  readonly displayNumber: string;
  /** The id of the bot that answers on this number. */
  readonly bot: string;
  /** The provider this number is reached through. */
  readonly provider: 'cloud-api' | 'seed';
  /** The Cloud API access token of this number (undefined: COLLOQUY_CLOUD_API_TOKEN). */
  readonly token?: string | undefined;
  /** Where the token came from, for errors that must name it without showing it: `numbers[1].tokenEnv (ACME_TOKEN)`. */
  readonly tokenName: string;
  /** The app secret that signs webhooks for this number (undefined: COLLOQUY_WEBHOOK_SECRET). */
  readonly appSecret?: string | undefined;
  /** Messages per second from this number (default 80; 1,000 for an upgraded number). */
  readonly sendRate: number;
  /** The least time between two messages to one user from this number, in ms (default 0: unpaced until WhatsApp answers 131056). */
  readonly userPaceMs: number;
  /**
   * This number's own Flow endpoint key (`POST /flows/{phoneNumberId}`): its PEM file, its
   * passphrase, and the fields to name in errors. Undefined: the default key (COLLOQUY_FLOW_PRIVATE_KEY).
   */
  readonly flowKey?: { readonly path: string; readonly passphrase: string | undefined; readonly names: { readonly key: string; readonly passphrase: string } } | undefined;
}

/** The numbers file, loaded. */
export interface NumbersConfig {
  /** The file's path, for messages. */
  readonly file: string;
  readonly numbers: readonly NumberConfig[];
}

/** The default send rate of a number (Meta: 80 messages/s; 1,000 once upgraded). */
export const DEFAULT_NUMBER_SEND_RATE = 80;
