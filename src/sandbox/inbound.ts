/**
 * Pure builders of what the webhook receives (provider.md §2): Cloud API messages and statuses,
 * the envelope that carries them, and our inbound SMS format. Timestamps are taken in
 * milliseconds and written as the Cloud API does, whole seconds in a string.
 */
import { randomBytes } from 'node:crypto';
import { REENGAGEMENT_DETAILS, SANDBOX_BUSINESS_ACCOUNT_ID, SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER } from './constants.js';

export { SIGNATURE_HEADER, signBody, verifySignature } from './signature.js';

/** What every inbound message builder takes. */
export interface InboundInit {
  /** The user's number, digits only. */
  readonly from: string;
  /** The message id (default a fresh `wamid.…`). */
  readonly id?: string | undefined;
  /** When it was sent, in milliseconds (default now). */
  readonly at?: number | undefined;
  /** The message replied to: a tap on a button or row carries the id of the message that showed it. */
  readonly context?: { readonly from: string; readonly id: string } | undefined;
}

/** A Cloud API inbound message. */
export interface CloudMessage {
  readonly from: string;
  readonly id: string;
  readonly timestamp: string;
  readonly type: string;
  readonly context?: { readonly from: string; readonly id: string };
  readonly [field: string]: unknown;
}

/** A Cloud API delivery status. */
export interface CloudStatus {
  readonly id: string;
  readonly status: DeliveryStatus;
  readonly timestamp: string;
  readonly recipient_id: string;
  readonly errors?: readonly CloudError[];
}

/** The statuses a sent message goes through. */
export type DeliveryStatus = 'sent' | 'delivered' | 'read' | 'failed';

/** An error attached to a failed status. */
export interface CloudError {
  readonly code: number;
  readonly title: string;
  readonly message?: string | undefined;
  readonly error_data: { readonly details: string };
}

/** A fresh Cloud-API-looking message id. */
export function newMessageId(): string {
  return `wamid.${randomBytes(18).toString('base64url')}`;
}

/** Milliseconds to the Cloud API's timestamp: whole seconds, as a string. */
export function toTimestamp(ms: number): string {
  return String(Math.floor(ms / 1000));
}

function base(init: InboundInit, type: string): CloudMessage {
  return {
    from: init.from,
    id: init.id ?? newMessageId(),
    timestamp: toTimestamp(init.at ?? Date.now()),
    type,
    ...(init.context !== undefined && { context: { from: init.context.from, id: init.context.id } }),
  };
}

/** Free text typed by the user. */
export function textMessage(init: InboundInit & { readonly text: string }): CloudMessage {
  return { ...base(init, 'text'), text: { body: init.text } };
}

/** A tap on a reply button. */
export function buttonReplyMessage(init: InboundInit & { readonly buttonId: string; readonly title: string }): CloudMessage {
  return { ...base(init, 'interactive'), interactive: { type: 'button_reply', button_reply: { id: init.buttonId, title: init.title } } };
}

/**
 * A tap on a template's quick-reply button: `type: "button"` with the payload the template message
 * set for that button (its text when it set none), replying to the template message.
 */
export function templateButtonMessage(init: InboundInit & { readonly payload: string; readonly text: string }): CloudMessage {
  return { ...base(init, 'button'), button: { payload: init.payload, text: init.text } };
}

/** A choice of a list row. */
export function listReplyMessage(init: InboundInit & { readonly rowId: string; readonly title: string; readonly description?: string | undefined }): CloudMessage {
  const reply = { id: init.rowId, title: init.title, ...(init.description !== undefined && { description: init.description }) };
  return { ...base(init, 'interactive'), interactive: { type: 'list_reply', list_reply: reply } };
}

/** What {@link flowReplyMessage} takes. */
export interface FlowReplyInit extends InboundInit {
  readonly flowToken: string;
  /** The flow's answers. */
  readonly data?: Readonly<Record<string, unknown>> | undefined;
  /** `nfm_reply.name` (default `flow`). */
  readonly name?: string | undefined;
  /** `nfm_reply.body` (default `Sent`). */
  readonly body?: string | undefined;
}

/** A completed flow: `nfm_reply` whose `response_json` is a JSON string holding `flow_token`. */
export function flowReplyMessage(init: FlowReplyInit): CloudMessage {
  const responseJson = JSON.stringify({ flow_token: init.flowToken, ...init.data });
  const nfm = { name: init.name ?? 'flow', body: init.body ?? 'Sent', response_json: responseJson };
  return { ...base(init, 'interactive'), interactive: { type: 'nfm_reply', nfm_reply: nfm } };
}

/** What {@link imageMessage} takes. */
export interface ImageInit extends InboundInit {
  readonly mediaId?: string | undefined;
  readonly mimeType?: string | undefined;
  readonly caption?: string | undefined;
}

/** A photo sent by the user (a type bots receive as "unsupported"). */
export function imageMessage(init: ImageInit): CloudMessage {
  const image = {
    id: init.mediaId ?? randomBytes(8).readBigUInt64BE().toString(),
    mime_type: init.mimeType ?? 'image/jpeg',
    sha256: randomBytes(32).toString('base64'),
    ...(init.caption !== undefined && { caption: init.caption }),
  };
  return { ...base(init, 'image'), image };
}

/** What {@link statusUpdate} takes. */
export interface StatusInit {
  /** The provider id of the message the status is about. */
  readonly id: string;
  readonly status: DeliveryStatus;
  /** The number the message went to. */
  readonly recipient: string;
  readonly at?: number | undefined;
  /** For `failed`: the errors (default Meta's 131047 re-engagement error). */
  readonly errors?: readonly CloudError[] | undefined;
}

/** A delivery status of a message sent earlier. */
export function statusUpdate(init: StatusInit): CloudStatus {
  const errors = init.errors ?? (init.status === 'failed' ? [reengagementError()] : undefined);
  return {
    id: init.id,
    status: init.status,
    timestamp: toTimestamp(init.at ?? Date.now()),
    recipient_id: init.recipient,
    ...(errors !== undefined && { errors }),
  };
}

/** Meta's 131047 error as a status carries it. */
export function reengagementError(): CloudError {
  return { code: 131047, title: 'Re-engagement message', message: 'Re-engagement message', error_data: { details: REENGAGEMENT_DETAILS } };
}

/** The business account a webhook is about. */
export interface BusinessInit {
  /** `metadata.display_phone_number` (default the sandbox sender). */
  readonly displayPhoneNumber?: string | undefined;
  readonly phoneNumberId?: string | undefined;
  /** `entry[].id`. */
  readonly businessAccountId?: string | undefined;
}

/** What {@link webhookPayload} takes. */
export interface PayloadInit extends BusinessInit {
  readonly messages?: readonly CloudMessage[] | undefined;
  readonly statuses?: readonly CloudStatus[] | undefined;
  /** Profile names by number; each message's sender gets a contact (default name `Sandbox User`). */
  readonly names?: Readonly<Record<string, string>> | undefined;
}

/** The Cloud API webhook envelope around messages and statuses (one entry, one change). */
export function webhookPayload(init: PayloadInit): Record<string, unknown> {
  const messages = init.messages ?? [];
  const value = {
    messaging_product: 'whatsapp',
    metadata: { display_phone_number: init.displayPhoneNumber ?? SANDBOX_SENDER, phone_number_id: init.phoneNumberId ?? SANDBOX_PHONE_NUMBER_ID },
    ...(messages.length > 0 && { contacts: contactsOf(messages, init.names ?? {}), messages }),
    ...(init.statuses !== undefined && init.statuses.length > 0 && { statuses: init.statuses }),
  };
  return {
    object: 'whatsapp_business_account',
    entry: [{ id: init.businessAccountId ?? SANDBOX_BUSINESS_ACCOUNT_ID, changes: [{ field: 'messages', value }] }],
  };
}

function contactsOf(messages: readonly CloudMessage[], names: Readonly<Record<string, string>>): { profile: { name: string }; wa_id: string }[] {
  const numbers = [...new Set(messages.map((m) => m.from))];
  return numbers.map((n) => ({ profile: { name: names[n] ?? 'Sandbox User' }, wa_id: n }));
}

/** An inbound SMS in our format (provider.md §2). */
export interface InboundSms {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly text: string;
  readonly timestamp: string;
}

/** An SMS sent by the user to the business number. */
export function inboundSms(init: { readonly from: string; readonly text: string; readonly to?: string | undefined; readonly id?: string | undefined; readonly at?: number | undefined }): InboundSms {
  return {
    id: init.id ?? `sms.${randomBytes(12).toString('hex')}`,
    from: init.from,
    to: init.to ?? SANDBOX_SENDER,
    text: init.text,
    timestamp: toTimestamp(init.at ?? Date.now()),
  };
}
