/**
 * The PostgreSQL store's operations of every turn, each with a statement for a batch of calls (see
 * `batch.ts`): the many-call twin of a one-call statement, with the same guards, per call.
 * Arguments travel as arrays (`unnest … WITH ORDINALITY`: `n` is a call's place in the batch).
 */
import { Batcher } from './batch.js';
import { addInboundsClaiming, type Ingress, type IngressResult } from './ingress.js';
import { prepared, type PgDb } from './db.js';
import { claimLanesIn, FENCE_OF, NOW, nextOrReleaseOutcome, settleLaneIn, toClaim, WORK_CHANNEL } from './lanes.js';
import { addInboundIn, finishFields, finishIn } from './outbox.js';
import { PG } from './sql.js';
import { PGW, run } from './work.js';
import { PREFETCH_COLUMNS, Prefetched } from './prefetch.js';
import { callCommit, commitResult, turnFields } from './turns.js';
import { j, toConversation, toStatus } from '../rows.js';
import { statusRank } from '../sql.js';
import type { Claimant, CommitResult, ConversationKey, ConversationRecord, LaneClaim, LaneNext, NewInbound, NewStatus, SendRecord, TurnCommit } from '../types.js';

type Row = Record<string, unknown>;

const KEYS = `unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(kb, ku, n)`;

const SQL = {
  active: prepared('active_many', `SELECT k.n, c.* FROM ${KEYS} JOIN conversations c ON c.bot_id = k.kb AND c.user_number = k.ku AND c.status = 'active'`),
  statuses: prepared('statuses_many', `SELECT k.n, s.* FROM unnest($1::text[]) WITH ORDINALITY AS k(pid, n) JOIN statuses s ON s.provider_message_id = k.pid ORDER BY k.n, s.id`),
  /** See PG.addInbound: the lanes are upserted (in key order, one row each) before any inbound takes an id. */
  addInbound: prepared(
    'add_inbound_many',
    `WITH k AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])
        WITH ORDINALITY AS k(provider_id, bot_id, user_number, source, event, raw, received_at, n)),
    known AS (SELECT i.provider_id, i.id FROM inbox i WHERE i.provider_id IN (SELECT provider_id FROM k)),
    fresh AS (SELECT * FROM k WHERE provider_id NOT IN (SELECT provider_id FROM known)),
    lane AS (
      INSERT INTO lanes AS l (bot_id, user_number, work_seq)
      SELECT bot_id, user_number, COUNT(*) FROM fresh GROUP BY bot_id, user_number ORDER BY bot_id, user_number
      ON CONFLICT (bot_id, user_number) DO UPDATE SET work_seq = l.work_seq + EXCLUDED.work_seq
      RETURNING bot_id, user_number),
    ins AS (
      INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at)
      SELECT f.provider_id, f.bot_id, f.user_number, f.source, f.event, f.raw, f.received_at
      FROM fresh f JOIN lane ON lane.bot_id = f.bot_id AND lane.user_number = f.user_number ORDER BY f.n
      ON CONFLICT (provider_id) DO NOTHING RETURNING id, provider_id)
    SELECT k.n, ins.id, known.id AS known, (SELECT COUNT(*) FROM (SELECT pg_notify('${WORK_CHANNEL}', '') FROM ins LIMIT 1) x) AS notified
    FROM k LEFT JOIN ins ON ins.provider_id = k.provider_id LEFT JOIN known ON known.provider_id = k.provider_id`,
  ),
  /** See lanes.ts's claimOne, for several keys (and owners) at once. */
  claimLanes: prepared(
    'claim_lane_many',
    `WITH k AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::boolean[]) WITH ORDINALITY AS k(owner, kb, ku, lease, lapsed, n)),
    ins AS (
      INSERT INTO lanes (bot_id, user_number, owner, lease_until, fence)
      SELECT kb, ku, owner, ${NOW} + lease, 1 FROM k ORDER BY kb, ku
      ON CONFLICT (bot_id, user_number) DO NOTHING
      RETURNING bot_id, user_number, fence, work_seq, NULL::text AS prev),
    c AS (
      SELECT l.bot_id, l.user_number, l.owner AS prev, k.owner AS claimer, k.lease, k.lapsed FROM lanes l JOIN k ON l.bot_id = k.kb AND l.user_number = k.ku
      WHERE l.owner IS NULL OR l.owner = k.owner OR (k.lapsed AND l.lease_until <= ${NOW})
      ORDER BY l.bot_id, l.user_number FOR UPDATE OF l SKIP LOCKED),
    up AS (
      UPDATE lanes SET owner = c.claimer, lease_until = ${NOW} + c.lease, fence = ${FENCE_OF('c.claimer')}
      FROM c WHERE lanes.bot_id = c.bot_id AND lanes.user_number = c.user_number
      RETURNING lanes.bot_id, lanes.user_number, lanes.fence, lanes.work_seq, c.prev)
    SELECT k.n, r.bot_id, r.user_number, r.fence, r.work_seq, r.prev,
      EXISTS (SELECT 1 FROM lanes v WHERE v.bot_id = k.kb AND v.user_number = k.ku) AS visible, ${PREFETCH_COLUMNS('k.kb', 'k.ku', 'r.fence IS NOT NULL')}
    FROM k LEFT JOIN (SELECT * FROM ins UNION ALL SELECT * FROM up) r ON r.bot_id = k.kb AND r.user_number = k.ku`,
  ),
  /** See lanes.ts's nextOrRelease, for several lanes at once. */
  nextOrRelease: prepared(
    'next_or_release_lane_many',
    `WITH k AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS k(owner, kb, ku, seen, fence, n)),
    p AS (SELECT k.n, i.* FROM k CROSS JOIN LATERAL (SELECT * FROM inbox WHERE bot_id = k.kb AND user_number = k.ku AND state = 'pending' ORDER BY id LIMIT 1) i),
    r AS (
      UPDATE lanes SET owner = NULL, lease_until = NULL, done_seq = k.seen FROM k
      WHERE lanes.bot_id = k.kb AND lanes.user_number = k.ku AND lanes.owner = k.owner AND lanes.fence = k.fence AND lanes.work_seq = k.seen
        AND NOT EXISTS (SELECT 1 FROM p WHERE p.n = k.n)
      RETURNING k.n)
    SELECT k.n, EXISTS (SELECT 1 FROM r WHERE r.n = k.n) AS released, l.owner, l.fence, l.work_seq, (SELECT row_to_json(p) FROM p WHERE p.n = k.n) AS next
    FROM k LEFT JOIN lanes l ON l.bot_id = k.kb AND l.user_number = k.ku`,
  ),
  /** See PG.finish, for several rows at once. */
  finish: prepared(
    'finish_many',
    `UPDATE outbox SET state = u.state, provider_id = u.provider_id, http_status = u.http_status, response = u.response,
      sms_code = u.sms_code, sms_mailing_id = u.sms_mailing_id, sms_result = u.sms_result, error = u.error, error_code = u.error_code,
      sent_at = CASE WHEN u.state = 'sent' THEN u.now ELSE outbox.sent_at END, owner = NULL, lease_until = NULL, claim = NULL,
      delivery_status = COALESCE((SELECT s.status FROM statuses s WHERE s.provider_message_id = u.provider_id
        AND ${statusRank('s.status')} > ${statusRank('outbox.delivery_status')} ORDER BY ${statusRank('s.status')} DESC LIMIT 1), outbox.delivery_status)
    FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[])
      AS u(id, state, provider_id, http_status, response, sms_code, sms_mailing_id, sms_result, error, error_code, now, claim)
    WHERE outbox.id = u.id AND outbox.claim = u.claim AND outbox.state = 'sending'
    RETURNING outbox.id`,
  ),
  /** See migration 0010: each turn's outbox rows and timers are a slice (first index, count) of the arrays. */
  commit: prepared(
    'commit_turn_batch',
    `SELECT batch_n, batch_conversation_id, batch_outbox_ids FROM colloquy_commit_turn_batch(
      $1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
      $11::bigint[], $12::boolean[], $13::bigint[], $14::bigint[], $15::bigint[], $16::text[],
      $17::integer[], $18::integer[], $19::text[], $20::text[], $21::text[], $22::text[], $23::bigint[],
      $24::integer[], $25::integer[], $26::text[], $27::integer[], $28::integer[], $29::text[],
      $30::integer[], $31::integer[], $32::text[], $33::text[], $34::text[], $35::bigint[])`,
  ),
} as const;

/** Rows (each an argument list) as columns (each an array): what `unnest` takes. */
function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  const cols: unknown[][] = Array.from({ length: width }, () => []);
  for (const row of rows) for (let c = 0; c < width; c++) cols[c]!.push(row[c]);
  return cols;
}

/** The rows of a batch's result by call (`n`, 1-based), as an array in the calls' order. */
function byCall<T>(count: number, rows: readonly Row[], map: (r: Row) => T): (T | undefined)[] {
  const out: (T | undefined)[] = new Array(count).fill(undefined);
  for (const r of rows) out[Number(r['n']) - 1] = map(r);
  return out;
}

const laneKey = (k: ConversationKey): string => `${k.botId}\u0000${k.user}`;
const keyColumns = (keys: readonly ConversationKey[]) => [keys.map((k) => k.botId), keys.map((k) => k.user)];

/** Several turns' arguments for `colloquy_commit_turn_batch`: each turn's entries contiguous, found by (first, count). */
function commitColumns(turns: readonly TurnCommit[]): unknown[] {
  const own = columns(turns.map(turnFields), 16);
  const outbox: unknown[][] = [[], [], [], [], []];
  const removed: unknown[] = [];
  const active: unknown[] = [];
  const upsert: unknown[][] = [[], [], [], []];
  const at = { o: [[], []] as number[][], r: [[], []] as number[][], a: [[], []] as number[][], u: [[], []] as number[][] };
  const mark = (slot: number[][], from: number, count: number) => {
    slot[0]!.push(from + 1);
    slot[1]!.push(count);
  };
  for (const c of turns) {
    mark(at.o, outbox[0]!.length, c.outbox.length);
    for (const o of c.outbox) [o.kind, JSON.stringify(o.message), o.channel, JSON.stringify(o.request), o.fallbackOf ?? null].forEach((v, j) => outbox[j]!.push(v));
    mark(at.r, removed.length, c.timers.remove.length);
    removed.push(...c.timers.remove);
    mark(at.a, active.length, c.timers.activeStateNodes.length);
    active.push(...c.timers.activeStateNodes);
    mark(at.u, upsert[0]!.length, c.timers.upsert.length);
    for (const t of c.timers.upsert) [t.key, t.stateNode, JSON.stringify(t.event), t.fireAt].forEach((v, j) => upsert[j]!.push(v));
  }
  return [...own, ...at.o, ...outbox, ...at.r, removed, ...at.a, active, ...at.u, ...upsert];
}

interface Release {
  readonly owner: string;
  readonly key: ConversationKey;
  readonly fence: number;
  readonly seen: number | null;
}
interface Claim {
  readonly who: Claimant;
  readonly key: ConversationKey;
}
interface Finish {
  readonly id: number;
  readonly record: SendRecord;
  readonly now: number;
  readonly claim: string;
}

/** The batched operations of one store. */
export class PgBatches {
  readonly activeConversation: Batcher<ConversationKey, ConversationRecord | undefined>;
  readonly statuses: Batcher<string, NewStatus[]>;
  readonly nextDue: Batcher<undefined, number | undefined>;
  readonly addInbound: Batcher<NewInbound, { id: number; duplicate: boolean }>;
  readonly addInboundClaiming: Batcher<Ingress, IngressResult>;
  readonly claimLane: Batcher<Claim, LaneClaim[]>;
  readonly settleLane: Batcher<Release, LaneNext>;
  readonly finishOutbound: Batcher<Finish, boolean>;
  readonly commitTurn: Batcher<TurnCommit, CommitResult>;

  /** What claims read for the lanes' next steps (see prefetch.ts). */
  readonly prefetched = new Prefetched();

  constructor(db: PgDb, ingress: PgDb = db) {
    const granted = (key: ConversationKey, r: Row, owner: string) => this.prefetched.keep(key, r, owner);
    const one = async <T>(sql: typeof PG.active, params: unknown[], map: (r: Row) => T): Promise<T | undefined> => {
      const r = (await db.query(sql, params)).rows[0];
      return r && map(r);
    };
    this.activeConversation = new Batcher({
      one: (k) => one(PG.active, [k.botId, k.user], toConversation),
      many: async (keys) => byCall(keys.length, (await db.query(SQL.active, keyColumns(keys))).rows, toConversation),
    });
    this.statuses = new Batcher({
      one: async (id) => (await db.query(PG.statusesOf, [id])).rows.map(toStatus),
      many: async (ids) => {
        const out: NewStatus[][] = ids.map(() => []);
        for (const r of (await db.query(SQL.statuses, [ids])).rows) out[Number(r['n']) - 1]!.push(toStatus(r));
        return out;
      },
    });
    // Every caller waiting while one runs is answered by the next query, which starts after they asked.
    const nextDue = async () => {
      const t = (await run(db, PGW.nextDue, {})).rows[0]?.['t'];
      return t === null || t === undefined ? undefined : Number(t);
    };
    this.nextDue = new Batcher({ one: nextDue, many: async (calls) => new Array(calls.length).fill(await nextDue()), inflight: 1 });
    this.addInbound = new Batcher({
      key: (i) => i.providerId,
      one: (i) => addInboundIn(ingress, i),
      many: async (items) => {
        const cols = columns(
          items.map((i) => [i.providerId, i.botId, i.user, i.source, JSON.stringify(i.event), j(i.raw), i.receivedAt]),
          7,
        );
        const rows = byCall(items.length, (await ingress.query(SQL.addInbound, cols)).rows, (r) => r);
        return Promise.all(
          rows.map((r, i) => {
            if (r?.['id'] !== null && r?.['id'] !== undefined) return { id: Number(r['id']), duplicate: false };
            if (r?.['known'] !== null && r?.['known'] !== undefined) return { id: Number(r['known']), duplicate: true };
            return addInboundIn(ingress, items[i]!); // stored by another writer after this statement's snapshot
          }),
        );
      },
    });
    const ingressResult = async (c: Ingress, r: Row | undefined): Promise<IngressResult> => {
      const claimed = r?.['claimed'] === true;
      if (claimed) granted(c.inbound, r!, c.claim.owner);
      const claim = claimed ? toClaim(c.claim.owner, r!, r!['prev']) : undefined;
      if (r?.['id'] !== null && r?.['id'] !== undefined) return { id: Number(r['id']), duplicate: false, claim };
      if (r?.['known'] !== null && r?.['known'] !== undefined) return { id: Number(r['known']), duplicate: true, claim };
      return { ...(await addInboundIn(ingress, c.inbound)), claim }; // stored by another writer after this statement's snapshot
    };
    this.addInboundClaiming = new Batcher({
      key: (c) => c.inbound.providerId,
      one: async (c) => ingressResult(c, (await addInboundsClaiming(ingress, [c]))[0]),
      many: async (calls) => {
        const rows = await addInboundsClaiming(ingress, calls);
        return Promise.all(calls.map((c, i) => ingressResult(c, rows[i])));
      },
    });
    this.claimLane = new Batcher({
      key: (c) => laneKey(c.key),
      one: (c) => claimLanesIn(db, c.who, 1, c.key, granted),
      many: async (calls) => {
        const cols = columns(
          calls.map((c) => [c.who.owner, c.key.botId, c.key.user, c.who.leaseMs, c.who.lapsed]),
          5,
        );
        const rows = byCall(calls.length, (await db.query(SQL.claimLanes, cols)).rows, (r) => r);
        return Promise.all(
          rows.map((r, i) => {
            const c = calls[i]!;
            if (r && r['fence'] !== null) {
              granted(c.key, r, c.who.owner);
              return [toClaim(c.who.owner, r, r['prev'])];
            }
            // Created by another process after this statement's snapshot: claimed alone, now that it is seen.
            return r?.['visible'] === false ? claimLanesIn(db, c.who, 1, c.key, granted) : [];
          }),
        );
      },
    });
    // A look for more that releases: one statement for several lanes, each row read as alone.
    this.settleLane = new Batcher<Release, LaneNext>({
      key: (r) => laneKey(r.key),
      one: (r) => settleLaneIn(db, r.owner, r.key, r.fence, r.seen),
      many: async (calls) => {
        const cols = columns(
          calls.map((c) => [c.owner, c.key.botId, c.key.user, c.seen, c.fence]),
          5,
        );
        const rows = byCall(calls.length, (await db.query(SQL.nextOrRelease, cols)).rows, (r) => r);
        return Promise.all(rows.map((r, i) => nextOrReleaseOutcome(db, r ?? {}, calls[i]!.owner, calls[i]!.key, calls[i]!.fence, calls[i]!.seen)));
      },
    });
    this.finishOutbound = new Batcher({
      key: (f) => String(f.id),
      one: (f) => finishIn(db, f.id, f.record, f.now, f.claim),
      many: async (calls) => {
        const done = new Set(
          (
            await db.query(
              SQL.finish,
              columns(
                calls.map((f) => finishFields(f.id, f.record, f.now, f.claim)),
                12,
              ),
            )
          ).rows.map((r) => Number(r['id'])),
        );
        return calls.map((f) => done.has(f.id));
      },
    });
    this.commitTurn = new Batcher({
      one: (c) => callCommit(db, c, true),
      many: async (turns) => {
        // A conflict of any turn fails the call; the batcher then commits each turn alone.
        const rows = (await db.query(SQL.commit, commitColumns(turns))).rows;
        const out: CommitResult[] = new Array(turns.length);
        for (const r of rows) {
          const i = Number(r['batch_n']) - 1;
          out[i] = commitResult(turns[i]!, r['batch_conversation_id'], r['batch_outbox_ids']);
        }
        return out;
      },
    });
  }
}
