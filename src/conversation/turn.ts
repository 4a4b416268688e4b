/**
 * One turn: load the conversation, run the machine on the event, and commit the new snapshot with
 * the messages it said, the timers it armed, and the inbox row it consumed, in one transaction.
 */
import { randomBytes } from 'node:crypto';
import { BotError, MessageValidationError } from '../errors.js';
import { isInteractive, type Message } from '../messages/message.js';
import type { CommitResult, ConversationKey, ConversationRecord, HandoffChange, NewOutbound, Store } from '../store/types.js';
import { ActorHandle, type Said } from './actor.js';
import { DEFAULT_EXPIRE_AFTER_MS, type Bot } from './bot.js';
import { DEFAULT_HANDOFF_TIMEOUT_MS, handoffProblem } from './handoff.js';
import { toOutbound, type SmsSettings } from './outbound.js';

/** What a turn needs from the runtime. */
export interface TurnDeps {
  readonly store: Store;
  readonly sender: string;
  readonly sms: SmsSettings;
  readonly now: () => number;
  /** Called when a live actor changes outside a turn (an invoked promise settled). */
  readonly onLiveChange: (key: ConversationKey) => void;
  /** Queue the helpdesk connector's events for handoffs (a connector is configured). */
  readonly notifyHandoffs?: boolean | undefined;
}

/** A conversation's actor kept between turns while an invocation runs. */
export interface LiveConversation {
  readonly handle: ActorHandle;
  conversationId: number;
  version: number;
  flowToken: string;
  channel: ConversationRecord['channel'];
}

/** What to commit besides the actor's own state. */
export interface TurnPlan {
  readonly key: ConversationKey;
  readonly bot: Bot;
  readonly conv: ConversationRecord | undefined;
  readonly live: LiveConversation;
  readonly inboxId?: number | undefined;
  readonly userActivity: boolean;
  readonly expire?: number | undefined;
  /** Messages to send besides what the machine said (a re-prompt). */
  readonly extra?: readonly Message[] | undefined;
  readonly status?: 'failed' | undefined;
  /** The channel the user just wrote on, when it changes the conversation's; undefined keeps it. */
  readonly channel?: ConversationRecord['channel'] | undefined;
  /** A handoff timeout this turn settles (the machine received `handoff.timeout`). */
  readonly handoff?: HandoffChange | undefined;
}

/** A fresh flow token: unguessable, one per conversation. */
export function newFlowToken(): string {
  return `ft_${randomBytes(18).toString('base64url')}`;
}

/** Whether the conversation has been idle past the bot's expiry. */
export function isExpired(bot: Bot, conv: ConversationRecord, now: number): boolean {
  return now - conv.lastActivityAt >= (bot.options.expireAfterMs ?? DEFAULT_EXPIRE_AFTER_MS);
}

/**
 * Opens the actor for a conversation: restored from its snapshot, or new. A snapshot that no
 * longer fits the machine (a state was removed) restarts the conversation from the initial state.
 */
export function openActor(deps: TurnDeps, bot: Bot, key: ConversationKey, conv: ConversationRecord | undefined, warn: (msg: string, err: unknown) => void): { live: LiveConversation; fresh: boolean } {
  const input = bot.options.input ? bot.options.input(key) : { user: key.user, botId: key.botId };
  const onChange = () => deps.onLiveChange(key);
  const base = { conversationId: conv?.id ?? 0, version: conv?.version ?? 0, flowToken: conv?.flowToken ?? newFlowToken(), channel: conv?.channel ?? ('interactive' as const) };
  if (conv && conv.snapshot !== null) {
    const handle = new ActorHandle(bot, conv.snapshot, input, onChange);
    handle.start();
    if (handle.error === undefined && handle.snapshot.status !== 'error') return { live: { handle, ...base }, fresh: false };
    warn(`stored snapshot no longer fits bot "${bot.id}"; restarting the conversation from the initial state`, handle.error);
    handle.stop();
  }
  const handle = new ActorHandle(bot, undefined, input, onChange);
  handle.start();
  throwIfFailed(bot, handle);
  return { live: { handle, ...base }, fresh: true };
}

/** Throws a BotError when the actor failed (an action threw, a promise rejected unhandled). */
export function throwIfFailed(bot: Bot, handle: ActorHandle): void {
  if (handle.error === undefined && handle.snapshot.status !== 'error') return;
  const cause = handle.error ?? (handle.snapshot as { error?: unknown }).error;
  throw new BotError(`Bot "${bot.id}" failed in state "${handle.state}": ${cause instanceof Error ? cause.message : String(cause)}`, { bot: bot.id, state: handle.state }, { cause });
}

/** What the machine said, as messages; a builder's error becomes a MessageValidationError naming bot and state. */
export function saidMessages(bot: Bot, said: readonly Said[]): { state: string; message: Message }[] {
  const out: { state: string; message: Message }[] = [];
  for (const s of said) {
    if ('error' in s) {
      if (s.error instanceof MessageValidationError) throw s.error.withOrigin({ bot: bot.id, state: s.state });
      throw new BotError(`Bot "${bot.id}", state "${s.state}": say() failed: ${s.error instanceof Error ? s.error.message : String(s.error)}`, { bot: bot.id, state: s.state }, { cause: s.error });
    }
    for (const message of s.messages) out.push({ state: s.state, message });
  }
  return out;
}

/** Commits the actor's current state with what it said. */
export async function commit(deps: TurnDeps, plan: TurnPlan): Promise<CommitResult & { handoff?: HandoffChange | undefined }> {
  const { bot, live, key } = plan;
  const handle = live.handle;
  handle.dirty = false;
  const said = saidMessages(bot, handle.takeSaid());
  const opened = requestedHandoff(bot, handle.handoffs.splice(0));
  const state = handle.state;
  const all = [...said, ...(plan.extra ?? []).map((message) => ({ state, message }))];
  const ctx = { bot, user: key.user, sender: bot.options.sender ?? deps.sender, flowToken: live.flowToken, channel: live.channel, sms: deps.sms };
  const outbox: NewOutbound[] = all.map((m) => toOutbound(m.message, ctx, m.state));
  const now = deps.now();
  const snapshot = handle.actor.getPersistedSnapshot();
  const status = plan.status ?? (handle.snapshot.status === 'done' ? 'done' : 'active');
  const handoff = opened ?? plan.handoff;
  const result = await deps.store.commitTurn({
    key, conversationId: plan.conv?.id, expectedVersion: plan.conv?.version ?? 0,
    snapshot, state, status, flowToken: live.flowToken, channel: plan.channel ?? (plan.conv ? undefined : live.channel),
    lastPrompt: keepsPrompt(plan.conv, state, said) ? undefined : promptOf(said.map((s) => s.message)), userActivity: plan.userActivity, expire: plan.expire,
    inboxId: plan.inboxId, outbox, timers: handle.takeTimers(now), now,
    handoff, notifyHandoffs: deps.notifyHandoffs,
  });
  return { ...result, handoff };
}

/** The handoff the machine asked for in this turn (the last one, if several); errors name bot and state. */
export function requestedHandoff(bot: Bot, requests: readonly ({ state: string; options: import('./handoff.js').HandoffOptions } | { state: string; error: unknown })[]): HandoffChange | undefined {
  const last = requests.at(-1);
  if (last === undefined) return undefined;
  if ('error' in last) {
    throw new BotError(`Bot "${bot.id}", state "${last.state}": handoff() failed: ${last.error instanceof Error ? last.error.message : String(last.error)}`, { bot: bot.id, state: last.state }, { cause: last.error });
  }
  const problem = handoffProblem(last.options);
  if (problem !== undefined) throw new BotError(`Bot "${bot.id}", state "${last.state}": handoff(): ${problem}`, { bot: bot.id, state: last.state });
  const { reason, queue } = last.options;
  return { open: { reason, queue, timeoutMs: last.options.timeoutMs ?? bot.options.handoffTimeoutMs ?? DEFAULT_HANDOFF_TIMEOUT_MS } };
}

/** A turn that stays in its state and says nothing interactive (a reminder) keeps the prompt it had. */
function keepsPrompt(conv: ConversationRecord | undefined, state: string, said: readonly { message: Message }[]): boolean {
  return conv?.state === state && !said.some((s) => isInteractive(s.message));
}

/** The messages to re-send on unhandled input: the interactive ones said, else the last one. */
function promptOf(messages: readonly Message[]): Message[] | undefined {
  if (messages.length === 0) return undefined;
  const interactive = messages.filter(isInteractive);
  return interactive.length ? interactive : [messages[messages.length - 1]!];
}
