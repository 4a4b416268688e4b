/**
 * One turn: load the conversation, run the machine on the event, and commit the new snapshot with
 * the messages it said, the timers it armed, and the inbox row it consumed, in one transaction.
 */
import { randomBytes } from 'node:crypto';
import { BotError, MessageValidationError } from '../errors.js';
import { FLOW_TOKEN_PLACEHOLDER } from '../messages/builders.js';
import { isInteractive, type Message } from '../messages/message.js';
import { handoffTimeoutAt } from '../store/handoff-types.js';
import type { CommitResult, ConversationKey, ConversationRecord, HandoffChange, NewFlowSubmit, NewOutbound, Store, TimerChanges } from '../store/types.js';
import { ActorHandle, type Said } from './actor.js';
import { DEFAULT_EXPIRE_AFTER_MS, type Bot } from './bot.js';
import { DEFAULT_HANDOFF_TIMEOUT_MS, handoffProblem } from './handoff.js';
import { toOutbound, type SmsSettings } from './outbound.js';
import type { Senders } from './senders.js';
import { prepareSnapshot, type CarriedTimers, type Incompatible } from './restore.js';

/** What a turn needs from the runtime. */
export interface TurnDeps {
  readonly store: Store;
  /** Each bot's provider and business number. */
  readonly senders: Senders;
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
  /** The bot version the conversation runs on (its handle's bot's). */
  readonly botVersion: number;
  /** Timers a migration renamed, committed with the next turn. */
  carried?: CarriedTimers | undefined;
  /** Renames a state node id of the version the conversation was migrated from. */
  readonly renameId?: ((id: string) => string) | undefined;
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
  /** The Flow endpoint's submit this turn ran (stored with it, for its retries). */
  readonly flowSubmit?: NewFlowSubmit | undefined;
}

const TOKEN_BYTES = 18;
/** Random bytes for 256 tokens, drawn at once: one call to the system's generator costs as much as 18 bytes do. */
const TOKEN_POOL_BYTES = TOKEN_BYTES * 256;
let tokenPool = Buffer.alloc(0);
let tokenOffset = 0;

/**
 * A fresh flow token: unguessable (18 bytes from the CSPRNG, never reused), one per flow message a
 * conversation sends. It ends with `.<bot id>.<bot version>` when given, so the Flow endpoint can
 * answer a token no conversation has any more (an older flow's) with that bot's own "expired" text,
 * and tell a flow sent before the conversation moved to another version of its bot.
 */
export function newFlowToken(bot?: { readonly id: string; readonly version: number }): string {
  if (tokenOffset + TOKEN_BYTES > tokenPool.length) {
    tokenPool = randomBytes(TOKEN_POOL_BYTES);
    tokenOffset = 0;
  }
  const token = `ft_${tokenPool.toString('base64url', tokenOffset, tokenOffset + TOKEN_BYTES)}${bot === undefined ? '' : `.${bot.id}.${bot.version}`}`;
  tokenOffset += TOKEN_BYTES;
  return token;
}

/** The bot id and version a flow token ends with ({@link newFlowToken}), if it has them. */
export function flowTokenBot(token: string): { readonly id: string; readonly version: number } | undefined {
  const m = /\.([A-Za-z0-9_-]{1,64})\.([0-9]{1,15})$/.exec(token);
  return m ? { id: m[1]!, version: Number(m[2]) } : undefined;
}

/** Whether a persisted snapshot has children (an invocation was running): cheap, before opening an actor. */
export function hasChildren(snapshot: unknown): boolean {
  const children = (snapshot as { children?: unknown } | null)?.children;
  return typeof children === 'object' && children !== null && Object.keys(children).length > 0;
}

/** Whether the conversation has been idle past the bot's expiry. */
export function isExpired(bot: Bot, conv: ConversationRecord, now: number): boolean {
  return now - conv.lastActivityAt >= (bot.options.expireAfterMs ?? DEFAULT_EXPIRE_AFTER_MS);
}

/** An opened conversation, or (policy `end` or `fail`) the incompatibility that left it unopened. */
export type Opened =
  | { readonly live: LiveConversation; readonly fresh: boolean; readonly incompatible?: Incompatible | undefined; readonly migrated?: readonly number[] | undefined }
  | { readonly live?: undefined; readonly incompatible: Incompatible };

/**
 * Opens the actor for a conversation on `bot`'s version: restored from its snapshot (migrated
 * from an older version first), or new. A snapshot that does not fit that version (a state that
 * exists neither there nor via a migration) follows the bot's `onIncompatible`: `restart` opens a
 * new actor in the same conversation; `end` and `fail` return without an actor, for the caller.
 * Throws a MigrationError when a migration step throws.
 */
export async function openActor(deps: TurnDeps, bot: Bot, key: ConversationKey, conv: ConversationRecord | undefined): Promise<Opened> {
  const input = bot.options.input ? bot.options.input(key) : { user: key.user, botId: key.botId };
  const onChange = () => deps.onLiveChange(key);
  const base = {
    conversationId: conv?.id ?? 0,
    version: conv?.version ?? 0,
    botVersion: bot.version,
    flowToken: conv?.flowToken ?? newFlowToken(bot),
    channel: conv?.channel ?? ('interactive' as const),
  };
  let incompatible: Incompatible | undefined;
  if (conv && conv.snapshot !== null && typeof conv.snapshot === 'object') {
    const timers = conv.botVersion === bot.version ? [] : await deps.store.timers(conv.id);
    const prepared = prepareSnapshot(bot, conv as ConversationRecord & { snapshot: object }, timers);
    if ('incompatible' in prepared) incompatible = prepared.incompatible;
    else {
      const handle = new ActorHandle(bot, prepared.snapshot, input, onChange);
      handle.start();
      if (handle.error === undefined && handle.snapshot.status !== 'error') {
        return { live: { handle, ...base, carried: prepared.carried, renameId: prepared.renameId }, fresh: false, migrated: prepared.steps };
      }
      handle.stop();
      const cause = handle.error ?? (handle.snapshot as { error?: unknown }).error;
      const why = cause instanceof Error ? cause.message : String(cause);
      incompatible = { from: conv.botVersion, to: bot.version, states: [`${conv.state ?? '?'} (${why})`], stored: [conv.state ?? '?'] };
    }
    if (bot.onIncompatible !== 'restart') return { incompatible };
  }
  const handle = new ActorHandle(bot, undefined, input, onChange);
  handle.start();
  throwIfFailed(bot, handle);
  return { live: { handle, ...base }, fresh: true, incompatible };
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
export async function commit(deps: TurnDeps, plan: TurnPlan): Promise<CommitResult & { handoff?: HandoffChange | undefined; firstTimerAt?: number | undefined }> {
  const { bot, live, key } = plan;
  const handle = live.handle;
  handle.dirty = false;
  const taken = handle.takeSaid();
  const said = saidMessages(bot, taken);
  const requests = handle.handoffs.splice(0);
  const opened = requestedHandoff(bot, requests);
  const state = handle.state;
  const all = [...said, ...(plan.extra ?? []).map((message) => ({ state, message }))];
  const flowToken = nextFlowToken(live, said, plan.extra ?? []);
  const ctx = { bot, user: key.user, sender: deps.senders.from(bot), flowToken, channel: live.channel, sms: deps.sms, provider: deps.senders.provider(bot.id) };
  const outbox: NewOutbound[] = all.map((m) => toOutbound(m.message, ctx, m.state));
  const now = deps.now();
  const snapshot = handle.actor.getPersistedSnapshot();
  const status = plan.status ?? (handle.snapshot.status === 'done' ? 'done' : 'active');
  const handoff = opened ?? plan.handoff;
  const timers = handle.takeTimers(now);
  const carried = live.carried;
  const stored = withCarried(timers, live);
  try {
    const result = await deps.store.commitTurn({
      key,
      conversationId: plan.conv?.id,
      expectedVersion: plan.conv?.version ?? 0,
      snapshot,
      state,
      status,
      flowToken,
      flowTokenChanged: plan.conv !== undefined && flowToken !== plan.conv.flowToken,
      flowSubmit: plan.flowSubmit,
      botVersion: live.botVersion,
      channel: plan.channel ?? (plan.conv ? undefined : live.channel),
      lastPrompt: keepsPrompt(plan.conv, state, said) ? undefined : promptOf(said.map((s) => s.message)),
      userActivity: plan.userActivity,
      expire: plan.expire,
      inboxId: plan.inboxId,
      outbox,
      timers: stored,
      now,
      handoff,
      notifyHandoffs: deps.notifyHandoffs,
    });
    live.flowToken = flowToken;
    return { ...result, handoff, firstTimerAt: firstTimerAt(stored, handoff, now) };
  } catch (err) {
    // Nothing was committed: a retry of this commit must carry the same messages, timers and migrated timers.
    handle.giveBack(taken, timers);
    handle.handoffs.unshift(...requests);
    live.carried = carried;
    throw err;
  }
}

/**
 * The flow token after this turn: a new one when the machine sent a flow (each flow message has its
 * own, so the Flow endpoint knows which one the user opened and the older ones stop being current),
 * or when a flow is sent again as the prompt with a token of another bot version (after a deploy,
 * the form sent again opens on the new version); else the one it has (an earlier copy of the same
 * prompt, and a navigate flow's answer after a deploy, still come back).
 */
function nextFlowToken(live: LiveConversation, said: readonly { message: Message }[], again: readonly Message[]): string {
  const isFlow = (m: Message) => m.kind === 'flow' && m.flow.action.parameters.flow_token === FLOW_TOKEN_PLACEHOLDER;
  const stale = flowTokenBot(live.flowToken)?.version !== live.botVersion;
  return said.some((s) => isFlow(s.message)) || (stale && again.some(isFlow)) ? newFlowToken(live.handle.bot) : live.flowToken;
}

/** When the soonest timer a commit stores fires: a delay the machine armed, or an opened handoff's timeout. */
function firstTimerAt(timers: TimerChanges, handoff: HandoffChange | undefined, now: number): number | undefined {
  let first = handoff !== undefined && 'open' in handoff ? handoffTimeoutAt(now, handoff.open) : undefined;
  for (const t of timers.upsert) if (first === undefined || t.fireAt < first) first = t.fireAt;
  return first;
}

/** The turn's timer changes plus those a migration carried over (once; only where their state is still active). */
function withCarried(t: TimerChanges, live: LiveConversation): TimerChanges {
  const carried = live.carried;
  if (!carried) return t;
  live.carried = undefined;
  const active = new Set(t.activeStateNodes);
  const keep = carried.upsert.filter((c) => (c.stateNode === null || active.has(c.stateNode)) && !t.upsert.some((u) => u.key === c.key));
  return { upsert: [...keep, ...t.upsert], remove: [...carried.remove, ...t.remove], activeStateNodes: t.activeStateNodes };
}

/** The handoff the machine asked for in this turn (the last one, if several); errors name bot and state. */
export function requestedHandoff(bot: Bot, requests: readonly ({ state: string; options: import('./handoff.js').HandoffOptions } | { state: string; error: unknown })[]): HandoffChange | undefined {
  const last = requests.at(-1);
  if (last === undefined) return undefined;
  if ('error' in last) {
    throw new BotError(
      `Bot "${bot.id}", state "${last.state}": handoff() failed: ${last.error instanceof Error ? last.error.message : String(last.error)}`,
      { bot: bot.id, state: last.state },
      { cause: last.error },
    );
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
