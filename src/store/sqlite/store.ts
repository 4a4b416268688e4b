/**
 * The SQLite store (better-sqlite3, WAL). Reads answer at once; writes are queued and committed in
 * groups, one transaction per turn of the event loop (sqlite-batch.ts), each write in its own
 * savepoint; each COMMIT fsyncs the WAL (`synchronous = FULL`) before the writes' promises settle;
 * WAL checkpoints run in a worker thread (sqlite-checkpoint.ts). The async signatures
 * are the port's, so a networked database implements the same interface.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { sqliteDriver } from '../drivers.js';
import { synchronousPragma, type SqliteSynchronous } from './synchronous.js';
import { BusyRetry, transientCode, type BusyOptions } from './busy.js';
import { migrate, readMigrations } from './migrate.js';
import { GroupCommit, type GroupCommitOptions, type WriteStats } from './batch.js';
import { WalCheckpointer, type CheckpointOptions, type CheckpointStats } from './checkpoint.js';
import { prepareStatements, type Statements } from './statements.js';
import { SqliteAgents } from './agents.js';
import { SqliteHandoffs } from './handoffs.js';
import { SqliteLanes } from './lanes.js';
import { SqliteWork } from './work.js';
import { SqliteWrites } from './writes.js';
import { conversationsQuery } from '../sql.js';
import { mergeTranscript, toConversation, toFlowSubmit, toInbox, toOutbox, toStatus, toTimer, toUserMessage } from '../rows.js';
import type {
  Claimant,
  ClaimedWork,
  ClaimRequest,
  CommitResult,
  FailureFollowUp,
  ConversationKey,
  UserMessageFact,
  ConversationRecord,
  ConversationStatus,
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
  StoreFigure,
  StoreHealth,
  TimerSpec,
  TranscriptEntry,
  TurnCommit,
  WorkKind,
  FlowSubmitRecord,
} from '../types.js';

type Row = Record<string, unknown>;

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions extends BusyOptions {
  /** A file path or `:memory:`. Folders are created. */
  readonly path: string;
  /** Apply pending migrations on open (default true). */
  readonly migrate?: boolean;
  readonly migrationsDir?: string;
  /**
   * The database's clock: every lease (of lanes, sends, connector events) is set and compared with
   * it, never with a caller's `now` (default `Date.now`: every process on one machine shares it).
   */
  readonly now?: (() => number) | undefined;
  /** How a group commit is bounded (default 256 writes, 2 ms). */
  readonly groupCommit?: GroupCommitOptions | undefined;
  /** When the worker thread checkpoints the WAL; `false` leaves it to SQLite, on commit. */
  readonly checkpoint?: CheckpointOptions | false | undefined;
  /**
   * How far a COMMIT reaches before a write's promise settles (default `full`). `full`: the WAL is
   * fsynced at every (group) commit, so a write the caller was told about (a webhook answered 200)
   * survives a power cut or an OS crash. `normal`: the WAL is fsynced only at checkpoints; faster,
   * and still safe against a crashed process, but a dead machine can lose the last commits.
   */
  readonly synchronous?: SqliteSynchronous | undefined;
}

export type { SqliteSynchronous } from './synchronous.js';

/** What the SQLite store's writes and checkpoints have done (for metrics). */
export interface SqliteStoreStats extends WriteStats {
  readonly checkpoints: CheckpointStats;
}

/** Opens (and migrates) a SQLite store. */
export function openSqliteStore(options: SqliteStoreOptions | string): SqliteStore {
  const o = typeof options === 'string' ? { path: options } : options;
  if (o.path !== ':memory:') mkdirSync(dirname(o.path), { recursive: true });
  const synchronous = synchronousPragma(o.synchronous);
  const db = new (sqliteDriver())(o.path);
  db.pragma('journal_mode = WAL');
  // FULL: the write connection fsyncs the WAL in each COMMIT, before any promise of it settles.
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`); // opening may wait: nothing else runs yet
  db.pragma('foreign_keys = ON');
  if (o.migrate !== false) migrate(db, readMigrations(o.migrationsDir));
  return new SqliteStore(db, o);
}

/** How long opening and migrating wait for a lock held by another process. */
const OPEN_BUSY_TIMEOUT_MS = 5_000;

/** The port's reads: each answers at once, through {@link BusyRetry} (a transient failure is retried, then StoreUnavailableError). */
const READS = [
  'inbound',
  'activeConversation',
  'conversation',
  'conversationByFlowToken',
  'conversations',
  'activeConversationIds',
  'unfollowedFailures',
  'lastInteractive',
  'outbound',
  'outboundByProviderId',
  'lastUserMessage',
  'nextDue',
  'timers',
  'statuses',
  'transcript',
  'openHandoffs',
  'openHandoff',
  'handoffs',
  'agents',
  'agentByTokenHash',
  'agentSession',
  'handoffLog',
] as const satisfies readonly (keyof Store)[];

/** The SQLite implementation of {@link Store}. */
export class SqliteStore implements Store {
  private readonly q: Statements;
  private readonly busy: BusyRetry;
  private readonly h: SqliteHandoffs;
  private readonly a: SqliteAgents;
  private readonly w: SqliteWrites;
  private readonly work: SqliteWork;
  private readonly batch: GroupCommit;
  private readonly checkpointer: WalCheckpointer | undefined;
  private closing: Promise<void> | undefined;
  /**
   * @param o How long one attempt may block on a locked database (`busyTimeoutMs`, default 50 ms),
   * how long a call retries asynchronously before StoreUnavailableError (`busyRetryMs`, 3 s), how
   * a group commit is bounded, and when the WAL is checkpointed.
   */
  constructor(
    readonly db: Database.Database,
    o: Omit<SqliteStoreOptions, 'path' | 'migrate' | 'migrationsDir'> = {},
  ) {
    this.q = prepareStatements(db);
    this.h = new SqliteHandoffs(db);
    this.a = new SqliteAgents(db, this.h);
    const now = o.now ?? Date.now;
    const lanes = new SqliteLanes(db, now);
    this.w = new SqliteWrites(this.q, this.h, lanes);
    this.work = new SqliteWork(db, lanes, this.w, this.h, now);
    this.busy = new BusyRetry(o);
    db.pragma(`busy_timeout = ${o.busyTimeoutMs ?? 50}`);
    this.batch = new GroupCommit(db, this.busy, o.groupCommit);
    this.checkpointer = o.checkpoint === false ? undefined : WalCheckpointer.start(db, this.batch, o.checkpoint);
    for (const name of READS) {
      const method = (this[name] as (...args: unknown[]) => Promise<unknown>).bind(this);
      (this as Record<string, unknown>)[name] = (...args: unknown[]) => this.busy.run(() => method(...args));
    }
  }

  /** Commits, writes per commit, busy retries, time in flushes and checkpoints so far. */
  stats(): SqliteStoreStats {
    return { ...this.batch.stats(), checkpoints: this.checkpointer?.stats() ?? { mode: 'off', passive: 0, truncate: 0, incomplete: 0, heldMs: 0, maxHeldMs: 0 } };
  }

  /** The group commit and checkpoints, as gauges (totals since the store opened). */
  figures(): StoreFigure[] {
    const s = this.stats();
    return [
      { name: 'colloquy_store_commits', value: s.commits },
      { name: 'colloquy_store_writes', value: s.ops },
      { name: 'colloquy_store_writes_queued', value: s.queued },
      { name: 'colloquy_store_checkpoints', labels: { kind: 'passive' }, value: s.checkpoints.passive },
      { name: 'colloquy_store_checkpoints', labels: { kind: 'truncate' }, value: s.checkpoints.truncate },
      { name: 'colloquy_store_checkpoint_hold_max_seconds', value: s.checkpoints.maxHeldMs / 1000 },
    ];
  }

  /** Queues a write for the next group commit. */
  private write<T>(name: string, work: () => T): Promise<T> {
    return this.batch.run(name, work);
  }

  /**
   * Whether the database can be written now: tries to take the write lock without waiting (and
   * releases it at once). Busy while another process holds it, with the reason.
   */
  async health(): Promise<StoreHealth> {
    if (!this.db.open) return { ok: false, reason: 'the database is closed' };
    if (this.batch.held) return { ok: true }; // our own checkpoint worker has the lock, for a moment
    const timeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    try {
      this.db.pragma('busy_timeout = 0');
      this.db.exec('BEGIN IMMEDIATE');
      this.db.exec('ROLLBACK');
    } catch (err) {
      const code = transientCode(err);
      if (code === undefined) return { ok: false, reason: (err as Error).message };
      const { since } = this.busy.state;
      return { ok: false, busy: true, reason: `the database is locked by another connection (${code})`, ...(since !== undefined && { since }) };
    } finally {
      this.db.pragma(`busy_timeout = ${timeout}`);
    }
    return { ok: true };
  }

  addInbound(i: NewInbound, claim?: Claimant): Promise<{ id: number; duplicate: boolean; claim?: LaneClaim | undefined }> {
    return this.write('addInbound', () => this.w.addInbound(i, claim));
  }

  failInbound(id: number, error: string, now: number): Promise<void> {
    return this.write('failInbound', () => this.w.failInbound(id, error, now));
  }

  skipInbound(id: number, note: string, now: number): Promise<void> {
    return this.write('skipInbound', () => this.w.skipInbound(id, note, now));
  }

  async inbound(id: number): Promise<InboxRecord | undefined> {
    const r = this.q.inbox.get(id) as Row | undefined;
    return r && toInbox(r);
  }

  async activeConversation(key: ConversationKey): Promise<ConversationRecord | undefined> {
    const r = this.q.active.get(key.botId, key.user) as Row | undefined;
    return r && toConversation(r);
  }

  async conversation(id: number): Promise<ConversationRecord | undefined> {
    const r = this.q.conv.get(id) as Row | undefined;
    return r && toConversation(r);
  }

  async conversationByFlowToken(token: string): Promise<ConversationRecord | undefined> {
    const r = this.q.convByToken.get(token) as Row | undefined;
    return r && toConversation(r);
  }

  async latestFlowSubmit(flowToken: string): Promise<FlowSubmitRecord | undefined> {
    const r = this.q.latestFlowSubmit.get(flowToken) as Row | undefined;
    return r && toFlowSubmit(r);
  }

  async flowSubmit(dedupeKey: string): Promise<FlowSubmitRecord | undefined> {
    const r = this.q.flowSubmit.get(dedupeKey) as Row | undefined;
    return r && toFlowSubmit(r);
  }

  async flowCompleted(flowToken: string): Promise<boolean> {
    return this.q.flowCompleted.get(flowToken) !== undefined;
  }

  async conversations(filter: { botId?: string; user?: string; status?: ConversationStatus } = {}): Promise<ConversationRecord[]> {
    const { sql, args } = conversationsQuery(filter, () => '?');
    return (this.db.prepare(sql).all(...args) as Row[]).map(toConversation);
  }

  async activeConversationIds(): Promise<number[]> {
    return (this.q.activeIds.all() as Row[]).map((r) => Number(r['id']));
  }

  commitTurn(c: TurnCommit): Promise<CommitResult> {
    return this.write('commitTurn', () => this.w.commitTurn(c));
  }

  expireIdle(botId: string, before: number, now: number): Promise<number> {
    return this.write('expireIdle', () => this.w.expireIdle(botId, before, now));
  }

  failOutbound(id: number, now: number, follow: FailureFollowUp): Promise<boolean> {
    return this.write('failOutbound', () => this.w.followFailure(id, now, follow));
  }

  async unfollowedFailures(): Promise<OutboxRecord[]> {
    return (this.q.unfollowedFailures.all() as Row[]).map(toOutbox);
  }

  async lastInteractive(conversationId: number): Promise<{ record: OutboxRecord; bySms: boolean } | undefined> {
    const r = this.q.lastInteractive.get(conversationId) as Row | undefined;
    return r && { record: toOutbox(r), bySms: Number(r['by_sms']) === 1 };
  }

  async outbound(id: number): Promise<OutboxRecord | undefined> {
    const r = this.q.outbox.get(id) as Row | undefined;
    return r && toOutbox(r);
  }

  async outboundByProviderId(providerId: string): Promise<OutboxRecord | undefined> {
    const r = this.q.outboxByProvider.get(providerId) as Row | undefined;
    return r && toOutbox(r);
  }

  async lastUserMessage(key: ConversationKey): Promise<UserMessageFact | undefined> {
    const r = this.q.lastUserMessage.get(key.botId, key.user) as Row | undefined;
    return r && toUserMessage(r);
  }

  async timers(conversationId: number): Promise<TimerSpec[]> {
    return (this.q.timersOf.all(conversationId) as Row[]).map(toTimer);
  }

  addStatus(s: NewStatus): Promise<{ duplicate: boolean; outbound: OutboxRecord | undefined }> {
    return this.write('addStatus', () => this.w.addStatus(s));
  }

  async statuses(providerMessageId: string): Promise<NewStatus[]> {
    return (this.q.statusesOf.all(providerMessageId) as Row[]).map(toStatus);
  }

  async transcript(conversationId: number): Promise<TranscriptEntry[]> {
    // Commits are totally ordered by outbox ids: an inbound comes before every row added after it.
    return mergeTranscript(this.q.convInbox.all(conversationId) as Row[], (this.q.convOutbox.all(conversationId) as Row[]).map(toOutbox));
  }

  async claim<K extends WorkKind>(who: Claimant, request: ClaimRequest<K>): Promise<ClaimedWork[K][]> {
    // Idle claims are looked for on every wake: the common answer, none due, needs no write.
    if (request.kind === 'idle' && !(await this.busy.run(() => this.h.hasIdleClaims(request.now)))) return [];
    return this.write(`claim:${request.kind}`, () => this.work.claim(who, request));
  }

  renew(owner: string, leaseMs: number): Promise<HeldWork> {
    return this.write('renew', () => this.work.renew(owner, leaseMs));
  }

  async nextDue(): Promise<number | undefined> {
    return this.work.nextDue();
  }

  settleLane(owner: string, key: ConversationKey, fence: number, seen: number | null): Promise<LaneNext> {
    return this.write('settleLane', () => this.work.settleLane(owner, key, fence, seen));
  }

  settleSend(id: number, claim: string, outcome: SendOutcome, now: number): Promise<boolean> {
    return this.write('settleSend', () => this.work.settleSend(id, claim, outcome, now));
  }

  settleEvent(id: number, claim: string, outcome: HandoffEventOutcome, now: number): Promise<boolean> {
    return this.write('settleEvent', () => this.work.settleEvent(id, claim, outcome, now));
  }

  /** Commits what is queued, stops the checkpoint worker, leaves the WAL truncated and closes. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.db.open) return;
      await this.checkpointer?.stop();
      await this.batch.drain();
      this.checkpointer?.truncate();
      if (this.db.open) this.db.close();
    })();
    return this.closing;
  }

  // Handoffs: see sqlite-handoffs.ts.
  openHandoffs: Store['openHandoffs'] = () => this.h.openHandoffs();
  openHandoff: Store['openHandoff'] = (id, inboxId) => this.h.openHandoff(id, inboxId);
  handoffs: Store['handoffs'] = (id) => this.h.handoffs(id);
  claimHandoff: Store['claimHandoff'] = (id, agent, w) => this.write('claimHandoff', () => this.h.claimHandoff(id, agent, w));
  releaseHandoff: Store['releaseHandoff'] = (id, agent, note, w) => this.write('releaseHandoff', () => this.h.releaseHandoff(id, agent, note, w));
  holdInbound: Store['holdInbound'] = (id, handoff, channel, w) => this.write('holdInbound', () => this.h.holdInbound(id, handoff, channel, w));
  addAgentMessage: Store['addAgentMessage'] = (m) => this.write('addAgentMessage', () => this.h.addAgentMessage(m));
  closeOrphanHandoffs: Store['closeOrphanHandoffs'] = async (w) => {
    if (!(await this.busy.run(() => this.h.hasOrphans()))) return 0; // the common case, without a write (the queue is polled)
    return this.write('closeOrphanHandoffs', () => this.h.closeOrphanHandoffs(w));
  };

  // Agents, their sessions and the handoff log: see agents.ts.
  addAgent: Store['addAgent'] = (name, hash, now) => this.write('addAgent', () => this.a.addAgent(name, hash, now));
  setAgentToken: Store['setAgentToken'] = (name, hash) => this.write('setAgentToken', () => this.a.setAgentToken(name, hash));
  agents: Store['agents'] = () => this.a.agents();
  agentByTokenHash: Store['agentByTokenHash'] = (hash) => this.a.agentByTokenHash(hash);
  removeAgent: Store['removeAgent'] = (name, w) => this.write('removeAgent', () => this.a.removeAgent(name, w));
  createAgentSession: Store['createAgentSession'] = (id, agent, csrf, now, exp, hash) => this.write('createAgentSession', () => this.a.createAgentSession(id, agent, csrf, now, exp, hash));
  agentSession: Store['agentSession'] = (id, now) => this.a.agentSession(id, now);
  endAgentSession: Store['endAgentSession'] = (id) => this.write('endAgentSession', () => this.a.endAgentSession(id));
  addHandoffNote: Store['addHandoffNote'] = (id, actor, text, now) => this.write('addHandoffNote', () => this.a.addHandoffNote(id, actor, text, now));
  handoffLog: Store['handoffLog'] = (id) => this.a.handoffLog(id);
}
