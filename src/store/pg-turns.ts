/** The PostgreSQL store's turn commit: the conversation, the consumed inbound, outbox rows, the handoff and timers, in one transaction. */
import { VersionConflictError } from '../errors.js';
import { isUniqueViolation, type Queryable } from './pg-db.js';
import { applyHandoffTurnIn } from './pg-handoffs.js';
import { PG } from './pg-sql.js';
import { j } from './rows.js';
import type { CommitResult, ConversationKey, NewOutbound, TurnCommit } from './types.js';

/**
 * Commits a turn inside the caller's transaction. The version check (UPDATE … WHERE version) and
 * the inbound's `pending` guard make a second writer of the same turn fail with a conflict; the
 * caller's rollback then undoes everything this turn wrote.
 */
export async function commitTurnIn(q: Queryable, c: TurnCommit): Promise<CommitResult> {
  if (c.expire !== undefined) {
    await q.query(PG.expireOne, [c.now, c.expire]);
    await q.query(PG.deleteTimers, [c.expire]);
  }
  const ended = c.status === 'active' ? null : c.now;
  const snapshot = JSON.stringify(c.snapshot);
  let id: number;
  let version: number;
  if (c.conversationId === undefined) {
    id = await insertConversation(q, c, snapshot, ended);
    version = 1;
  } else {
    const r = await q.query(PG.updateConv, [snapshot, c.state, c.status, c.channel ?? null, j(c.lastPrompt), c.now, c.userActivity, ended, c.conversationId, c.expectedVersion, c.botVersion ?? null]);
    if (r.rowCount !== 1) throw new VersionConflictError(c.conversationId, c.expectedVersion);
    id = c.conversationId;
    version = c.expectedVersion + 1;
  }
  // An inbound consumed by another writer (same turn in two processes) must not run twice.
  if (c.inboxId !== undefined && (await q.query(PG.markInboxDone, [id, c.now, c.inboxId, c.inboxNote ?? null])).rowCount !== 1) {
    throw new VersionConflictError(id, c.expectedVersion);
  }
  const outboxIds = await insertOutbox(q, id, c.key, c.inboxId, c.outbox, c.now);
  // The handoff before the timers: like a claim or a release, lock the handoff row first, then its timer.
  await applyHandoffTurnIn(q, id, c, c.notifyHandoffs === true);
  await applyTimers(q, id, c);
  return { conversationId: id, version, outboxIds };
}

async function insertConversation(q: Queryable, c: TurnCommit, snapshot: string, ended: number | null): Promise<number> {
  try {
    const r = await q.query<{ id: number }>(PG.insertConv, [
      c.key.botId,
      c.key.user,
      c.status,
      snapshot,
      c.state,
      c.flowToken,
      c.channel ?? 'interactive',
      j(c.lastPrompt),
      c.now,
      ended,
      c.botVersion ?? 1,
    ]);
    return r.rows[0]!.id;
  } catch (e) {
    // Another writer created the conversation (or took the flow token) first.
    if (isUniqueViolation(e)) throw new VersionConflictError(0, 0);
    throw e;
  }
}

async function insertOutbox(q: Queryable, conversationId: number, key: ConversationKey, inboxId: number | undefined, rows: readonly NewOutbound[], now: number): Promise<number[]> {
  const ids: number[] = [];
  // One by one, so ids follow the turn's order.
  for (const o of rows) {
    const r = await q.query<{ id: number }>(PG.insertOutbox, [
      conversationId,
      key.botId,
      key.user,
      inboxId ?? null,
      o.kind,
      JSON.stringify(o.message),
      o.channel,
      JSON.stringify(o.request),
      now,
      o.fallbackOf ?? null,
    ]);
    ids.push(r.rows[0]!.id);
  }
  return ids;
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
