/**
 * What happens after a message fails: statuses from the provider, send failures from the
 * sender. Each failure is recorded together with what follows it (an SMS fallback, or
 * `delivery.failed` for the bot) in one transaction, so a restart neither loses nor repeats it.
 */
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ConversationKey, FailureFollowUp, NewStatus, OutboxRecord, Store } from '../store/types.js';
import type { SendFailed } from '../transport/types.js';
import type { Bot } from './bot.js';
import type { RuntimeClock } from './clock.js';
import { followUp, type FallbackTrigger } from './fallback.js';
import type { SmsSettings } from './outbound.js';

interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly sms: SmsSettings;
  /** The bot version a message's conversation runs on (its fallback policy and SMS tag apply). */
  readonly bot: (row: OutboxRecord) => Promise<Bot | undefined>;
  /** A fallback was queued. */
  readonly wakeSends: () => void;
  /** The bot has a `delivery.failed` inbound. */
  readonly kick: (key: ConversationKey) => void;
}

/** Delivery statuses and failures. */
export class Deliveries {
  constructor(private readonly d: Deps) {}

  /** Records a status; a `failed` one of a sent message is a delivery failure. */
  async status(status: Omit<NewStatus, 'receivedAt'>): Promise<{ duplicate: boolean; known: boolean }> {
    const r = await this.d.store.addStatus({ ...status, receivedAt: this.d.clock.now() });
    this.d.metrics.inc('colloquy_statuses_total', { status: status.status });
    // Also on a repeated status: what follows a failure is idempotent, and a crash may have cut it short.
    if (status.status === 'failed' && r.outbound?.deliveryStatus === 'failed' && r.outbound.state === 'sent') {
      await this.statusFailed(r.outbound, status.errors);
    }
    return { duplicate: r.duplicate, known: r.outbound !== undefined };
  }

  /** On start: failed statuses whose follow-up a crash cut short get it now (it is idempotent). */
  async recover(): Promise<void> {
    for (const row of await this.d.store.unfollowedFailures()) {
      const failed = row.providerId === null ? undefined : (await this.d.store.statuses(row.providerId)).find((s) => s.status === 'failed');
      await this.statusFailed(row, failed?.errors);
    }
  }

  /** A row was accepted: its `failed` status may have arrived before the send was recorded. */
  async sent(row: OutboxRecord, providerId: string | undefined): Promise<void> {
    if (providerId === undefined) return;
    const failed = (await this.d.store.statuses(providerId)).find((s) => s.status === 'failed');
    if (failed) await this.statusFailed({ ...row, providerId }, failed.errors);
  }

  /**
   * What follows a message's failure (a fallback, or `delivery.failed` for the bot), to record with
   * it atomically, and what to do once it is recorded.
   */
  async plan(row: OutboxRecord, r: SendFailed, trigger: FallbackTrigger): Promise<{ follow: FailureFollowUp; after: () => void }> {
    const bot = await this.d.bot(row);
    if (!bot) return { follow: {}, after: () => undefined };
    const { follow, fellBack } = followUp(bot, row, r, trigger, { sms: this.d.sms, now: this.d.clock.now() });
    const after = () => {
      if (!fellBack) return this.d.kick(row);
      this.d.metrics.inc('colloquy_fallbacks_total', { bot: bot.id, trigger });
      this.d.logger.info({ bot: bot.id, user: row.user, outbox: row.id, trigger, code: r.providerCode }, 'falling back to SMS');
      this.d.wakeSends();
    };
    return { follow, after };
  }

  private async statusFailed(row: OutboxRecord, errors: unknown): Promise<void> {
    const first = Array.isArray(errors) ? (errors[0] as { code?: number; title?: string; message?: string; error_data?: { details?: string } } | undefined) : undefined;
    const detail = first ? `: ${first.title ?? first.message ?? ''}${first.error_data?.details ? ` (${first.error_data.details})` : ''}` : '';
    const failure: SendFailed = { ok: false, channel: row.channel, kind: 'permanent', reason: `the provider reported the message failed${detail}`, providerCode: first?.code, attempts: row.attempts };
    const { follow, after } = await this.plan(row, failure, 'failed-status');
    if (await this.d.store.failOutbound(row.id, this.d.clock.now(), follow)) after();
  }
}
