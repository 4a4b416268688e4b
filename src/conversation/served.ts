/**
 * The bots a runtime serves, by id and version. Several versions of one bot may be served at
 * once: new conversations start on the newest; a running one stays on its own version unless
 * every step from it up to a newer served version is declared (then it migrates there).
 */
import { ConfigError } from '../errors.js';
import type { Bot } from './bot.js';
import { missingStates, renamedValue } from './versions.js';

/** Which served version runs a conversation, and what that takes. */
export interface VersionChoice {
  readonly bot: Bot;
  /** The version the conversation was on (undefined for a new one). */
  readonly from: number | undefined;
  /** True when the conversation's own version is no longer served, so it must move to `bot`'s. */
  readonly forced: boolean;
}

/** Bots by (id, version). */
export class ServedBots {
  private readonly byId = new Map<string, Bot[]>();

  constructor(bots: readonly Bot[]) {
    for (const bot of bots) {
      const versions = this.byId.get(bot.id) ?? [];
      if (versions.some((b) => b.version === bot.version)) throw new ConfigError('bots', `two bots have the id "${bot.id}" and version ${bot.version}`);
      versions.push(bot);
      versions.sort((a, b) => b.version - a.version);
      this.byId.set(bot.id, versions);
    }
  }

  /** The newest served version of a bot. */
  newest(id: string): Bot | undefined {
    return this.byId.get(id)?.[0];
  }

  /** One served version of a bot. */
  get(id: string, version: number): Bot | undefined {
    return this.byId.get(id)?.find((b) => b.version === version);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  /** Every served bot, newest version first within an id. */
  all(): Bot[] {
    return [...this.byId.values()].flat();
  }

  /** The newest version of each bot. */
  newestEach(): Bot[] {
    return [...this.byId.values()].map((v) => v[0]!);
  }

  /**
   * The version that runs a conversation recorded on `version` (undefined: a new conversation),
   * in state `value`: the newest served version that declares every step from its version and
   * has its state after the renames; else its own version while served; else the newest.
   */
  choose(id: string, version: number | undefined, value?: unknown): VersionChoice | undefined {
    const versions = this.byId.get(id);
    if (!versions?.length) return undefined;
    const newest = versions[0]!;
    if (version === undefined) return { bot: newest, from: undefined, forced: false };
    const own = versions.find((b) => b.version === version);
    if (!own) return { bot: newest, from: version, forced: true };
    const fits = (b: Bot) => value === undefined || missingStates(b.machine, renamedValue(b, value, version)).length === 0;
    const target = versions.find((b) => b.version > version && declaresPath(b, version) && fits(b));
    return { bot: target ?? own, from: version, forced: false };
  }
}

/** Whether the bot declares every step from `from` up to its own version. */
export function declaresPath(bot: Bot, from: number): boolean {
  for (let v = from + 1; v <= bot.version; v++) if (!bot.migrations[v]) return false;
  return true;
}
