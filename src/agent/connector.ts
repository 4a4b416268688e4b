/**
 * The helpdesk connector: POSTs every queued handoff event (`handoff.started`, `.claimed`,
 * `.message`, `.ended`, `.timeout`) to `COLLOQUY_HANDOFF_WEBHOOK_URL`, signed, from the store's
 * durable event outbox: in order per handoff, retried with backoff, each with an id for dedupe.
 * A crash loses nothing: an event is marked sent only after the receiver answered 2xx.
 */
import { retryDelay } from '../conversation/backoff.js';
import { systemClock, type RuntimeClock } from '../conversation/clock.js';
import { errorInfo, silentLogger, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { HandoffEventRecord, Store } from '../store/types.js';
import { HANDOFF_SIGNATURE_HEADER, signHandoffEvent } from './signature.js';

/** What {@link HandoffConnector} takes. */
export interface HandoffConnectorOptions {
  readonly store: Store;
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

const LEASE_MS = 60_000;
const BATCH = 16;

/** Delivers handoff events to a helpdesk. */
export class HandoffConnector {
  private readonly clock: RuntimeClock;
  private readonly logger: Logger;
  private pumping: Promise<void> | undefined;
  private again = false;
  private timer: unknown;
  private stopped = false;

  constructor(private readonly o: HandoffConnectorOptions) {
    this.clock = o.clock ?? systemClock;
    this.logger = o.logger ?? silentLogger;
  }

  /** Looks for due events now. */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .catch((err) => this.logger.error({ err: errorInfo(err) }, 'handoff connector failed to claim events'))
      .finally(() => {
        this.pumping = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves when no delivery is running. */
  async settle(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** Stops delivering (events left are delivered on the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    await this.settle();
  }

  private async pump(): Promise<void> {
    for (;;) {
      this.again = false;
      const events = await this.o.store.claimHandoffEvents(this.clock.now(), BATCH, LEASE_MS);
      await Promise.all(events.map((e) => this.deliver(e)));
      if (this.stopped || (events.length === 0 && !this.again)) break;
    }
    await this.arm();
  }

  private async arm(): Promise<void> {
    if (this.stopped) return;
    const next = await this.o.store.nextHandoffEventAt();
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer =
      next === undefined
        ? undefined
        : this.clock.setTimeout(
            () => {
              this.timer = undefined;
              this.wake();
            },
            Math.max(0, next - this.clock.now()),
          );
  }

  private async deliver(e: HandoffEventRecord): Promise<void> {
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
    if (error === undefined) {
      await this.o.store.settleHandoffEvent(e.id, e.claim, { sent: true }, now);
      return;
    }
    if (outcome === 'failed') this.logger.error({ event: e.eventId, type: e.type, attempts: e.attempts, reason: error }, 'handoff event given up after its last attempt');
    else this.logger.warn({ event: e.eventId, type: e.type, attempt: e.attempts, reason: error }, 'handoff event not delivered; will retry');
    await this.o.store.settleHandoffEvent(e.id, e.claim, { sent: false, error, retryAt: outcome === 'retry' ? now + this.backoff(e.attempts) : undefined }, now);
  }

  private backoff(attempt: number): number {
    return retryDelay(attempt, this.o.baseDelayMs ?? 2_000, this.o.maxDelayMs ?? 300_000);
  }
}
