/**
 * The PostgreSQL store's handoff methods ({@link HandoffStore}), ported from SQLite's `handoffs.ts`:
 * each method one transaction; what SQLite decides under its single writer lock is decided here by
 * a row lock on the open handoff (`FOR UPDATE`), a guarded single statement, or `SKIP LOCKED`.
 */
import { VersionConflictError } from '../../errors.js';
import { handoffEndedEvent, handoffEventBody, handoffTimeoutEvent, type HandoffEventBody } from '../handoff-payload.js';
import {
  HANDOFF_TIMER_KEY,
  handoffTimeoutAt,
  knownAgent,
  type AgentMessage,
  type HandoffEventType,
  type HandoffRecord,
  type HandoffRefusal,
  type HandoffStore,
  type HandoffWrite,
} from '../handoff-types.js';
import { prepared, type PgDb, type Queryable } from './db.js';
import { bumpLaneIn, lockLaneIn, WORK_CHANNEL } from './lanes.js';
import { LOG_COLUMNS, logValues, toLogEntry, type NewLogEntry } from '../agent-rows.js';
import type { HandoffLogEntry } from '../agent-types.js';
import { claimIdle, keyAnswer, toHandoff, toInbox } from '../rows.js';
import { EXPIRING_CLAIM, OPEN_HANDOFF } from '../sql.js';
import type { ChannelName, TurnCommit } from '../types.js';

/** Tells the peers (on commit) of a row the statement's CTE `i` inserted: any process may send it. */
const NOTIFY_INSERTED = `SELECT id, (SELECT COUNT(*) FROM (SELECT pg_notify('${WORK_CHANNEL}', '') FROM i) n) AS notified FROM i`;

/** The handoff statements, in PostgreSQL's dialect. */
export const PGH = {
  open: prepared('handoff_open', `SELECT * FROM handoffs WHERE conversation_id = $1 AND ${OPEN_HANDOFF}`),
  /** The open handoff, locked: claims, releases and agents' messages of one conversation take turns. */
  lockOpen: `SELECT * FROM handoffs WHERE conversation_id = $1 AND ${OPEN_HANDOFF} FOR UPDATE`,
  /** Read for every user message of a known conversation: prepared, not parsed each time. */
  heldFor: prepared(
    'handoff_held_for',
    `SELECT h.* FROM handoffs h WHERE h.conversation_id = $1 AND (h.${OPEN_HANDOFF} OR (h.state = 'ended'
    AND EXISTS (SELECT 1 FROM inbox i WHERE i.provider_id = 'handoff:' || h.id || ':ended' AND i.state = 'pending' AND i.id > $2)))
    ORDER BY h.id DESC LIMIT 1`,
  ),
  byId: 'SELECT * FROM handoffs WHERE id = $1',
  ofConversation: 'SELECT * FROM handoffs WHERE conversation_id = $1 ORDER BY id',
  listOpen: `SELECT h.* FROM handoffs h JOIN conversations c ON c.id = h.conversation_id
    WHERE h.${OPEN_HANDOFF} AND c.status = 'active' ORDER BY h.started_at, h.id`,
  anyOrphan: `SELECT 1 FROM handoffs h JOIN conversations c ON c.id = h.conversation_id WHERE h.${OPEN_HANDOFF} AND c.status <> 'active' LIMIT 1`,
  /** Closes every orphan in one statement: a second process waits on the row locks, then finds them closed. */
  closeOrphans: `UPDATE handoffs h SET state = 'closed', ended_by = 'system', note = NULL, ended_at = $1, timeout_at = NULL, claim_idle_ms = NULL, claim_idle_until = NULL
    FROM conversations c WHERE c.id = h.conversation_id AND h.${OPEN_HANDOFF} AND c.status <> 'active' RETURNING h.*`,
  insert: `INSERT INTO handoffs (conversation_id, bot_id, user_number, state, reason, queue, timeout_at, timeout_ms, started_at)
    VALUES ($1, $2, $3, 'waiting', $4, $5, $6, $8, $7)
    ON CONFLICT (conversation_id) WHERE ${OPEN_HANDOFF} DO NOTHING RETURNING id`,
  claim: `UPDATE handoffs SET state = 'claimed', agent = $1, claimed_at = $2, timeout_at = NULL, claim_idle_ms = $4, claim_idle_until = $5
    WHERE id = $3 AND state = 'waiting' RETURNING *`,
  agentExists: 'SELECT 1 FROM agents WHERE name = $1 FOR KEY SHARE',
  timeout: `UPDATE handoffs SET state = 'timeout', ended_by = 'timeout', ended_at = $1, timeout_at = NULL WHERE id = $2 AND state = 'waiting' AND timeout_at = $3`,
  end: `UPDATE handoffs SET state = $2, ended_by = $3, note = $4, ended_at = $5, timeout_at = NULL, claim_idle_ms = NULL, claim_idle_until = NULL
    WHERE id = $1 AND ${OPEN_HANDOFF} RETURNING *`,
  closeOpen: `UPDATE handoffs SET state = 'closed', ended_by = $2, note = NULL, ended_at = $3, timeout_at = NULL, claim_idle_ms = NULL, claim_idle_until = NULL
    WHERE conversation_id = $1 AND ${OPEN_HANDOFF} RETURNING id`,
  /** The holder acted: its claim's idle deadline moves on (never back). */
  touchClaim: `UPDATE handoffs SET claim_idle_until = GREATEST(claim_idle_until, $3 + claim_idle_ms) WHERE id = $1 AND agent = $2 AND ${EXPIRING_CLAIM}`,
  upsertTimer: `INSERT INTO timers (conversation_id, bot_id, user_number, key, state_node, event, fire_at)
    VALUES ($1, $2, $3, $4, NULL, $5, $6)
    ON CONFLICT (conversation_id, key) DO UPDATE SET state_node = NULL, event = EXCLUDED.event, fire_at = EXCLUDED.fire_at`,
  deleteTimer: 'DELETE FROM timers WHERE conversation_id = $1 AND key = $2',
  insertInbox: `INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at)
    VALUES ($1, $2, $3, 'internal', $4, $5, $6) RETURNING id`,
  /** Consumes a pending inbound for the agents; its place in the transcript is the conversation's outbox so far. */
  hold: `UPDATE inbox SET state = 'done', conversation_id = $1, attempts = attempts + 1, processed_at = $2,
    outbox_mark = (SELECT COALESCE(MAX(m.id), 0) FROM outbox m WHERE m.conversation_id = $1) WHERE id = $3 AND state = 'pending' RETURNING *`,
  touch: 'UPDATE conversations SET last_activity_at = $1, updated_at = $1, channel = COALESCE($2, channel) WHERE id = $3',
  outboxByKey: 'SELECT id, agent, idempotency_fingerprint FROM outbox WHERE conversation_id = $1 AND idempotency_key = $2',
  /** A concurrent request with the same key that committed first makes this one insert nothing. */
  insertOutbox: `WITH i AS (
      INSERT INTO outbox (conversation_id, bot_id, user_number, inbox_id, kind, message, channel, request, next_attempt_at, created_at, agent, idempotency_key, idempotency_fingerprint)
      SELECT c.id, c.bot_id, c.user_number, NULL, $2, $3, $4, $5, $6, $6, $7, $8, $9 FROM conversations c WHERE c.id = $1
      ON CONFLICT (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id)
    ${NOTIFY_INSERTED}`,
  insertLog: `INSERT INTO handoff_log (${LOG_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
  /** Peers waiting for the next due timer look again (a timer armed outside a turn). */
  notifyWork: `SELECT pg_notify('${WORK_CHANNEL}', '')`,
  insertEvent: `WITH i AS (INSERT INTO handoff_events (event_id, handoff_id, type, payload, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING id)
    ${NOTIFY_INSERTED}`,
} as const;

type Claimed = { ok: true; handoff: HandoffRecord; fresh: boolean } | HandoffRefusal;
type Released = { ok: true; handoff: HandoffRecord; inboxId: number } | HandoffRefusal;
type Row = Record<string, unknown>;
type Queued = { ok: true; outboxId: number; duplicate: boolean } | HandoffRefusal;

/**
 * The handoff part of a turn's commit, inside its transaction: open a handoff (with its timeout
 * timer), settle a timeout, or close what an ended or expired conversation left open.
 */
export async function applyHandoffTurnIn(q: Queryable, conversationId: number, c: TurnCommit, notify: boolean): Promise<void> {
  const w = { now: c.now, notify };
  if (c.expire !== undefined) await closeOpen(q, c.expire, w);
  const change = c.handoff;
  if (change !== undefined && 'timeout' in change) {
    if ((await q.query(PGH.timeout, [c.now, change.timeout.id, change.timeout.timeoutAt])).rowCount !== 1) {
      throw new VersionConflictError(conversationId, c.expectedVersion); // claimed meanwhile: the turn runs again and skips
    }
    await logIn(q, { handoffId: change.timeout.id, conversationId, action: 'timeout', agent: null, at: c.now });
    await event(q, 'handoff.timeout', change.timeout.id, w);
  }
  if (c.status !== 'active') {
    await closeOpen(q, conversationId, w);
    return;
  }
  if (change === undefined || !('open' in change)) return;
  const o = change.open;
  const timeoutAt = handoffTimeoutAt(c.now, o);
  const r = await q.query<{ id: number }>(PGH.insert, [conversationId, c.key.botId, c.key.user, o.reason ?? null, o.queue ?? null, timeoutAt, c.now, o.timeoutMs]);
  const id = r.rows[0]?.id;
  if (id === undefined) return; // one is open already: it goes on as it was
  await q.query(PGH.upsertTimer, [conversationId, c.key.botId, c.key.user, HANDOFF_TIMER_KEY, JSON.stringify(handoffTimeoutEvent(o)), timeoutAt]);
  await event(q, 'handoff.started', id, w);
}

/** Closes the conversation's open handoff, if any: its conversation ended or expired. */
async function closeOpen(q: Queryable, conversationId: number, w: HandoffWrite): Promise<void> {
  const closed = (await q.query<{ id: number }>(PGH.closeOpen, [conversationId, 'system', w.now])).rows[0];
  if (!closed) return;
  await q.query(PGH.deleteTimer, [conversationId, HANDOFF_TIMER_KEY]);
  await logIn(q, { handoffId: closed.id, conversationId, action: 'closed', agent: null, at: w.now });
  await event(q, 'handoff.ended', closed.id, w);
}

/** Writes one handoff log row (inside the caller's transaction); returns it. */
export async function logIn(q: Queryable, e: NewLogEntry): Promise<HandoffLogEntry> {
  return toLogEntry((await q.query(PGH.insertLog, logValues(e))).rows[0]!);
}

/** Queues a connector event built from the handoff as it is now (in this transaction). */
export async function event(q: Queryable, type: HandoffEventType, handoffId: number, w: HandoffWrite, message?: HandoffEventBody['message'], reason?: string): Promise<void> {
  if (!w.notify) return;
  const body = handoffEventBody(type, await byId(q, handoffId), w.now, message, reason);
  await q.query(PGH.insertEvent, [body.id, handoffId, type, JSON.stringify(body), w.now]);
}

/**
 * Agent activity on a handoff (a message, a note): when `agent` holds its claim, the claim's idle
 * deadline moves to `now` plus the idle time it was claimed under. Inside the caller's transaction,
 * after it locked the handoff.
 */
export async function touchClaimIn(q: Queryable, handoffId: number, agent: string, now: number): Promise<void> {
  await q.query(PGH.touchClaim, [handoffId, agent, now]);
}

async function byId(q: Queryable, id: number): Promise<HandoffRecord> {
  return toHandoff((await q.query(PGH.byId, [id])).rows[0]!);
}

/** The conversation's open handoff, locked until the transaction ends. */
export async function lockOpen(q: Queryable, conversationId: number): Promise<HandoffRecord | undefined> {
  const r = (await q.query(PGH.lockOpen, [conversationId])).rows[0];
  return r && toHandoff(r);
}

/** The handoff part of the PostgreSQL store. */
export class PgHandoffs implements HandoffStore {
  constructor(private readonly db: PgDb) {}

  async openHandoffs(): Promise<HandoffRecord[]> {
    return (await this.db.query(PGH.listOpen)).rows.map(toHandoff);
  }

  async openHandoff(conversationId: number, inboxId?: number): Promise<HandoffRecord | undefined> {
    const r = inboxId === undefined ? await this.db.query(PGH.open, [conversationId]) : await this.db.query(PGH.heldFor, [conversationId, inboxId]);
    return r.rows[0] && toHandoff(r.rows[0]);
  }

  async handoffs(conversationId: number): Promise<HandoffRecord[]> {
    return (await this.db.query(PGH.ofConversation, [conversationId])).rows.map(toHandoff);
  }

  async claimHandoff(conversationId: number, agent: string, w: HandoffWrite): Promise<Claimed> {
    return this.db.tx(async (q): Promise<Claimed> => {
      // An agent known by its own token must outlive the claim: its row is locked first, the order
      // removeAgent takes them in, so a removal either comes before (refused here) or after (and returns it).
      if (knownAgent(w) && (await q.query(PGH.agentExists, [agent])).rows.length === 0) return { ok: false, reason: 'agent_gone' };
      const h = await lockOpen(q, conversationId);
      if (!h) return { ok: false, reason: 'none' };
      if (h.state === 'claimed') return h.agent === agent ? { ok: true, handoff: h, fresh: false } : { ok: false, reason: 'taken', handoff: h };
      const idle = claimIdle(w);
      const claimed = toHandoff((await q.query(PGH.claim, [agent, w.now, h.id, idle.idleMs, idle.idleUntil])).rows[0]!);
      await q.query(PGH.deleteTimer, [conversationId, HANDOFF_TIMER_KEY]);
      await logIn(q, { handoffId: h.id, conversationId, action: 'claim', agent, via: w.via, at: w.now });
      await event(q, 'handoff.claimed', h.id, w);
      return { ok: true, handoff: claimed, fresh: true };
    });
  }

  async releaseHandoff(conversationId: number, agent: string, note: string | undefined, w: HandoffWrite): Promise<Released> {
    return this.db.tx(async (q): Promise<Released> => {
      const h = await lockOpen(q, conversationId);
      if (!h) return { ok: false, reason: 'none' };
      if (h.state === 'claimed' && h.agent !== agent) return { ok: false, reason: 'taken', handoff: h };
      const ended = toHandoff((await q.query(PGH.end, [h.id, 'ended', agent, note ?? null, w.now])).rows[0]!);
      await q.query(PGH.deleteTimer, [conversationId, HANDOFF_TIMER_KEY]);
      await logIn(q, { handoffId: h.id, conversationId, action: 'release', agent, via: w.via, text: note, at: w.now });
      const ev = handoffEndedEvent(agent, note);
      await lockLaneIn(q, h); // the bot's work: its lane's counter moves with it (see lanes.ts)
      const r = await q.query<{ id: number }>(PGH.insertInbox, [`handoff:${h.id}:ended`, h.botId, h.user, JSON.stringify(ev), JSON.stringify({ conversationId, handoffId: h.id }), w.now]);
      await bumpLaneIn(q, h);
      await event(q, 'handoff.ended', h.id, w);
      return { ok: true, handoff: ended, inboxId: r.rows[0]!.id };
    });
  }

  async holdInbound(inboxId: number, handoff: HandoffRecord, channel: ChannelName | undefined, w: HandoffWrite): Promise<boolean> {
    return this.db.tx(async (q) => {
      const held = (await q.query(PGH.hold, [handoff.conversationId, w.now, inboxId])).rows[0];
      if (!held) return false;
      await q.query(PGH.touch, [w.now, channel ?? null, handoff.conversationId]);
      const row = toInbox(held);
      await event(q, 'handoff.message', handoff.id, w, { event: row.event, source: row.source, receivedAt: row.receivedAt });
      return true;
    });
  }

  async addAgentMessage(m: AgentMessage): Promise<Queued> {
    return this.db.tx(async (q): Promise<Queued> => {
      // The key first: a retry of a message that was queued is that message, whatever the handoff is now.
      const h = await lockOpen(q, m.conversationId);
      const known = async (): Promise<Queued | undefined> => {
        const k = (await q.query<Row>(PGH.outboxByKey, [m.conversationId, m.idempotencyKey])).rows[0];
        return k && keyAnswer(k, m, h);
      };
      if (m.idempotencyKey !== undefined) {
        const k = await known();
        if (k) return k;
      }
      if (!h) return { ok: false, reason: 'none' };
      if (h.state !== 'claimed' || h.agent !== m.agent) return { ok: false, reason: 'taken', handoff: h };
      const o = m.outbound;
      const fingerprint = m.idempotencyKey === undefined ? null : (m.fingerprint ?? null);
      const r = await q.query<{ id: number }>(PGH.insertOutbox, [
        m.conversationId,
        o.kind,
        JSON.stringify(o.message),
        o.channel,
        JSON.stringify(o.request),
        m.now,
        m.agent,
        m.idempotencyKey ?? null,
        fingerprint,
      ]);
      const queued = r.rows[0];
      if (queued) {
        await logIn(q, { handoffId: h.id, conversationId: m.conversationId, action: 'message', agent: m.agent, via: m.via, outboxId: Number(queued.id), at: m.now });
        await touchClaimIn(q, h.id, m.agent, m.now);
        return { ok: true, outboxId: queued.id, duplicate: false };
      }
      // The same key was queued by a request that committed while this one waited: that row decides.
      return (await known())!;
    });
  }

  async closeOrphanHandoffs(w: HandoffWrite): Promise<number> {
    if ((await this.db.query(PGH.anyOrphan)).rows.length === 0) return 0; // the common case, without a lock (the queue is polled)
    return this.db.tx(async (q) => {
      const closed = (await q.query(PGH.closeOrphans, [w.now])).rows.map(toHandoff).sort((a, b) => a.id - b.id);
      for (const h of closed) {
        await q.query(PGH.deleteTimer, [h.conversationId, HANDOFF_TIMER_KEY]);
        await logIn(q, { handoffId: h.id, conversationId: h.conversationId, action: 'closed', agent: null, at: w.now });
        await event(q, 'handoff.ended', h.id, w);
      }
      return closed.length;
    });
  }
}
