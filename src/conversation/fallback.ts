/**
 * The SMS fallback: when the interactive channel cannot deliver a message, the same message goes
 * by SMS through the same adapter, rendered as text (numbered choices), and the conversation
 * stays on SMS until the user writes on WhatsApp again. What cannot fall back reaches the bot
 * as `delivery.failed`.
 */
import type { Message } from '../messages/message.js';
import { isInteractive } from '../messages/message.js';
import type { FailureFollowUp, NewInbound, OutboxRecord } from '../store/types.js';
import { deliveryRaw } from '../store/inbound-facts.js';
import type { SendFailed } from '../transport/types.js';
import type { Bot } from './bot.js';
import type { FallbackInfo, FallbackTrigger } from './fallback-info.js';
import { toOutbound, type SmsSettings } from './outbound.js';

export { UNREACHABLE_CODES, type FallbackInfo, type FallbackTrigger } from './fallback-info.js';

/** A WhatsApp message that has a text for SMS: a list, buttons or flow, text (on the Cloud API), a template with its own `sms`. */
function smsable(m: Message): boolean {
  return isInteractive(m) || m.kind === 'text' || (m.kind === 'template' && m.sms !== undefined);
}

/** Whether the bot's policy sends this failure by SMS. */
export function shouldFallBack(bot: Bot, row: OutboxRecord, info: FallbackInfo): boolean {
  const p = bot.options.fallback ?? {};
  if (p.enabled === false || row.channel !== 'interactive' || !smsable(info.message)) return false;
  if (p.shouldFallBack) return p.shouldFallBack(info);
  if (info.trigger === 'retries-exhausted') return p.onRetriesExhausted !== false;
  if (info.trigger === 'failed-status') return p.onFailedStatus !== false;
  const codes = p.codes ?? 'any-permanent';
  if (codes === 'any-permanent') return true;
  return info.code !== undefined && codes.map(String).includes(String(info.code));
}

/**
 * What follows a failure: the SMS fallback, or `delivery.failed` for the bot. `force` (the window
 * policy said SMS) sends any message with a text by SMS, whatever the fallback policy says.
 */
export function followUp(
  bot: Bot,
  row: OutboxRecord,
  failure: Pick<SendFailed, 'reason' | 'providerCode' | 'hint' | 'status' | 'auth' | 'class'>,
  trigger: FallbackTrigger,
  ctx: { sms: SmsSettings; now: number; force?: boolean | undefined; smsOff?: boolean | undefined },
): { follow: FailureFollowUp; fellBack: boolean } {
  const message = row.message as Message;
  const info: FallbackInfo = { trigger, status: failure.status, code: failure.providerCode, reason: failure.reason, message };
  // A parameter the provider refused is the bot's to fix: an SMS would hide it.
  // No SMS channel (a Cloud API deployment without the seed's SMS interface): the fallback is off.
  const fallBack =
    ctx.smsOff === true
      ? false
      : ctx.force === true
        ? row.channel === 'interactive' && (message.kind !== 'template' || message.sms !== undefined)
        : !failure.auth && failure.class !== 'invalid' && shouldFallBack(bot, row, info);
  if (fallBack) {
    const fallback = toOutbound(message, { bot, user: row.user, sender: '', flowToken: '', channel: 'sms', sms: ctx.sms }, '', row.id);
    return { follow: { fallback, channel: 'sms' }, fellBack: true };
  }
  const reason = trigger === 'retries-exhausted' ? `retries exhausted: ${failure.reason}` : failure.reason;
  const inbound: NewInbound = {
    providerId: `delivery:${row.id}`,
    botId: row.botId,
    user: row.user,
    source: 'delivery',
    receivedAt: ctx.now,
    event: { type: 'delivery.failed', channel: row.channel, reason, code: failure.providerCode, hint: failure.hint, messageId: row.fallbackOf ?? row.id },
    raw: deliveryRaw({ conversationId: row.conversationId, outboxId: row.id }),
  };
  return { follow: { inbound }, fellBack: false };
}
