/**
 * The turn's policy, as pure functions: what to do with an inbound given the user's active
 * conversation, the bot, the time and what the store knows about the conversation's handoff and
 * timers. The runtime reads those facts, asks {@link decideTurn}, and acts on the answer: skip
 * the inbound with a reason, hold it for the agents of a handoff, or run its event as a turn.
 *
 * The policy needs a handoff or the timers only for some inbounds; {@link factsToRead} says which,
 * so a user's message in a conversation without a handoff costs no more reads than it needs.
 */
import type { ChannelName, ConversationRecord, HandoffRecord, InboxRecord, InboundSource } from '../store/types.js';
import { HANDOFF_TIMER_KEY } from '../store/handoff-types.js';
import type { Bot } from './bot.js';
import { isUserEvent } from './events.js';
import { isExpired } from './turn.js';
import { renameDelayKey } from './versions.js';

/** Why an inbound is consumed without a turn. */
export type SkipReason =
  /** A timer, delivery report or handoff release of a conversation that is no longer the active one. */
  | 'conversation-ended'
  /** A timer whose state was left and entered again after it fired: the new entry's own delay stands. */
  | 'state-reentered'
  /** A handoff's timeout that fired after an agent claimed it, it ended, or it was opened again. */
  | 'handoff-settled'
  /** The `nfm_reply` of a flow whose last submit already ran its turn at the Flow endpoint. */
  | 'flow-completed';

/** The error text a skipped inbound is kept with (the transcript and the inbox show it). */
export const SKIP_MESSAGES: Readonly<Record<SkipReason, string>> = {
  'conversation-ended': 'its conversation has ended',
  'state-reentered': 'its state was entered again after it fired',
  'handoff-settled': 'its handoff was claimed or ended before it timed out',
  'flow-completed': 'its flow was completed at the Flow endpoint, whose submit ran the turn',
};

/** What the policy reads before any handoff or timer is known. */
export interface TurnInputs {
  /** The inbound (its source, event, and the typed facts of Colloquy's own inbounds). */
  readonly inbound: Pick<InboxRecord, 'source' | 'event' | 'timer' | 'delivery' | 'release'>;
  /** The newest served version of the inbound's bot: a new conversation starts on it. */
  readonly newest: Bot;
  /** The user's active conversation with the bot, if any. */
  readonly conversation: ConversationRecord | undefined;
  /** The served version that runs the active conversation; undefined: none fits, the newest is tried. */
  readonly chosen: Bot | undefined;
  readonly now: number;
}

/** What the policy reads from the store for some inbounds ({@link factsToRead}). */
export interface TurnFacts extends TurnInputs {
  /** The handoff {@link factsToRead} asked for, undefined when there is none (or none was asked for). */
  readonly handoff?: HandoffRecord | undefined;
  /** The keys of the conversation's pending timers, when {@link factsToRead} asked for them. */
  readonly timerKeys?: readonly string[] | undefined;
  /**
   * For a completed flow's answer (`nfm_reply`, see {@link completedFlowToken}): whether the Flow
   * endpoint ran its completing submit already (the conversation may have ended with it).
   */
  readonly flowCompleted?: boolean | undefined;
}

/** The store reads an inbound's decision needs, all about the active conversation. */
export interface FactsToRead {
  readonly conversationId: number;
  /**
   * `as-of-inbound`: the handoff open when the inbound arrived (one an agent released after it
   * still counts: the user wrote to the agent); `open`: the handoff open now.
   */
  readonly handoff?: 'as-of-inbound' | 'open' | undefined;
  /** The conversation's pending timers. */
  readonly timers: boolean;
}

/** A turn to run. */
export interface RunTurn {
  readonly kind: 'run';
  /** The version that runs it. */
  readonly bot: Bot;
  /** The conversation it continues; undefined: it starts a new one. */
  readonly conversation: ConversationRecord | undefined;
  /** A conversation idle past its expiry that this turn expires (and replaces with a new one). */
  readonly expire?: number | undefined;
  /** Whether the user wrote it (it counts as activity, and unhandled it gets a re-prompt). */
  readonly userActivity: boolean;
  /** The channel the user wrote on, which the conversation follows; undefined keeps its own. */
  readonly channel: ChannelName | undefined;
  /** The key of the timer that fired it. */
  readonly timerKey?: string | undefined;
  /** The handoff whose timeout this turn delivers to the machine (it settles it as timed out). */
  readonly handoffTimeout?: HandoffRecord | undefined;
}

/** What to do with an inbound. */
export type TurnDecision =
  | { readonly kind: 'skip'; readonly reason: SkipReason }
  /** A user's message during a handoff: it is the agents', stored for the conversation without a turn. */
  | { readonly kind: 'hold'; readonly bot: Bot; readonly handoff: HandoffRecord; readonly channel: ChannelName | undefined }
  | RunTurn;

/** The conversation an inbound meets once an expired one is set aside, and the version that runs it. */
interface Situation {
  readonly userEvent: boolean;
  readonly conversation: ConversationRecord | undefined;
  readonly bot: Bot;
  readonly expired: ConversationRecord | undefined;
}

function situation(f: TurnInputs): Situation {
  const userEvent = isUserEvent(f.inbound.event);
  const conv = f.conversation;
  if (!conv) return { userEvent, conversation: undefined, bot: f.newest, expired: undefined };
  const bot = f.chosen ?? f.newest;
  // Only the user's message ends an idle conversation: a timer or report of it still belongs to it.
  if (userEvent && isExpired(bot, conv, f.now)) return { userEvent, conversation: undefined, bot: f.newest, expired: conv };
  return { userEvent, conversation: conv, bot, expired: undefined };
}

/** The conversation one of Colloquy's own inbounds was made for (undefined for the user's messages). */
function ownerOf(i: TurnInputs['inbound']): number | undefined {
  return i.timer?.conversationId ?? i.delivery?.conversationId ?? i.release?.conversationId;
}

/** Whether the inbound has no conversation to run in: your backend (source `api`) may start one; a timer or report may not. */
function orphaned(s: Situation, i: TurnInputs['inbound']): boolean {
  if (s.userEvent || i.source === 'api') return false;
  if (!s.conversation) return true;
  const owner = ownerOf(i);
  return owner !== undefined && owner !== s.conversation.id;
}

/** What the store must be asked before {@link decideTurn} can decide; undefined: nothing. */
export function factsToRead(f: TurnInputs): FactsToRead | undefined {
  const s = situation(f);
  if (!s.conversation) return undefined;
  const conversationId = s.conversation.id;
  if (s.userEvent) return { conversationId, handoff: 'as-of-inbound', timers: false };
  const key = f.inbound.timer?.key;
  if (key === undefined || orphaned(s, f.inbound)) return undefined;
  return { conversationId, timers: true, ...(key === HANDOFF_TIMER_KEY && { handoff: 'open' as const }) };
}

/**
 * Decides what to do with an inbound. `f` must carry what {@link factsToRead} asked for: a handoff
 * or timers left out read as none.
 */
export function decideTurn(f: TurnFacts): TurnDecision {
  const s = situation(f);
  const channel = channelOf(f.inbound.source);
  if (s.userEvent && f.flowCompleted === true) return { kind: 'skip', reason: 'flow-completed' };
  if (s.conversation && s.userEvent && f.handoff) return { kind: 'hold', bot: s.bot, handoff: f.handoff, channel };
  if (orphaned(s, f.inbound)) return { kind: 'skip', reason: 'conversation-ended' };
  const timer = f.inbound.timer;
  let handoffTimeout: HandoffRecord | undefined;
  if (timer && s.conversation) {
    if (f.timerKeys?.includes(timer.key)) return { kind: 'skip', reason: 'state-reentered' };
    if (timer.key === HANDOFF_TIMER_KEY) {
      // Current only while the handoff still waits with this very timeout (not an earlier handoff's).
      if (f.handoff?.state !== 'waiting' || f.handoff.timeoutAt !== timer.fireAt) return { kind: 'skip', reason: 'handoff-settled' };
      handoffTimeout = f.handoff;
    }
  }
  return {
    kind: 'run',
    bot: s.bot,
    conversation: s.conversation,
    expire: s.expired?.id,
    userActivity: s.userEvent,
    channel,
    timerKey: timer?.key,
    handoffTimeout,
  };
}

/** A completed flow's token: the store says whether its completing submit ran at the Flow endpoint ({@link TurnFacts.flowCompleted}). */
export function completedFlowToken(event: InboxRecord['event']): string | undefined {
  const token = event['token'];
  return event.type === 'flow' && typeof token === 'string' ? token : undefined;
}

/** The channel a user's inbound came by, which the conversation then follows (SMS in, SMS out). */
export function channelOf(source: InboundSource): ChannelName | undefined {
  return source === 'whatsapp' ? 'interactive' : source === 'sms' ? 'sms' : undefined;
}

/** A delay that fired before a migration renamed its state is known by the state's new id now. */
export function firedEvent(inbound: Pick<InboxRecord, 'source' | 'event'>, renameId: ((id: string) => string) | undefined): InboxRecord['event'] {
  return inbound.source === 'timer' && renameId ? { ...inbound.event, type: renameDelayKey(inbound.event.type, renameId) } : inbound.event;
}

/** A flow answer whose token is not the conversation's current one: an old flow's, never offered to the machine. */
export function isStaleFlow(event: InboxRecord['event'], conversation: ConversationRecord | undefined, flowToken: string): boolean {
  return event.type === 'flow' && conversation !== undefined && event['token'] !== flowToken;
}
