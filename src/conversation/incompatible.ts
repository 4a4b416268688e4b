/**
 * What the runtime does around a version change: count and log a migration, count and log a
 * conversation no version or migration can carry, and close it as the bot's `onIncompatible` says.
 */
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { ConversationRecord, Store } from '../store/types.js';
import type { Bot } from './bot.js';
import type { RuntimeClock } from './clock.js';
import type { Incompatible } from './restore.js';
import { IncompatibleStateError } from './versions.js';

/** The parts of the runtime these need. */
interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly metrics: Metrics;
  readonly logger: Logger;
}

/** Counts and logs a conversation whose state the version that would run it does not have. */
export function reportIncompatible(d: Deps, bot: Bot, conv: ConversationRecord, i: Incompatible): void {
  d.metrics.inc('colloquy_incompatible_conversations_total', {
    bot: bot.id,
    version: String(i.from),
    policy: bot.onIncompatible,
  });
  d.logger.warn(
    { bot: bot.id, version: i.from, toVersion: i.to, state: i.stored.join(', '), missing: i.states.join(', '), conversation: conv.id, user: conv.user, policy: bot.onIncompatible },
    `conversation ${conv.id} is in a state version ${i.to} of bot "${bot.id}" does not have (${i.states.join(', ')}); onIncompatible: ${bot.onIncompatible}`,
  );
}

/**
 * Counts and logs a conversation brought to a newer version by its migrations, or (a rollback: its
 * own, newer version is not served) taken over by an older version whose states it fits.
 */
export function reportMigrated(d: Deps, bot: Bot, conv: ConversationRecord, steps: readonly number[]): void {
  if (conv.botVersion > bot.version) {
    d.logger.warn(
      { bot: bot.id, version: conv.botVersion, toVersion: bot.version, conversation: conv.id, user: conv.user, state: conv.state },
      `conversation ${conv.id} of version ${conv.botVersion} now runs on version ${bot.version} of bot "${bot.id}" (version ${conv.botVersion} is not served)`,
    );
    return;
  }
  d.metrics.inc('colloquy_conversations_migrated_total', { bot: bot.id, from: String(conv.botVersion), to: String(bot.version) });
  d.logger.info(
    { bot: bot.id, version: conv.botVersion, toVersion: bot.version, steps, conversation: conv.id, user: conv.user, state: conv.state },
    `conversation ${conv.id} migrated from version ${conv.botVersion} to ${bot.version}`,
  );
}

/**
 * `onIncompatible: 'end'` closes the conversation as expired, consuming the inbound with a note
 * (it is not run); `'fail'` fails the inbound and the conversation, and throws the reason.
 */
export async function closeIncompatible(d: Deps, bot: Bot, conv: ConversationRecord, inboxId: number, i: Incompatible): Promise<void> {
  const why = `state ${i.stored.join(', ')} of version ${i.from} exists neither in version ${i.to} of bot "${bot.id}" nor via a migration`;
  const none = { upsert: [], remove: [], activeStateNodes: [] };
  const close = { conversationId: conv.id, expectedVersion: conv.version, snapshot: conv.snapshot, state: conv.state ?? '', flowToken: conv.flowToken, userActivity: false, outbox: [], timers: none };
  if (bot.onIncompatible === 'end') {
    await d.store.commitTurn({
      ...close,
      key: { botId: conv.botId, user: conv.user },
      status: 'expired',
      inboxId,
      inboxNote: `not run: the conversation ended because its ${why}`,
      now: d.clock.now(),
    });
    return;
  }
  // Failed while the conversation is still active, so the inbound stays in its transcript.
  const err = new IncompatibleStateError(bot.id, i.from, i.stored.join(', '), `conversation ${conv.id} failed: ${why}`);
  await d.store.failInbound(inboxId, err.message, d.clock.now());
  await d.store.commitTurn({ ...close, key: { botId: conv.botId, user: conv.user }, status: 'failed', now: d.clock.now() });
  throw err;
}
