/**
 * The PostgreSQL store's claimable sends and helpdesk events: claim, renew, the next due time and
 * the settling of a claim. Leases are set and compared on the database's clock ({@link NOW}); due
 * times (`next_attempt_at`, `fire_at`) are the caller's `now`, the bots' time.
 *
 * Why a claim never hands one row to two claimants, under READ COMMITTED:
 * - A row is updated only while this statement holds its row lock (`FOR UPDATE … SKIP LOCKED` in
 *   `c`): a row another transaction holds is skipped, never waited for.
 * - The lock is taken on the row's latest committed version; when that is newer than the
 *   statement's snapshot (another claim or a settle committed in between), PostgreSQL rechecks the
 *   scan's conditions on it (EvalPlanQual). {@link claimable} is written on the row alone (its
 *   state, owner, lease and due time; no join, no subquery), so that recheck is the whole test: a
 *   row another claimant took is `sending` with a lease ahead of this statement's `now()`, and
 *   fails it (unless that claim went a whole lease without renewal: then it has lapsed).
 * - The UPDATE changes only the rows `c` returned (joined by primary key), all locked by it. (The
 *   test is not repeated in the UPDATE's WHERE: the planner then scanned the unsent rows and
 *   joined them to `c` in a nested loop, quadratic in the backlog; pg-backlog-plan.test.ts.)
 * What the snapshot alone decides (which rows are their conversation's head, in an InitPlan)
 * concerns order, not exclusivity: a head read from the snapshot is still the head when locked,
 * since rows behind it are never claimable before it is settled, and rows ahead of it can only be
 * new fallbacks of rows already sent.
 */
import { randomBytes } from 'node:crypto';
import { prepared, type Queryable } from './db.js';
import { NOW, WORK_CHANNEL } from './lanes.js';
import { outboxRank as RANK } from '../sql.js';

const UNSENT = `state IN ('pending', 'sending')`;

/**
 * Whether row `t` can be claimed (`$1`: the caller's now, `$3`: whether lapsed claims are taken):
 * pending and due, or sending under a claim that lapsed (owner NULL: a claim from before owners).
 */
export const claimable = (t: string): string =>
  `((${t}.state = 'pending' AND ${t}.next_attempt_at <= $1::bigint) OR (${t}.state = 'sending' AND $3::boolean AND (${t}.owner IS NULL OR ${t}.lease_until <= ${NOW})))`;

/**
 * The next unsent outbox row of each conversation (its lowest rank; ranks are unique), in one pass
 * over the unsent rows: a sort, no per-row lookups, so its cost follows the backlog whatever the
 * statistics say. A row another process holds locked still counts as unsent here (this reads, it
 * does not lock), so a conversation's order holds across processes. It was a NOT EXISTS per row
 * (then a correlated MIN): with statistics taken while nothing was unsent, the planner scanned a
 * whole partial index for every unsent row, ~1 s per call at 1,700 unsent, and sends fell behind
 * while the backlog grew (found from outside; test/store/pg-backlog-plan.test.ts).
 */
export const HEADS = `SELECT DISTINCT ON (h.conversation_id) h.id, h.state, h.next_attempt_at, h.lease_until, h.owner
  FROM outbox h WHERE h.${UNSENT} ORDER BY h.conversation_id, ${RANK('h')}`;

/** An unsent connector event `e` that is its handoff's next (events of one handoff go in id order). */
const EVENT_HEAD = `e.${UNSENT} AND NOT EXISTS (SELECT 1 FROM handoff_events e2 WHERE e2.handoff_id = e.handoff_id AND e2.${UNSENT} AND e2.id < e.id)`;

/** A claim's change of a row (`$4` owner, `$5` lease ms, `$6` the statement's token). */
const TAKE = (t: string) => `state = 'sending', owner = $4::text, lease_until = ${NOW} + $5::bigint, claim = $6::text || '-' || ${t}.id, attempts = ${t}.attempts + 1`;

/** Tells the peers (on commit) that work was put back or given up. */
const NOTIFY_IF = (rows: string) => `(SELECT COUNT(*) FROM (SELECT pg_notify('${WORK_CHANNEL}', '') FROM (SELECT 1 FROM ${rows} LIMIT 1) x) n)`;

/** The statements of sends and events. */
export const PGW = {
  /**
   * Locks the claimable heads it can (SKIP LOCKED) and takes them; a row taken from `sending` (a
   * lapsed claim) counts a resend. The heads are an array computed once (an InitPlan), then looked
   * up by primary key: no join whose order the planner could get wrong on stale statistics.
   */
  claimSends: prepared(
    'claim_sends',
    `WITH c AS (
      SELECT o.id FROM outbox o
      WHERE o.id = ANY(ARRAY(SELECT h.id FROM (${HEADS}) h WHERE ${claimable('h')})) AND ${claimable('o')}
      ORDER BY o.id LIMIT $2 FOR UPDATE OF o SKIP LOCKED)
    UPDATE outbox SET ${TAKE('outbox')}, resends = outbox.resends + CASE WHEN outbox.state = 'sending' THEN 1 ELSE 0 END
    FROM c WHERE outbox.id = c.id RETURNING outbox.*`,
  ),
  /** Each handoff's next unsent event, when claimable; see claimSends. */
  claimEvents: prepared(
    'claim_events',
    `WITH c AS (
      SELECT e.id FROM handoff_events e WHERE ${EVENT_HEAD} AND ${claimable('e')}
      ORDER BY e.id LIMIT $2 FOR UPDATE OF e SKIP LOCKED)
    UPDATE handoff_events SET ${TAKE('handoff_events')}
    FROM c WHERE handoff_events.id = c.id RETURNING handoff_events.*`,
  ),
  /**
   * The heartbeat, one statement for the three tables: every claim of `$1` extended to `$2` ms from
   * the database's now (0: given up, and the peers told). The lanes held come back as JSON. The
   * lanes are updated after the sends and events (their counts are the lanes' InitPlans): the
   * order a failed send's settle takes its locks in (its row, then its follow-up's lane), so the
   * two never deadlock.
   */
  renew: prepared(
    'renew',
    `WITH s AS (UPDATE outbox SET lease_until = ${NOW} + $2::bigint WHERE owner = $1::text AND state = 'sending' RETURNING 1),
    e AS (UPDATE handoff_events SET lease_until = ${NOW} + $2::bigint WHERE owner = $1::text AND state = 'sending' RETURNING 1),
    l AS (UPDATE lanes SET lease_until = ${NOW} + $2::bigint WHERE owner = $1::text AND (SELECT COUNT(*) FROM s) + (SELECT COUNT(*) FROM e) >= 0
      RETURNING bot_id, user_number, fence, work_seq),
    given AS (SELECT 1 FROM s WHERE $2::bigint = 0 UNION ALL SELECT 1 FROM e WHERE $2::bigint = 0 UNION ALL SELECT 1 FROM l WHERE $2::bigint = 0)
    SELECT COALESCE((SELECT json_agg(l) FROM l), '[]'::json) AS lanes, ${NOTIFY_IF('given')} AS notified`,
  ),
  /** The earliest due time of a pending send or event at the head of its line, or of a timer. */
  nextDue: prepared(
    'next_due',
    `SELECT LEAST(
      (SELECT MIN(h.next_attempt_at) FROM (${HEADS}) h WHERE h.state = 'pending'),
      (SELECT MIN(e.next_attempt_at) FROM handoff_events e WHERE ${EVENT_HEAD} AND e.state = 'pending'),
      (SELECT MIN(fire_at) FROM timers)) AS t`,
  ),
  /** A send to try again at `$2`, while `$5` still holds it; the peers are told. */
  sendRetry: `WITH u AS (
      UPDATE outbox SET state = 'pending', next_attempt_at = $2, error = $3, error_code = $4, owner = NULL, lease_until = NULL, claim = NULL
      WHERE id = $1 AND claim = $5 AND state = 'sending' RETURNING 1)
    SELECT (SELECT COUNT(*) FROM u) AS n, ${NOTIFY_IF('u')} AS notified`,
  /** A send that failed before reaching the provider: what an earlier attempt recorded stays. */
  sendFailed: `UPDATE outbox SET state = 'failed', owner = NULL, lease_until = NULL, claim = NULL WHERE id = $1 AND claim = $2 AND state = 'sending'`,
  eventSent: `UPDATE handoff_events SET state = 'sent', sent_at = $1, owner = NULL, lease_until = NULL, claim = NULL, last_error = NULL
    WHERE id = $2 AND claim = $3 AND state = 'sending'`,
  eventRetry: `WITH u AS (
      UPDATE handoff_events SET state = 'pending', next_attempt_at = $1, last_error = $2, owner = NULL, lease_until = NULL, claim = NULL
      WHERE id = $3 AND claim = $4 AND state = 'sending' RETURNING 1)
    SELECT (SELECT COUNT(*) FROM u) AS n, ${NOTIFY_IF('u')} AS notified`,
  eventFailed: `UPDATE handoff_events SET state = 'failed', last_error = $1, owner = NULL, lease_until = NULL, claim = NULL
    WHERE id = $2 AND claim = $3 AND state = 'sending'`,
} as const;

/** A claim's arguments: `$1` now, `$2` limit, `$3` lapsed, `$4` owner, `$5` lease, `$6` a fresh token. */
export function claimArgs(who: { owner: string; leaseMs: number; lapsed: boolean }, limit: number, now: number): unknown[] {
  return [now, limit, who.lapsed, who.owner, Math.max(0, Math.round(who.leaseMs)), randomBytes(6).toString('hex')];
}

/** The number a one-row count statement returned. */
export async function counted(q: Queryable, sql: string, params: unknown[]): Promise<number> {
  return Number((await q.query(sql, params)).rows[0]?.['n'] ?? 0);
}
