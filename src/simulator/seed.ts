/**
 * A conversation as an older version of a bot left it, put into a store before a test runs: how
 * the harness and `checkRehydration` test a migration.
 */
import type { AnyStateMachine } from 'xstate';
import { stateText } from '../conversation/actor.js';
import type { Bot } from '../conversation/bot.js';
import { newFlowToken } from '../conversation/turn.js';
import { migrateSnapshot, missingStates, pruneHistory } from '../conversation/versions.js';
import type { ConversationKey, Store, TimerSpec } from '../store/types.js';
import { ExpectationError } from './harness-expect.js';

/** A conversation stored by an older version of the bot. */
export interface OlderConversation {
  /** Its persisted snapshot: `actor.getPersistedSnapshot()` of the old machine, or a `snapshot` column's JSON. */
  readonly snapshot: unknown;
  /** The bot version that stored it (a positive integer). */
  readonly version: number;
  /** Its pending durable timers, as the timers table held them (optional). */
  readonly timers?: readonly TimerSpec[] | undefined;
}

/** Checks an {@link OlderConversation} and stores it as the user's active conversation. */
export async function seedConversation(store: Store, key: ConversationKey, from: OlderConversation, now: number): Promise<void> {
  if (!Number.isSafeInteger(from.version) || from.version < 1) throw new ExpectationError(`from.version must be a positive integer (got ${JSON.stringify(from.version)})`);
  const value = (from.snapshot as { value?: unknown } | null)?.value;
  if (typeof from.snapshot !== 'object' || from.snapshot === null || value === undefined) throw new ExpectationError('from.snapshot must be a persisted XState snapshot (an object with a value)');
  await store.commitTurn({
    key,
    conversationId: undefined,
    expectedVersion: 0,
    snapshot: from.snapshot,
    state: stateText(value),
    status: 'active',
    flowToken: newFlowToken(),
    botVersion: from.version,
    userActivity: true,
    outbox: [],
    timers: { upsert: from.timers ?? [], remove: [], activeStateNodes: [] },
    now,
  });
}

/**
 * The snapshot the bot would run an older conversation from (its migrations applied), for a run
 * of the machine alone; throws naming what is missing when no state of the bot's version fits.
 */
export function migratedSnapshot(bot: Bot, from: OlderConversation): unknown {
  const m = migrateSnapshot(bot, from.snapshot, from.version, bot.version);
  const missing = missingStates(bot.machine as AnyStateMachine, (m.snapshot as { value?: unknown }).value);
  if (missing.length) {
    throw new ExpectationError(
      `The version-${from.version} conversation is in ${missing.join(', ')} after the migrations, which version ${bot.version} of bot "${bot.id}" does not have (onIncompatible '${bot.onIncompatible}' would apply).`,
    );
  }
  return pruneHistory(bot.machine as AnyStateMachine, m.snapshot);
}
