/**
 * The helpdesk connector: POSTs handoff events (`handoff.started`, `.claimed`, `.message`,
 * `.ended`, `.timeout`) to `COLLOQUY_HANDOFF_WEBHOOK_URL`, signed, each with an id for dedupe. The
 * events wait in the store's durable event outbox; the runtime's worker claims them (in order per
 * handoff), hands each to {@link HandoffConnector.deliver} and records the outcome under its
 * claim, so a crash loses nothing: an event is marked sent only after the receiver answered 2xx,
 * and a dead process's events are taken over when its claims lapse.
 */
import { retryDelay } from '../conversation/backoff.js';
import { systemClock, type RuntimeClock } from '../conversation/clock.js';
import { errorInfo, silentLogger, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { HandoffEventOutcome, HandoffEventRecord } from '../store/types.js';
import { HANDOFF_SIGNATURE_HEADER, signHandoffEvent } from './signature.js';

/** What {@link HandoffConnector} takes. */
export interface HandoffConnectorOptions {
  /** Where events are POSTed. */
  readonly url: string;
  /** The HMAC key of the signature. */
  readonly secret: string;
  readonly clock?: RuntimeClock | undefined;
  readonly logger?: Logger | undefined;
  readonly metrics?: Metrics | undefined;
  /** Attempts of one event before it is given up as failed (default 12). */
  readonly maxAttempts?: number | undefined;
  /** First backoff (default 2 s), doubled up to `maxDelayMs` (default 5 min). */
  readonly baseDelayMs?: number | undefined;
  readonly maxDelayMs?: number | undefined;
  /** How long one POST may take (default 10 s). */
  readonly timeoutMs?: number | undefined;
}

/** Delivers handoff events to a helpdesk: give it to the runtime as `helpdesk`. */
export class HandoffConnector {
  private readonly clock: RuntimeClock;
  private readonly logger: Logger;

  constructor(private readonly o: HandoffConnectorOptions) {
    this.clock = o.clock ?? systemClock;
    this.logger = o.logger ?? silentLogger;
  }

  /** POSTs one event and says how it went: sent, to retry at a time, or given up after its last attempt. */
  async deliver(e: HandoffEventRecord): Promise<HandoffEventOutcome> {
    const body = JSON.stringify(e.payload);
    let error: string | undefined;
    try {
      const res = await fetch(this.o.url, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'colloquy-handoff-connector',
          [HANDOFF_SIGNATURE_HEADER]: signHandoffEvent(body, this.o.secret),
          'X-Colloquy-Event': e.type,
          'X-Colloquy-Event-Id': e.eventId,
        },
      });
      await res.arrayBuffer().catch(() => undefined);
      if (!res.ok) error = `the helpdesk answered ${res.status}`;
    } catch (err) {
      error = `could not reach the helpdesk: ${errorInfo(err).message}`;
    }
    const now = this.clock.now();
    const outcome = error === undefined ? 'sent' : e.attempts >= (this.o.maxAttempts ?? 12) ? 'failed' : 'retry';
    this.o.metrics?.inc('colloquy_handoff_events_total', { type: e.type, outcome });
    if (error === undefined) return { sent: true };
    if (outcome === 'failed') this.logger.error({ event: e.eventId, type: e.type, attempts: e.attempts, reason: error }, 'handoff event given up after its last attempt');
    else this.logger.warn({ event: e.eventId, type: e.type, attempt: e.attempts, reason: error }, 'handoff event not delivered; will retry');
    return { sent: false, error, retryAt: outcome === 'retry' ? now + this.backoff(e.attempts) : undefined };
  }

  private backoff(attempt: number): number {
    return retryDelay(attempt, this.o.baseDelayMs ?? 2_000, this.o.maxDelayMs ?? 300_000);
  }
}
