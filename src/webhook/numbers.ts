/**
 * Which bot an inbound is for: the one whose sending number is the number the user wrote to. A
 * number no bot serves has no bot, even when only one bot is served: on a webhook shared by several
 * numbers, answering a chat meant for another number from our own would be worse than refusing it.
 */
import type { Bot } from '../conversation/bot.js';
import { ConfigError } from '../errors.js';

/** A phone number as digits only: `+52 55 1234-5678` → `525512345678`. */
export function digitsOf(number: string): string {
  return number.replace(/[^0-9]/g, '');
}

/** Finds bot ids by their number. */
export class BotNumbers {
  // Number → bot id: two versions of one bot (same id) share its sender and route together.
  private readonly byNumber = new Map<string, string>();

  /** Throws ConfigError when there is no bot, or two different bots share a number. */
  constructor(bots: readonly Bot[], defaultSender: string) {
    if (bots.length === 0) throw new ConfigError('bots', 'the runtime serves no bot: the webhook has nowhere to deliver');
    for (const bot of bots) this.add(bot, defaultSender);
  }

  /** The id of the bot whose sender is `number` (any formatting), or undefined when no bot has it. */
  botIdFor(number: string): string | undefined {
    return this.byNumber.get(digitsOf(number));
  }

  /** Whether some bot sends from `number` (any formatting). */
  serves(number: string): boolean {
    return this.byNumber.has(digitsOf(number));
  }

  /** The numbers served, digits only. */
  get numbers(): string[] {
    return [...this.byNumber.keys()];
  }

  private add(bot: Bot, defaultSender: string): void {
    const number = digitsOf(bot.options.sender ?? defaultSender);
    if (number === '') throw new ConfigError('defaultSender', `bot "${bot.id}" has no sender number and no default sender is configured`);
    const other = this.byNumber.get(number);
    if (other !== undefined && other !== bot.id) throw new ConfigError('sender', `bots "${other}" and "${bot.id}" both use the number ${number}: inbound messages could not be routed`);
    this.byNumber.set(number, bot.id);
  }
}
