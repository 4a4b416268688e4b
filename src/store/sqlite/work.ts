/**
 * The SQLite store's work contract (`Store.claim`, `renew`, `nextDue`, `settleSend`,
 * `settleEvent`) for sends, helpdesk events and timers; lanes are in lanes.ts. Every write runs
 * inside the group commit (one transaction holds SQLite's write lock), so two claimants never take
 * the same item. Leases (`lease_until`) are on the store's clock; due times (`next_attempt_at`,
 * `fire_at`) are the caller's `now`, the bots' time.
 */
import type Database from 'better-sqlite3';
import { toHandoffEvent, toKey, toOutbox, toTimerInbound } from '../rows.js';
import { outboxRank as RANK } from '../sql.js';
import type { SqliteLanes } from './lanes.js';
import type { SqliteWrites } from './writes.js';
import type { Claimant, ClaimRequest, ClaimedWork, ConversationKey, HandoffEventOutcome, HandoffEventRecord, HeldLane, LaneNext, OutboxRecord, SendOutcome, WorkKind } from '../types.js';

type Row = Record<string, unknown>;

/** An unsent row `t` whose claim lapsed (its owner stopped renewing it), or that a version before owners left `sending`. */
const LAPSED = (t: string) => `(${t}.state = 'sending' AND @lapsed AND (${t}.owner IS NULL OR ${t}.lease_until <= @dbnow))`;
/** A pending row `t` due at `@now`, or a lapsed one when the claimant takes those. */
const CLAIMABLE = (t: string) => `((${t}.state = 'pending' AND ${t}.next_attempt_at <= @now) OR ${LAPSED(t)})`;

/** An unsent outbox row `o` that is its conversation's next: no unsent row of its conversation ranks before it. */
const SEND_HEAD = `o.state IN ('pending', 'sending')
  AND NOT EXISTS (SELECT 1 FROM outbox o2 INDEXED BY outbox_unsent_conversation
    WHERE o2.conversation_id = o.conversation_id AND o2.state IN ('pending', 'sending') AND ${RANK('o2')} < ${RANK('o')})`;
/** An unsent connector event `e` that is its handoff's next. */
const EVENT_HEAD = `e.state IN ('pending', 'sending')
  AND NOT EXISTS (SELECT 1 FROM handoff_events e2 WHERE e2.handoff_id = e.handoff_id AND e2.state IN ('pending', 'sending') AND e2.id < e.id)`;
/** How a claim changes the row: a take from a lapsed claim counts a resend (it may have gone out already). */
const TAKE = `state = 'sending', owner = @owner, lease_until = @until, claim = @token || '-' || id, attempts = attempts + 1`;

const SQL = {
  /** The due heads, chosen (and limited) before any row changes; RETURNING's order is SQLite's, so the caller sorts by id. */
  claimSends: `UPDATE outbox SET ${TAKE}, resends = resends + CASE WHEN state = 'sending' THEN 1 ELSE 0 END
    WHERE id IN (SELECT o.id FROM outbox o INDEXED BY outbox_unsent_id WHERE ${SEND_HEAD} AND ${CLAIMABLE('o')} ORDER BY o.id LIMIT @limit)
    RETURNING *`,
  claimEvents: `UPDATE handoff_events SET ${TAKE}
    WHERE id IN (SELECT e.id FROM handoff_events e WHERE ${EVENT_HEAD} AND ${CLAIMABLE('e')} ORDER BY e.id LIMIT @limit)
    RETURNING *`,
  renewSends: `UPDATE outbox SET lease_until = @until WHERE owner = @owner AND state = 'sending'`,
  renewEvents: `UPDATE handoff_events SET lease_until = @until WHERE owner = @owner AND state = 'sending'`,
  /** The earliest due time of a pending send or event at the head of its line, or of a timer. */
  nextDue: `SELECT MIN(t) AS t FROM (
    SELECT MIN(o.next_attempt_at) AS t FROM outbox o WHERE ${SEND_HEAD} AND o.state = 'pending'
    UNION ALL SELECT MIN(e.next_attempt_at) FROM handoff_events e WHERE ${EVENT_HEAD} AND e.state = 'pending'
    UNION ALL SELECT MIN(fire_at) FROM timers)`,
  sendRetry: `UPDATE outbox SET state = 'pending', next_attempt_at = @at, error = @error, error_code = @code, owner = NULL, lease_until = NULL, claim = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
  /** A send that failed before reaching the provider: what an earlier attempt recorded stays. */
  sendFailed: `UPDATE outbox SET state = 'failed', owner = NULL, lease_until = NULL, claim = NULL WHERE id = @id AND claim = @claim AND state = 'sending'`,
  eventSent: `UPDATE handoff_events SET state = 'sent', sent_at = @now, owner = NULL, lease_until = NULL, claim = NULL, last_error = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
  eventRetry: `UPDATE handoff_events SET state = 'pending', next_attempt_at = @at, last_error = @error, owner = NULL, lease_until = NULL, claim = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
  eventFailed: `UPDATE handoff_events SET state = 'failed', last_error = @error, owner = NULL, lease_until = NULL, claim = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
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
    private readonly now: () => number,
  ) {
    this.q = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
  }

  /** See `Store.claim`. */
  claim<K extends WorkKind>(who: Claimant, r: ClaimRequest<K>): ClaimedWork[K][] {
    const limit = Math.max(0, Math.floor(r.limit));
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
    }
  }

  private args(who: Claimant, limit: number, now: number) {
    const dbnow = this.now();
    return { owner: who.owner, until: dbnow + who.leaseMs, token: this.w.token(), lapsed: who.lapsed ? 1 : 0, now, dbnow, limit };
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
  renew(owner: string, leaseMs: number): HeldLane[] {
    const until = this.now() + leaseMs;
    this.q.renewSends.run({ owner, until });
    this.q.renewEvents.run({ owner, until });
    return this.lanes.renew(owner, leaseMs);
  }

  /** See `Store.settleLane`. */
  settleLane(owner: string, key: ConversationKey, fence: number, seen: number): LaneNext {
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
