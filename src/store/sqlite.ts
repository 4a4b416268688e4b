/**
 * The SQLite store (better-sqlite3, WAL). Every method is one statement or one transaction;
 * the async signatures are the port's, so a networked database can implement the same interface.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { VersionConflictError } from '../errors.js';
import { BusyRetry, transientCode, type BusyOptions } from './busy.js';
import { migrate, readMigrations } from './migrate.js';
import { prepareStatements, type Statements } from './sqlite-statements.js';
import { SqliteHandoffs } from './sqlite-handoffs.js';
import { conversationsQuery } from './sql.js';
import { j, mergeTranscript, STATUS_RANK, toConversation, toInbox, toKey, toOutbox, toStatus, toTimer, toTimerInbound } from './rows.js';
import type {
  CommitResult,
  FailureFollowUp,
  ConversationKey,
  ConversationRecord,
  ConversationStatus,
  InboxRecord,
  LaneClaim,
  LaneClaimOptions,
  LaneRelease,
  NewInbound,
  NewOutbound,
  NewStatus,
  OutboxRecord,
  SendRecord,
  Store,
  StoreHealth,
  TimerSpec,
  TranscriptEntry,
  TurnCommit,
} from './types.js';

type Row = Record<string, unknown>;

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions extends BusyOptions {
  /** A file path or `:memory:`. Folders are created. */
  readonly path: string;
  /** Apply pending migrations on open (default true). */
  readonly migrate?: boolean;
  readonly migrationsDir?: string;
  /** The clock lane leases are compared with (default `Date.now`: every process on one machine shares it). */
  readonly now?: (() => number) | undefined;
}

/** Opens (and migrates) a SQLite store. */
export function openSqliteStore(options: SqliteStoreOptions | string): SqliteStore {
  const o = typeof options === 'string' ? { path: options } : options;
  if (o.path !== ':memory:') mkdirSync(dirname(o.path), { recursive: true });
  const db = new Database(o.path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`busy_timeout = ${OPEN_BUSY_TIMEOUT_MS}`); // opening may wait: nothing else runs yet
  db.pragma('foreign_keys = ON');
  if (o.migrate !== false) migrate(db, readMigrations(o.migrationsDir));
  return new SqliteStore(db, o);
}

/** How long opening and migrating wait for a lock held by another process. */
const OPEN_BUSY_TIMEOUT_MS = 5_000;

/** The port's methods, each run through {@link BusyRetry} (a transient failure is retried, then StoreUnavailableError). */
const GUARDED = [
  'addInbound',
  'nextInbound',
  'pendingKeys',
  'failInbound',
  'skipInbound',
  'inbound',
  'activeConversation',
  'conversation',
  'conversationByFlowToken',
  'conversations',
  'activeConversationIds',
  'commitTurn',
  'expireIdle',
  'claimOutbound',
  'finishOutbound',
  'renewLease',
  'failOutbound',
  'unfollowedFailures',
  'lastInteractive',
  'retryOutbound',
  'outbound',
  'outboundByProviderId',
  'nextOutboundAt',
  'nextTimerAt',
  'fireDueTimers',
  'timers',
  'addStatus',
  'statuses',
  'transcript',
  'claimLanes',
  'renewLanes',
  'releaseLane',
  'openHandoffs',
  'openHandoff',
  'handoffs',
  'claimHandoff',
  'releaseHandoff',
  'holdInbound',
  'addAgentMessage',
  'closeOrphanHandoffs',
  'claimHandoffEvents',
  'settleHandoffEvent',
  'nextHandoffEventAt',
] as const satisfies readonly (keyof Store)[];

/** The SQLite implementation of {@link Store}. */
export class SqliteStore implements Store {
  private readonly q: Statements;
  private readonly busy: BusyRetry;
  private readonly now: () => number;
  private readonly h: SqliteHandoffs;
  /**
   * @param busy How long one attempt may block on a locked database (`busyTimeoutMs`, default 50 ms)
   * and how long a call retries asynchronously before StoreUnavailableError (`busyRetryMs`, 3 s).
   */
  constructor(
    readonly db: Database.Database,
    busy: BusyOptions & { readonly now?: (() => number) | undefined } = {},
  ) {
    this.q = prepareStatements(db);
    this.now = busy.now ?? Date.now;
    this.h = new SqliteHandoffs(db);
    this.busy = new BusyRetry(busy);
    db.pragma(`busy_timeout = ${busy.busyTimeoutMs ?? 50}`);
    for (const name of GUARDED) {
      const method = (this[name] as (...args: unknown[]) => Promise<unknown>).bind(this);
      (this as Record<string, unknown>)[name] = (...args: unknown[]) => this.busy.run(() => method(...args));
    }
  }

  /**
   * Whether the database can be written now: tries to take the write lock without waiting (and
   * releases it at once). Busy while another process holds it, with the reason.
   */
  async health(): Promise<StoreHealth> {
    if (!this.db.open) return { ok: false, reason: 'the database is closed' };
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

  async addInbound(i: NewInbound): Promise<{ id: number; duplicate: boolean }> {
    return this.db
      .transaction(() => {
        const id = this.insertInbound(i);
        if (id !== undefined) return { id, duplicate: false };
        const row = this.q.inboxByProvider.get(i.providerId) as Row;
        return { id: Number(row['id']), duplicate: true };
      })
      .immediate();
  }

  /** Inserts an inbound and bumps its lane's work counter; undefined for a known provider id. */
  private insertInbound(i: NewInbound): number | undefined {
    const r = this.q.insertInbox.run({ ...i, event: JSON.stringify(i.event), raw: j(i.raw) });
    if (r.changes !== 1) return undefined;
    this.q.bumpLane.run(i.botId, i.user);
    return Number(r.lastInsertRowid);
  }

  async nextInbound(key: ConversationKey): Promise<InboxRecord | undefined> {
    const r = this.q.nextInbox.get(key.botId, key.user) as Row | undefined;
    return r && toInbox(r);
  }

  async pendingKeys(): Promise<ConversationKey[]> {
    return (this.q.pendingKeys.all() as Row[]).map(toKey);
  }

  async failInbound(id: number, error: string, now: number): Promise<void> {
    this.q.failInbox.run(error, now, id);
  }

  async skipInbound(id: number, note: string, now: number): Promise<void> {
    this.q.skipInbox.run(note, now, id);
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

  async conversations(filter: { botId?: string; user?: string; status?: ConversationStatus } = {}): Promise<ConversationRecord[]> {
    const { sql, args } = conversationsQuery(filter, () => '?');
    return (this.db.prepare(sql).all(...args) as Row[]).map(toConversation);
  }

  async activeConversationIds(): Promise<number[]> {
    return (this.q.activeIds.all() as Row[]).map((r) => Number(r['id']));
  }

  async commitTurn(c: TurnCommit): Promise<CommitResult> {
    return this.db
      .transaction((): CommitResult => {
        if (c.expire !== undefined) {
          this.q.expireOne.run(c.now, c.now, c.expire);
          this.q.deleteTimers.run(c.expire);
        }
        const ended = c.status === 'active' ? null : c.now;
        const common = { snapshot: JSON.stringify(c.snapshot), state: c.state, status: c.status, now: c.now, endedAt: ended };
        const botVersion = c.botVersion ?? null;
        let id: number;
        let version: number;
        if (c.conversationId === undefined) {
          try {
            const r = this.q.insertConv.run({
              ...common,
              botId: c.key.botId,
              user: c.key.user,
              flowToken: c.flowToken,
              channel: c.channel ?? 'interactive',
              lastPrompt: j(c.lastPrompt),
              botVersion: botVersion ?? 1,
            });
            id = Number(r.lastInsertRowid);
          } catch (e) {
            if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new VersionConflictError(0, 0);
            throw e;
          }
          version = 1;
        } else {
          const r = this.q.updateConv.run({
            ...common,
            id: c.conversationId,
            expectedVersion: c.expectedVersion,
            channel: c.channel ?? null,
            lastPrompt: j(c.lastPrompt),
            activity: c.userActivity ? 1 : 0,
            botVersion,
          });
          if (r.changes !== 1) throw new VersionConflictError(c.conversationId, c.expectedVersion);
          id = c.conversationId;
          version = c.expectedVersion + 1;
        }
        // An inbound consumed by another writer (same turn in two processes) must not run twice.
        if (c.inboxId !== undefined && this.q.markInboxDone.run(c.inboxNote ?? null, id, c.now, c.inboxId).changes !== 1) throw new VersionConflictError(id, c.expectedVersion);
        const outboxIds = this.insertOutbox(id, c.key, c.inboxId, c.outbox, c.now);
        this.applyTimers(id, c);
        this.h.applyTurn(id, c, c.notifyHandoffs === true);
        return { conversationId: id, version, outboxIds };
      })
      .immediate();
  }

  private insertOutbox(conversationId: number, key: ConversationKey, inboxId: number | undefined, rows: readonly NewOutbound[], now: number): number[] {
    return rows.map((o) =>
      Number(
        this.q.insertOutbox.run({
          conversationId,
          botId: key.botId,
          user: key.user,
          inboxId: inboxId ?? null,
          kind: o.kind,
          message: JSON.stringify(o.message),
          channel: o.channel,
          request: JSON.stringify(o.request),
          now,
          fallbackOf: o.fallbackOf ?? null,
        }).lastInsertRowid,
      ),
    );
  }

  private applyTimers(conversationId: number, c: TurnCommit): void {
    if (c.status !== 'active') {
      this.q.deleteTimers.run(conversationId);
      return;
    }
    for (const key of c.timers.remove) this.q.deleteTimer.run(conversationId, key);
    const active = new Set(c.timers.activeStateNodes);
    for (const t of this.q.timersOf.all(conversationId) as Row[]) {
      const node = t['state_node'];
      if (typeof node === 'string' && !active.has(node)) this.q.deleteTimerId.run(t['id']);
    }
    for (const t of c.timers.upsert) {
      this.q.upsertTimer.run({ conversationId, botId: c.key.botId, user: c.key.user, key: t.key, stateNode: t.stateNode, event: JSON.stringify(t.event), fireAt: t.fireAt });
    }
  }

  async expireIdle(botId: string, before: number, now: number): Promise<number> {
    return this.db
      .transaction(() => {
        const ids = this.db.prepare(`SELECT id FROM conversations WHERE bot_id = ? AND status = 'active' AND last_activity_at < ?`).all(botId, before) as Row[];
        for (const r of ids) this.q.deleteTimers.run(r['id']);
        return this.q.expireIdle.run({ botId, before, now }).changes;
      })
      .immediate();
  }

  async claimOutbound(now: number, limit: number, leaseMs: number): Promise<OutboxRecord[]> {
    return this.db
      .transaction(() => {
        const rows = (this.q.claimable.all({ now, limit }) as Row[]).map(toOutbox);
        const token = randomBytes(6).toString('hex');
        return rows.map((r) => {
          const claim = `${token}-${r.id}`;
          this.q.claim.run(now + leaseMs, claim, r.id);
          return { ...r, state: 'sending' as const, attempts: r.attempts + 1, claim };
        });
      })
      .immediate();
  }

  async finishOutbound(id: number, s: SendRecord, now: number, claim?: string): Promise<boolean> {
    return this.db.transaction(() => this.finishRow(id, s, now, claim)).immediate();
  }

  async renewLease(id: number, claim: string, leaseUntil: number): Promise<boolean> {
    return this.q.renewLease.run(leaseUntil, id, claim).changes === 1;
  }

  private finishRow(id: number, s: SendRecord, now: number, claim: string | undefined): boolean {
    const done =
      this.q.finish.run({
        id,
        now,
        claim: claim ?? null,
        state: s.state,
        providerId: s.providerId ?? null,
        httpStatus: s.httpStatus ?? null,
        response: j(s.response),
        smsCode: s.smsCode ?? null,
        smsMailingId: s.smsMailingId ?? null,
        smsResult: s.smsResult ?? null,
        error: s.error ?? null,
        errorCode: s.errorCode ?? null,
      }).changes === 1;
    if (!done) return false; // the claim was lost: another process holds the row now
    if (s.providerId === undefined) return true;
    // Statuses can arrive before the send is recorded (a fast provider): they count now.
    const current = (this.q.outbox.get(id) as Row | undefined)?.['delivery_status'] as string | null | undefined;
    if (current === undefined) return true;
    let best = current;
    for (const r of this.q.statusesOf.all(s.providerId) as Row[]) {
      const status = String(r['status']);
      if ((STATUS_RANK[status] ?? 0) > (STATUS_RANK[best ?? ''] ?? 0)) best = status;
    }
    if (best !== current) this.q.setDelivery.run(best, id);
    return true;
  }

  async failOutbound(id: number, record: SendRecord | undefined, now: number, follow: FailureFollowUp, claim?: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        if (record && !this.finishRow(id, record, now, claim)) return false;
        const row = this.q.outbox.get(id) as Row | undefined;
        if (!row) return false;
        const conversationId = Number(row['conversation_id']);
        if (follow.fallback) {
          const key = toKey(row);
          this.q.insertFallback.run({
            conversationId,
            botId: key.botId,
            user: key.user,
            inboxId: row['inbox_id'],
            kind: follow.fallback.kind,
            message: JSON.stringify(follow.fallback.message),
            channel: follow.fallback.channel,
            request: JSON.stringify(follow.fallback.request),
            now,
            fallbackOf: id,
          });
        }
        if (follow.inbound) this.insertInbound(follow.inbound);
        if (follow.channel) this.q.setChannel.run(follow.channel, now, conversationId);
        return true;
      })
      .immediate();
  }

  async unfollowedFailures(): Promise<OutboxRecord[]> {
    return (this.q.unfollowedFailures.all() as Row[]).map(toOutbox);
  }

  async lastInteractive(conversationId: number): Promise<{ record: OutboxRecord; bySms: boolean } | undefined> {
    const r = this.q.lastInteractive.get(conversationId) as Row | undefined;
    return r && { record: toOutbox(r), bySms: Number(r['by_sms']) === 1 };
  }

  async retryOutbound(id: number, nextAttemptAt: number, error: string, errorCode: string | undefined, claim?: string): Promise<boolean> {
    return this.q.retry.run({ id, next: nextAttemptAt, error, code: errorCode ?? null, claim: claim ?? null }).changes === 1;
  }

  async outbound(id: number): Promise<OutboxRecord | undefined> {
    const r = this.q.outbox.get(id) as Row | undefined;
    return r && toOutbox(r);
  }

  async outboundByProviderId(providerId: string): Promise<OutboxRecord | undefined> {
    const r = this.q.outboxByProvider.get(providerId) as Row | undefined;
    return r && toOutbox(r);
  }

  async nextOutboundAt(after?: number): Promise<number | undefined> {
    const t = ((after === undefined ? this.q.nextOutboxAt.get() : this.q.nextOutboxAfter.get({ after })) as Row)['t'];
    return t === null ? undefined : Number(t);
  }

  async nextTimerAt(): Promise<number | undefined> {
    const t = (this.q.nextTimer.get() as Row)['t'];
    return t === null ? undefined : Number(t);
  }

  async fireDueTimers(now: number, limit: number): Promise<ConversationKey[]> {
    return this.db
      .transaction(() => {
        const due = this.q.dueTimers.all(now, limit) as Row[];
        for (const t of due) {
          this.insertInbound(toTimerInbound(t, now));
          this.q.deleteTimerId.run(t['id']);
        }
        return due.map(toKey);
      })
      .immediate();
  }

  async timers(conversationId: number): Promise<TimerSpec[]> {
    return (this.q.timersOf.all(conversationId) as Row[]).map(toTimer);
  }

  async addStatus(s: NewStatus): Promise<{ duplicate: boolean; outbound: OutboxRecord | undefined }> {
    return this.db
      .transaction(() => {
        const r = this.q.insertStatus.run({ ...s, timestamp: s.timestamp ?? null, recipient: s.recipient ?? null, errors: j(s.errors), raw: j(s.raw) });
        const row = this.q.outboxByProvider.get(s.providerMessageId) as Row | undefined;
        const outbound = row && toOutbox(row);
        if (outbound && r.changes === 1 && (STATUS_RANK[s.status] ?? 0) > (STATUS_RANK[outbound.deliveryStatus ?? ''] ?? 0)) {
          this.q.setDelivery.run(s.status, outbound.id);
          return { duplicate: false, outbound: { ...outbound, deliveryStatus: s.status } };
        }
        return { duplicate: r.changes === 0, outbound };
      })
      .immediate();
  }

  async statuses(providerMessageId: string): Promise<NewStatus[]> {
    return (this.q.statusesOf.all(providerMessageId) as Row[]).map(toStatus);
  }

  async transcript(conversationId: number): Promise<TranscriptEntry[]> {
    // Commits are totally ordered by outbox ids: an inbound comes before every row added after it.
    return mergeTranscript(this.q.convInbox.all(conversationId) as Row[], (this.q.convOutbox.all(conversationId) as Row[]).map(toOutbox));
  }

  async claimLanes(owner: string, o: LaneClaimOptions): Promise<LaneClaim[]> {
    return this.db
      .transaction(() => {
        const now = this.now();
        let rows: Row[];
        if (o.key) {
          this.q.ensureLane.run(o.key.botId, o.key.user);
          const row = this.q.lane.get(o.key.botId, o.key.user) as Row;
          rows = row['owner'] === null || row['owner'] === owner || Number(row['lease_until'] ?? 0) <= now ? [row] : [];
        } else rows = this.q.claimableLanes.all({ owner, now, limit: o.limit ?? 100 }) as Row[];
        return rows.map((r) => {
          const key = toKey(r);
          this.q.claimLane.run({ owner, until: now + o.leaseMs, botId: key.botId, user: key.user });
          const mine = r['owner'] === owner;
          return { key, fence: Number(r['fence']) + (mine ? 0 : 1), workSeq: Number(r['work_seq']), takeover: r['owner'] !== null && !mine };
        });
      })
      .immediate();
  }

  async renewLanes(owner: string, leaseMs: number): Promise<{ key: ConversationKey; fence: number; workSeq: number }[]> {
    return (this.q.renewLanes.all({ owner, until: this.now() + leaseMs }) as Row[]).map((r) => ({
      key: toKey(r),
      fence: Number(r['fence']),
      workSeq: Number(r['work_seq']),
    }));
  }

  async releaseLane(owner: string, key: ConversationKey, fence: number, seen: number): Promise<LaneRelease> {
    return this.db
      .transaction((): LaneRelease => {
        if (this.q.releaseLane.run({ owner, fence, seen, botId: key.botId, user: key.user }).changes === 1) return { outcome: 'released' };
        const r = this.q.lane.get(key.botId, key.user) as Row | undefined;
        if (!r || r['owner'] !== owner || Number(r['fence']) !== fence) return { outcome: 'lost' };
        return { outcome: 'more', workSeq: Number(r['work_seq']) };
      })
      .immediate();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  // Handoffs: see sqlite-handoffs.ts.
  openHandoffs: Store['openHandoffs'] = () => this.h.openHandoffs();
  openHandoff: Store['openHandoff'] = (id, inboxId) => this.h.openHandoff(id, inboxId);
  handoffs: Store['handoffs'] = (id) => this.h.handoffs(id);
  claimHandoff: Store['claimHandoff'] = (id, agent, w) => this.h.claimHandoff(id, agent, w);
  releaseHandoff: Store['releaseHandoff'] = (id, agent, note, w) => this.h.releaseHandoff(id, agent, note, w);
  holdInbound: Store['holdInbound'] = (id, handoff, channel, w) => this.h.holdInbound(id, handoff, channel, w);
  addAgentMessage: Store['addAgentMessage'] = (m) => this.h.addAgentMessage(m);
  closeOrphanHandoffs: Store['closeOrphanHandoffs'] = (w) => this.h.closeOrphanHandoffs(w);
  claimHandoffEvents: Store['claimHandoffEvents'] = (now, limit, leaseMs) => this.h.claimHandoffEvents(now, limit, leaseMs);
  settleHandoffEvent: Store['settleHandoffEvent'] = (id, claim, outcome, now) => this.h.settleHandoffEvent(id, claim, outcome, now);
  nextHandoffEventAt: Store['nextHandoffEventAt'] = () => this.h.nextHandoffEventAt();
}
