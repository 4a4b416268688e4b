/**
 * The PostgreSQL store's turn commit: the conversation, the consumed inbound, outbox rows, the
 * handoff and timers, atomically. A plain turn (no handoff change, no expiry, the conversation
 * still active: nearly every turn) is one autocommitted call of `colloquy_commit_turn` (migration
 * 0009): one round trip, no BEGIN or COMMIT. Any other turn runs the same call inside a transaction
 * with the expiry before it and the handoff and timers after it.
 */
import { VersionConflictError } from '../../errors.js';
import { prepared, type PgDb, type Queryable } from './db.js';
import { applyHandoffTurnIn } from './handoffs.js';
import { PG } from './sql.js';
import { j } from '../rows.js';
import type { CommitResult, TurnCommit } from '../types.js';

/** SQLSTATE that `colloquy_commit_turn` raises when another writer was first (see migration 0009). */
const CONFLICT = 'CQ409';

const COMMIT_TURN = prepared(
  'commit_turn',
  `SELECT turn_conversation_id, turn_outbox_ids FROM colloquy_commit_turn($1::bigint, $2::bigint, $3::text, $4::text, $5::text,
    $6::text, $7::text, $8::text, $9::text, $10::text, $11::bigint, $12::boolean, $13::bigint, $14::bigint, $15::bigint, $16::text,
    $17::text[], $18::text[], $19::text[], $20::text[], $21::bigint[],
    $22::boolean, $23::text[], $24::text[], $25::text[], $26::text[], $27::text[], $28::bigint[])`,
);

/**
 * Commits a turn. The version check (UPDATE … WHERE version) and the inbound's `pending` guard make
 * a second writer of the same turn fail with a {@link VersionConflictError}, and nothing this turn
 * wrote stays.
 */
export async function commitTurnPg(db: PgDb, c: TurnCommit): Promise<CommitResult> {
  if (isPlainTurn(c)) return callCommit(db, c, true);
  return db.tx(async (q) => {
    if (c.expire !== undefined) {
      await q.query(PG.expireOne, [c.now, c.expire]);
      await q.query(PG.deleteTimers, [c.expire]);
    }
    const result = await callCommit(q, c, false);
    if (c.flowTokenChanged && c.conversationId !== undefined) await q.query(PG.setFlowToken, [c.flowToken, result.conversationId]);
    if (c.flowSubmit) await insertFlowSubmit(q, result.conversationId, c);
    // The handoff before the timers: like a claim or a release, lock the handoff row first, then its timer.
    await applyHandoffTurnIn(q, result.conversationId, c, c.notifyHandoffs === true);
    await applyTimers(q, result.conversationId, c);
    return result;
  });
}

/** Whether a turn commits in one call with nothing around it (see {@link commitTurnPg}). */
export const isPlainTurn = (c: TurnCommit): boolean => c.expire === undefined && c.handoff === undefined && c.status === 'active' && c.flowTokenChanged !== true && c.flowSubmit === undefined;

/** A second writer of the same submit (a retry racing the first) loses like a second writer of a turn: nothing of its turn stays. */
async function insertFlowSubmit(q: Queryable, conversationId: number, c: TurnCommit): Promise<void> {
  const f = c.flowSubmit!;
  try {
    await q.query(PG.insertFlowSubmit, [f.dedupeKey, f.requestKey, conversationId, f.flowToken, f.screen, JSON.stringify(f.answer), f.completes ? 1 : 0, c.now]);
  } catch (err) {
    if ((err as { code?: unknown }).code === '23505') throw new VersionConflictError(conversationId, c.expectedVersion);
    throw err;
  }
}

/** A turn's own fields, as `colloquy_commit_turn` and `colloquy_commit_turns` take them (16 values). */
export function turnFields(c: TurnCommit): unknown[] {
  return [
    c.conversationId ?? null,
    c.expectedVersion,
    c.key.botId,
    c.key.user,
    c.status,
    JSON.stringify(c.snapshot),
    c.state,
    c.flowToken,
    c.channel ?? null,
    j(c.lastPrompt),
    c.now,
    c.userActivity,
    c.status === 'active' ? null : c.now,
    c.botVersion ?? null,
    c.inboxId ?? null,
    c.inboxNote ?? null,
  ];
}

/** A conflict raised by `colloquy_commit_turn`, as the Store port reports it. */
export function conflictOf(err: unknown, c: TurnCommit): unknown {
  return (err as { code?: unknown }).code === CONFLICT ? new VersionConflictError(c.conversationId ?? 0, c.expectedVersion) : err;
}

/** What the store returns for a committed turn. */
export function commitResult(c: TurnCommit, conversationId: unknown, outboxIds: unknown): CommitResult {
  return { conversationId: Number(conversationId), version: c.conversationId === undefined ? 1 : c.expectedVersion + 1, outboxIds: (outboxIds as unknown[]).map(Number) };
}

/** The conversation, the inbound, the outbox rows and (with `timers`) the timers, in one call. */
export async function callCommit(q: Queryable, c: TurnCommit, timers: boolean): Promise<CommitResult> {
  const t = c.timers;
  const params = [
    ...turnFields(c),
    c.outbox.map((o) => o.kind),
    c.outbox.map((o) => JSON.stringify(o.message)),
    c.outbox.map((o) => o.channel),
    c.outbox.map((o) => JSON.stringify(o.request)),
    c.outbox.map((o) => o.fallbackOf ?? null),
    timers,
    timers ? t.remove : [],
    timers ? t.activeStateNodes : [],
    timers ? t.upsert.map((u) => u.key) : [],
    timers ? t.upsert.map((u) => u.stateNode) : [],
    timers ? t.upsert.map((u) => JSON.stringify(u.event)) : [],
    timers ? t.upsert.map((u) => u.fireAt) : [],
  ];
  let row: Record<string, unknown>;
  try {
    row = (await q.query(COMMIT_TURN, params)).rows[0]!;
  } catch (err) {
    throw conflictOf(err, c);
  }
  return commitResult(c, row['turn_conversation_id'], row['turn_outbox_ids']);
}

async function applyTimers(q: Queryable, conversationId: number, c: TurnCommit): Promise<void> {
  if (c.status !== 'active') {
    await q.query(PG.deleteTimers, [conversationId]);
    return;
  }
  for (const key of c.timers.remove) await q.query(PG.deleteTimer, [conversationId, key]);
  await q.query(PG.deleteLeftTimers, [conversationId, [...c.timers.activeStateNodes]]);
  for (const t of c.timers.upsert) {
    await q.query(PG.upsertTimer, [conversationId, c.key.botId, c.key.user, t.key, t.stateNode, JSON.stringify(t.event), t.fireAt]);
  }
}
