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
import { prepared, type PgStatement, type Queryable } from './db.js';
import { WORK_CHANNEL } from './lanes.js';
import { claimableRow, EVENT_HEAD, EXPIRING_CLAIM, forPostgres, outboxRank as RANK, pgArgs, TAKE_ROW, WORK_SQL } from '../sql.js';
import type { Claimant } from '../types.js';

const UNSENT = `state IN ('pending', 'sending')`;

/**
 * The next unsent outbox row of each conversation (its lowest rank; ranks are unique), in one pass
 * over the unsent rows: a sort, no per-row lookups, so its cost follows the backlog whatever the
 * statistics say. A row another process holds locked still counts as unsent here (this reads, it
 * does not lock), so a conversation's order holds across processes. It was a NOT EXISTS per row
 * (then a correlated MIN; SQLite's form, `sendHead` in ../sql.ts): with statistics taken while
 * nothing was unsent, the planner scanned a whole partial index for every unsent row, ~1 s per call
 * at 1,700 unsent, and sends fell behind while the backlog grew (found from outside;
 * test/store/pg-backlog-plan.test.ts).
 */
export const HEADS = `SELECT DISTINCT ON (h.conversation_id) h.id, h.state, h.next_attempt_at, h.lease_until, h.owner
  FROM outbox h WHERE h.${UNSENT} ORDER BY h.conversation_id, ${RANK('h')}`;

/** Tells the peers (on commit) that work was put back or given up. */
const NOTIFY_IF = (rows: string) => `(SELECT COUNT(*) FROM (SELECT pg_notify('${WORK_CHANNEL}', '') FROM (SELECT 1 FROM ${rows} LIMIT 1) x) n)`;

/** A statement written with named parameters (`@name`, see ../sql.ts), compiled once, run with named arguments. */
export interface NamedStatement {
  readonly statement: PgStatement | string;
  readonly names: readonly string[];
}

/** Compiles a statement with named parameters; `name` makes it a prepared statement. */
function named(sql: string, name?: string): NamedStatement {
  const c = forPostgres(sql);
  return { statement: name === undefined ? c.text : prepared(name, c.text), names: c.names };
}

/** A named statement's text and its arguments in placeholder order (what `run` sends; for EXPLAIN in tests). */
export function bound(s: NamedStatement, args: Readonly<Record<string, unknown>>): { text: string; values: unknown[] } {
  return { text: typeof s.statement === 'string' ? s.statement : s.statement.text, values: pgArgs({ text: '', names: s.names }, args) };
}

/** Runs a named statement with its arguments. */
export function run(q: Queryable, s: NamedStatement, args: Readonly<Record<string, unknown>>): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }> {
  return q.query(s.statement, bound(s, args).values);
}

/** The heartbeat's lanes, after the sends and events (their counts are its InitPlans): see `renew`. */
const RENEW_LANES_AFTER = WORK_SQL.renewLanes.replace('WHERE owner = @owner', 'WHERE owner = @owner AND (SELECT COUNT(*) FROM s) + (SELECT COUNT(*) FROM e) >= 0');
if (RENEW_LANES_AFTER === WORK_SQL.renewLanes) throw new Error('the shared renewLanes statement changed: see postgres/work.ts');

/** The statements of sends and events, with named parameters (see ../sql.ts). */
export const PGW = {
  /**
   * Locks the claimable heads it can (SKIP LOCKED) and takes them; a row taken from `sending` (a
   * lapsed claim) counts a resend. The heads are an array computed once (an InitPlan), then looked
   * up by primary key: no join whose order the planner could get wrong on stale statistics.
   */
  claimSends: named(
    `WITH c AS (
      SELECT o.id AS cid FROM outbox o
      WHERE o.id = ANY(ARRAY(SELECT h.id FROM (${HEADS}) h WHERE ${claimableRow('h')})) AND ${claimableRow('o')}
      ORDER BY o.id LIMIT @limit FOR UPDATE OF o SKIP LOCKED)
    UPDATE outbox SET ${TAKE_ROW}, resends = resends + CASE WHEN outbox.state = 'sending' THEN 1 ELSE 0 END
    FROM c WHERE outbox.id = c.cid RETURNING outbox.*`,
    'claim_sends',
  ),
  /** Each handoff's next unsent event, when claimable; see claimSends. */
  claimEvents: named(
    `WITH c AS (
      SELECT e.id AS cid FROM handoff_events e WHERE ${EVENT_HEAD} AND ${claimableRow('e')}
      ORDER BY e.id LIMIT @limit FOR UPDATE OF e SKIP LOCKED)
    UPDATE handoff_events SET ${TAKE_ROW}
    FROM c WHERE handoff_events.id = c.cid RETURNING handoff_events.*`,
    'claim_events',
  ),
  /**
   * The heartbeat, the three shared statements in one: every claim of `@owner` extended to
   * `@leaseMs` from the database's now (0: given up, and the peers told). The lanes held come back
   * as JSON. The lanes are updated after the sends and events: the order a failed send's settle
   * takes its locks in (its row, then its follow-up's lane), so the two never deadlock.
   */
  renew: named(
    `WITH s AS (${WORK_SQL.renewSends} RETURNING id, claim), e AS (${WORK_SQL.renewEvents} RETURNING id, claim), l AS (${RENEW_LANES_AFTER}),
    given AS (SELECT 1 FROM s WHERE @leaseMs = 0 UNION ALL SELECT 1 FROM e WHERE @leaseMs = 0 UNION ALL SELECT 1 FROM l WHERE @leaseMs = 0)
    SELECT COALESCE((SELECT json_agg(l) FROM l), '[]'::json) AS lanes, COALESCE((SELECT json_agg(s) FROM s), '[]'::json) AS sends,
      COALESCE((SELECT json_agg(e) FROM e), '[]'::json) AS events, ${NOTIFY_IF('given')} AS notified`,
    'renew',
  ),
  /** The earliest due time of a pending send or event at the head of its line, of a timer, or of an idle claim (the heads as above, not `sendHead`). */
  nextDue: named(
    `SELECT LEAST(
      (SELECT MIN(h.next_attempt_at) FROM (${HEADS}) h WHERE h.state = 'pending'),
      (SELECT MIN(e.next_attempt_at) FROM handoff_events e WHERE ${EVENT_HEAD} AND e.state = 'pending'),
      (SELECT MIN(fire_at) FROM timers),
      (SELECT MIN(claim_idle_until) FROM handoffs WHERE ${EXPIRING_CLAIM})) AS t`,
    'next_due',
  ),
  /** A send to try again at `@at`, while `@claim` still holds it; the peers are told. */
  sendRetry: named(`WITH u AS (${WORK_SQL.sendRetry} RETURNING 1) SELECT (SELECT COUNT(*) FROM u) AS n, ${NOTIFY_IF('u')} AS notified`),
  sendFailed: named(WORK_SQL.sendFailed),
  eventSent: named(WORK_SQL.eventSent),
  eventRetry: named(`WITH u AS (${WORK_SQL.eventRetry} RETURNING 1) SELECT (SELECT COUNT(*) FROM u) AS n, ${NOTIFY_IF('u')} AS notified`),
  eventFailed: named(WORK_SQL.eventFailed),
} as const;

/** A lease as the statements take it (whole milliseconds); a lease that is not a number of milliseconds is refused. */
export function leaseMsOf(leaseMs: number): number {
  if (!Number.isFinite(leaseMs) || leaseMs < 0) throw new RangeError(`a lease is a number of milliseconds, 0 or more, not ${String(leaseMs)}`);
  return Math.round(leaseMs);
}

/** A claimant with its lease in whole milliseconds (see {@link leaseMsOf}). */
export function claimantOf(who: Claimant): Claimant {
  return { owner: who.owner, lapsed: who.lapsed, leaseMs: leaseMsOf(who.leaseMs) };
}

/** A claim's named arguments; the token is fresh per claim (made unique per row by its id). */
export function claimArgs(who: Claimant, limit: number, now: number): Record<string, unknown> {
  return { now, limit, lapsed: who.lapsed, owner: who.owner, leaseMs: leaseMsOf(who.leaseMs), token: randomBytes(6).toString('hex') };
}

/** The number a one-row count statement returned. */
export async function counted(q: Queryable, s: NamedStatement, args: Readonly<Record<string, unknown>>): Promise<number> {
  return Number((await run(q, s, args)).rows[0]?.['n'] ?? 0);
}
