/**
 * The dispatcher: sends committed outbox rows through the send adapter, in emitted order per
 * conversation (the store only hands out a conversation's oldest unsent row, and none while one is
 * in flight), different conversations in parallel. Retryable failures come back later with backoff;
 * a final failure is handed to the runtime (fallback, `delivery.failed`).
 */
import { errorInfo, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { OutboxRecord, SendRecord, Store } from '../store/types.js';
import type { SendAdapter, SendFailed, SendResult } from '../transport/types.js';
import type { RuntimeClock } from './clock.js';

/** How the dispatcher paces and retries. */
export interface DispatcherOptions {
  /** Sends in flight at once, across conversations (default 64, the adapter's connection pool). */
  readonly concurrency?: number;
  /** How long a claimed row is ours before another process may take it (default 60 s). */
  readonly leaseMs?: number;
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
}

/** Sends the outbox. */
export class Dispatcher {
  private readonly o: Required<DispatcherOptions>;
  /** Rows this process is sending, with the claim that holds each (it changes if re-claimed). */
  private readonly inflight = new Map<number, { claim: string | null }>();
  private pumping: Promise<void> | undefined;
  private again = false;
  private timer: unknown;
  private stopped = false;
  private readonly tasks = new Set<Promise<void>>();

  constructor(private readonly d: Deps, options: DispatcherOptions = {}) {
    this.o = { concurrency: 64, leaseMs: 60_000, maxAttempts: 6, baseDelayMs: 2_000, maxDelayMs: 300_000, ...options };
  }

  /** Looks for due rows now. */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) { this.again = true; return; }
    this.pumping = this.pump()
      .catch((err) => this.d.logger.error({ err: errorInfo(err) }, 'dispatcher failed to claim rows'))
      .finally(() => {
        this.pumping = undefined;
        // A wake() during the pump's last steps (after its loop looked at `again`) must not be lost.
        if (this.again) { this.again = false; this.wake(); }
      });
  }

  /** True when nothing is in flight and no pump is running. */
  get idle(): boolean {
    return this.inflight.size === 0 && this.pumping === undefined;
  }

  /** Waits for the sends in flight. */
  async settle(): Promise<void> {
    while (this.tasks.size || this.pumping) await Promise.all([...this.tasks, this.pumping]);
  }

  /** Stops claiming, waits for sends in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    await this.settle();
  }

  private async pump(): Promise<void> {
    do {
      this.again = false;
      const free = this.o.concurrency - this.inflight.size;
      if (free <= 0) return;
      const rows = await this.d.store.claimOutbound(this.d.clock.now(), free, this.o.leaseMs);
      for (const row of rows) this.track(row);
      if (rows.length === free) this.again = true;
    } while (this.again && !this.stopped);
    await this.arm();
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
      .finally(() => { this.inflight.delete(row.id); this.tasks.delete(t); this.wake(); });
    this.tasks.add(t);
  }

  /** Keeps a row's lease alive while its send is in flight, so no other process sends it too. */
  private keepLease(id: number, held: { claim: string | null }): () => void {
    let timer: unknown;
    const every = Math.max(1, Math.floor(this.o.leaseMs / 3));
    const renew = () => {
      timer = this.d.clock.setTimeout(() => {
        if (held.claim === null) return;
        void this.d.store.renewLease(id, held.claim, this.d.clock.now() + this.o.leaseMs)
          .then((ok) => { if (ok) renew(); })
          .catch((err) => this.d.logger.warn({ err: errorInfo(err), outbox: id }, 'could not renew a send lease'));
      }, every);
    };
    renew();
    return () => { if (timer !== undefined) this.d.clock.clearTimeout(timer); };
  }

  private async arm(): Promise<void> {
    if (this.stopped) return;
    const next = await this.d.store.nextOutboundAt(this.d.clock.now());
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (next === undefined) return;
    this.timer = this.d.clock.setTimeout(() => { this.timer = undefined; this.wake(); }, Math.max(0, next - this.d.clock.now()));
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
    this.d.metrics.inc('colloquy_sends_total', 'Messages sent to the provider, by channel and outcome', labels);
    this.d.metrics.observe('colloquy_send_seconds', 'Time to deliver one message to the provider, retries included', { channel: row.channel }, (performance.now() - started) / 1000);
    const now = this.d.clock.now();
    if (result.ok) {
      if (await this.d.store.finishOutbound(row.id, accepted(result), now, claim)) await this.d.onSent(row, result.providerId);
      else this.lost(row);
      return;
    }
    if (result.kind === 'retryable' && row.attempts < this.o.maxAttempts) {
      const delay = this.backoff(row.attempts, result.retryAfterMs);
      this.d.metrics.inc('colloquy_send_retries_total', 'Outbox rows put back for a later attempt', { channel: row.channel });
      this.d.logger.warn({ outbox: row.id, attempt: row.attempts, delayMs: delay, reason: result.reason }, 'send failed, will retry');
      if (!(await this.d.store.retryOutbound(row.id, now + delay, result.reason, code(result), claim))) this.lost(row);
      return;
    }
    this.d.logger.warn({ outbox: row.id, channel: row.channel, reason: result.reason, code: result.providerCode }, 'message failed for good');
    if (!(await this.d.onFailed(row, result, failed(result), result.kind === 'retryable', claim))) this.lost(row);
  }

  private lost(row: OutboxRecord): void {
    this.d.logger.warn({ outbox: row.id }, 'another process claimed this message while it was being sent (its lease ran out); this result is not recorded');
  }

  private backoff(attempt: number, retryAfterMs: number | undefined): number {
    const exp = Math.min(this.o.maxDelayMs, this.o.baseDelayMs * 2 ** (attempt - 1));
    const jittered = exp / 2 + Math.random() * (exp / 2);
    return Math.max(jittered, retryAfterMs ?? 0);
  }
}

function code(r: SendFailed): string | undefined {
  return r.providerCode === undefined ? undefined : String(r.providerCode);
}

function accepted(r: Extract<SendResult, { ok: true }>): SendRecord {
  return {
    state: 'sent', providerId: r.providerId, httpStatus: r.status, response: r.raw,
    smsCode: r.sms?.code, smsMailingId: r.sms?.mailingId === null || r.sms?.mailingId === undefined ? undefined : String(r.sms.mailingId), smsResult: r.sms?.result ?? undefined,
  };
}

function failed(r: SendFailed): SendRecord {
  const smsCode = r.channel === 'sms' && typeof r.providerCode === 'number' ? r.providerCode : undefined;
  return { state: 'failed', httpStatus: r.status, response: r.raw, error: r.hint ? `${r.reason} (${r.hint})` : r.reason, errorCode: code(r), smsCode };
}
