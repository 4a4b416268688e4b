/**
 * A lane's turns: what runs one inbound (the turn's policy, the actor, the commit), a live actor's
 * change outside a turn, and the resume of an invocation a stopped process was running. The
 * worker's lanes call these; the conversations with an invocation running keep their actor here.
 */
import { VersionConflictError, isStoreUnavailable } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import { choicesOf, type Message } from '../messages/message.js';
import { matchSmsReply } from '../messages/sms.js';
import type { Metrics } from '../metrics.js';
import type { CommitResult, ConversationKey, ConversationRecord, HandoffChange, InboxRecord, Store } from '../store/types.js';
import type { Bot } from './bot.js';
import type { RuntimeClock } from './clock.js';
import { replyEvent } from './events.js';
import type { HandoffDesk } from './handoff-desk.js';
import { closeIncompatible, reportIncompatible, reportMigrated } from './incompatible.js';
import { laneKey } from './lanes.js';
import type { ServedBots } from './served.js';
import { commit, hasChildren, openActor, throwIfFailed, type LiveConversation, type Opened, type TurnDeps } from './turn.js';
import {
  completedFlowToken,
  decideTurn,
  factsToRead,
  firedEvent,
  isStaleFlow,
  SKIP_MESSAGES,
  type FactsToRead,
  type RunTurn,
  type TurnDecision,
  type TurnFacts,
  type TurnInputs,
} from './turn-policy.js';
import { unhandledReply } from './unhandled.js';

/** What the turns need. */
export interface TurnsDeps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly bots: ServedBots;
  readonly turn: TurnDeps;
  readonly handoffs: Pick<HandoffDesk, 'waited' | 'changed'>;
  /** Makes a conversation's lane run (again): `sync` commits what its live actor did. */
  readonly kick: (key: ConversationKey, mode?: 'sync' | 'resume') => void;
  /** A commit of this process queued sends, or stored a timer due at `dueAt`. */
  readonly committed: (sends: boolean, dueAt: number | undefined) => void;
}

const MAX_CONFLICT_RETRIES = 5;

/** The turns of this process's lanes. */
export class Turns {
  /** Conversations whose actor runs an invocation, by lane key. */
  readonly live = new Map<string, LiveConversation>();

  constructor(private readonly d: TurnsDeps) {}

  /** Whether the conversation has a live actor (its lane stays held). */
  keeps(key: ConversationKey): boolean {
    return this.live.has(laneKey(key));
  }

  /** Runs one inbound's turn (the lane's handler): a bot error fails the inbound, a store that is unavailable is thrown for the lane to retry. */
  async process(row: InboxRecord): Promise<void> {
    const bot = this.d.bots.newest(row.botId);
    if (!bot) {
      await this.d.store.failInbound(row.id, `no bot "${row.botId}" is served`, this.d.clock.now());
      return;
    }
    const started = performance.now();
    for (let attempt = 0; ; attempt++) {
      try {
        await this.turn(bot, row);
        this.d.metrics.inc('colloquy_turns_total', { bot: bot.id, outcome: 'ok' });
        this.d.metrics.observe('colloquy_turn_seconds', { bot: bot.id }, (performance.now() - started) / 1000);
        return;
      } catch (err) {
        this.dropLive(row);
        // Not the bot's failure: the inbound stays pending and its lane tries the turn again.
        if (isStoreUnavailable(err)) throw err;
        if (err instanceof VersionConflictError && attempt < MAX_CONFLICT_RETRIES) {
          this.d.metrics.inc('colloquy_turn_conflicts_total', { bot: bot.id });
          if ((await this.d.store.inbound(row.id))?.state !== 'pending') return; // another process ran it
          continue;
        }
        this.d.metrics.inc('colloquy_turns_total', { bot: bot.id, outcome: 'error' });
        this.d.logger.error({ err: errorInfo(err), bot: bot.id, user: row.user, inbox: row.id, state: (err as { state?: string }).state }, 'turn failed; the inbound is kept as failed');
        await this.d.store.failInbound(row.id, (err as Error).message ?? String(err), this.d.clock.now());
        return;
      }
    }
  }

  private async turn(newest: Bot, row: InboxRecord): Promise<void> {
    const key = { botId: row.botId, user: row.user };
    const conversation = await this.d.store.activeConversation(key);
    const chosen = conversation && this.d.bots.choose(key.botId, conversation.botVersion, storedValue(conversation))?.bot;
    const inputs: TurnInputs = { inbound: row, newest, conversation, chosen, now: this.d.clock.now() };
    const token = completedFlowToken(row.event);
    const flowCompleted = token === undefined ? undefined : await this.d.store.flowCompleted(token);
    const d = decideTurn({ ...inputs, ...(await this.readFacts(row.id, factsToRead(inputs))), flowCompleted });
    if (d.kind === 'skip') await this.d.store.skipInbound(row.id, SKIP_MESSAGES[d.reason], this.d.clock.now());
    else if (d.kind === 'hold') await this.holdForAgent(row.id, d);
    else await this.runTurn(key, row, d);
  }

  /** Reads what the turn's policy asked for. */
  private async readFacts(inboxId: number, reads: FactsToRead | undefined): Promise<Pick<TurnFacts, 'handoff' | 'timerKeys'>> {
    if (!reads) return {};
    const timerKeys = reads.timers ? (await this.d.store.timers(reads.conversationId)).map((t) => t.key) : undefined;
    const handoff = reads.handoff === undefined ? undefined : await this.d.store.openHandoff(reads.conversationId, reads.handoff === 'as-of-inbound' ? inboxId : undefined);
    return { handoff, timerKeys };
  }

  /** Runs an inbound's event on its conversation's actor and commits what it did. */
  private async runTurn(key: ConversationKey, row: InboxRecord, d: RunTurn): Promise<void> {
    const { bot, conversation: conv, expire, channel, timerKey } = d;
    if (expire !== undefined) this.d.logger.info({ bot: bot.id, user: key.user, conversation: expire }, 'conversation expired after idling; starting a new one');
    const existing = this.live.get(laneKey(key));
    const reuse = conv && existing && existing.conversationId === conv.id && existing.version === conv.version;
    const opened: Opened = reuse ? { live: existing, fresh: false } : await openActor(this.d.turn, bot, key, conv);
    if (!reuse && existing) this.dropLive(key);
    if (opened.incompatible && conv) reportIncompatible(this.d, bot, conv, opened.incompatible);
    if (!opened.live) {
      await closeIncompatible(this.d, bot, conv!, row.id, opened.incompatible);
      return;
    }
    const { live, fresh } = opened;
    if (conv && !fresh && conv.botVersion !== bot.version) reportMigrated(this.d, bot, conv, 'migrated' in opened ? (opened.migrated ?? []) : []);
    const restarted = !fresh ? false : conv !== undefined;
    if (timerKey !== undefined) live.handle.consumeDelay(timerKey); // a live actor still holds it as pending
    // The conversation follows the user: SMS in, SMS out, until they write on WhatsApp again.
    if (conv) live.channel = conv.channel; // a fallback may have moved it since a live actor opened
    if (channel) live.channel = channel;
    const fired = firedEvent(row, live.renameId);
    const event = conv && row.source === 'sms' ? await this.smsReply(conv.id, fired) : fired;
    let extra: readonly Message[] | undefined;
    const handled = !isStaleFlow(event, conv, live.flowToken) && live.handle.offer(event);
    throwIfFailed(bot, live.handle);
    if (!handled && d.userActivity && !fresh) extra = unhandledReply(bot, conv, live.handle, event);
    if (restarted) this.d.logger.warn({ bot: bot.id, user: key.user, conversation: conv?.id }, 'conversation restarted from the initial state');
    const handoff: HandoffChange | undefined = d.handoffTimeout && { timeout: { id: d.handoffTimeout.id, timeoutAt: d.handoffTimeout.timeoutAt } };
    const result = await commit(this.d.turn, { key, bot, conv, live, inboxId: row.id, userActivity: d.userActivity, expire, extra, channel, handoff });
    this.afterCommit(bot, key, live, result);
    if (d.handoffTimeout) this.d.handoffs.waited(d.handoffTimeout, this.d.clock.now());
    this.afterHandoff(bot, result.handoff, expire);
  }

  /** During a handoff the user's message is the agents', not the machine's: stored for the conversation (and sent to the connector) without a turn. */
  private async holdForAgent(inboxId: number, d: Extract<TurnDecision, { kind: 'hold' }>): Promise<void> {
    await this.d.store.holdInbound(inboxId, d.handoff, d.channel, { now: this.d.clock.now(), notify: this.d.turn.notifyHandoffs === true });
    this.d.metrics.inc('colloquy_handoff_messages_total', { bot: d.bot.id, from: 'user' });
    this.d.handoffs.changed();
  }

  private afterHandoff(bot: Bot, change: HandoffChange | undefined, expired: number | undefined): void {
    if (change === undefined && expired === undefined) return;
    if (change && 'open' in change) this.d.metrics.inc('colloquy_handoffs_started_total', { bot: bot.id, queue: change.open.queue ?? '' });
    if (change && 'timeout' in change) this.d.metrics.inc('colloquy_handoffs_timed_out_total', { bot: bot.id });
    this.d.handoffs.changed();
  }

  /** An SMS answering a message that went by SMS: "2", "2." or a choice's title is that choice. */
  private async smsReply(conversationId: number, event: InboxRecord['event']): Promise<InboxRecord['event']> {
    if (event.type !== 'text' || typeof event['text'] !== 'string') return event;
    const last = await this.d.store.lastInteractive(conversationId);
    if (!last?.bySms) return event;
    const choice = matchSmsReply(event['text'], choicesOf(last.record.message as Message));
    return choice ? { ...replyEvent(choice.id, choice.title, 'sms') } : event;
  }

  /** A live actor changed outside a turn (an invoked promise settled): commit what it did. */
  async sync(key: ConversationKey): Promise<void> {
    const live = this.live.get(laneKey(key));
    const bot = live?.handle.bot;
    if (!live || !bot) return;
    const conv = await this.d.store.conversation(live.conversationId);
    if (conv?.status !== 'active' || conv.version !== live.version) {
      this.dropLive(key);
      return;
    }
    live.channel = conv.channel;
    try {
      throwIfFailed(bot, live.handle);
      const result = await commit(this.d.turn, { key, bot, conv, live, userActivity: false });
      this.afterCommit(bot, key, live, result);
      this.afterHandoff(bot, result.handoff, undefined);
    } catch (err) {
      // The store could not take the result now: the live actor keeps it and the lane commits it again.
      if (isStoreUnavailable(err)) throw err;
      this.dropLive(key);
      if (err instanceof VersionConflictError) return;
      this.d.logger.error({ err: errorInfo(err), bot: bot.id, user: key.user, state: live.handle.state }, 'an invocation failed the conversation; the next message starts a new one');
      await this.d.store.commitTurn({
        key,
        conversationId: conv.id,
        expectedVersion: conv.version,
        snapshot: conv.snapshot,
        state: conv.state ?? '',
        status: 'failed',
        flowToken: conv.flowToken,
        userActivity: false,
        outbox: [],
        timers: { upsert: [], remove: [], activeStateNodes: [] },
        now: this.d.clock.now(),
      });
    }
  }

  /** After a restart, re-opens a conversation whose invocation was running (it runs again). */
  async resume(key: ConversationKey): Promise<void> {
    const conv = await this.d.store.activeConversation(key);
    const bot = conv && this.d.bots.choose(key.botId, conv.botVersion, storedValue(conv))?.bot;
    if (!bot || !conv || this.live.has(laneKey(key)) || !hasChildren(conv.snapshot)) return;
    let opened: Opened;
    try {
      opened = await openActor(this.d.turn, bot, key, conv);
    } catch (err) {
      // Its next inbound runs the migration again and fails visibly; nothing to resume meanwhile.
      this.d.logger.error({ err: errorInfo(err), bot: bot.id, version: conv.botVersion, conversation: conv.id, user: key.user }, 'could not resume a conversation: its migration failed');
      return;
    }
    const { live } = opened;
    if (!live) return; // its next inbound ends or fails it, per onIncompatible
    // Dirty: the invocation settled already (between the actor's start and now); sync commits it.
    if (opened.fresh || (!live.handle.busy && !live.handle.dirty)) {
      live.handle.stop();
      return;
    }
    this.d.logger.info({ bot: bot.id, user: key.user, state: live.handle.state }, 'resumed a conversation whose invocation was running when its process stopped; it runs again');
    this.live.set(laneKey(key), live);
    if (live.handle.said.length || live.handle.dirty) this.d.kick(key, 'sync');
  }

  /**
   * A turn committed outside the lane (a Flow endpoint's durable submit): the lane takes its actor
   * when an invocation runs in it (its result commits through the lane, as a turn's would), and
   * `onTurn`, sends and timers follow as after the lane's own turns.
   */
  adopt(bot: Bot, key: ConversationKey, live: LiveConversation, result: CommitResult & { handoff?: HandoffChange | undefined; firstTimerAt?: number | undefined }): void {
    const held = this.live.get(laneKey(key));
    if (held && held !== live) this.dropLive(key);
    this.d.metrics.inc('colloquy_turns_total', { bot: bot.id, outcome: 'ok' });
    this.afterCommit(bot, key, live, result);
    this.afterHandoff(bot, result.handoff, undefined);
    if (this.live.get(laneKey(key)) === live && live.handle.dirty) this.d.kick(key, 'sync');
  }

  private afterCommit(bot: Bot, key: ConversationKey, live: LiveConversation, result: CommitResult & { firstTimerAt?: number | undefined }): void {
    live.conversationId = result.conversationId;
    live.version = result.version;
    const k = laneKey(key);
    // Dirty: an invocation settled while this commit was being written; the next sync commits it.
    if (live.handle.dirty || (live.handle.snapshot.status === 'active' && live.handle.busy)) this.live.set(k, live);
    else {
      if (this.live.get(k) === live) this.live.delete(k);
      // An idle actor has nothing running (an inert clock, no active child) and is dropped here:
      // stopping it (a machine step) only shows in the snapshot onTurn has always been given.
      if (bot.options.onTurn) live.handle.stop();
      else live.handle.release();
    }
    try {
      bot.options.onTurn?.({ user: key.user, snapshot: live.handle.snapshot as never });
    } catch (err) {
      this.d.logger.warn({ err: errorInfo(err), bot: bot.id }, 'onTurn threw');
    }
    this.d.committed(result.outboxIds.length > 0, result.firstTimerAt);
  }

  /** Forgets a conversation's live actor (another process runs it now, or its turn failed). */
  dropLive(key: ConversationKey): void {
    const k = laneKey(key);
    const l = this.live.get(k);
    if (!l) return;
    this.live.delete(k);
    l.handle.stop();
  }
}

/** A stored conversation's state value (undefined before its first turn). */
function storedValue(conv: ConversationRecord): unknown {
  return (conv.snapshot as { value?: unknown } | null)?.value;
}
