/**
 * The PostgreSQL store (node-postgres, a pool): the {@link Store} port with the SQLite store's
 * guarantees, for several processes on one database. Turns are exactly-once by the version check
 * and the inbound's `pending` guard; every kind of work is claimed with `FOR UPDATE SKIP LOCKED`
 * and leased on the database's clock (see work.ts); a status's rank and idle expiry are decided
 * inside one statement. Transient failures surface as `StoreUnavailableError`, conflicts as
 * `VersionConflictError`.
 */
import { isStoreUnavailable } from '../../errors.js';
import { migratePg, readPgMigrations } from './migrate.js';
import { openFailure } from './failure.js';
import { PgDb, type PgPoolOptions } from './db.js';
import { expireIdleClaims } from './handoff-claims.js';
import { fireDueTimersIn, followFailureIn, settleFailedIn, transcriptIn } from './outbox.js';
import { claimLanesIn, listenForWork } from './lanes.js';
import { claimantOf, claimArgs, counted, leaseMsOf, PGW, run } from './work.js';
import { PgAgents } from './agents.js';
import { PgHandoffs } from './handoffs.js';
import { PG } from './sql.js';
import { conversationsQuery } from '../sql.js';
import { commitTurnPg, isPlainTurn } from './turns.js';
import { PgBatches } from './batched.js';
import { ANALYZE_AFTER_TURNS, analyzeUnanalyzed } from './analyze.js';
import { j, toConversation, toFlowSubmit, toHandoffEvent, toInbox, toKey, toOutbox, toTimer, toUserMessage } from '../rows.js';
import type {
  Claimant,
  ClaimedWork,
  ClaimRequest,
  CommitResult,
  ConversationKey,
  UserMessageFact,
  ConversationRecord,
  ConversationStatus,
  FailureFollowUp,
  HandoffEventOutcome,
  HeldLane,
  HeldWork,
  InboxRecord,
  LaneClaim,
  LaneNext,
  NewInbound,
  NewStatus,
  OutboxRecord,
  SendOutcome,
  Store,
  StoreHealth,
  TimerSpec,
  TranscriptEntry,
  TurnCommit,
  WorkKind,
  FlowSubmitRecord,
} from '../types.js';

type Row = Record<string, unknown>;

/** Options of {@link openPgStore}. */
export interface PgStoreOptions extends PgPoolOptions {
  /** Apply pending migrations on open (default true). */
  readonly migrate?: boolean;
  readonly migrationsDir?: string;
}

/** Opens (and migrates) a PostgreSQL store. */
export async function openPgStore(options: PgStoreOptions | string): Promise<PgStore> {
  const o = typeof options === 'string' ? { url: options } : options;
  const db = new PgDb(o);
  try {
    if (o.migrate !== false) await migratePg(db, readPgMigrations(o.migrationsDir));
    else await db.query('SELECT 1'); // fail now, with a clear error, rather than on the first turn
  } catch (err) {
    await db.end();
    throw openFailure(err, o.url);
  }
  // Webhook answers wait for their inbound's commit: give them connections of their own, so that an
  // ack never queues behind turns, claims and sends for one of the main pool's. The heartbeat uses
  // them too: a lease must not lapse while its holder, alive but busy, waits for a connection.
  return new PgStore(db, new PgDb({ ...o, max: INGRESS_CONNECTIONS, applicationName: `${o.applicationName ?? 'colloquy'}-ingress` }));
}

/** Connections reserved for storing inbounds (the webhook's answer waits for them) and the heartbeat. */
const INGRESS_CONNECTIONS = 2;

const one = async <T>(p: Promise<{ rows: Row[] }>, map: (r: Row) => T): Promise<T | undefined> => {
  const r = (await p).rows[0];
  return r && map(r);
};

/** The PostgreSQL implementation of {@link Store}. */
export class PgStore implements Store {
  private readonly h: PgHandoffs;
  private readonly a: PgAgents;
  /** The operations of every turn, in batches when calls arrive together (group commit; see batch.ts). */
  private readonly b: PgBatches;
  /** Turns committed through this store (see {@link analyzeUnanalyzed}). */
  private turns = 0;

  /**
   * @param db The pool for everything but storing inbounds.
   * @param ingress Connections for storing inbounds and renewing claims only (default: `db` itself).
   */
  constructor(
    readonly db: PgDb,
    private readonly ingress: PgDb = db,
  ) {
    this.h = new PgHandoffs(db);
    this.a = new PgAgents(db);
    this.b = new PgBatches(db, ingress);
  }

  async addInbound(i: NewInbound, claim?: Claimant): Promise<{ id: number; duplicate: boolean; claim?: LaneClaim | undefined }> {
    return claim === undefined ? this.b.addInbound.run(i) : this.b.addInboundClaiming.run({ inbound: i, claim: claimantOf(claim) });
  }

  async failInbound(id: number, error: string, now: number): Promise<void> {
    this.b.prefetched.forgetInbound(id);
    await this.db.query(PG.failInbox, [error, now, id]);
  }

  async skipInbound(id: number, note: string, now: number): Promise<void> {
    this.b.prefetched.forgetInbound(id);
    await this.db.query(PG.skipInbox, [note, now, id]);
  }

  async inbound(id: number): Promise<InboxRecord | undefined> {
    return one(this.db.query(PG.inbox, [id]), toInbox);
  }

  async activeConversation(key: ConversationKey): Promise<ConversationRecord | undefined> {
    const kept = this.b.prefetched.takeConversation(key);
    return kept.found ? kept.conversation : this.b.activeConversation.run(key);
  }

  async conversation(id: number): Promise<ConversationRecord | undefined> {
    return one(this.db.query(PG.conv, [id]), toConversation);
  }

  async conversationByFlowToken(token: string): Promise<ConversationRecord | undefined> {
    return one(this.db.query(PG.convByToken, [token]), toConversation);
  }

  async latestFlowSubmit(flowToken: string): Promise<FlowSubmitRecord | undefined> {
    return one(this.db.query(PG.latestFlowSubmit, [flowToken]), toFlowSubmit);
  }

  async flowSubmit(dedupeKey: string): Promise<FlowSubmitRecord | undefined> {
    return one(this.db.query(PG.flowSubmit, [dedupeKey]), toFlowSubmit);
  }

  async flowCompleted(flowToken: string): Promise<boolean> {
    return (await this.db.query(PG.flowCompleted, [flowToken])).rows.length > 0;
  }

  async conversations(filter: { botId?: string; user?: string; status?: ConversationStatus } = {}): Promise<ConversationRecord[]> {
    const { sql, args } = conversationsQuery(filter, (n) => `$${n}`);
    return (await this.db.query(sql, args)).rows.map(toConversation);
  }

  async activeConversationIds(): Promise<number[]> {
    return (await this.db.query(PG.activeIds)).rows.map((r) => Number(r['id']));
  }

  async commitTurn(c: TurnCommit): Promise<CommitResult> {
    if (++this.turns === ANALYZE_AFTER_TURNS) void analyzeUnanalyzed(this.db);
    this.b.prefetched.forget(c.key);
    return isPlainTurn(c) ? this.b.commitTurn.run(c) : commitTurnPg(this.db, c);
  }

  async expireIdle(botId: string, before: number, now: number): Promise<number> {
    this.b.prefetched.forgetConversations();
    return Number((await this.db.query(PG.expireIdle, [botId, before, now])).rows[0]!['n']);
  }

  async failOutbound(id: number, now: number, follow: FailureFollowUp): Promise<boolean> {
    return this.db.tx((q) => followFailureIn(q, id, now, follow));
  }

  async unfollowedFailures(): Promise<OutboxRecord[]> {
    return (await this.db.query(PG.unfollowedFailures)).rows.map(toOutbox);
  }

  async lastInteractive(conversationId: number): Promise<{ record: OutboxRecord; bySms: boolean } | undefined> {
    return one(this.db.query(PG.lastInteractive, [conversationId]), (r) => ({ record: toOutbox(r), bySms: r['by_sms'] === true }));
  }

  async outbound(id: number): Promise<OutboxRecord | undefined> {
    return one(this.db.query(PG.outbox, [id]), toOutbox);
  }

  async outboundByProviderId(providerId: string): Promise<OutboxRecord | undefined> {
    return one(this.db.query(PG.outboxByProvider, [providerId]), toOutbox);
  }

  async lastUserMessage(key: ConversationKey): Promise<UserMessageFact | undefined> {
    return one(this.db.query(PG.lastUserMessage, [key.botId, key.user]), toUserMessage);
  }

  async timers(conversationId: number): Promise<TimerSpec[]> {
    return (await this.db.query(PG.timersOf, [conversationId])).rows.map(toTimer);
  }

  async addStatus(s: NewStatus): Promise<{ duplicate: boolean; outbound: OutboxRecord | undefined }> {
    return this.db.tx(async (q) => {
      const r = (await q.query(PG.addStatus, [s.providerMessageId, s.status, s.timestamp ?? null, s.recipient ?? null, j(s.errors), j(s.raw), s.receivedAt])).rows[0]!;
      const outboxId = r['outbox_id'];
      const outbound = outboxId === null ? undefined : await one(q.query(PG.outbox, [outboxId]), toOutbox);
      return { duplicate: Number(r['inserted']) === 0, outbound };
    });
  }

  async statuses(providerMessageId: string): Promise<NewStatus[]> {
    return this.b.statuses.run(providerMessageId);
  }

  async transcript(conversationId: number): Promise<TranscriptEntry[]> {
    return this.db.tx((q) => transcriptIn(q, conversationId));
  }

  // Handoffs: see handoffs.ts (a turn's part runs inside commitTurn's transaction, in turns.ts).
  openHandoffs: Store['openHandoffs'] = () => this.h.openHandoffs();
  openHandoff: Store['openHandoff'] = (id, inboxId) => this.h.openHandoff(id, inboxId);
  handoffs: Store['handoffs'] = (id) => this.h.handoffs(id);
  claimHandoff: Store['claimHandoff'] = (id, agent, w) => this.changing(() => this.h.claimHandoff(id, agent, w));
  releaseHandoff: Store['releaseHandoff'] = (id, agent, note, w) => this.changing(() => this.h.releaseHandoff(id, agent, note, w));
  holdInbound: Store['holdInbound'] = (id, handoff, channel, w) => {
    this.b.prefetched.forgetInbound(id);
    return this.changing(() => this.h.holdInbound(id, handoff, channel, w));
  };
  addAgentMessage: Store['addAgentMessage'] = (m) => this.changing(() => this.h.addAgentMessage(m));
  closeOrphanHandoffs: Store['closeOrphanHandoffs'] = (w) => this.changing(() => this.h.closeOrphanHandoffs(w));

  // Agents, their sessions and the handoff log: see agents.ts.
  addAgent: Store['addAgent'] = (name, hash, now) => this.a.addAgent(name, hash, now);
  setAgentToken: Store['setAgentToken'] = (name, hash) => this.a.setAgentToken(name, hash);
  agents: Store['agents'] = () => this.a.agents();
  agentByTokenHash: Store['agentByTokenHash'] = (hash) => this.a.agentByTokenHash(hash);
  removeAgent: Store['removeAgent'] = (name, w) => this.a.removeAgent(name, w);
  createAgentSession: Store['createAgentSession'] = (id, agent, csrf, now, exp, hash) => this.a.createAgentSession(id, agent, csrf, now, exp, hash);
  agentSession: Store['agentSession'] = (id, now) => this.a.agentSession(id, now);
  endAgentSession: Store['endAgentSession'] = (id) => this.a.endAgentSession(id);
  addHandoffNote: Store['addHandoffNote'] = (id, actor, text, now) => this.a.addHandoffNote(id, actor, text, now);
  handoffLog: Store['handoffLog'] = (id) => this.a.handoffLog(id);

  /** A handoff write may change conversations: what claims read of them is not used after it. */
  private changing<T>(write: () => Promise<T>): Promise<T> {
    this.b.prefetched.forgetConversations();
    return write();
  }

  /** Whether the database answers now; unreachable (or failing over) is `busy`: work waits and is retried. */
  async health(): Promise<StoreHealth> {
    try {
      await this.db.query('SELECT 1');
      return { ok: true };
    } catch (err) {
      return { ok: false, busy: isStoreUnavailable(err), reason: (err as Error).message };
    }
  }

  async claim<K extends WorkKind>(who: Claimant, r: ClaimRequest<K>): Promise<ClaimedWork[K][]> {
    const limit = r.limit;
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`a claim's limit is a whole number of items, not ${String(limit)}`);
    if (limit === 0) return [];
    const kind: WorkKind = r.kind;
    const work: ClaimedWork[WorkKind][] = await this.claimKind(kind, claimantOf(who), limit, r);
    return work as ClaimedWork[K][];
  }

  private async claimKind(kind: WorkKind, who: Claimant, limit: number, r: ClaimRequest): Promise<ClaimedWork[WorkKind][]> {
    switch (kind) {
      case 'lane':
        return r.key ? this.b.claimLane.run({ who, key: r.key }) : claimLanesIn(this.db, who, limit);
      case 'send':
        return (await run(this.db, PGW.claimSends, claimArgs(who, limit, r.now))).rows.map(toOutbox).sort((a, b) => a.id - b.id);
      case 'event':
        return (await run(this.db, PGW.claimEvents, claimArgs(who, limit, r.now))).rows.map(toHandoffEvent).sort((a, b) => a.id - b.id);
      case 'timer':
        return this.db.tx((q) => fireDueTimersIn(q, r.now, limit));
      case 'idle':
        return expireIdleClaims(this.db, limit, { now: r.now, notify: r.notify === true });
    }
  }

  async renew(owner: string, leaseMs: number): Promise<HeldWork> {
    // On the ingress connections: never queued behind the work whose claims it keeps alive.
    const row = (await run(this.ingress, PGW.renew, { owner, leaseMs: leaseMsOf(leaseMs) })).rows[0]!;
    const held = (row['lanes'] as Record<string, unknown>[]).map((r) => ({ key: toKey(r), fence: Number(r['fence']), workSeq: Number(r['work_seq']) }));
    // What was read for lanes no longer held (taken over, or given up) is not used.
    if (leaseMs <= 0) this.b.prefetched.clear();
    else this.b.prefetched.retain(held.map((h) => h.key));
    const claims = (rows: unknown) => (rows as Record<string, unknown>[]).map((r) => ({ id: Number(r['id']), claim: String(r['claim']) }));
    return { lanes: held, sends: claims(row['sends']), events: claims(row['events']) };
  }

  async nextDue(): Promise<number | undefined> {
    return this.b.nextDue.run(undefined);
  }

  async settleLane(owner: string, key: ConversationKey, fence: number, seen: number | null): Promise<LaneNext> {
    // An inbound this owner's claim of the lane (with this fence) read is the oldest pending one (see prefetch.ts): no round trip.
    const kept = this.b.prefetched.takeInbound(key, owner, fence);
    if (kept) return { outcome: 'next', inbound: kept };
    this.b.prefetched.forget(key);
    return this.b.settleLane.run({ owner, key, fence, seen });
  }

  async settleSend(id: number, claim: string, outcome: SendOutcome, now: number): Promise<boolean> {
    if (outcome.kind === 'sent') return this.b.finishOutbound.run({ id, record: outcome.record, now, claim });
    if (outcome.kind === 'retry') return settleFailedIn(this.db, id, claim, outcome, now);
    return this.db.tx((q) => settleFailedIn(q, id, claim, outcome, now));
  }

  async settleEvent(id: number, claim: string, outcome: HandoffEventOutcome, now: number): Promise<boolean> {
    if (outcome.sent) return (await run(this.db, PGW.eventSent, { id, claim, now })).rowCount === 1;
    if (outcome.retryAt !== undefined) return (await counted(this.db, PGW.eventRetry, { id, claim, at: outcome.retryAt, error: outcome.error })) === 1;
    return (await run(this.db, PGW.eventFailed, { id, claim, error: outcome.error })).rowCount === 1;
  }

  /**
   * LISTENs on a connection of its own (not the pool's) for work other processes add. Work this
   * store added itself is not announced back: its process already acts on it (a received inbound
   * kicks its lane, fired timers and follow-ups are kicked by whoever fired them), and a poll per
   * inbound, in every process including the receiver, cost a lane claim, an outbox claim and a
   * timer query each time.
   */
  async onWork(listener: () => void): Promise<() => Promise<void>> {
    return listenForWork(this.db.url, listener, undefined, (pid) => this.db.ownsBackend(pid) || this.ingress.ownsBackend(pid));
  }

  async close(): Promise<void> {
    if (this.ingress !== this.db) await this.ingress.end();
    await this.db.end();
  }
}
