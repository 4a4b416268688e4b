/**
 * Sending one claimed outbox row: through the send adapter, then settled in the store under the
 * claim that holds it. Retryable failures come back later with backoff; a final failure is
 * recorded with what follows it (fallback, `delivery.failed`). The worker claims the rows (a
 * conversation's oldest unsent one only, none while one is in flight) and renews their leases.
 */
import { ConfigError } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { FailureFollowUp, OutboxRecord, SendOutcome, SendRecord, Store, UserMessageFact } from '../store/types.js';
import type { Outbound, SendFailed, SendResult } from '../transport/types.js';
import type { Bot } from './bot.js';
import type { Senders } from './senders.js';
import { windowError, windowOpen } from './window.js';
import { retryDelay, untilStored, type StoreWaits } from './backoff.js';
import type { RuntimeClock } from './clock.js';
import type { Held } from './worker.js';

/** How sends are paced and retried. */
export interface SendOptions {
  /** Sends in flight at once, across conversations (default 64, the adapter's connection pool). */
  readonly concurrency?: number;
  /** Attempts of one row before it counts as failed (default 6; the adapter retries inside each). */
  readonly maxAttempts?: number;
  /** First backoff between attempts (default 2 s), doubled each time up to `maxDelayMs` (default 5 min). */
  readonly baseDelayMs?: number;
  readonly maxDelayMs?: number;
}

interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** What follows a row's final failure (`exhausted` when retries ran out): a fallback, `delivery.failed`. */
  readonly followUp: (row: OutboxRecord, result: SendFailed, exhausted: boolean) => Promise<{ follow: FailureFollowUp; after: () => void }>;
  /** A row was accepted by the provider. */
  readonly onSent: (row: OutboxRecord, providerId: string | undefined) => Promise<void>;
  /** How a store that is unavailable for now is waited out while recording a send. */
  readonly waits: StoreWaits;
  /** Each bot's provider, business number and phone_number_id. */
  readonly senders: Senders;
  /** A served bot's newest version. */
  readonly bot: (id: string) => Bot | undefined;
}

/** A send taken from a lapsed claim this many times is not sent again: it may have reached the provider twice already. */
const MAX_RESENDS = 1;

/** Sends claimed outbox rows. */
export class Sender {
  readonly o: Required<SendOptions>;

  constructor(
    private readonly d: Deps,
    options: SendOptions = {},
  ) {
    this.o = { concurrency: 64, maxAttempts: 6, baseDelayMs: 2_000, maxDelayMs: 300_000, ...options };
    if (!(Number.isInteger(this.o.concurrency) && this.o.concurrency > 0)) throw new ConfigError('sends.concurrency', `must be a positive whole number (got ${this.o.concurrency})`);
    if (!(Number.isInteger(this.o.maxAttempts) && this.o.maxAttempts > 0)) throw new ConfigError('sends.maxAttempts', `must be a positive whole number (got ${this.o.maxAttempts})`);
  }

  /** Sends a claimed row and settles it under `held.claim` (which changes if this process claims the row again). */
  async send(row: OutboxRecord, held: Held): Promise<void> {
    if (row.resends > MAX_RESENDS) {
      await this.inDoubt(row, held);
      return;
    }
    const provider = this.d.senders.provider(row.botId);
    let outbound = { channel: row.channel, request: row.request } as Outbound;
    if (row.channel === 'interactive') {
      const bot = this.d.bot(row.botId);
      // The window is decided now, when the message goes, not when it was queued.
      const last = provider.features.window ? await this.d.store.lastUserMessage(row) : undefined;
      if (provider.features.window && row.kind !== 'template' && !windowOpen(last, this.d.clock.now())) {
        await this.windowClosed(row, held, last);
        return;
      }
      outbound = { channel: 'interactive', request: row.request as Record<string, unknown>, numberId: bot && this.d.senders.numberId(bot, last), from: bot && this.d.senders.from(bot) };
    }
    const started = performance.now();
    let result: SendResult;
    try {
      result = await provider.send(outbound);
    } catch (err) {
      result = { ok: false, channel: row.channel, kind: 'retryable', reason: `adapter threw: ${errorInfo(err).message}`, attempts: 1 };
    }
    this.d.metrics.inc('colloquy_sends_total', { channel: row.channel, outcome: result.ok ? 'accepted' : result.kind });
    this.d.metrics.observe('colloquy_send_seconds', { channel: row.channel }, (performance.now() - started) / 1000);
    if (result.ok) {
      if (await this.settle(row, held, { kind: 'sent', record: accepted(result) })) await this.d.onSent(row, result.providerId);
      return;
    }
    if (result.kind === 'retryable' && row.attempts < this.o.maxAttempts) {
      const delay = Math.max(retryDelay(row.attempts, this.o.baseDelayMs, this.o.maxDelayMs), Math.ceil(result.retryAfterMs ?? 0));
      this.d.metrics.inc('colloquy_send_retries_total', { channel: row.channel });
      this.d.logger.warn({ outbox: row.id, attempt: row.attempts, delayMs: delay, reason: result.reason }, 'send failed, will retry');
      await this.settle(row, held, { kind: 'retry', at: this.d.clock.now() + delay, error: result.reason, errorCode: code(result) });
      return;
    }
    this.d.logger.warn({ outbox: row.id, channel: row.channel, reason: result.reason, code: result.providerCode }, 'message failed for good');
    const { follow, after } = await this.d.followUp(row, result, result.kind === 'retryable');
    if (await this.settle(row, held, { kind: 'failed', record: failed(result), follow })) after();
  }

  /** A free-form message whose window is closed: not sent; the bot's window policy follows, recorded with it. */
  private async windowClosed(row: OutboxRecord, held: Held, last: UserMessageFact | undefined): Promise<void> {
    const failure: SendFailed = { ok: false, channel: row.channel, kind: 'permanent', class: 'window', reason: windowError(last, false), attempts: row.attempts };
    this.d.metrics.inc('colloquy_sends_total', { channel: row.channel, outcome: 'window' });
    const { follow, after } = await this.d.followUp(row, failure, false);
    if (await this.settle(row, held, { kind: 'failed', record: { state: 'failed', error: failure.reason, errorCode: 'window' }, follow })) after();
  }

  /**
   * A row taken from a lapsed claim a second time: both senders died (or lost the database) before
   * the provider's answer was recorded, so it may have gone out twice already. It is not sent a
   * third time; it is kept as failed, `in_doubt`, for a person to look at.
   */
  private async inDoubt(row: OutboxRecord, held: Held): Promise<void> {
    const error = 'not sent again: two senders stopped before recording the provider’s answer, so it may have been delivered already';
    this.d.logger.error({ outbox: row.id, bot: row.botId, user: row.user, resends: row.resends }, error);
    this.d.metrics.inc('colloquy_sends_total', { channel: row.channel, outcome: 'in_doubt' });
    await this.settle(row, held, { kind: 'failed', record: { state: 'failed', error, errorCode: 'in_doubt' }, follow: {} });
  }

  /**
   * Records a send's outcome, waiting out a store that is unavailable for now: the provider has the
   * message, so giving up would let the claim lapse and send it again. The heartbeat keeps the
   * claim meanwhile. False when another process holds the row now (nothing recorded).
   */
  private async settle(row: OutboxRecord, held: Held, outcome: SendOutcome): Promise<boolean> {
    const ok = await untilStored(() => this.d.store.settleSend(row.id, held.claim, outcome, this.d.clock.now()), this.d.waits);
    if (!ok) this.d.logger.warn({ outbox: row.id }, 'another process claimed this message while it was being sent (its lease ran out); this result is not recorded');
    return ok;
  }
}

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
