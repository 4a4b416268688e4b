/**
 * What Colloquy's own inbounds carry about where they came from: a due timer, a failed delivery, a
 * handoff's release. They are written into the inbox's `raw` column (the column a provider's
 * payload takes for the user's messages), encoded here, and decoded here once when a row is read,
 * so the runtime reads typed fields (`inbound.timer`, `inbound.delivery`, `inbound.release`) and
 * never casts `raw`. A row whose `raw` does not have the shape (written by hand, or by a caller
 * passing its own `raw` with such a source) gets no field: it is treated as carrying no facts.
 */
/** A due timer that fired into the inbox. */
export interface TimerFired {
  /** The timer's key (an XState delay's id, or the handoff's timeout). */
  readonly key: string;
  /** When it was due: a handoff's timeout is current only while this is the handoff's `timeoutAt`. */
  readonly fireAt: number;
  /** The conversation that set it; a new conversation of the same user does not get its events. */
  readonly conversationId: number;
}

/** A send that failed, reported to the bot as `delivery.failed`. */
export interface DeliveryFailed {
  /** The conversation whose message failed. */
  readonly conversationId: number;
  /** The outbox row that failed (absent on rows written without it). */
  readonly outboxId?: number | undefined;
}

/** A handoff an agent released, reported to the bot as `handoff.ended` (the handoff stores write its `raw`). */
export interface HandoffReleased {
  readonly conversationId: number;
  readonly handoffId?: number | undefined;
}

/** The typed facts of one inbox row (each present only for its source). */
export interface InboundFacts {
  readonly timer?: TimerFired;
  readonly delivery?: DeliveryFailed;
  readonly release?: HandoffReleased;
}

/** The `raw` a fired timer's inbound is stored with. */
export function timerRaw(t: TimerFired): unknown {
  return { key: t.key, fireAt: t.fireAt, conversationId: t.conversationId };
}

/** The `raw` a delivery failure's inbound is stored with. */
export function deliveryRaw(d: DeliveryFailed): unknown {
  return { conversationId: d.conversationId, outbox: d.outboxId };
}

/** Decodes the facts an inbox row of `source` (an `InboundSource`) carries in its (parsed) `raw`. */
export function decodeFacts(source: string, raw: unknown): InboundFacts {
  if (source !== 'timer' && source !== 'delivery' && source !== 'internal') return NONE;
  if (typeof raw !== 'object' || raw === null) return NONE;
  const r = raw as Record<string, unknown>;
  const conversationId = r['conversationId'];
  if (!isId(conversationId)) return NONE;
  if (source === 'timer') {
    const { key, fireAt } = r;
    return typeof key === 'string' && isTime(fireAt) ? { timer: { key, fireAt, conversationId } } : NONE;
  }
  if (source === 'delivery') return { delivery: { conversationId, ...(isId(r['outbox']) && { outboxId: r['outbox'] }) } };
  return { release: { conversationId, ...(isId(r['handoffId']) && { handoffId: r['handoffId'] }) } };
}

const NONE: InboundFacts = Object.freeze({});

const isId = (v: unknown): v is number => Number.isSafeInteger(v);
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/**
 * The Cloud API `phone_number_id` a user's WhatsApp message was written to: the webhook keeps its
 * change's `metadata` in the message's `raw`. Undefined for any other `raw`.
 */
export function numberIdOf(raw: unknown): string | undefined {
  const id = (raw as { metadata?: { phone_number_id?: unknown } } | null | undefined)?.metadata?.phone_number_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}
