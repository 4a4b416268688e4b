/**
 * The agents' side of handoffs: the queue, claiming, writing to the customer and releasing. Agents'
 * messages go into the same outbox as the bot's (marked with the agent's name), so they get the
 * same adapter, order, retries and SMS fallback. Transport-free: the HTTP API and the harness call it.
 */
import { ColloquyError, MessageValidationError } from '../errors.js';
import { bareTextProblem, idProblem } from '../storable.js';
import type { Logger } from '../log.js';
import type { Message } from '../messages/message.js';
import type { Metrics } from '../metrics.js';
import type { AgentActor, AgentStore, AgentVia, ConversationKey, ConversationRecord, HandoffLogEntry, HandoffRecord, HandoffRefusal, Store, TranscriptEntry } from '../store/types.js';
import type { Bot } from './bot.js';
import type { RuntimeClock } from './clock.js';
import { requestFingerprint } from './fingerprint.js';
import { toOutbound, type SmsSettings } from './outbound.js';
import type { Senders } from './senders.js';
import { summarize, type TranscriptLine } from './handoff-lines.js';
import { lastOffered, type Offered } from './handoff-offered.js';
import { handoffFingerprint } from './handoff-watch.js';

/**
 * Why an agent's request was refused: `not_found` (404), `conflict` (409), `invalid` (400),
 * `idempotency_key_reused` (422: the key came before with another body from the same agent; the
 * same key from another agent is a 409 `conflict`), or `forbidden` (403: an agent's credentials
 * naming another agent).
 */
export class HandoffError extends ColloquyError {
  override name = 'HandoffError';
  constructor(
    code: 'not_found' | 'conflict' | 'invalid' | 'idempotency_key_reused' | 'forbidden',
    message: string,
    readonly field?: string,
  ) {
    super(code, message);
  }
}

/** An open handoff as the agents' queue shows it. */
export interface QueuedHandoff {
  readonly conversationId: number;
  readonly bot: string;
  readonly user: string;
  readonly reason: string | null;
  readonly queue: string | null;
  readonly status: 'waiting' | 'claimed';
  /** The agent holding it, when claimed. */
  readonly agent: string | null;
  readonly since: number;
  readonly claimedAt: number | null;
  readonly timeoutAt: number | null;
  /** When the claim goes back to the queue unless its agent acts (null: waiting, or claims never expire). */
  readonly claimIdleUntil: number | null;
  /** The conversation's last lines, oldest first. */
  readonly lastMessages: readonly TranscriptLine[];
}

/** A conversation as an agent reads it. */
export interface AgentConversation {
  readonly conversationId: number;
  readonly bot: string;
  readonly user: string;
  readonly status: ConversationRecord['status'];
  readonly state: string | null;
  readonly channel: ConversationRecord['channel'];
  /** The open handoff, if any. */
  readonly handoff: HandoffRecord | null;
  readonly transcript: readonly TranscriptLine[];
  /** The last list or buttons the user was sent and the choice they tapped after it (null: none). */
  readonly offered: Offered | null;
  /** The handoff log, oldest first: claims, agents' messages, internal notes (never sent to the user), releases, timeouts. */
  readonly log: readonly HandoffLogEntry[];
  /** The server's clock when this was read: countdowns to `handoff.timeoutAt` count from it. */
  readonly now: number;
}

interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Each bot's provider and business number. */
  readonly senders: Senders;
  readonly sms: SmsSettings;
  readonly notify: boolean;
  readonly bot: (id: string) => Bot | undefined;
  /** The conversation has a new inbound (`handoff.ended`). */
  readonly kick: (key: ConversationKey) => void;
  readonly wakeDispatcher: () => void;
  /** How long a claim lasts without its agent's activity (0: forever). */
  readonly claimIdleMs?: number | undefined;
  /** A claim made here goes back to the queue at `at` unless its agent acts: the worker wakes for it. */
  readonly due?: ((at: number) => void) | undefined;
}

const LAST_MESSAGES = 5;

/** The handoff desk of a runtime. */
export class HandoffDesk {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly d: Deps) {}

  /** The store's agents and sessions (who an agents' API request is). */
  get agents(): AgentStore {
    return this.d.store;
  }

  /** Open handoffs, oldest first, each with the conversation's last lines; optionally of one queue, bot or status. */
  async queue(filter: { readonly queue?: string | undefined; readonly bot?: string | undefined; readonly status?: 'waiting' | 'claimed' | undefined } = {}): Promise<QueuedHandoff[]> {
    await this.d.store.closeOrphanHandoffs(this.write()).then((n) => {
      if (n) this.changed();
    });
    const out: QueuedHandoff[] = [];
    for (const h of await this.d.store.openHandoffs()) {
      if ((filter.queue !== undefined && h.queue !== filter.queue) || (filter.bot !== undefined && h.botId !== filter.bot) || (filter.status !== undefined && h.state !== filter.status)) continue;
      const lines = (await this.d.store.transcript(h.conversationId)).map(summarize);
      out.push({
        conversationId: h.conversationId,
        bot: h.botId,
        user: h.user,
        reason: h.reason,
        queue: h.queue,
        status: h.state === 'claimed' ? 'claimed' : 'waiting',
        agent: h.state === 'claimed' ? h.agent : null,
        since: h.startedAt,
        claimedAt: h.claimedAt,
        timeoutAt: h.timeoutAt,
        claimIdleUntil: h.claimIdleUntil,
        lastMessages: lines.slice(-LAST_MESSAGES),
      });
    }
    return out;
  }

  /**
   * Claims the conversation's handoff for `agent` (again by the same agent: no change). An agent
   * given by name only is recorded in the handoff log without how it was known.
   */
  async claim(conversationId: number, agent: string | AgentActor): Promise<HandoffRecord> {
    const conv = await this.conversationOrThrow(conversationId);
    const who = actorOf(agent);
    const r = await this.d.store.claimHandoff(conversationId, who.name, this.write(who.via));
    if (!r.ok) throw refusal(r, conv, 'claim');
    if (r.fresh) {
      this.waited(r.handoff, r.handoff.claimedAt ?? this.d.clock.now());
      this.d.metrics.inc('colloquy_handoffs_claimed_total', { bot: conv.botId });
      if (r.handoff.claimIdleUntil !== null) this.d.due?.(r.handoff.claimIdleUntil);
      this.changed();
    }
    return r.handoff;
  }

  /**
   * Queues a message from `agent` to the customer. With an `idempotencyKey`, the same request again
   * (same agent, same `request`: the body as the agent sent it, by default the message) queues
   * nothing new and answers the first message's id; another request under the same key is refused.
   */
  async send(conversationId: number, actor: string | AgentActor, message: Message, idempotencyKey?: string, request: unknown = message): Promise<{ outboxId: number; duplicate: boolean }> {
    const conv = await this.conversationOrThrow(conversationId);
    const { name: agent, via } = actorOf(actor);
    const bot = this.d.bot(conv.botId);
    if (!bot) throw new HandoffError('not_found', `conversation ${conversationId} belongs to bot "${conv.botId}", which this server does not serve`);
    const ended = new HandoffError('conflict', `conversation ${conversationId} has ended (${conv.status}); nothing is sent`);
    // With a key, an ended conversation may still answer a retry of a message queued before it ended.
    if (conv.status !== 'active' && idempotencyKey === undefined) throw ended;
    let outbound;
    try {
      outbound = toOutbound(
        message,
        { bot, user: conv.user, sender: this.d.senders.from(bot), flowToken: conv.flowToken, channel: conv.channel, sms: this.d.sms, provider: this.d.senders.provider(bot.id) },
        `agent ${agent}`,
      );
    } catch (err) {
      if (err instanceof MessageValidationError) throw new HandoffError('invalid', err.message, err.issues[0] ? `message.${err.issues[0].path.join('.')}` : 'message');
      throw err;
    }
    const fingerprint = idempotencyKey === undefined ? undefined : requestFingerprint(conversationId, agent, request);
    const r = await this.d.store.addAgentMessage({ conversationId, agent, outbound, idempotencyKey, fingerprint, via, now: this.d.clock.now() });
    if (!r.ok) throw conv.status !== 'active' && r.reason === 'none' ? ended : refusal(r, conv, 'message', idempotencyKey);
    if (!r.duplicate) {
      this.d.metrics.inc('colloquy_handoff_messages_total', { bot: conv.botId, from: 'agent' });
      this.d.wakeDispatcher();
      this.changed();
    }
    return { outboxId: r.outboxId, duplicate: r.duplicate };
  }

  /** Releases the handoff: the machine receives `handoff.ended` `{ by, note }`. */
  async release(conversationId: number, agent: string | AgentActor, note?: string): Promise<HandoffRecord> {
    const conv = await this.conversationOrThrow(conversationId);
    if (note !== undefined) checkText(note, 'note');
    const who = actorOf(agent);
    const r = await this.d.store.releaseHandoff(conversationId, who.name, note, this.write(who.via));
    if (!r.ok) throw refusal(r, conv, 'release');
    if (r.handoff.claimedAt === null) this.waited(r.handoff, this.d.clock.now());
    this.d.metrics.inc('colloquy_handoffs_ended_total', { bot: conv.botId });
    this.d.kick(conv);
    this.changed();
    return r.handoff;
  }

  /** Adds an internal note (the user never sees it) to the conversation's open handoff, by any agent. */
  async note(conversationId: number, actor: AgentActor, text: string): Promise<HandoffLogEntry> {
    const conv = await this.conversationOrThrow(conversationId);
    checkText(text, 'text');
    if (text.trim() === '') throw new HandoffError('invalid', 'text: must not be empty', 'text');
    const r = await this.d.store.addHandoffNote(conversationId, { name: checkAgent(actor.name), via: actor.via }, text, this.d.clock.now());
    if (!r.ok) throw refusal(r, conv, 'note');
    this.changed();
    return r.entry;
  }

  /** The conversation's handoff log, oldest first: who claimed, wrote, noted and released, and what the system did. */
  async log(conversationId: number): Promise<HandoffLogEntry[]> {
    await this.conversationOrThrow(conversationId);
    return this.d.store.handoffLog(conversationId);
  }

  /** A conversation's transcript for an agent, agents' messages marked. */
  async conversation(conversationId: number): Promise<AgentConversation> {
    const conv = await this.conversationOrThrow(conversationId);
    const [handoff, transcript, log] = await Promise.all([this.d.store.openHandoff(conversationId), this.d.store.transcript(conversationId), this.d.store.handoffLog(conversationId)]);
    return {
      conversationId,
      bot: conv.botId,
      user: conv.user,
      status: conv.status,
      state: conv.state,
      channel: conv.channel,
      handoff: handoff ?? null,
      transcript: transcript.map((e: TranscriptEntry) => summarize(e)),
      offered: lastOffered(transcript),
      log,
      now: this.d.clock.now(),
    };
  }

  /**
   * A digest of the open handoffs as the store has them (see handoff-watch.ts): it changes when any
   * process on the database changes one, where {@link onChange} hears only this process.
   */
  fingerprint(): Promise<string> {
    return handoffFingerprint(this.d.store);
  }

  /** The runtime's clock (countdowns to a handoff's `timeoutAt` count from it). */
  now(): number {
    return this.d.clock.now();
  }

  /** Called after every handoff change (the connector and the console listen); returns an unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** @internal Something about handoffs changed. */
  changed(): void {
    for (const l of this.listeners) {
      try {
        l();
      } catch (err) {
        this.d.logger.warn({ err }, 'a handoff listener threw');
      }
    }
  }

  /** @internal Records the time a handoff waited for an agent. */
  waited(h: HandoffRecord, until: number): void {
    this.d.metrics.observe('colloquy_handoff_wait_seconds', { bot: h.botId }, Math.max(0, until - h.startedAt) / 1000);
  }

  private write(via?: AgentVia) {
    return { now: this.d.clock.now(), notify: this.d.notify, claimIdleMs: this.d.claimIdleMs, ...(via !== undefined && { via }) };
  }

  private async conversationOrThrow(id: number): Promise<ConversationRecord> {
    const conv = Number.isSafeInteger(id) && id > 0 ? await this.d.store.conversation(id) : undefined;
    if (!conv) throw new HandoffError('not_found', `no conversation ${id}`);
    return conv;
  }
}

/** The acting agent, its name checked; a bare name says nothing of how it was known. */
function actorOf(agent: string | AgentActor): { readonly name: string; readonly via: AgentVia | undefined } {
  return typeof agent === 'string' ? { name: checkAgent(agent), via: undefined } : { name: checkAgent(agent.name), via: agent.via };
}

/** A note's or a release note's text: at most 2000 characters a store can keep. */
function checkText(text: string, field: string): void {
  if (text.length > 2000) throw new HandoffError('invalid', `${field} must be at most 2000 characters`, field);
  const unstorable = bareTextProblem(text);
  if (unstorable !== undefined) throw new HandoffError('invalid', `${field}: ${unstorable}`, field);
}

/** Why `name` cannot be an agent's name (1–64 characters, not blank, no control characters), or undefined when it can. */
export function agentNameProblem(name: string): string | undefined {
  if (name.trim() === '') return 'must not be empty';
  return idProblem(name, 64);
}

/** An agent's name: 1–64 characters, no control characters. */
function checkAgent(agent: string): string {
  if (typeof agent !== 'string' || agentNameProblem(agent) !== undefined) {
    throw new HandoffError('invalid', 'agent must be a name of 1 to 64 characters, without control characters or unpaired surrogates', 'agent');
  }
  return agent;
}

function refusal(r: HandoffRefusal, conv: ConversationRecord, what: 'claim' | 'message' | 'release' | 'note', key?: string): HandoffError {
  // The key was looked up first: a refusal past it means no message was queued under this key.
  const keyed = key === undefined ? '' : ` (Idempotency-Key ${JSON.stringify(key)}: no message is queued under it)`;
  if (r.reason === 'agent_gone') return new HandoffError('forbidden', `conversation ${conv.id}: cannot ${what}: the agent was removed while the request ran`);
  if (r.reason === 'key_reused') {
    return new HandoffError(
      'idempotency_key_reused',
      `Idempotency-Key ${JSON.stringify(key)} was already used on conversation ${conv.id} for another body: this request queued nothing; send a new message with a new key`,
      'Idempotency-Key',
    );
  }
  if (r.reason === 'key_taken') {
    return new HandoffError(
      'conflict',
      `Idempotency-Key ${JSON.stringify(key)} was already used on conversation ${conv.id} by another agent: this request queued nothing; send with a key of your own`,
      'Idempotency-Key',
    );
  }
  if (r.reason === 'none') return new HandoffError('conflict', `conversation ${conv.id} is not handed over to a person (no open handoff)${keyed}`);
  const h = r.handoff;
  // Waiting with an agent: the claim went back to the queue (its agent was idle too long).
  const holder = h?.state === 'claimed' ? `agent "${h.agent}" holds it` : h?.agent ? `nobody holds it now (agent "${h.agent}"'s claim went back to the queue)` : 'nobody has claimed it';
  return new HandoffError('conflict', `conversation ${conv.id}: cannot ${what}: ${holder}${what === 'message' ? ' (claim it first)' : ''}${keyed}`);
}
