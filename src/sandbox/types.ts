/** The sandbox's data: what it records, what it answers, and how it is configured. */
import type { InteractiveRequest, SmsRequest } from '../messages/schema.js';
import type { CloudApiOptions } from './cloud/types.js';

/** The provider endpoints the sandbox serves. */
export type SandboxEndpoint = 'token' | 'messaging' | 'sms' | 'cloud-api';

/** An endpoint a fault applies to; `any` matches every one. */
export type FaultTarget = SandboxEndpoint | 'any';

/** A clock, so token expiry can be tested with fake time (milliseconds since the epoch). */
export interface SandboxClock {
  now(): number;
}

/** One request the sandbox received on a provider endpoint. */
export interface RecordedRequest {
  /** Order of arrival, from 1. */
  readonly seq: number;
  readonly endpoint: SandboxEndpoint;
  readonly method: string;
  /** The route's path relative to the sandbox (`/token`), whatever prefix it is mounted under. */
  readonly path: string;
  /** The URL as received, with the mount prefix and query. */
  readonly url: string;
  /** Lower-case header names; `Authorization` redacted (`Bearer <redacted>`). */
  readonly headers: Readonly<Record<string, string>>;
  /** The body: parsed JSON, form fields (`client_secret` redacted), text, or undefined. */
  readonly body: unknown;
  /** The HTTP status answered; 0 while the request is still being handled. */
  status: number;
  /** What was answered. */
  response?: unknown;
  /** Set when an injected fault produced the answer (`status`, `rate-limit`, `sms-error`, `refused`). */
  fault?: string;
  /** When it arrived, by the sandbox's clock. */
  readonly at: number;
}

/** An interactive message the sandbox accepted. */
export interface AcceptedInteractive {
  readonly seq: number;
  readonly channel: 'interactive';
  readonly from: string;
  readonly to: string;
  readonly request: InteractiveRequest;
  /** The `wamid.…` id answered. */
  readonly providerId: string;
  readonly at: number;
}

/**
 * A message the sandbox accepted on its Cloud API endpoint (`POST /cloud/{version}/{phone_number_id}/messages`):
 * text, template, list, buttons or flow, as the Cloud API shapes them.
 */
export interface AcceptedCloud {
  readonly seq: number;
  readonly channel: 'cloud-api';
  /** The `phone_number_id` in the URL. */
  readonly numberId: string;
  /** The display number of that phone_number_id (the business number the user sees). */
  readonly from: string;
  readonly to: string;
  /** The Cloud API `type`: `text`, `template`, `interactive`, …; for interactive, `interactive.type` too (`interactive:list`). */
  readonly type: string;
  /** The request body as received (without `messaging_product`'s noise removed: exactly as sent). */
  readonly request: Readonly<Record<string, unknown>>;
  /** The `wamid.…` id answered. */
  readonly providerId: string;
  readonly at: number;
}

/** A read receipt (`status: "read"`) the sandbox accepted: the bot marked a user's message read. */
export interface AcceptedRead {
  readonly seq: number;
  readonly numberId: string;
  /** The user's message it marks read. */
  readonly messageId: string;
  /** The user who wrote it, when the sandbox delivered that message. */
  readonly user: string | undefined;
  /** Whether a typing indicator was asked for. */
  readonly typing: boolean;
  readonly at: number;
}

/** An SMS the sandbox accepted, one record per recipient of the mailing. */
export interface AcceptedSms {
  readonly seq: number;
  readonly channel: 'sms';
  readonly to: string;
  readonly text: string;
  readonly request: SmsRequest;
  /** The mailing id, as a string. */
  readonly providerId: string;
  readonly mailingId: number;
  readonly at: number;
}

/** A message the sandbox accepted. */
export type SandboxMessage = AcceptedInteractive | AcceptedCloud | AcceptedSms;

/** An answer to give: status, JSON body and extra headers. */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** The fault that produced this answer, if any. */
  readonly fault?: string | undefined;
}

/** A request as the endpoint handlers see it, its body parsed once. */
export interface IncomingRequest {
  /** Lower-case header names, raw values. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The content type's media type, lower case and without parameters; '' when absent. */
  readonly mediaType: string;
  /** Parsed JSON (for JSON), fields (for a form), text (otherwise) or undefined (no body). */
  readonly body: unknown;
  /** Set when a JSON body does not parse. */
  readonly jsonError?: string | undefined;
}

/** Where {@link Sandbox.deliver} posts simulated inbound traffic. */
export interface WebhookTarget {
  /** The Cloud API webhook (`POST /webhook` of `colloquy serve`). */
  readonly url: string;
  /** The inbound SMS webhook; defaults to `url` + `/sms`. */
  readonly smsUrl?: string | undefined;
  /** The HMAC key for `X-Hub-Signature-256`; unsigned when absent. */
  readonly secret?: string | undefined;
}

/** What {@link createSandbox} accepts. Everything is optional. */
export interface SandboxOptions {
  /** Accepted client id (default `sandbox-client`). */
  readonly clientId?: string | undefined;
  /** Accepted client secret (default `sandbox-secret`). */
  readonly clientSecret?: string | undefined;
  /** The business account's number, used in webhook metadata (default `15550000001`). */
  readonly sender?: string | undefined;
  /** When set, `from` must be one of these; by default any well-formed sender is accepted. */
  readonly senders?: readonly string[] | undefined;
  /** Lifetime of issued tokens in seconds (default 600). */
  readonly tokenLifetimeSeconds?: number | undefined;
  /** The clock for token expiry and timestamps (default `Date.now`). */
  readonly clock?: SandboxClock | undefined;
  /** How injected latency waits (default a real timer). */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Where simulated inbound traffic goes. */
  readonly webhook?: WebhookTarget | undefined;
  /** Webhook metadata `phone_number_id`. */
  readonly phoneNumberId?: string | undefined;
  /** Webhook entry id (the WhatsApp Business Account). */
  readonly businessAccountId?: string | undefined;
  /** Recorded requests and messages kept (oldest dropped first; default 10,000 each). */
  readonly maxRecords?: number | undefined;
  /** The fetch used for deliveries (default the global one). */
  readonly fetch?: typeof fetch | undefined;
  /** Deliveries give up after this many milliseconds (default 10,000). */
  readonly deliveryTimeoutMs?: number | undefined;
  /**
   * Mount the unauthenticated control routes (`/_sandbox/*`: records, faults, deliver) on `router`
   * (default true). Turn them off where others can reach the router.
   */
  readonly controlRoutes?: boolean | undefined;
  /**
   * The Cloud API mode (`POST /cloud/{version}/{phone_number_id}/messages`, always served): its
   * token, numbers, templates and 24-hour window.
   */
  readonly cloudApi?: CloudApiOptions | undefined;
}
