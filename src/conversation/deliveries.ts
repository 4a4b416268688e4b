/**
 * What happens after a message fails: statuses from the provider, send failures from the
 * sender. Each failure is recorded together with what follows it (an SMS fallback, a template for
 * a closed window, or an event for the bot) in one transaction, so a restart neither loses nor
 * repeats it.
 */
import { MessageValidationError } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ConversationKey, FailureFollowUp, NewStatus, OutboxRecord, Store } from '../store/types.js';
import type { SendFailed } from '../transport/types.js';
import type { Bot } from './bot.js';
import type { RuntimeClock } from './clock.js';
import { followUp, type FallbackTrigger } from './fallback.js';
import type { SmsSettings } from './outbound.js';
import type { Senders } from './senders.js';
import { templateOf, WINDOW_CODE, WINDOW_MS, windowAction, windowEvent } from './window.js';
import type { TemplateMessage } from '../messages/message.js';

interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly sms: SmsSettings;
  readonly senders: Senders;
  /** The bot version a message's conversation runs on (its policies and SMS tag apply), and the state it is in. */
  readonly bot: (row: OutboxRecord) => Promise<{ bot: Bot; state: string | null } | undefined>;
  /** A fallback was queued. */
  readonly wakeSends: () => void;
  /** The bot has an inbound (`delivery.failed`, `send.failed`). */
  readonly kick: (key: ConversationKey) => void;
}

/** A failure's follow-up, to record with it, and what to do once it is recorded. */
export interface FailurePlan {
  readonly follow: FailureFollowUp;
  readonly after: () => void;
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
   * What follows a message's failure (a fallback, a template, or an event for the bot), to record
   * with it atomically, and what to do once it is recorded.
   */
  async plan(row: OutboxRecord, r: SendFailed, trigger: FallbackTrigger): Promise<FailurePlan> {
    const found = await this.d.bot(row);
    if (!found) return { follow: {}, after: () => undefined };
    const { bot, state } = found;
    if (r.class === 'window' && this.d.senders.provider(bot.id).features.window) return this.windowPlan(row, r, bot, state);
    // A failed status of a passing kind (131000, 130429, 131056): the message goes again, once.
    if (trigger === 'failed-status' && row.fallbackOf === null && (r.class === 'transient' || r.class === 'throughput' || r.class === 'pair-rate')) {
      this.d.logger.info({ bot: bot.id, outbox: row.id, code: r.providerCode }, 'the provider reported a passing failure: sending the message again');
      return { follow: { fallback: { kind: row.kind, message: row.message, channel: 'interactive', request: row.request } }, after: this.d.wakeSends };
    }
    const smsOff = !this.d.senders.provider(bot.id).features.sms;
    const { follow, fellBack } = followUp(bot, row, r, trigger, { sms: this.d.sms, now: this.d.clock.now(), smsOff });
    return { follow, after: () => (fellBack ? this.fellBack(bot, row, trigger, r.providerCode) : this.d.kick(row)) };
  }

  /**
   * A free-form message outside the 24-hour window (found closed before sending, or refused with
   * 131047): the bot's window policy for the state the conversation is in. A template goes once per
   * closed window; later messages wait for the user's answer no further (they are recorded failed).
   */
  private async windowPlan(row: OutboxRecord, r: SendFailed, bot: Bot, state: string | null): Promise<FailurePlan> {
    const now = this.d.clock.now();
    const last = await this.d.store.lastUserMessage(row);
    const count = (action: string) => this.d.metrics.inc('colloquy_window_total', { bot: bot.id, action });
    const event = (): FailurePlan => {
      count('event');
      return { follow: windowEvent(row, now, last, r.providerCode), after: () => this.d.kick(row) };
    };
    const action = windowAction(bot, state);
    if (action === 'event' || row.kind === 'template') return event();
    if (action === 'sms') {
      if (!this.d.senders.provider(bot.id).features.sms) return event();
      const { follow, fellBack } = followUp(bot, row, r, 'permanent', { sms: this.d.sms, now, force: true });
      if (!fellBack) return event();
      count('sms');
      return { follow, after: () => this.fellBack(bot, row, 'window', r.providerCode) };
    }
    // One template per closed window. Found closed here, the window closed 24 h after the user wrote: a
    // template that went before (while it was open) does not count. Refused by the provider while it
    // looked open here (its clock, a message to another number), it closed at some time since the
    // user wrote: any template since then counts.
    const refused = r.providerCode !== undefined;
    const since = last === undefined ? 0 : refused ? last.at : last.at + WINDOW_MS;
    let request: unknown;
    let template: TemplateMessage;
    try {
      template = templateOf(action, { bot, row, state: state ?? '', last });
      request = this.d.senders.provider(bot.id).request(template, { from: this.d.senders.from(bot), to: row.user });
    } catch (err) {
      // The bot's own code (a template function) or its template failed: the row must still be settled.
      const shown = err instanceof MessageValidationError ? err.withOrigin({ bot: bot.id, state: `window policy of ${state ?? 'the bot'}` }) : err;
      this.d.logger.error({ bot: bot.id, state, err: errorInfo(shown) }, 'the window policy’s template could not be built; the bot gets send.failed instead');
      return event();
    }
    count('template');
    // Recorded instead of the template when one already went in this closed window (decided in the write).
    const otherwise = windowEvent(row, now, last, r.providerCode).inbound!;
    const follow: FailureFollowUp = { fallback: { kind: 'template', message: template, channel: 'interactive', request, fallbackOf: row.id }, templateOnce: { since, otherwise } };
    return {
      follow,
      after: () => {
        this.d.wakeSends();
        this.d.kick(row);
      },
    };
  }

  private fellBack(bot: Bot, row: OutboxRecord, trigger: string, code: string | number | undefined): void {
    this.d.metrics.inc('colloquy_fallbacks_total', { bot: bot.id, trigger });
    this.d.logger.info({ bot: bot.id, user: row.user, outbox: row.id, trigger, code }, 'falling back to SMS');
    this.d.wakeSends();
  }

  private async statusFailed(row: OutboxRecord, errors: unknown): Promise<void> {
    const first = Array.isArray(errors) ? (errors[0] as { code?: number; title?: string; message?: string; error_data?: { details?: string } } | undefined) : undefined;
    const detail = first ? `: ${first.title ?? first.message ?? ''}${first.error_data?.details ? ` (${first.error_data.details})` : ''}` : '';
    const code = first?.code;
    const failure: SendFailed = {
      ok: false,
      channel: row.channel,
      kind: 'permanent',
      reason: `the provider reported the message failed${detail}`,
      providerCode: code,
      attempts: row.attempts,
      class: failedStatusClass(code, this.d.senders, row.botId),
    };
    const { follow, after } = await this.plan(row, failure, 'failed-status');
    if (await this.d.store.failOutbound(row.id, this.d.clock.now(), follow)) after();
  }
}

/** What a failed status's error code means: 131047 is the window on any provider; the rest as the provider reads them. */
function failedStatusClass(code: number | undefined, senders: Senders, botId: string): SendFailed['class'] {
  if (Number(code) === WINDOW_CODE) return 'window';
  return senders.provider(botId).statusClass?.(code);
}
