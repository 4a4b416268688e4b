/**
 * The pre-deploy check: which live conversations a set of bot versions would strand, that is,
 * leave in a state that exists neither in the version that would run them nor via a migration
 * (or whose migration throws).
 */
import type { ConversationRecord, Store } from '../store/types.js';
import type { Bot } from './bot.js';
import { ServedBots } from './served.js';
import { migrateSnapshot, missingStates, statePaths, type IncompatiblePolicy } from './versions.js';

/** A group of live conversations in one state of one bot version that the bots given would strand. */
export interface StrandedGroup {
  readonly bot: string;
  /** The version the conversations are on. */
  readonly version: number;
  /** Their state, as dotted paths. */
  readonly state: string;
  /** The version that would run them. */
  readonly toVersion: number;
  /** What is missing there (after any renames), or the migration's error. */
  readonly reason: string;
  /** What will happen to them: the bot's `onIncompatible`. */
  readonly policy: IncompatiblePolicy;
  readonly conversations: readonly number[];
}

/** The result of {@link findStranded}. */
export interface StrandReport {
  /** Live conversations checked (those of the bots given). */
  readonly checked: number;
  readonly stranded: readonly StrandedGroup[];
  /** Live conversations of bots not among those given, by bot id (not checked). */
  readonly otherBots: Readonly<Record<string, number>>;
}

/** Checks every active conversation of the store against the bot versions that would be served. */
export async function findStranded(store: Store, bots: readonly Bot[]): Promise<StrandReport> {
  const served = new ServedBots(bots);
  const groups = new Map<string, { bot: string; version: number; state: string; toVersion: number; reason: string; policy: IncompatiblePolicy; conversations: number[] }>();
  const otherBots: Record<string, number> = {};
  let checked = 0;
  for (const conv of await store.conversations({ status: 'active' })) {
    const choice = served.choose(conv.botId, conv.botVersion, (conv.snapshot as { value?: unknown } | null)?.value);
    if (!choice) {
      otherBots[conv.botId] = (otherBots[conv.botId] ?? 0) + 1;
      continue;
    }
    checked++;
    const reason = strandReason(choice.bot, conv);
    if (reason === undefined) continue;
    const state = stateLabel(conv);
    const k = JSON.stringify([conv.botId, conv.botVersion, state, choice.bot.version, reason]);
    const g = groups.get(k) ?? { bot: conv.botId, version: conv.botVersion, state, toVersion: choice.bot.version, reason, policy: choice.bot.onIncompatible, conversations: [] };
    g.conversations.push(conv.id);
    groups.set(k, g);
  }
  const stranded = [...groups.values()].sort((a, b) => a.bot.localeCompare(b.bot) || a.version - b.version || a.state.localeCompare(b.state));
  return { checked, stranded, otherBots };
}

/** Why `bot` could not take the conversation over, or undefined when it can. */
function strandReason(bot: Bot, conv: ConversationRecord): string | undefined {
  const snapshot = conv.snapshot as { value?: unknown } | null;
  if (snapshot === null || typeof snapshot !== 'object') return undefined; // no turn committed yet: it starts fresh anyway
  let value = snapshot.value;
  if (conv.botVersion !== bot.version) {
    try {
      value = (migrateSnapshot(bot, snapshot, conv.botVersion, bot.version).snapshot as { value?: unknown }).value;
    } catch (err) {
      return `migration fails: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  const missing = missingStates(bot.machine, value);
  if (missing.length === 0) return undefined;
  const renamed = conv.botVersion === bot.version ? '' : ' (after its migrations)';
  return `version ${bot.version} has no state ${missing.join(', ')}${renamed}`;
}

/** A conversation's state as dotted paths (`ordering.size`), from its snapshot or its stored text. */
export function stateLabel(conv: ConversationRecord): string {
  const value = (conv.snapshot as { value?: unknown } | null)?.value;
  if (value !== undefined) return statePaths(value).join(', ');
  return conv.state ?? '(none)';
}
