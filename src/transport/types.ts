/**
 * The send adapter's contract. The conversation runtime sees only this interface; the HTTP
 * implementation (undici, OAuth token, retries) lives beside it.
 */
import type { InteractiveRequest, SmsRequest } from '../messages/schema.js';

/** Why a send failed, by what should follow (set by providers that know; undefined: decide by `kind`). */
export type FailureClass =
  /** The credentials were refused (401, Cloud API 190): a configuration error, never retried. */
  | 'auth'
  /** The sending number's throughput limit (130429): wait, pace the number, retry. */
  | 'throughput'
  /** Too many messages to this user (131056): pace this user only, retry. */
  | 'pair-rate'
  /** Outside the 24-hour window (131047): the bot's window policy. */
  | 'window'
  /** The user cannot receive it (131026): the SMS fallback. */
  | 'undeliverable'
  /** A parameter the provider refused (100, 131009, …): fail with the provider's explanation. */
  | 'invalid'
  /** Something went wrong on the way (131000, 5xx, network): retry with backoff. */
  | 'transient';

/** The two provider channels. */
export type Channel = 'interactive' | 'sms';

/** One thing to deliver: a validated request body for one channel. */
export type Outbound =
  | {
      readonly channel: 'interactive';
      /** The WhatsApp channel's body as the provider's `request()` built it (the seed's envelope for the seed provider). */
      readonly request: InteractiveRequest | Record<string, unknown>;
      /** The Cloud API `phone_number_id` to send from, when the runtime knows it (a bot's `phoneNumberId`, the numbers file, the last inbound). */
      readonly numberId?: string | undefined;
      /** The business number sending it, digits only. */
      readonly from?: string | undefined;
    }
  | { readonly channel: 'sms'; readonly request: SmsRequest };

/** What the SMS endpoint answered (provider.md §1.3). */
export interface SmsOutcome {
  readonly code: number;
  readonly mailingId: string | number | null;
  readonly result: string | null;
}

/** The provider accepted the message. */
export interface SendAccepted {
  readonly ok: true;
  readonly channel: Channel;
  readonly status: number;
  /** The provider's identifier, when its answer holds one (`id`, `messageId`, `mailingId`, `messages[0].id`). */
  readonly providerId: string | undefined;
  /** The answer's body, parsed when JSON. */
  readonly raw: unknown;
  /** For SMS: `code`, `mailingId`, `result`. */
  readonly sms?: SmsOutcome | undefined;
  /** How many HTTP attempts it took (1 when the first succeeded). */
  readonly attempts: number;
}

/** The message was not accepted. */
export interface SendFailed {
  readonly ok: false;
  readonly channel: Channel;
  /** `retryable`: worth trying later (408, 429, 5xx, network, SMS code 19); `permanent`: not. */
  readonly kind: 'permanent' | 'retryable';
  /** HTTP status, when an answer came. */
  readonly status?: number | undefined;
  /** The provider's code: the SMS `code`, or a Meta-style `error.code` (131047, …), or an OAuth `error`. */
  readonly providerCode?: number | string | undefined;
  /** Why, for a person; never holds a secret or a token. */
  readonly reason: string;
  /** The provider's hint (SMS failures carry one). */
  readonly hint?: string | undefined;
  /** The answer's body, parsed when JSON. */
  readonly raw?: unknown;
  readonly attempts: number;
  /** When the provider said when to come back (`Retry-After`). */
  readonly retryAfterMs?: number | undefined;
  /** True when the failure is our credentials (a configuration error). */
  readonly auth?: boolean | undefined;
  /** What should follow, when the provider knows (Cloud API error classes); see {@link FailureClass}. */
  readonly class?: FailureClass | undefined;
}

export type SendResult = SendAccepted | SendFailed;

/** Delivers messages to the provider. */
export interface SendAdapter {
  /** Sends one message on its channel, with the adapter's own bounded retries. Never throws for a
   *  provider or network failure: that is a {@link SendFailed}. */
  send(outbound: Outbound, options?: { signal?: AbortSignal }): Promise<SendResult>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** What the transport reports as it works, for metrics and logs. */
export type TransportEvent =
  | { readonly type: 'token.request'; readonly ok: boolean; readonly ms: number; readonly status?: number | undefined }
  | {
      readonly type: 'retry';
      readonly endpoint: 'token' | 'messaging' | 'sms' | 'cloud-api';
      readonly attempt: number;
      readonly delayMs: number;
      readonly status?: number | undefined;
      readonly reason: string;
    }
  | { readonly type: 'send'; readonly channel: Channel; readonly ok: boolean; readonly ms: number; readonly status?: number | undefined };

/** A clock, so tests can use fake time. */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
