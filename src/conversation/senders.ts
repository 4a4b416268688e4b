/**
 * Who sends a bot's messages: its provider (the deployment's, or its number's in the numbers
 * file), the business number it sends from, and the Cloud API `phone_number_id` of that number
 * (the bot's `phoneNumberId`, else its number's in the numbers file, else the one the user last
 * wrote to).
 */
import { ConfigError } from '../errors.js';
import type { NumberConfig, NumbersConfig } from '../numbers/types.js';
import type { UserMessageFact } from '../store/types.js';
import { asSeedProvider } from '../transport/seed.js';
import { isProvider, type Provider } from '../transport/provider.js';
import type { SendAdapter } from '../transport/types.js';
import type { Bot } from './bot.js';

/** What {@link Senders} is built from. */
export interface SendersOptions {
  /** The deployment's provider (a bare send adapter is read as the seed provider). */
  readonly provider: SendAdapter;
  /** Providers of particular bots (from the numbers file), by bot id. */
  readonly byBot?: Readonly<Record<string, SendAdapter>> | undefined;
  /** The default business number. */
  readonly sender: string;
  readonly numbers?: NumbersConfig | undefined;
}

/** Resolves a bot's provider and numbers. */
export class Senders {
  readonly default: Provider;
  private readonly byBot = new Map<string, Provider>();
  private readonly numbersOf = new Map<string, NumberConfig[]>();

  constructor(private readonly o: SendersOptions) {
    this.default = providerOf(o.provider);
    for (const [bot, p] of Object.entries(o.byBot ?? {})) this.byBot.set(bot, providerOf(p));
    for (const n of o.numbers?.numbers ?? []) this.numbersOf.set(n.bot, [...(this.numbersOf.get(n.bot) ?? []), n]);
  }

  /** The provider that carries this bot's messages. */
  provider(botId: string): Provider {
    return this.byBot.get(botId) ?? this.default;
  }

  /** The business number this bot sends from, digits only. */
  from(bot: Bot): string {
    return bot.options.sender ?? this.numbersOf.get(bot.id)?.[0]?.displayNumber ?? this.o.sender;
  }

  /**
   * The `phone_number_id` this bot's message to a user goes from: the bot's own, else its only
   * number's in the numbers file, else the one the user last wrote to (a bot on several numbers
   * answers on the number it was written to).
   */
  numberId(bot: Bot, last: UserMessageFact | undefined): string | undefined {
    if (bot.options.phoneNumberId !== undefined) return bot.options.phoneNumberId;
    const mine = this.numbersOf.get(bot.id) ?? [];
    if (last?.numberId !== undefined && (mine.length === 0 || mine.some((n) => n.phoneNumberId === last.numberId))) return last.numberId;
    return mine[0]?.phoneNumberId;
  }

  /** Every provider in use, once each. */
  get all(): Provider[] {
    return [...new Set([this.default, ...this.byBot.values()])];
  }

  /** Checks what the bots ask of their providers: a window policy naming a template needs a provider with templates. */
  check(bots: readonly Bot[]): void {
    for (const bot of bots) {
      const p = this.provider(bot.id);
      const actions = [bot.options.window?.closed, ...Object.values(bot.options.window?.states ?? {})].filter((a) => a !== undefined);
      // A provider without the window never needs the policy (the example bots name templates and run on both).
      if (p.features.window && actions.some((a) => typeof a === 'object') && !p.features.templates) {
        throw new ConfigError('window', `bot "${bot.id}" names a template for a closed window, but its provider (${p.name}) has no templates`);
      }
    }
  }
}

function providerOf(a: SendAdapter): Provider {
  return isProvider(a) ? a : asSeedProvider(a);
}
