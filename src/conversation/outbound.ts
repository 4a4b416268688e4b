/**
 * From what a state said to outbox rows: each message validated and addressed, on the channel it
 * goes by. Errors name the bot, the state and the field.
 */
import { MessageValidationError } from '../errors.js';
import { isInteractive, type Message } from '../messages/message.js';
import { toInteractiveRequest, toSmsRequest } from '../messages/request.js';
import { renderSms } from '../messages/sms.js';
import type { ChannelName, NewOutbound } from '../store/types.js';
import type { Bot } from './bot.js';

/** SMS body settings (provider.md §1.3). */
export interface SmsSettings {
  readonly country?: string | undefined;
  readonly dial?: number | undefined;
  readonly mask?: string | undefined;
}

/** What addressing a conversation's messages needs. */
export interface OutboundContext {
  readonly bot: Bot;
  readonly user: string;
  readonly sender: string;
  readonly flowToken: string;
  /** `sms` while the conversation is in SMS mode. */
  readonly channel: ChannelName;
  readonly sms: SmsSettings;
}

/** One message as an outbox row. Throws MessageValidationError naming bot, state and field. */
export function toOutbound(m: Message, ctx: OutboundContext, state: string, fallbackOf?: number): NewOutbound {
  try {
    if (isInteractive(m) && ctx.channel === 'interactive') {
      const request = toInteractiveRequest(m, { from: ctx.sender, to: ctx.user, flowToken: ctx.flowToken });
      return { kind: m.kind, message: m, channel: 'interactive', request, fallbackOf };
    }
    return { kind: m.kind, message: m, channel: 'sms', request: smsRequest(smsText(m, ctx), ctx), fallbackOf };
  } catch (err) {
    if (err instanceof MessageValidationError) throw err.withOrigin({ bot: ctx.bot.id, state });
    throw err;
  }
}

/** The text a message reads as by SMS, within the bot's segment limit. */
export function smsText(m: Message, ctx: { bot: Bot }): string {
  if (m.kind === 'text' || m.kind === 'sms') return m.text;
  const maxSegments = ctx.bot.options.fallback?.maxSegments;
  return renderSms(m, maxSegments === undefined ? {} : { maxSegments });
}

function smsRequest(text: string, ctx: OutboundContext) {
  return toSmsRequest(text, { to: ctx.user, tag: ctx.bot.options.smsTag ?? ctx.bot.id, ...ctx.sms });
}
