/**
 * Which bot an inbound is for: the one whose sending number is the number the user wrote to.
 * With one bot served, everything goes to it.
 */
import type { Bot } from '../conversation/bot.js';
import { ConfigError } from '../errors.js';

/** A phone number as digits only: `+52 55 1234-5678` → `525512345678`. */
export function digitsOf(number: string): string {
  return number.replace(/[^0-9]/g, '');
}

/** Finds bots by their number. */
export class BotNumbers {
  private readonly byNumber = new Map<string, Bot>();
  private readonly only: Bot | undefined;

  /** Throws ConfigError when there is no bot, or two bots share a number. */
  constructor(bots: readonly Bot[], defaultSender: string) {
    if (bots.length === 0) throw new ConfigError('bots', 'the runtime serves no bot: the webhook has nowhere to deliver');
    for (const bot of bots) this.add(bot, defaultSender);
    this.only = bots.length === 1 ? bots[0] : undefined;
  }

  /** The bot for `number` (any formatting), or undefined when no bot has it. */
  botFor(number: string): Bot | undefined {
    return this.only ?? this.byNumber.get(digitsOf(number));
  }

  /** The numbers served, digits only. */
  get numbers(): string[] {
    return [...this.byNumber.keys()];
  }

  private add(bot: Bot, defaultSender: string): void {
    const number = digitsOf(bot.options.sender ?? defaultSender);
    if (number === '') throw new ConfigError('defaultSender', `bot "${bot.id}" has no sender number and no default sender is configured`);
    const other = this.byNumber.get(number);
    if (other) throw new ConfigError('sender', `bots "${other.id}" and "${bot.id}" both use the number ${number}: inbound messages could not be routed`);
    this.byNumber.set(number, bot);
  }
}
