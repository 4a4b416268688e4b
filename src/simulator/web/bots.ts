/** What the web simulator tells the page about each bot: its number and the forms of its flows. */
import type { Bot, FlowForm } from '../../conversation/bot.js';

/** A bot as the page sees it. */
export interface BotInfo {
  readonly id: string;
  /** The number the bot sends from, and the one a user writes to (inbound routing uses it). */
  readonly number: string;
  /** The `tag` of the bot's SMS, which tells its SMS apart from other bots'. */
  readonly smsTag: string;
  /** The Cloud API `phone_number_id` it sends from, when the bot names one (`phoneNumberId`). */
  readonly phoneNumberId?: string | undefined;
  /** Forms to show for the bot's flows, by `flow_id`. */
  readonly flowForms: Readonly<Record<string, FlowForm>>;
}

/** Describes the served bots; a bot without a `sender` of its own uses `defaultSender`. */
export function botInfos(bots: readonly Bot[], defaultSender: string): BotInfo[] {
  return bots.map((bot) => ({
    id: bot.id,
    number: (bot.options.sender ?? defaultSender).replace(/[^0-9]/g, ''),
    smsTag: bot.options.smsTag ?? bot.id,
    ...(bot.options.phoneNumberId !== undefined && { phoneNumberId: bot.options.phoneNumberId }),
    flowForms: bot.options.flowForms ?? {},
  }));
}
