/**
 * The provider contract: what Colloquy needs from whatever carries its messages to WhatsApp. Two
 * are built in (the seed provider's relay, `createHttpAdapter`; Meta's Cloud API,
 * `createCloudApiProvider`); a team can bring its own and hand it to `startServer` or the runtime.
 * The conformance kit in `colloquy/testing` (`describeProvider`) checks one against this contract.
 *
 * A plain {@link SendAdapter} (only `send` and `close`) is read as the seed provider: seed-shaped
 * requests for lists, buttons and flows, text by SMS, no templates, no window, no read receipts.
 */
import type { Message } from '../messages/message.js';
import type { FailureClass, SendAdapter, SendResult } from './types.js';

/** What a provider can carry and what rules it keeps. */
export interface ProviderFeatures {
  /** Plain text goes on the WhatsApp channel (`type: text`); false: text goes by SMS. */
  readonly text: boolean;
  /** Template messages can be sent. */
  readonly templates: boolean;
  /** The provider refuses free-form messages 24 h after the user last wrote (131047); Colloquy applies the bot's window policy before sending. */
  readonly window: boolean;
  /** `markRead` marks an inbound message read (with a typing indicator). */
  readonly readReceipts: boolean;
  /** An SMS channel is configured (`channel: 'sms'` sends work); false: the SMS fallback is off. */
  readonly sms: boolean;
}

/** Who a WhatsApp-channel message goes from and to. */
export interface ProviderAddress {
  /** The user's number, digits only. */
  readonly to: string;
  /** The business number the bot sends from, digits only (the seed's `from`). */
  readonly from: string;
  /** The conversation's flow token, for a flow message left with the placeholder. */
  readonly flowToken?: string | undefined;
}

/** Marking one inbound message read. */
export interface ReadReceipt {
  /** The provider's id of the user's message (`wamid…`). */
  readonly messageId: string;
  /** The business number it was written to, digits only. */
  readonly from: string;
  /** The Cloud API `phone_number_id` it came to, when known. */
  readonly numberId?: string | undefined;
  /** Show the typing indicator too (in the same call). */
  readonly typing: boolean;
}

/** A provider: a send adapter that also says how messages are built and what it supports. */
export interface Provider extends SendAdapter {
  /** A short name for logs, metrics and errors (`seed`, `cloud-api`, …). */
  readonly name: string;
  readonly features: ProviderFeatures;
  /**
   * The WhatsApp channel's request body for a message (any kind but `sms`), validated against the
   * provider's own limits. Throws MessageValidationError naming the field (`list.sections[0]…`)
   * when the message cannot go as it is; never called for a kind the features exclude.
   * The result is stored with the message and given back to `send()` as `Outbound.request`.
   */
  request(message: Message, address: ProviderAddress): unknown;
  /** Marks a message read (and shows the typing indicator); absent when `features.readReceipts` is false. Never throws. */
  markRead?: ((receipt: ReadReceipt) => Promise<SendResult>) | undefined;
  /**
   * What an error code in a `failed` delivery status means (statuses carry codes, no HTTP status);
   * absent or undefined: a permanent failure (the SMS fallback, then `delivery.failed`).
   */
  statusClass?: ((code: number | string | undefined) => FailureClass | undefined) | undefined;
}

export type { FailureClass } from './types.js';

/** True for an adapter that declares itself a {@link Provider}. */
export function isProvider(a: SendAdapter): a is Provider {
  return typeof (a as Partial<Provider>).request === 'function' && typeof (a as Partial<Provider>).features === 'object';
}
