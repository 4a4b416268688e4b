/** SQL fragments both dialects share, so that the two stores order and rank the same way. */
import { STATUS_RANK } from './rows.js';
import type { ConversationStatus } from './types.js';

/** A handoff that is still open (waiting for an agent, or claimed by one); at most one per conversation. */
export const OPEN_HANDOFF = `state IN ('waiting', 'claimed')`;

/** A handoff whose claim goes back to the queue at `claim_idle_until` unless its agent acts (see the partial index `handoffs_claim_idle`). */
export const EXPIRING_CLAIM = `state = 'claimed' AND claim_idle_until IS NOT NULL`;

/** An outbox row's place in its conversation: id order, except that an SMS fallback goes right after the row it stands in for. */
export const outboxRank = (t: string): string => `(COALESCE(${t}.fallback_of, ${t}.id) * 2 + CASE WHEN ${t}.fallback_of IS NULL THEN 0 ELSE 1 END)`;

/** A delivery status's rank ({@link STATUS_RANK}) as an SQL expression; 0 for NULL and unknown ones. */
export const statusRank = (expr: string): string =>
  `(CASE ${expr} ${Object.entries(STATUS_RANK)
    .map(([s, r]) => `WHEN '${s}' THEN ${r}`)
    .join(' ')} ELSE 0 END)`;

/** The filter of `Store.conversations`. */
export interface ConversationFilter {
  readonly botId?: string;
  readonly user?: string;
  readonly status?: ConversationStatus;
}

/**
 * The query of `Store.conversations` and its arguments: the given filter fields, ANDed, in id order.
 * @param placeholder The dialect's placeholder for the n-th argument (1-based): `?` or `$n`.
 */
export function conversationsQuery(filter: ConversationFilter, placeholder: (n: number) => string): { sql: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  for (const [col, v] of [
    ['bot_id', filter.botId],
    ['user_number', filter.user],
    ['status', filter.status],
  ] as const) {
    if (v !== undefined) {
      args.push(v);
      where.push(`${col} = ${placeholder(args.length)}`);
    }
  }
  return { sql: `SELECT * FROM conversations ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`, args };
}

/**
 * Shared statements are written once with named parameters (`@name`), as SQLite runs them;
 * `@dbnow` stands for the database's clock in epoch ms: SQLite binds the store's clock to it,
 * PostgreSQL reads its own ({@link forPostgres}).
 */
export const DB_NOW = '@dbnow';

/** PostgreSQL's clock in epoch milliseconds. */
export const PG_NOW = '(EXTRACT(EPOCH FROM now()) * 1000)::bigint';

/** A shared statement as PostgreSQL runs it: `$n` placeholders, and the names they stand for, in order. */
export interface PgStatement {
  readonly text: string;
  readonly names: readonly string[];
}

/** Compiles a shared statement for PostgreSQL: each `@name` becomes `$n` (one per name), `@dbnow` becomes `now()` in ms. */
export function forPostgres(sql: string): PgStatement {
  const names: string[] = [];
  const text = sql.replace(/@([A-Za-z_]\w*)/g, (_, name: string) => {
    if (`@${name}` === DB_NOW) return PG_NOW;
    let i = names.indexOf(name);
    if (i < 0) i = names.push(name) - 1;
    return `$${i + 1}`;
  });
  return { text, names };
}

/** The arguments of a compiled statement, in its placeholders' order; a missing one is a programming error. */
export function pgArgs(s: PgStatement, args: Readonly<Record<string, unknown>>): unknown[] {
  return s.names.map((n) => {
    if (!(n in args)) throw new Error(`no value for @${n}`);
    return args[n];
  });
}

/** Named arguments as better-sqlite3 binds them: booleans as 1 or 0. */
export function sqliteArgs(args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([k, v]) => [k, typeof v === 'boolean' ? Number(v) : v]));
}

/**
 * A row `t` of outbox or handoff_events whose claim lapsed (its owner stopped renewing it), or that
 * a version before owners left `sending`: taken only by a claimant that asks for lapsed work
 * (`@lapsed`).
 */
export const lapsedClaim = (t: string): string => `(${t}.state = 'sending' AND @lapsed AND (${t}.owner IS NULL OR ${t}.lease_until <= ${DB_NOW}))`;

/** A row `t` of outbox or handoff_events a claim may take: pending and due at `@now` (the process clock), or lapsed. */
export const claimableRow = (t: string): string => `((${t}.state = 'pending' AND ${t}.next_attempt_at <= @now) OR ${lapsedClaim(t)})`;

/**
 * An unsent outbox row `o` that is its conversation's next: no unsent row of its conversation ranks
 * before it ({@link outboxRank}). `hint` names the index to walk (SQLite's `INDEXED BY …`, or '').
 */
export const sendHead = (hint = ''): string => `o.state IN ('pending', 'sending')
  AND NOT EXISTS (SELECT 1 FROM outbox o2 ${hint}
    WHERE o2.conversation_id = o.conversation_id AND o2.state IN ('pending', 'sending') AND ${outboxRank('o2')} < ${outboxRank('o')})`;

/** An unsent connector event `e` that is its handoff's next. */
export const EVENT_HEAD = `e.state IN ('pending', 'sending')
  AND NOT EXISTS (SELECT 1 FROM handoff_events e2 WHERE e2.handoff_id = e.handoff_id AND e2.state IN ('pending', 'sending') AND e2.id < e.id)`;

/** What a claim sets on the outbox or handoff_events row it takes (the token is the claim's, made unique by the row's id). */
export const TAKE_ROW = `state = 'sending', owner = @owner, lease_until = ${DB_NOW} + @leaseMs, claim = CAST(@token AS TEXT) || '-' || id, attempts = attempts + 1`;

/** The work statements both dialects run as they are (see {@link forPostgres}). */
export const WORK_SQL = {
  /** The heartbeat, one statement per table: every claim of `@owner` extended to `@leaseMs` from now (0: lapsed now). */
  renewLanes: `UPDATE lanes SET lease_until = ${DB_NOW} + @leaseMs WHERE owner = @owner RETURNING bot_id, user_number, fence, work_seq`,
  renewSends: `UPDATE outbox SET lease_until = ${DB_NOW} + @leaseMs WHERE owner = @owner AND state = 'sending'`,
  renewEvents: `UPDATE handoff_events SET lease_until = ${DB_NOW} + @leaseMs WHERE owner = @owner AND state = 'sending'`,
  /** The earliest due time of a pending send or connector event at the head of its line, of a timer, or of an idle claim (leases are not in it). */
  nextDue: `SELECT MIN(d.t) AS t FROM (
    SELECT MIN(o.next_attempt_at) AS t FROM outbox o WHERE ${sendHead()} AND o.state = 'pending'
    UNION ALL SELECT MIN(e.next_attempt_at) AS t FROM handoff_events e WHERE ${EVENT_HEAD} AND e.state = 'pending'
    UNION ALL SELECT MIN(fire_at) AS t FROM timers
    UNION ALL SELECT MIN(claim_idle_until) AS t FROM handoffs WHERE ${EXPIRING_CLAIM}) d`,
  /** Releases a drained lane, only while `@owner` holds it with `@fence` and no work was added since `@seen`. */
  releaseLane: `UPDATE lanes SET owner = NULL, lease_until = NULL, done_seq = @seen
    WHERE bot_id = @botId AND user_number = @user AND owner = @owner AND fence = @fence AND work_seq = @seen`,
  sendRetry: `UPDATE outbox SET state = 'pending', next_attempt_at = @at, error = @error, error_code = @code, owner = NULL, lease_until = NULL, claim = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
  /** A claimed send that failed for good without reaching the provider: what an earlier attempt recorded stays. */
  sendFailed: `UPDATE outbox SET state = 'failed', owner = NULL, lease_until = NULL, claim = NULL WHERE id = @id AND claim = @claim AND state = 'sending'`,
  eventSent: `UPDATE handoff_events SET state = 'sent', sent_at = @now, owner = NULL, lease_until = NULL, claim = NULL, last_error = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
  eventRetry: `UPDATE handoff_events SET state = 'pending', next_attempt_at = @at, last_error = @error, owner = NULL, lease_until = NULL, claim = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
  eventFailed: `UPDATE handoff_events SET state = 'failed', last_error = @error, owner = NULL, lease_until = NULL, claim = NULL
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
} as const;
