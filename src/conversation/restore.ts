/**
 * Bringing a stored conversation to the bot version that will run it: the declared migration
 * steps applied to its snapshot and its durable timers, and a verdict on whether the result fits
 * that version's machine.
 */
import type { ConversationRecord, TimerSpec } from '../store/types.js';
import type { Bot } from './bot.js';
import { migrateSnapshot, missingStates, pruneHistory, renameDelayKey, statePaths } from './versions.js';

/** A stored state that the bot version running the conversation does not have. */
export interface Incompatible {
  /** The version the conversation was on. */
  readonly from: number;
  /** The version that cannot run it. */
  readonly to: number;
  /** The missing states, as dotted paths (after any renames). */
  readonly states: readonly string[];
  /** The states the conversation was in, as stored. */
  readonly stored: readonly string[];
}

/** The timers a migration moves: old keys removed, renamed ones added (kept only if their state is active). */
export interface CarriedTimers {
  readonly upsert: readonly TimerSpec[];
  readonly remove: readonly string[];
}

/** A snapshot ready to restore on `bot`. */
export interface Prepared {
  readonly snapshot: unknown;
  /** The migration steps applied (empty when none). */
  readonly steps: readonly number[];
  readonly carried: CarriedTimers | undefined;
  /** Renames a state node id of the stored version to this one's (for a timer fired before the migration). */
  readonly renameId: ((id: string) => string) | undefined;
}

/**
 * Migrates a stored conversation's snapshot to `bot`'s version (a no-op on its own version) and
 * checks its states exist there. Throws a MigrationError when a step's context function throws.
 */
export function prepareSnapshot(bot: Bot, conv: ConversationRecord & { snapshot: object }, timers: readonly TimerSpec[]): Prepared | { incompatible: Incompatible } {
  const from = conv.botVersion;
  if (from === bot.version) {
    const missing = missingStates(bot.machine, (conv.snapshot as { value?: unknown }).value);
    if (missing.length) return { incompatible: { from, to: bot.version, states: missing, stored: missing } };
    return { snapshot: conv.snapshot, steps: [], carried: undefined, renameId: undefined };
  }
  const m = migrateSnapshot(bot, conv.snapshot, from, bot.version);
  const value = (m.snapshot as { value?: unknown }).value;
  const missing = missingStates(bot.machine, value);
  if (missing.length) return { incompatible: { from, to: bot.version, states: missing, stored: statePaths((conv.snapshot as { value?: unknown }).value) } };
  return { snapshot: pruneHistory(bot.machine, m.snapshot), steps: m.steps, carried: carryTimers(timers, m.renameId), renameId: m.renameId };
}

function carryTimers(timers: readonly TimerSpec[], rename: (id: string) => string): CarriedTimers {
  const upsert: TimerSpec[] = [];
  const remove: string[] = [];
  for (const t of timers) {
    const key = renameDelayKey(t.key, rename);
    const stateNode = t.stateNode === null ? null : rename(t.stateNode);
    if (key === t.key && stateNode === t.stateNode) continue;
    remove.push(t.key);
    upsert.push({ key, stateNode, fireAt: t.fireAt, event: t.event.type === t.key ? { ...t.event, type: key } : t.event });
  }
  return { upsert, remove };
}
