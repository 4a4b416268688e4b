/**
 * The PostgreSQL store's lanes: who runs a conversation's work. Lanes with work are claimed with
 * `FOR UPDATE SKIP LOCKED` (two processes never wait on, nor take, the same lane), leases are set
 * and compared on the database's clock (`now()`), and adding work sends a `NOTIFY` that wakes the
 * other processes' polls (a hint: the poll is what makes takeover certain).
 */
import type pg from 'pg';
import { pgDriver } from '../drivers.js';
import { prepared, type PgDb, type Queryable } from './db.js';
import { PREFETCH_COLUMNS } from './prefetch.js';
import { toInbox, toKey } from '../rows.js';
import type { Claimant, ConversationKey, LaneClaim, LaneNext } from '../types.js';

/** What a release that found no pending inbound means. */
type LaneRelease = Exclude<LaneNext, { outcome: 'next' }>;

/** The channel of work notifications. */
export const WORK_CHANNEL = 'colloquy_work';

/** The database's clock, in epoch milliseconds. */
export const NOW = `(EXTRACT(EPOCH FROM now()) * 1000)::bigint`;
/** A lane's fence after a claim by `owner` (an SQL expression): it grows when the owner changes. */
export const FENCE_OF = (owner: string): string => `CASE WHEN lanes.owner IS NOT DISTINCT FROM ${owner} THEN lanes.fence ELSE lanes.fence + 1 END`;
const FENCE = FENCE_OF('$1::text');

const SQL = {
  bump: `INSERT INTO lanes (bot_id, user_number, work_seq) VALUES ($1, $2, 1)
    ON CONFLICT (bot_id, user_number) DO UPDATE SET work_seq = lanes.work_seq + 1`,
  /** Takes the lane's row lock (creating the row if needed) until the transaction ends. */
  lock: `INSERT INTO lanes (bot_id, user_number) VALUES ($1, $2)
    ON CONFLICT (bot_id, user_number) DO UPDATE SET work_seq = lanes.work_seq`,
  notify: `SELECT pg_notify('${WORK_CHANNEL}', '')`,
  /**
   * Claims one lane by its key in one statement: a lane nobody has yet is created claimed (fence 1,
   * as a claim of a fresh row would make it); an existing one is taken unless another owner's lease
   * is live (or lapsed, and `$5` takes no lapsed claims) or another process holds its row lock (SKIP
   * LOCKED: never waited for; the conditions are rechecked on the row as locked). `visible` says
   * whether the statement's snapshot saw the lane at all: when neither branch returned a row and the
   * lane was not visible, another process created it just now, and the claim is tried again.
   */
  claimOne: prepared(
    'claim_lane',
    `WITH ins AS (
      INSERT INTO lanes (bot_id, user_number, owner, lease_until, fence) VALUES ($2, $3, $1, ${NOW} + $4, 1)
      ON CONFLICT (bot_id, user_number) DO NOTHING
      RETURNING bot_id, user_number, fence, work_seq, NULL::text AS prev),
    c AS (
      SELECT bot_id, user_number, owner AS prev FROM lanes
      WHERE bot_id = $2 AND user_number = $3 AND (owner IS NULL OR owner = $1 OR ($5::boolean AND lease_until <= ${NOW}))
      FOR UPDATE SKIP LOCKED),
    up AS (
      UPDATE lanes SET owner = $1, lease_until = ${NOW} + $4, fence = ${FENCE}
      FROM c WHERE lanes.bot_id = c.bot_id AND lanes.user_number = c.user_number
      RETURNING lanes.bot_id, lanes.user_number, lanes.fence, lanes.work_seq, c.prev)
    SELECT r.*, v.visible, ${PREFETCH_COLUMNS('$2::text', '$3::text', 'r.fence IS NOT NULL')}
    FROM (SELECT EXISTS (SELECT 1 FROM lanes WHERE bot_id = $2 AND user_number = $3) AS visible) v
      LEFT JOIN (SELECT * FROM ins UNION ALL SELECT * FROM up) r ON true`,
  ),
  claimMany: prepared(
    'claim_lanes',
    `WITH c AS (
      SELECT l.bot_id, l.user_number, l.owner AS prev FROM lanes l
      WHERE l.work_seq > l.done_seq AND (l.owner IS NULL OR ($4::boolean AND l.lease_until <= ${NOW}))
      ORDER BY (SELECT MIN(i.id) FROM inbox i WHERE i.bot_id = l.bot_id AND i.user_number = l.user_number AND i.state = 'pending') NULLS FIRST
      LIMIT $2 FOR UPDATE OF l SKIP LOCKED)
    UPDATE lanes SET owner = $1, lease_until = ${NOW} + $3, fence = ${FENCE}
    FROM c WHERE lanes.bot_id = c.bot_id AND lanes.user_number = c.user_number
    RETURNING lanes.bot_id, lanes.user_number, lanes.fence, lanes.work_seq, c.prev`,
  ),
  /**
   * A drained lane's last look and its release at once: the lane released unless the conversation
   * has a pending inbound, which is returned instead (`next`, as JSON). The lane as the statement's
   * snapshot had it comes back too, so why a release that did not happen failed (work added since,
   * or the lane lost) is known in the same round trip.
   * "None pending" is of the statement's snapshot; an inbound committed after it
   * bumped `work_seq` in its own transaction, which the UPDATE sees (it re-reads a row changed since
   * the snapshot), so the lane is then not released.
   */
  nextOrRelease: prepared(
    'next_or_release_lane',
    `WITH p AS (SELECT * FROM inbox WHERE bot_id = $2 AND user_number = $3 AND state = 'pending' ORDER BY id LIMIT 1),
    r AS (
      UPDATE lanes SET owner = NULL, lease_until = NULL, done_seq = $4
      WHERE bot_id = $2 AND user_number = $3 AND owner = $1 AND fence = $5 AND work_seq = $4 AND NOT EXISTS (SELECT 1 FROM p) RETURNING 1)
    SELECT (SELECT COUNT(*) FROM r) AS released, l.owner, l.fence, l.work_seq, (SELECT row_to_json(p) FROM p) AS next
    FROM (SELECT 1) one LEFT JOIN lanes l ON l.bot_id = $2 AND l.user_number = $3`,
  ),
  lane: 'SELECT owner, fence, work_seq FROM lanes WHERE bot_id = $1 AND user_number = $2',
} as const;

type Row = Record<string, unknown>;

/**
 * Locks a conversation's lane until the transaction ends, before its inbound takes an id: two
 * inbounds of one conversation stored at once by two processes then get their ids in commit order,
 * so a drain that reads the oldest pending one never runs a later one first.
 */
export async function lockLaneIn(q: Queryable, key: ConversationKey): Promise<void> {
  await q.query(SQL.lock, [key.botId, key.user]);
}

/** Adds work to a conversation's lane, inside the transaction that adds the work; peers are told on commit. */
export async function bumpLaneIn(q: Queryable, key: ConversationKey): Promise<void> {
  await q.query(SQL.bump, [key.botId, key.user]);
  await q.query(SQL.notify); // delivered on commit, once per transaction however many are sent
}

/** A claim statement's row as a claim. */
export function toClaim(owner: string, r: Row, prevOwner: unknown): LaneClaim {
  return {
    key: toKey(r),
    fence: Number(r['fence']),
    workSeq: Number(r['work_seq']),
    takeover: prevOwner !== null && prevOwner !== undefined && prevOwner !== owner,
  };
}

/**
 * See `Store.claim` of lanes: each form one autocommitted statement. A claim by key also reads what
 * the lane's next step reads, handed to `granted` (see prefetch.ts).
 */
export async function claimLanesIn(db: PgDb, who: Claimant, limit: number, key?: ConversationKey, granted?: (key: ConversationKey, r: Row, owner: string) => void): Promise<LaneClaim[]> {
  if (key) {
    const params = [who.owner, key.botId, key.user, who.leaseMs, who.lapsed];
    let { rows } = await db.query(SQL.claimOne, params);
    // Created by another process after this statement's snapshot: look again, now that it is seen.
    if (rows[0]?.['visible'] === false && rows[0]['fence'] === null) ({ rows } = await db.query(SQL.claimOne, params));
    const mine = rows.filter((r) => r['fence'] !== null);
    for (const r of mine) granted?.(key, r, who.owner);
    return mine.map((r) => toClaim(who.owner, r, r['prev']));
  }
  const { rows } = await db.query(SQL.claimMany, [who.owner, limit, who.leaseMs, who.lapsed]);
  return rows.map((r) => toClaim(who.owner, r, r['prev']));
}

/** See `Store.settleLane`. */
export async function settleLaneIn(db: PgDb, owner: string, key: ConversationKey, fence: number, seen: number | null): Promise<LaneNext> {
  const row = (await db.query(SQL.nextOrRelease, [owner, key.botId, key.user, seen, fence])).rows[0]!;
  return nextOrReleaseOutcome(db, row, owner, key, fence, seen);
}

/**
 * What a next-or-release statement's row means: its pending inbound (`next`) while the lane is still
 * the owner's (else `lost`: the new owner runs it), or, with none pending, as {@link releaseOutcome}.
 */
export function nextOrReleaseOutcome(db: PgDb, row: Row, owner: string, key: ConversationKey, fence: number, seen: number | null): Promise<LaneNext> | LaneNext {
  const next = row['next'];
  if (next === null || next === undefined || typeof next !== 'object') {
    // No counter: a live actor keeps its lane, which the statement never released.
    if (seen === null) return row['owner'] === owner && Number(row['fence']) === fence ? { outcome: 'idle' } : { outcome: 'lost' };
    return releaseOutcome(db, row, owner, key, fence, seen);
  }
  return row['owner'] === owner && Number(row['fence']) === fence ? { outcome: 'next', inbound: toInbox(next as Row) } : { outcome: 'lost' };
}

/** What a release statement's row (`released`, and the lane as its snapshot had it) means. */
async function releaseOutcome(db: PgDb, row: Row, owner: string, key: ConversationKey, fence: number, seen: number): Promise<LaneRelease> {
  if (row['released'] === true || Number(row['released']) === 1) return { outcome: 'released' };
  // The lane as the snapshot had it would have been released: it changed while the release waited
  // for its row lock, so read it as it is now.
  const mine = (r: Row) => r['owner'] === owner && Number(r['fence']) === fence;
  let lane = row;
  if (mine(lane) && Number(lane['work_seq']) === seen) lane = (await db.query(SQL.lane, [key.botId, key.user])).rows[0] ?? {};
  if (!mine(lane)) return { outcome: 'lost' };
  return { outcome: 'more', workSeq: Number(lane['work_seq']) };
}

/**
 * LISTENs for work on a dedicated connection (a pooled one would be handed back and lose it).
 * Notifications `ignore` accepts (by the sending server process) are dropped: the store's own.
 * A dropped connection is opened again after a pause; meanwhile the poll carries on alone.
 */
export async function listenForWork(
  url: string,
  listener: () => void,
  onError: (err: unknown) => void = () => undefined,
  ignore: (senderPid: number) => boolean = () => false,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const c = new (pgDriver().Client)({ connectionString: url, application_name: 'colloquy-listen' });
    c.on('notification', (n) => {
      if (!ignore(n.processId)) listener();
    });
    c.on('error', (err) => {
      onError(err);
      reconnect(c);
    });
    c.on('end', () => reconnect(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${WORK_CHANNEL}`);
      client = c;
      if (closed) await c.end();
      else listener(); // notifications may have been missed while not listening
    } catch (err) {
      onError(err);
      reconnect(c);
    }
  };
  const reconnect = (c: pg.Client) => {
    if (closed || (client !== c && client !== undefined)) return;
    client = undefined;
    c.end().catch(() => undefined);
    if (retry === undefined)
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, 1_000).unref();
  };
  await connect();
  return async () => {
    closed = true;
    if (retry !== undefined) clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
