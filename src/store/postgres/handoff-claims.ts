/**
 * Claims that end, on PostgreSQL: a claim idle past its deadline goes back to the queue (the
 * worker's `idle` work); the holder's activity moves the deadline (`touchClaimIn`, handoffs.ts).
 * Ported from SQLite's handoffs.ts.
 * Every statement here runs on a row the agents' own writes lock first (`FOR UPDATE` in
 * handoffs.ts), so an expiry and an agent's message, release or claim take turns on it: whichever
 * commits first decides, and the other finds the handoff as it left it.
 */
import type { ClaimExpiryReason, HandoffRecord, HandoffWrite } from '../handoff-types.js';
import { HANDOFF_TIMER_KEY } from '../handoff-types.js';
import { handoffTimeoutEvent } from '../handoff-payload.js';
import { toHandoff } from '../rows.js';
import { EXPIRING_CLAIM } from '../sql.js';
import { prepared, type PgDb, type Queryable } from './db.js';
import { event, logIn, PGH } from './handoffs.js';

const SQL = {
  /** Whether any claim is idle past `$1`: asked on every wake of the worker, prepared. */
  anyIdle: prepared('handoff_any_idle', `SELECT 1 FROM handoffs WHERE ${EXPIRING_CLAIM} AND claim_idle_until <= $1 LIMIT 1`),
  /**
   * Claims idle past `$1` that no other transaction holds (SKIP LOCKED: an agent writing to one
   * right now keeps it; a later look finds it again if it is still due). The conditions are on the
   * row alone, so PostgreSQL rechecks them on the version it locks: a deadline an agent's message
   * moved meanwhile is not taken.
   */
  idle: `SELECT * FROM handoffs WHERE ${EXPIRING_CLAIM} AND claim_idle_until <= $1 ORDER BY claim_idle_until, id LIMIT $2 FOR UPDATE SKIP LOCKED`,
  /** Back to the queue with its own timeout from now (10 minutes for a row a version before 0016 wrote without one); the agent column keeps who held it. */
  requeue: `UPDATE handoffs SET state = 'waiting', timeout_at = $3 + COALESCE(timeout_ms, 600000), claim_idle_ms = NULL, claim_idle_until = NULL
    WHERE id = $1 AND state = 'claimed' AND agent = $2 RETURNING *`,
} as const;

/**
 * Returns a claimed handoff to the queue, inside the caller's transaction: waiting again (the agent
 * column keeps who held it), its `handoff.timeout` timer armed for its own timeout from now, and
 * `handoff.claim_expired` queued with `reason`. Undefined (nothing changed) when `h` is no longer
 * claimed by the same agent: a release, a timeout or another claim came first.
 */
export async function returnClaimToQueueIn(q: Queryable, h: HandoffRecord, reason: ClaimExpiryReason, w: HandoffWrite): Promise<HandoffRecord | undefined> {
  const row = (await q.query(SQL.requeue, [h.id, h.agent, w.now])).rows[0];
  if (!row) return undefined;
  const back = toHandoff(row);
  const timeout = handoffTimeoutEvent({ timeoutMs: back.timeoutAt! - w.now, reason: back.reason ?? undefined, queue: back.queue ?? undefined });
  await q.query(PGH.upsertTimer, [h.conversationId, h.botId, h.user, HANDOFF_TIMER_KEY, JSON.stringify(timeout), back.timeoutAt]);
  await q.query(PGH.notifyWork); // other processes' workers learn of the re-armed timer
  await logIn(q, { handoffId: h.id, conversationId: h.conversationId, action: 'claim_expired', agent: h.agent, text: reason, at: w.now });
  await event(q, 'handoff.claim_expired', h.id, w, undefined, reason);
  return back;
}

/**
 * The worker's `idle` work: up to `limit` claims idle past their deadline at `w.now` returned to the
 * queue, in one transaction; those returned. Looked for on every wake, so the common answer (none
 * due) costs one read and no transaction.
 */
export async function expireIdleClaims(db: PgDb, limit: number, w: HandoffWrite): Promise<HandoffRecord[]> {
  if ((await db.query(SQL.anyIdle, [w.now])).rows.length === 0) return [];
  return db.tx((q) => expireIdleClaimsIn(q, limit, w));
}

/** Returns up to `limit` claims idle past their deadline at `w.now` to the queue (the worker's `idle` work), in one transaction; those returned. */
export async function expireIdleClaimsIn(q: Queryable, limit: number, w: HandoffWrite): Promise<HandoffRecord[]> {
  const due = (await q.query(SQL.idle, [w.now, limit])).rows.map(toHandoff);
  const back: HandoffRecord[] = [];
  for (const h of due) {
    const r = await returnClaimToQueueIn(q, h, 'idle', w);
    if (r) back.push(r);
  }
  return back;
}
