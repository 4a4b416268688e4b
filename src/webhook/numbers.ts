/**
 * Which bot an inbound is for: the one that serves the number the user wrote to. A change's
 * `metadata.phone_number_id` is looked up first (the numbers file, a bot's `phoneNumberId`), then
 * its `display_phone_number` (the numbers file, a bot's `sender`, the default sender). A number no
 * bot serves has no bot, even when only one bot is served: on a webhook shared by several numbers,
 * answering a chat meant for another number from our own would be worse than refusing it.
 */
import type { Bot } from '../conversation/bot.js';
import { ConfigError } from '../errors.js';
import { checkNumberBots } from '../numbers/parse.js';
import type { NumbersConfig } from '../numbers/types.js';

/** A phone number as digits only: `+52 55 1234-5678` → `525512345678`. */
export function digitsOf(number: string): string {
  return number.replace(/[^0-9]/g, '');
}

/** The number a change of the webhook is about: its `metadata`. */
export interface NumberMetadata {
  readonly phone_number_id?: string | undefined;
  readonly display_phone_number: string;
}

/** Finds bot ids by their number. */
export class BotNumbers {
  // Number → bot id: two versions of one bot (same id) share its sender and route together.
  private readonly byNumber = new Map<string, string>();
  private readonly byPhoneNumberId = new Map<string, string>();

  /**
   * Throws ConfigError when there is no bot, two different bots share a number or a
   * phone_number_id, or the numbers file names a bot that is not served. A bot the numbers file
   * gives a number does not also take the default sender; a bot with neither takes it.
   */
  constructor(bots: readonly Bot[], defaultSender: string, numbers?: NumbersConfig) {
    if (bots.length === 0) throw new ConfigError('bots', 'the runtime serves no bot: the webhook has nowhere to deliver');
    if (numbers !== undefined)
      checkNumberBots(
        numbers,
        bots.map((b) => b.id),
      );
    const inFile = new Set(numbers?.numbers.map((n) => n.bot));
    for (const n of numbers?.numbers ?? []) {
      this.add(this.byNumber, n.displayNumber, n.bot, 'number');
      this.add(this.byPhoneNumberId, n.phoneNumberId, n.bot, 'phone_number_id');
    }
    for (const bot of bots) {
      const sender = bot.options.sender ?? (inFile.has(bot.id) ? undefined : defaultSender);
      if (sender !== undefined) this.addSender(bot, sender);
      if (bot.options.phoneNumberId !== undefined) this.add(this.byPhoneNumberId, bot.options.phoneNumberId, bot.id, 'phone_number_id');
    }
  }

  /** The id of the bot whose sender is `number` (any formatting), or undefined when no bot has it. */
  botIdFor(number: string): string | undefined {
    return this.byNumber.get(digitsOf(number));
  }

  /** The bot a change's metadata is for: by `phone_number_id` when one is mapped, else by the display number. */
  botIdOf(metadata: NumberMetadata): string | undefined {
    const id = metadata.phone_number_id;
    return (id !== undefined && this.byPhoneNumberId.get(id)) || this.botIdFor(metadata.display_phone_number);
  }

  /** Whether some bot sends from `number` (any formatting). */
  serves(number: string): boolean {
    return this.byNumber.has(digitsOf(number));
  }

  /** The numbers served, digits only. */
  get numbers(): string[] {
    return [...this.byNumber.keys()];
  }

  private addSender(bot: Bot, sender: string): void {
    const number = digitsOf(sender);
    if (number === '') throw new ConfigError('defaultSender', `bot "${bot.id}" has no sender number and no default sender is configured`);
    this.add(this.byNumber, number, bot.id, 'number');
  }

  private add(map: Map<string, string>, key: string, botId: string, what: 'number' | 'phone_number_id'): void {
    const other = map.get(key);
    if (other !== undefined && other !== botId) {
      throw new ConfigError(what === 'number' ? 'sender' : 'phoneNumberId', `bots "${other}" and "${botId}" both use the ${what} ${key}: inbound messages could not be routed`);
    }
    map.set(key, botId);
  }
}
