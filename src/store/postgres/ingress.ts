/**
 * Storing inbounds and claiming their lanes in the same statement. A received message used to cost
 * the webhook's statement (the inbound, its lane's work, the `NOTIFY`), then its lane's claim by
 * key: two statements one after the other. With a claim asked for, the inbound's lane upsert also
 * takes the lane when nobody else's lease on it is live (as a claim by key would, taking a lapsed one only when the claimant takes those), and the row
 * carries what the turn reads next (see prefetch.ts), so the lane starts its turn without a
 * round trip.
 *
 * The lane's row is locked by the upsert before any inbound takes an id (as before), so inbounds of
 * one conversation get their ids in commit order. The inbound kept for the turn is the oldest
 * pending one the statement saw, else its own; but only when no other writer added work to the
 * lane between the statement's snapshot and its lock (`work_seq` is then the snapshot's plus this
 * statement's): an inbound committed in between is older, pending and unseen, so nothing is kept
 * and the lane asks the database.
 *
 * Peers are told of new work (`NOTIFY`) only when an inbound's lane stayed with another owner, who
 * must learn of it (a live actor keeps its lane held and idle). A lane the caller took is the
 * caller's to drain, and nobody else can take it while its lease lives. In one process, or with
 * every lane claimed at ingress, no notification is sent at all (each cost a commit under
 * PostgreSQL's notification-queue lock and woke every listening connection, its own process's
 * included, only to be ignored there).
 */
import { prepared, type PgDb } from './db.js';
import { NOW, WORK_CHANNEL } from './lanes.js';
import { j } from '../rows.js';
import type { Claimant, LaneClaim, NewInbound } from '../types.js';

/** An inbound and the claim asked for with it. */
export interface Ingress {
  readonly inbound: NewInbound;
  readonly claim: Claimant;
}

/** What storing an inbound with a claim returns: the claim when it was granted. */
export interface IngressResult {
  readonly id: number;
  readonly duplicate: boolean;
  readonly claim?: LaneClaim | undefined;
}

/**
 * Whether the upsert takes the lane (evaluated on the lane's row as locked): nobody's, the caller's
 * own, or lapsed when the caller takes lapsed claims (read from `want`: a lanes row has no column for it).
 */
const TAKE = `EXCLUDED.owner IS NOT NULL AND (l.owner IS NULL OR l.owner = EXCLUDED.owner
  OR (l.lease_until <= ${NOW} AND (SELECT w.lapsed FROM want w WHERE w.bot_id = EXCLUDED.bot_id AND w.user_number = EXCLUDED.user_number)))`;

/** See the module's comment; `n` is a call's place in the batch. */
export const ADD_INBOUND_CLAIMING = prepared(
  'add_inbound_claiming',
  `WITH k AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[], $9::bigint[], $10::boolean[])
      WITH ORDINALITY AS k(provider_id, bot_id, user_number, source, event, raw, received_at, owner, lease, lapsed, n)),
  known AS (SELECT i.provider_id, i.id FROM inbox i WHERE i.provider_id IN (SELECT provider_id FROM k)),
  fresh AS (SELECT * FROM k WHERE provider_id NOT IN (SELECT provider_id FROM known)),
  want AS (SELECT bot_id, user_number, COUNT(*) AS added, MAX(owner) AS owner, MAX(lease) AS lease, bool_and(lapsed) AS lapsed FROM fresh GROUP BY bot_id, user_number),
  seen AS (SELECT l.bot_id, l.user_number, l.owner, l.work_seq FROM lanes l JOIN want w ON w.bot_id = l.bot_id AND w.user_number = l.user_number),
  lane AS (
    INSERT INTO lanes AS l (bot_id, user_number, work_seq, owner, lease_until, fence)
    SELECT bot_id, user_number, added, owner, CASE WHEN owner IS NULL THEN NULL ELSE ${NOW} + lease END, CASE WHEN owner IS NULL THEN 0 ELSE 1 END
    FROM want ORDER BY bot_id, user_number
    ON CONFLICT (bot_id, user_number) DO UPDATE SET work_seq = l.work_seq + EXCLUDED.work_seq,
      owner = CASE WHEN ${TAKE} THEN EXCLUDED.owner ELSE l.owner END,
      lease_until = CASE WHEN ${TAKE} THEN EXCLUDED.lease_until ELSE l.lease_until END,
      fence = CASE WHEN ${TAKE} AND l.owner IS DISTINCT FROM EXCLUDED.owner THEN l.fence + 1 ELSE l.fence END
    RETURNING l.bot_id, l.user_number, l.owner, l.fence, l.work_seq),
  ins AS (
    INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at)
    SELECT f.provider_id, f.bot_id, f.user_number, f.source, f.event, f.raw, f.received_at
    FROM fresh f JOIN lane ON lane.bot_id = f.bot_id AND lane.user_number = f.user_number ORDER BY f.n
    ON CONFLICT (provider_id) DO NOTHING RETURNING *),
  r AS (
    SELECT k.n, k.bot_id, k.user_number, ins.id, known.id AS known, lane.fence, lane.work_seq, s.owner AS prev,
      lane.owner IS NOT NULL AND lane.owner = k.owner AS claimed,
      lane.work_seq = COALESCE(s.work_seq, 0) + w.added AS complete
    FROM k LEFT JOIN ins ON ins.provider_id = k.provider_id LEFT JOIN known ON known.provider_id = k.provider_id
      LEFT JOIN lane ON lane.bot_id = k.bot_id AND lane.user_number = k.user_number
      LEFT JOIN want w ON w.bot_id = k.bot_id AND w.user_number = k.user_number
      LEFT JOIN seen s ON s.bot_id = k.bot_id AND s.user_number = k.user_number)
  SELECT r.n, r.bot_id, r.user_number, r.id, r.known, r.fence, r.work_seq, r.prev, r.claimed,
    (SELECT COUNT(*) FROM (SELECT pg_notify('${WORK_CHANNEL}', '') FROM ins JOIN fresh f ON f.provider_id = ins.provider_id
      JOIN lane ON lane.bot_id = ins.bot_id AND lane.user_number = ins.user_number WHERE lane.owner IS DISTINCT FROM f.owner LIMIT 1) x) AS notified,
    CASE WHEN r.claimed AND r.complete THEN COALESCE(
      (SELECT row_to_json(pi) FROM inbox pi WHERE pi.bot_id = r.bot_id AND pi.user_number = r.user_number AND pi.state = 'pending' ORDER BY pi.id LIMIT 1),
      (SELECT row_to_json(x) FROM ins x WHERE x.bot_id = r.bot_id AND x.user_number = r.user_number ORDER BY x.id LIMIT 1)) END AS prefetch_inbox,
    CASE WHEN r.claimed THEN (SELECT row_to_json(pc) FROM conversations pc WHERE pc.bot_id = r.bot_id AND pc.user_number = r.user_number AND pc.status = 'active') END
      AS prefetch_conversation
  FROM r ORDER BY r.n`,
);

/** The statement's arguments for several calls (its arrays). */
export function ingressColumns(calls: readonly Ingress[]): unknown[][] {
  const cols: unknown[][] = Array.from({ length: 10 }, () => []);
  for (const { inbound: i, claim } of calls) {
    [i.providerId, i.botId, i.user, i.source, JSON.stringify(i.event), j(i.raw), i.receivedAt, claim.owner, claim.leaseMs, claim.lapsed].forEach((v, c) => cols[c]!.push(v));
  }
  return cols;
}

/** Runs the statement for several calls; each call's row (undefined: none came back). */
export async function addInboundsClaiming(db: PgDb, calls: readonly Ingress[]): Promise<(Record<string, unknown> | undefined)[]> {
  const out: (Record<string, unknown> | undefined)[] = new Array(calls.length).fill(undefined);
  for (const r of (await db.query(ADD_INBOUND_CLAIMING, ingressColumns(calls))).rows) out[Number(r['n']) - 1] = r;
  return out;
}
