/** The PostgreSQL store's multi-statement work on the outbox, timers and statuses, each inside the caller's transaction. */
import type { Queryable } from './db.js';
import { PG } from './sql.js';
import { counted, PGW, run } from './work.js';
import { j, mergeTranscript, toKey, toOutbox, toTimerInbound } from '../rows.js';
import type { ConversationKey, FailureFollowUp, NewInbound, SendOutcome, SendRecord, TranscriptEntry } from '../types.js';

/** Records a send's result; false (and nothing recorded) when `claim` no longer holds the row. */
export async function finishIn(q: Queryable, id: number, s: SendRecord, now: number, claim: string): Promise<boolean> {
  return (await q.query(PG.finish, finishFields(id, s, now, claim))).rowCount === 1;
}

/** A send's result as the finish statements take it (12 values). */
export function finishFields(id: number, s: SendRecord, now: number, claim: string): unknown[] {
  return [id, s.state, s.providerId ?? null, s.httpStatus ?? null, j(s.response), s.smsCode ?? null, s.smsMailingId ?? null, s.smsResult ?? null, s.error ?? null, s.errorCode ?? null, now, claim];
}

/** Adds an inbound unless its provider id is known, with its lane's work (one statement); the id, and whether it was known. */
export async function addInboundIn(q: Queryable, i: NewInbound): Promise<{ id: number; duplicate: boolean }> {
  const r = (await q.query(PG.addInbound, [i.providerId, i.botId, i.user, i.source, JSON.stringify(i.event), j(i.raw), i.receivedAt])).rows[0]!;
  if (r['id'] !== null) return { id: Number(r['id']), duplicate: false };
  if (r['known'] !== null) return { id: Number(r['known']), duplicate: true };
  const known = await q.query<{ id: number }>(PG.inboxByProvider, [i.providerId]);
  return { id: known.rows[0]!.id, duplicate: true };
}

/** The advisory lock class of {@link followFailureIn}'s one-template-per-window decision. */
const TEMPLATE_LOCK = 24_047;

/**
 * A claimed send's retry or final failure (with what follows it, in the caller's transaction); see
 * `Store.settleSend`. False, with nothing recorded, when `claim` no longer holds the row.
 */
export async function settleFailedIn(q: Queryable, id: number, claim: string, outcome: Exclude<SendOutcome, { kind: 'sent' }>, now: number): Promise<boolean> {
  if (outcome.kind === 'retry') return (await counted(q, PGW.sendRetry, { id, claim, at: outcome.at, error: outcome.error, code: outcome.errorCode ?? null })) === 1;
  const recorded = outcome.record ? await finishIn(q, id, { ...outcome.record, state: 'failed' }, now, claim) : (await run(q, PGW.sendFailed, { id, claim })).rowCount === 1;
  return recorded && followFailureIn(q, id, now, outcome.follow);
}

/** What follows a row's failure (idempotent: nothing is added twice); see `Store.failOutbound`. False when there is no such row. */
export async function followFailureIn(q: Queryable, id: number, now: number, follow: FailureFollowUp): Promise<boolean> {
  // Locked, so that two plans of one row's failure (a repeated status in two processes) take turns.
  const row = (await q.query(PG.outboxForUpdate, [id])).rows[0];
  if (!row) return false;
  const conversationId = Number(row['conversation_id']);
  // One follow-up per failed row: planned again (a repeated status, a restart), it may differ (the
  // window has reopened since), and must not add a second one.
  if ((await q.query(PG.followed, [id])).rows[0]?.['found'] === true) return true;
  const f = follow.fallback;
  const once = follow.templateOnce;
  // One template per closed window: concurrent plans for one conversation take turns here (an
  // advisory lock no other path takes, so it cannot close a cycle with the row locks held).
  if (f && once) await q.query('SELECT pg_advisory_xact_lock($1::int, ($2::bigint % 2147483647)::int)', [TEMPLATE_LOCK, conversationId]);
  if (f && once && (await q.query(PG.templateSince, [conversationId, once.since])).rows[0]?.['found'] === true) {
    await addInboundIn(q, once.otherwise);
  } else if (f) {
    await q.query(PG.insertFallback, [conversationId, row['bot_id'], row['user_number'], row['inbox_id'], f.kind, JSON.stringify(f.message), f.channel, JSON.stringify(f.request), now, id]);
  }
  if (follow.inbound) await addInboundIn(q, follow.inbound);
  if (follow.channel) await q.query(PG.setChannel, [follow.channel, now, conversationId]);
  return true;
}

/** Moves due timers no other process holds into the inbox; the conversations touched, in firing order. */
export async function fireDueTimersIn(q: Queryable, now: number, limit: number): Promise<ConversationKey[]> {
  const { rows } = await q.query(PG.takeDueTimers, [now, limit]);
  const due = rows.sort((a, b) => Number(a['fire_at']) - Number(b['fire_at']) || Number(a['id']) - Number(b['id']));
  for (const t of due) {
    await addInboundIn(q, toTimerInbound(t, now));
  }
  return due.map(toKey);
}

/** Both directions of a conversation, in order. */
export async function transcriptIn(q: Queryable, conversationId: number): Promise<TranscriptEntry[]> {
  const inbox = (await q.query(PG.convInbox, [conversationId])).rows;
  const outbox = (await q.query(PG.convOutbox, [conversationId])).rows.map(toOutbox);
  return mergeTranscript(inbox, outbox);
}
