/**
 * The dispatcher: sends committed outbox rows through the send adapter, in emitted order per
 * conversation (the store only hands out a conversation's oldest unsent row, and none while one is
 * in flight), different conversations in parallel. Retryable failures come back later with backoff;
 * a final failure is handed to the runtime (fallback, `delivery.failed`).
 */
import { ConfigError, isStoreUnavailable } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { OutboxRecord, SendRecord, Store } from '../store/types.js';
import type { SendAdapter, SendFailed, SendResult } from '../transport/types.js';
import { pause, retryDelay, storeRetryDelay } from './backoff.js';
import type { RuntimeClock } from './clock.js';

/** How the dispatcher paces and retries. */
export interface DispatcherOptions {
  /** Sends in flight at once, across conversations (default 64, the adapter's connection pool). */
  readonly concurrency?: number;
  /**
   * How long a claimed row is ours before another process may take it (default 10 s). A send in
   * flight renews it every `heartbeatMs`; when the process dies, its sends in flight are sent again
   * (by any process) at most this long after its last renewal.
   */
  readonly leaseMs?: number;
  /** How often a send in flight renews its lease (default a third of `leaseMs`). */
  readonly heartbeatMs?: number;
  /** Attempts of one row before it counts as failed (default 6; the adapter retries inside each). */
  readonly maxAttempts?: number;
  /** First backoff between attempts (default 2 s), doubled each time up to `maxDelayMs` (default 5 min). */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

interface Deps {
  readonly store: Store;
  readonly adapter: SendAdapter;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** A row failed for good (`exhausted` when retries ran out): record it and what follows, atomically; false when the claim was lost. */
  readonly onFailed: (row: OutboxRecord, result: SendFailed, record: SendRecord, exhausted: boolean, claim: string | undefined) => Promise<boolean>;
  /** A row was accepted by the provider. */
  readonly onSent: (row: OutboxRecord, providerId: string | undefined) => Promise<void>;
  /** The store was unavailable for `work` (claiming, recording a send); it is tried again after `delayMs`. */
  readonly storeUnavailable?: (err: Error, delayMs: number, work: 'outbox-claim' | 'outbox-record') => void;
}

/** The default send lease. */
export const DEFAULT_LEASE_MS = 10_000;

/** Sends the outbox. */
export class Dispatcher {
  private readonly o: Required<DispatcherOptions>;
  /** Rows this process is sending, with the claim that holds each (it changes if re-claimed). */
  private readonly inflight = new Map<number, { claim: string | null }>();
  private pumping: Promise<void> | undefined;
  /** A pump is due at the next turn of the event loop. */
  private scheduled = false;
  private again = false;
  private timer: unknown;
  private stopped = false;
  private readonly tasks = new Set<Promise<void>>();
  /** Pumps that failed in a row (the store was unavailable): the next try waits longer. */
  private failures = 0;
  private readonly waits = new Set<() => void>();

  constructor(
    private readonly d: Deps,
    options: DispatcherOptions = {},
  ) {
    const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.o = { concurrency: 64, maxAttempts: 6, baseDelayMs: 2_000, maxDelayMs: 300_000, ...options, leaseMs, heartbeatMs: options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3)) };
    if (!(this.o.leaseMs > 0)) throw new ConfigError('dispatcher.leaseMs', `must be a positive number of milliseconds (got ${this.o.leaseMs})`);
    if (!(this.o.heartbeatMs > 0 && this.o.heartbeatMs < this.o.leaseMs))
      throw new ConfigError('dispatcher.heartbeatMs', `must be positive and shorter than the lease (${this.o.leaseMs} ms), got ${this.o.heartbeatMs}`);
  }

  /**
   * Looks for due rows, once for every wake of this event-loop turn: the turns committed together
   * and the sends finished together are claimed by one statement, not one each.
   */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startPump();
    });
  }

  private startPump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = this.pump()
      .then(() => {
        this.failures = 0;
      })
      .catch((err: unknown) => this.pumpFailed(err))
      .finally(() => {
        this.pumping = undefined;
        // A wake() during the pump's last steps (after its loop looked at `again`) must not be lost.
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** True when nothing is in flight and no pump is running or due. */
  get idle(): boolean {
    return this.inflight.size === 0 && this.pumping === undefined && !this.scheduled;
  }

  /** Waits for the sends in flight. */
  async settle(): Promise<void> {
    for (;;) {
      if (this.scheduled) await new Promise((resolve) => setImmediate(resolve));
      else if (this.tasks.size || this.pumping) await Promise.all([...this.tasks, this.pumping]);
      else return;
    }
  }

  /** Stops claiming, waits for sends in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    for (const cancel of this.waits) cancel();
    await this.settle();
  }

  /** A claim (or the re-arm) failed: try again with backoff, whatever else happens or not. */
  private pumpFailed(err: unknown): void {
    const delay = storeRetryDelay(++this.failures);
    if (isStoreUnavailable(err)) this.d.storeUnavailable?.(err, delay, 'outbox-claim');
    else this.d.logger.error({ err: errorInfo(err), delayMs: delay }, 'dispatcher failed to claim rows; trying again');
    this.setTimer(delay);
  }

  private setTimer(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = this.d.clock.setTimeout(
      () => {
        this.timer = undefined;
        this.wake();
      },
      Math.max(0, delayMs),
    );
  }

  private async pump(): Promise<void> {
    let claimed = 0;
    do {
      this.again = false;
      const free = this.o.concurrency - this.inflight.size;
      if (free <= 0) return; // a finishing send frees a slot and wakes us
      const rows = await this.d.store.claimOutbound(this.d.clock.now(), free, this.o.leaseMs);
      for (const row of rows) this.track(row);
      claimed = rows.length;
      if (rows.length === free) this.again = true;
    } while (this.again && !this.stopped);
    await this.arm(claimed);
  }

  private track(row: OutboxRecord): void {
    const mine = this.inflight.get(row.id);
    if (mine) {
      // Our own send outlived its lease and we claimed it again: keep the one send, with the new claim.
      mine.claim = row.claim;
      return;
    }
    const held = { claim: row.claim };
    this.inflight.set(row.id, held);
    const t = this.deliver(row, held)
      .catch((err) => this.d.logger.error({ err: errorInfo(err), outbox: row.id }, 'recording a send failed'))
      .finally(() => {
        this.inflight.delete(row.id);
        this.tasks.delete(t);
        this.wake();
      });
    this.tasks.add(t);
  }

  /**
   * Keeps a row's lease alive while its send is in flight (a heartbeat every `heartbeatMs`), so no
   * other process sends it too. A renewal the store could not take is tried at the next beat.
   */
  private keepLease(id: number, held: { claim: string | null }): () => void {
    let timer: unknown;
    let released = false;
    const renew = () => {
      timer = this.d.clock.setTimeout(() => {
        if (held.claim === null || released) return;
        void this.d.store
          .renewLease(id, held.claim, this.d.clock.now() + this.o.leaseMs)
          .then((ok) => {
            if (ok) renew();
            else this.d.logger.warn({ outbox: id }, 'a send lease was lost (another process claimed the row)');
          })
          .catch((err) => {
            this.d.logger.warn({ err: errorInfo(err), outbox: id }, 'could not renew a send lease; trying at the next beat');
            renew();
          });
      }, this.o.heartbeatMs);
    };
    renew();
    return () => {
      released = true;
      if (timer !== undefined) this.d.clock.clearTimeout(timer);
    };
  }

  /**
   * Wakes for the earliest unsent row, already due ones included (a row can fall due while a claim
   * runs, or be put back for a time already past). When a row is due yet this pump claimed none, it
   * waits a little rather than spinning.
   */
  private async arm(claimed: number): Promise<void> {
    if (this.stopped) return;
    const next = await this.d.store.nextOutboundAt();
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (next === undefined) return;
    const now = this.d.clock.now();
    this.setTimer(next > now ? next - now : claimed > 0 ? 0 : DUE_RECHECK_MS);
  }

  private async deliver(row: OutboxRecord, held: { claim: string | null }): Promise<void> {
    const started = performance.now();
    let result: SendResult;
    const release = this.keepLease(row.id, held);
    try {
      result = await this.d.adapter.send({ channel: row.channel, request: row.request } as never);
    } catch (err) {
      result = { ok: false, channel: row.channel, kind: 'retryable', reason: `adapter threw: ${errorInfo(err).message}`, attempts: 1 };
    } finally {
      release();
    }
    const claim = held.claim ?? undefined;
    const labels = { channel: row.channel, outcome: result.ok ? 'accepted' : result.kind };
    this.d.metrics.inc('colloquy_sends_total', labels);
    this.d.metrics.observe('colloquy_send_seconds', { channel: row.channel }, (performance.now() - started) / 1000);
    const now = this.d.clock.now();
    if (result.ok) {
      if (await this.record(row, () => this.d.store.finishOutbound(row.id, accepted(result), now, claim))) await this.d.onSent(row, result.providerId);
      else this.lost(row);
      return;
    }
    if (result.kind === 'retryable' && row.attempts < this.o.maxAttempts) {
      const delay = this.backoff(row.attempts, result.retryAfterMs);
      this.d.metrics.inc('colloquy_send_retries_total', { channel: row.channel });
      this.d.logger.warn({ outbox: row.id, attempt: row.attempts, delayMs: delay, reason: result.reason }, 'send failed, will retry');
      if (!(await this.record(row, () => this.d.store.retryOutbound(row.id, now + delay, result.reason, code(result), claim)))) this.lost(row);
      return;
    }
    this.d.logger.warn({ outbox: row.id, channel: row.channel, reason: result.reason, code: result.providerCode }, 'message failed for good');
    if (!(await this.record(row, () => this.d.onFailed(row, result, failed(result), result.kind === 'retryable', claim)))) this.lost(row);
  }

  /**
   * Records a send's outcome, waiting out a store that is unavailable for now: the provider has the
   * message, so giving up would let the lease run out and send it again. The lease is renewed meanwhile.
   */
  private async record(row: OutboxRecord, write: () => Promise<boolean>): Promise<boolean> {
    const held = this.inflight.get(row.id) ?? { claim: row.claim };
    const release = this.keepLease(row.id, held);
    try {
      for (let failures = 1; ; failures++) {
        try {
          return await write();
        } catch (err) {
          if (!isStoreUnavailable(err) || this.stopped) throw err;
          const delay = storeRetryDelay(failures);
          this.d.storeUnavailable?.(err, delay, 'outbox-record');
          const wait = pause(this.d.clock, delay);
          this.waits.add(wait.cancel);
          await wait.done;
          this.waits.delete(wait.cancel);
        }
      }
    } finally {
      release();
    }
  }

  private lost(row: OutboxRecord): void {
    this.d.logger.warn({ outbox: row.id }, 'another process claimed this message while it was being sent (its lease ran out); this result is not recorded');
  }

  private backoff(attempt: number, retryAfterMs: number | undefined): number {
    return Math.max(retryDelay(attempt, this.o.baseDelayMs, this.o.maxDelayMs), Math.ceil(retryAfterMs ?? 0));
  }
}

/** How soon to look again when a row is due but the last claim got none (no busy loop). */
const DUE_RECHECK_MS = 50;

function code(r: SendFailed): string | undefined {
  return r.providerCode === undefined ? undefined : String(r.providerCode);
}

function accepted(r: Extract<SendResult, { ok: true }>): SendRecord {
  return {
    state: 'sent',
    providerId: r.providerId,
    httpStatus: r.status,
    response: r.raw,
    smsCode: r.sms?.code,
    smsMailingId: r.sms?.mailingId === null || r.sms?.mailingId === undefined ? undefined : String(r.sms.mailingId),
    smsResult: r.sms?.result ?? undefined,
  };
}

function failed(r: SendFailed): SendRecord {
  const smsCode = r.channel === 'sms' && typeof r.providerCode === 'number' ? r.providerCode : undefined;
  return { state: 'failed', httpStatus: r.status, response: r.raw, error: r.hint ? `${r.reason} (${r.hint})` : r.reason, errorCode: code(r), smsCode };
}
