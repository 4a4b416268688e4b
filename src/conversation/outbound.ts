/**
 * From what a state said to outbox rows: each message validated and addressed, on the channel it
 * goes by. Errors name the bot, the state and the field.
 */
import { MessageValidationError } from '../errors.js';
import type { Message } from '../messages/message.js';
import { toSmsRequest } from '../messages/request.js';
import type { Provider } from '../transport/provider.js';
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
  /** The provider that carries the bot's WhatsApp messages (absent: only SMS can be built). */
  readonly provider?: Pick<Provider, 'name' | 'features' | 'request'> | undefined;
}

/**
 * Whether a message goes on the WhatsApp channel: lists, buttons and flows always (unless the
 * conversation is in SMS mode), text when the provider carries text, a template always (a
 * template needs no open window, so it is WhatsApp's way back to a user on SMS; by SMS it goes
 * only as its own `sms` text).
 */
function onWhatsApp(m: Message, ctx: OutboundContext): boolean {
  if (m.kind === 'sms') return false;
  if (m.kind === 'template') return !(ctx.channel === 'sms' && m.sms !== undefined);
  if (ctx.channel === 'sms') return false;
  if (m.kind === 'text') return ctx.provider?.features.text === true;
  return true;
}

/** One message as an outbox row. Throws MessageValidationError naming bot, state and field. */
export function toOutbound(m: Message, ctx: OutboundContext, state: string, fallbackOf?: number): NewOutbound {
  try {
    if (onWhatsApp(m, ctx)) {
      const provider = ctx.provider;
      if (provider === undefined) throw new MessageValidationError([{ path: [m.kind], message: 'no provider carries WhatsApp messages here' }]);
      if (m.kind === 'template' && !provider.features.templates) {
        throw new MessageValidationError([{ path: ['template'], message: `the ${provider.name} provider has no templates: send templates through the Cloud API (COLLOQUY_PROVIDER=cloud-api)` }]);
      }
      const request = provider.request(m, { from: ctx.sender, to: ctx.user, flowToken: ctx.flowToken });
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
