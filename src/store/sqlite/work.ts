/**
 * The SQLite store's work contract (`Store.claim`, `renew`, `nextDue`, `settleSend`,
 * `settleEvent`) for sends, helpdesk events, timers and idle claims; lanes are in lanes.ts. Every write runs
 * inside the group commit (one transaction holds SQLite's write lock), so two claimants never take
 * the same item. Leases (`lease_until`) are on the store's clock; due times (`next_attempt_at`,
 * `fire_at`) are the caller's `now`, the bots' time.
 */
import type Database from 'better-sqlite3';
import { toHandoffEvent, toKey, toOutbox, toTimerInbound } from '../rows.js';
import { claimableRow, EVENT_HEAD, sendHead, sqliteArgs, TAKE_ROW, WORK_SQL } from '../sql.js';
import type { SqliteHandoffs } from './handoffs.js';
import type { SqliteLanes } from './lanes.js';
import type { SqliteWrites } from './writes.js';
import type { Claimant, ClaimRequest, ClaimedWork, ConversationKey, HandoffEventOutcome, HandoffEventRecord, HeldLane, HeldWork, LaneNext, OutboxRecord, SendOutcome, WorkKind } from '../types.js';

type Row = Record<string, unknown>;

const SQL = {
  /** The due heads, chosen (and limited) before any row changes; RETURNING's order is SQLite's, so the caller sorts by id. */
  claimSends: `UPDATE outbox SET ${TAKE_ROW}, resends = resends + CASE WHEN state = 'sending' THEN 1 ELSE 0 END
    WHERE id IN (SELECT o.id FROM outbox o INDEXED BY outbox_unsent_id
      WHERE ${sendHead('INDEXED BY outbox_unsent_conversation')} AND ${claimableRow('o')} ORDER BY o.id LIMIT @limit)
    RETURNING *`,
  claimEvents: `UPDATE handoff_events SET ${TAKE_ROW}
    WHERE id IN (SELECT e.id FROM handoff_events e WHERE ${EVENT_HEAD} AND ${claimableRow('e')} ORDER BY e.id LIMIT @limit)
    RETURNING *`,
  renewSends: `${WORK_SQL.renewSends} RETURNING id, claim`,
  renewEvents: `${WORK_SQL.renewEvents} RETURNING id, claim`,
  nextDue: WORK_SQL.nextDue,
  sendRetry: WORK_SQL.sendRetry,
  sendFailed: WORK_SQL.sendFailed,
  eventSent: WORK_SQL.eventSent,
  eventRetry: WORK_SQL.eventRetry,
  eventFailed: WORK_SQL.eventFailed,
  dueTimers: 'SELECT * FROM timers WHERE fire_at <= ? ORDER BY fire_at, id LIMIT ?',
  deleteTimer: 'DELETE FROM timers WHERE id = ?',
} as const;

type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

/** The claimable work of the SQLite store, besides lanes; the writes run inside a transaction the caller holds. */
export class SqliteWork {
  private readonly q: Statements;
  /** @param now The lease clock (claim tokens come from {@link SqliteWrites.token}). */
  constructor(
    db: Database.Database,
    private readonly lanes: SqliteLanes,
    private readonly w: SqliteWrites,
    private readonly handoffs: SqliteHandoffs,
    private readonly now: () => number,
  ) {
    this.q = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
  }

  /** See `Store.claim`. */
  claim<K extends WorkKind>(who: Claimant, r: ClaimRequest<K>): ClaimedWork[K][] {
    const limit = r.limit;
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`a claim's limit is a whole number of items, not ${String(limit)}`);
    if (limit === 0) return [];
    const kind: WorkKind = r.kind;
    switch (kind) {
      case 'lane':
        return this.lanes.claim(who, limit, r.key) as ClaimedWork[K][];
      case 'send':
        return this.claimSends(who, limit, r.now) as ClaimedWork[K][];
      case 'event':
        return this.claimEvents(who, limit, r.now) as ClaimedWork[K][];
      case 'timer':
        return this.fireTimers(limit, r.now) as ClaimedWork[K][];
      case 'idle':
        return this.handoffs.expireIdleClaims(limit, { now: r.now, notify: r.notify === true }) as ClaimedWork[K][];
    }
  }

  private args(who: Claimant, limit: number, now: number) {
    return sqliteArgs({ owner: who.owner, leaseMs: who.leaseMs, token: this.w.token(), lapsed: who.lapsed, now, dbnow: this.now(), limit });
  }

  private claimSends(who: Claimant, limit: number, now: number): OutboxRecord[] {
    return (this.q.claimSends.all(this.args(who, limit, now)) as Row[]).map(toOutbox).sort((a, b) => a.id - b.id);
  }

  private claimEvents(who: Claimant, limit: number, now: number): HandoffEventRecord[] {
    return (this.q.claimEvents.all(this.args(who, limit, now)) as Row[]).map(toHandoffEvent).sort((a, b) => a.id - b.id);
  }

  /** Moves due timers into their conversations' inboxes (bumping their lanes); the conversations, in firing order. */
  private fireTimers(limit: number, now: number): ConversationKey[] {
    const due = this.q.dueTimers.all(now, limit) as Row[];
    for (const t of due) {
      this.w.insertInbound(toTimerInbound(t, now));
      this.q.deleteTimer.run(t['id']);
    }
    return due.map(toKey);
  }

  /** See `Store.renew`: one statement per table. */
  renew(owner: string, leaseMs: number): HeldWork {
    const args = { owner, leaseMs, dbnow: this.now() };
    const held = (rows: Row[]) => rows.map((r) => ({ id: Number(r['id']), claim: String(r['claim']) }));
    const sends = held(this.q.renewSends.all(args) as Row[]);
    const events = held(this.q.renewEvents.all(args) as Row[]);
    return { lanes: this.lanes.renew(args), sends, events };
  }

  /** See `Store.settleLane`. */
  settleLane(owner: string, key: ConversationKey, fence: number, seen: number | null): LaneNext {
    return this.lanes.settle(owner, key, fence, seen);
  }

  /** See `Store.nextDue`. */
  nextDue(): number | undefined {
    const t = (this.q.nextDue.get() as Row)['t'];
    return t === null || t === undefined ? undefined : Number(t);
  }

  /** See `Store.settleSend`: false, recording nothing, when `claim` no longer holds the row. */
  settleSend(id: number, claim: string, outcome: SendOutcome, now: number): boolean {
    switch (outcome.kind) {
      case 'sent':
        return this.w.finish(id, outcome.record, now, claim);
      case 'retry':
        return this.q.sendRetry.run({ id, claim, at: outcome.at, error: outcome.error, code: outcome.errorCode ?? null }).changes === 1;
      case 'failed': {
        const recorded = outcome.record ? this.w.finish(id, { ...outcome.record, state: 'failed' }, now, claim) : this.q.sendFailed.run({ id, claim }).changes === 1;
        return recorded && this.w.followFailure(id, now, outcome.follow);
      }
    }
  }

  /** See `Store.settleEvent`. */
  settleEvent(id: number, claim: string, outcome: HandoffEventOutcome, now: number): boolean {
    if (outcome.sent) return this.q.eventSent.run({ id, claim, now }).changes === 1;
    if (outcome.retryAt !== undefined) return this.q.eventRetry.run({ id, claim, at: outcome.retryAt, error: outcome.error }).changes === 1;
    return this.q.eventFailed.run({ id, claim, error: outcome.error }).changes === 1;
  }
}
