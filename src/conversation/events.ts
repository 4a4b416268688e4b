/**
 * The events a bot's machine receives (architecture.md §2). Plain objects, JSON-safe, so they
 * can be stored in the inbox before their turn runs.
 */

/** How a reply arrived. */
export type ReplyVia = 'button' | 'list' | 'sms' | 'template';

/** A tap on a reply button or list row with id `X` (or its number typed by SMS): `reply.X`. */
export interface ReplyEvent<TId extends string = string> {
  readonly type: `reply.${TId}`;
  readonly id: TId;
  readonly title: string;
  readonly via: ReplyVia;
}

/** Free text typed by the user (WhatsApp or SMS). */
export interface TextEvent {
  readonly type: 'text';
  readonly text: string;
  readonly via?: 'whatsapp' | 'sms';
}

/** A completed flow; `data` is the flow's answers parsed from `response_json`. */
export interface FlowEvent<TData extends Record<string, unknown> = Record<string, unknown>> {
  readonly type: 'flow';
  readonly token: string;
  readonly data: TData;
}

/** A message that could not be delivered (after retries and any fallback). */
export interface DeliveryFailedEvent {
  readonly type: 'delivery.failed';
  readonly channel: 'interactive' | 'sms';
  readonly reason: string;
  readonly code?: string | number | undefined;
  readonly hint?: string | undefined;
  /** The outbox row of the message. */
  readonly messageId: number;
}

/**
 * A message was not sent, for a reason the bot routes: `window`, the 24-hour customer-service
 * window was closed (the bot's window policy says `'event'`, or the provider refused with 131047).
 */
export interface SendFailedEvent {
  readonly type: 'send.failed';
  readonly reason: 'window';
  /** The outbox row of the message that was not sent. */
  readonly messageId: number;
  /** The message's kind (`text`, `list`, …). */
  readonly kind: string;
  /** The provider's code, when it refused (131047). */
  readonly code?: string | number | undefined;
  /** When the user last wrote on WhatsApp (ms since the epoch), if ever. */
  readonly lastUserMessageAt?: number | undefined;
}

/** An inbound of a type Colloquy does not turn into an event (image, location, …). */
export interface UnsupportedEvent {
  readonly type: 'unsupported';
  readonly messageType: string;
}

/** An agent released the conversation after a handoff: the bot takes over again. */
export interface HandoffEndedEvent {
  readonly type: 'handoff.ended';
  /** The agent who released it. */
  readonly by: string;
  /** The agent's note, if any. */
  readonly note?: string | undefined;
}

/** No agent claimed the handoff within its timeout: the bot takes over again. */
export interface HandoffTimeoutEvent {
  readonly type: 'handoff.timeout';
  /** How long it waited (its timeout). */
  readonly waitedMs: number;
  readonly reason?: string | undefined;
  readonly queue?: string | undefined;
}

/** Every event Colloquy sends to a machine (besides XState's own timer events). */
export type ColloquyEvent = ReplyEvent | TextEvent | FlowEvent | DeliveryFailedEvent | SendFailedEvent | UnsupportedEvent | HandoffEndedEvent | HandoffTimeoutEvent;

/** Builds a `reply.<id>` event. */
export function replyEvent(id: string, title: string, via: ReplyVia): ReplyEvent {
  return { type: `reply.${id}`, id, title, via };
}

/** True for events that come from the user (and so count as activity, and get a re-prompt when unhandled). */
export function isUserEvent(e: { type: string }): boolean {
  return e.type.startsWith('reply.') || e.type === 'text' || e.type === 'flow' || e.type === 'unsupported';
}
