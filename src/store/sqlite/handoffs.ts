/**
 * The SQLite store's handoff methods ({@link HandoffStore}): every statement in one place. The
 * reads answer at once; the writes are synchronous, for the store to run each in its own savepoint
 * of a group commit (sqlite-batch.ts). The PostgreSQL store ports this file statement by statement.
 */
import type Database from 'better-sqlite3';
import { VersionConflictError } from '../../errors.js';
import { handoffEndedEvent, handoffEventBody, handoffTimeoutEvent, type HandoffEventBody } from '../handoff-payload.js';
import {
  HANDOFF_TIMER_KEY,
  handoffTimeoutAt,
  knownAgent,
  type AgentMessage,
  type ClaimExpiryReason,
  type HandoffEventType,
  type HandoffRecord,
  type HandoffRefusal,
  type HandoffStore,
  type HandoffWrite,
} from '../handoff-types.js';
import { LOG_COLUMNS, logEntryOf, logValues, type NewLogEntry } from '../agent-rows.js';
import type { HandoffLogEntry } from '../agent-types.js';
import { claimIdle, keyAnswer, toHandoff, toInbox } from '../rows.js';
import { EXPIRING_CLAIM, OPEN_HANDOFF } from '../sql.js';
import type { ChannelName, TurnCommit } from '../types.js';

type Row = Record<string, unknown>;

const SQL = {
  open: `SELECT * FROM handoffs WHERE conversation_id = ? AND ${OPEN_HANDOFF}`,
  heldFor: `SELECT h.* FROM handoffs h WHERE h.conversation_id = @conversationId AND (h.${OPEN_HANDOFF} OR (h.state = 'ended'
    AND EXISTS (SELECT 1 FROM inbox i WHERE i.provider_id = 'handoff:' || h.id || ':ended' AND i.state = 'pending' AND i.id > @inboxId)))
    ORDER BY h.id DESC LIMIT 1`,
  byId: 'SELECT * FROM handoffs WHERE id = ?',
  ofConversation: 'SELECT * FROM handoffs WHERE conversation_id = ? ORDER BY id',
  listOpen: `SELECT h.* FROM handoffs h JOIN conversations c ON c.id = h.conversation_id
    WHERE h.${OPEN_HANDOFF} AND c.status = 'active' ORDER BY h.started_at, h.id`,
  orphans: `SELECT h.* FROM handoffs h JOIN conversations c ON c.id = h.conversation_id WHERE h.${OPEN_HANDOFF} AND c.status <> 'active'`,
  insert: `INSERT INTO handoffs (conversation_id, bot_id, user_number, state, reason, queue, timeout_at, timeout_ms, started_at)
    VALUES (@conversationId, @botId, @user, 'waiting', @reason, @queue, @timeoutAt, @timeoutMs, @now)
    ON CONFLICT (conversation_id) WHERE state IN ('waiting', 'claimed') DO NOTHING`,
  claim: `UPDATE handoffs SET state = 'claimed', agent = @agent, claimed_at = @now, timeout_at = NULL, claim_idle_ms = @idleMs, claim_idle_until = @idleUntil
    WHERE id = @id AND state = 'waiting'`,
  /** The holder acted: its claim's idle deadline moves on (never back). */
  touchClaim: `UPDATE handoffs SET claim_idle_until = MAX(claim_idle_until, @now + claim_idle_ms) WHERE id = @id AND agent = @agent AND ${EXPIRING_CLAIM}`,
  idleClaims: `SELECT * FROM handoffs WHERE ${EXPIRING_CLAIM} AND claim_idle_until <= ? ORDER BY claim_idle_until, id LIMIT ?`,
  anyIdleClaim: `SELECT 1 FROM handoffs WHERE ${EXPIRING_CLAIM} AND claim_idle_until <= ? LIMIT 1`,
  /** Back to the queue with its own timeout from now (10 minutes for a row a version before 0016 wrote without one); the agent column keeps who held it. */
  agentExists: 'SELECT 1 FROM agents WHERE name = ?',
  requeue: `UPDATE handoffs SET state = 'waiting', timeout_at = @now + COALESCE(timeout_ms, 600000), claim_idle_ms = NULL, claim_idle_until = NULL
    WHERE id = @id AND state = 'claimed' AND agent = @agent`,
  timeout: `UPDATE handoffs SET state = 'timeout', ended_by = 'timeout', ended_at = ?, timeout_at = NULL WHERE id = ? AND state = 'waiting' AND timeout_at = ?`,
  end: `UPDATE handoffs SET state = @state, ended_by = @by, note = @note, ended_at = @now, timeout_at = NULL, claim_idle_ms = NULL, claim_idle_until = NULL
    WHERE id = @id AND ${OPEN_HANDOFF}`,
  upsertTimer: `INSERT INTO timers (conversation_id, bot_id, user_number, key, state_node, event, fire_at)
    VALUES (@conversationId, @botId, @user, @key, NULL, @event, @fireAt)
    ON CONFLICT (conversation_id, key) DO UPDATE SET state_node = NULL, event = excluded.event, fire_at = excluded.fire_at`,
  deleteTimer: 'DELETE FROM timers WHERE conversation_id = ? AND key = ?',
  insertInbox: `INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at)
    VALUES (@providerId, @botId, @user, 'internal', @event, @raw, @now)`,
  /** The `handoff.ended` inbound is work for the bot: its lane's counter moves with it (see lanes). */
  bumpLane: `INSERT INTO lanes (bot_id, user_number, work_seq) VALUES (?, ?, 1)
    ON CONFLICT (bot_id, user_number) DO UPDATE SET work_seq = work_seq + 1`,
  inbox: 'SELECT * FROM inbox WHERE id = ?',
  hold: `UPDATE inbox SET state = 'done', conversation_id = ?, attempts = attempts + 1, processed_at = ?,
    outbox_mark = (SELECT COALESCE(MAX(id), 0) FROM outbox) WHERE id = ? AND state = 'pending'`,
  touch: 'UPDATE conversations SET last_activity_at = ?, updated_at = ?, channel = COALESCE(?, channel) WHERE id = ?',
  outboxByKey: 'SELECT id, agent, idempotency_fingerprint FROM outbox WHERE conversation_id = ? AND idempotency_key = ?',
  insertOutbox: `INSERT INTO outbox (conversation_id, bot_id, user_number, inbox_id, kind, message, channel, request, next_attempt_at, created_at, agent, idempotency_key, idempotency_fingerprint)
    SELECT c.id, c.bot_id, c.user_number, NULL, @kind, @message, @channel, @request, @now, @now, @agent, @key, @fingerprint FROM conversations c WHERE c.id = @conversationId`,
  insertLog: `INSERT INTO handoff_log (${LOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  insertEvent: `INSERT INTO handoff_events (event_id, handoff_id, type, payload, next_attempt_at, created_at)
    VALUES (@eventId, @handoffId, @type, @payload, @now, @now)`,
} as const;

type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

/** The handoff part of the SQLite store (its {@link HandoffStore} methods call these). */
export class SqliteHandoffs {
  private readonly q: Statements;

  constructor(db: Database.Database) {
    this.q = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
  }

  /**
   * The handoff part of a turn's commit, inside its transaction: open a handoff (with its timeout
   * timer), settle a timeout, or close what an ended or expired conversation left open.
   */
  applyTurn(conversationId: number, c: TurnCommit, notify: boolean): void {
    const w = { now: c.now, notify };
    if (c.expire !== undefined) this.closeOpen(c.expire, 'system', w);
    const change = c.handoff;
    if (change !== undefined && 'timeout' in change) {
      if (this.q.timeout.run(c.now, change.timeout.id, change.timeout.timeoutAt).changes !== 1) {
        throw new VersionConflictError(conversationId, c.expectedVersion); // claimed meanwhile: the turn runs again and skips
      }
      this.log({ handoffId: change.timeout.id, conversationId, action: 'timeout', agent: null, at: c.now });
      this.event('handoff.timeout', change.timeout.id, w);
    }
    if (c.status !== 'active') {
      this.closeOpen(conversationId, 'system', w);
      return;
    }
    if (change === undefined || !('open' in change)) return;
    const o = change.open;
    const timeoutAt = handoffTimeoutAt(c.now, o);
    const r = this.q.insert.run({ conversationId, botId: c.key.botId, user: c.key.user, reason: o.reason ?? null, queue: o.queue ?? null, timeoutAt, timeoutMs: o.timeoutMs, now: c.now });
    if (r.changes !== 1) return; // one is open already: it goes on as it was
    const id = Number(r.lastInsertRowid);
    this.q.upsertTimer.run({ conversationId, botId: c.key.botId, user: c.key.user, key: HANDOFF_TIMER_KEY, event: JSON.stringify(handoffTimeoutEvent(o)), fireAt: timeoutAt });
    this.event('handoff.started', id, w);
  }

  async openHandoffs(): Promise<HandoffRecord[]> {
    return (this.q.listOpen.all() as Row[]).map(toHandoff);
  }

  async openHandoff(conversationId: number, inboxId?: number): Promise<HandoffRecord | undefined> {
    const r = (inboxId === undefined ? this.q.open.get(conversationId) : this.q.heldFor.get({ conversationId, inboxId })) as Row | undefined;
    return r && toHandoff(r);
  }

  async handoffs(conversationId: number): Promise<HandoffRecord[]> {
    return (this.q.ofConversation.all(conversationId) as Row[]).map(toHandoff);
  }

  claimHandoff(conversationId: number, agent: string, w: HandoffWrite): { ok: true; handoff: HandoffRecord; fresh: boolean } | HandoffRefusal {
    // An agent known by its own token must still exist (removed since its token was checked: refused).
    if (knownAgent(w) && this.q.agentExists.get(agent) === undefined) return { ok: false, reason: 'agent_gone' };
    const h = this.openRow(conversationId);
    if (!h) return { ok: false, reason: 'none' };
    if (h.state === 'claimed') return h.agent === agent ? { ok: true, handoff: h, fresh: false } : { ok: false, reason: 'taken', handoff: h };
    this.q.claim.run({ agent, now: w.now, id: h.id, ...claimIdle(w) });
    this.q.deleteTimer.run(conversationId, HANDOFF_TIMER_KEY);
    this.log({ handoffId: h.id, conversationId, action: 'claim', agent, via: w.via, at: w.now });
    this.event('handoff.claimed', h.id, w);
    return { ok: true, handoff: this.byId(h.id), fresh: true };
  }

  releaseHandoff(conversationId: number, agent: string, note: string | undefined, w: HandoffWrite): { ok: true; handoff: HandoffRecord; inboxId: number } | HandoffRefusal {
    const h = this.openRow(conversationId);
    if (!h) return { ok: false, reason: 'none' };
    if (h.state === 'claimed' && h.agent !== agent) return { ok: false, reason: 'taken', handoff: h };
    this.q.end.run({ id: h.id, state: 'ended', by: agent, note: note ?? null, now: w.now });
    this.q.deleteTimer.run(conversationId, HANDOFF_TIMER_KEY);
    this.log({ handoffId: h.id, conversationId, action: 'release', agent, via: w.via, text: note, at: w.now });
    const event = handoffEndedEvent(agent, note);
    const r = this.q.insertInbox.run({
      providerId: `handoff:${h.id}:ended`,
      botId: h.botId,
      user: h.user,
      event: JSON.stringify(event),
      raw: JSON.stringify({ conversationId, handoffId: h.id }),
      now: w.now,
    });
    this.q.bumpLane.run(h.botId, h.user);
    this.event('handoff.ended', h.id, w);
    return { ok: true, handoff: this.byId(h.id), inboxId: Number(r.lastInsertRowid) };
  }

  holdInbound(inboxId: number, handoff: HandoffRecord, channel: ChannelName | undefined, w: HandoffWrite): boolean {
    if (this.q.hold.run(handoff.conversationId, w.now, inboxId).changes !== 1) return false;
    this.q.touch.run(w.now, w.now, channel ?? null, handoff.conversationId);
    const row = toInbox(this.q.inbox.get(inboxId) as Row);
    this.event('handoff.message', handoff.id, w, { event: row.event, source: row.source, receivedAt: row.receivedAt });
    return true;
  }

  addAgentMessage(m: AgentMessage): { ok: true; outboxId: number; duplicate: boolean } | HandoffRefusal {
    // The key first: a retry of a message that was queued is that message, whatever the handoff is now.
    const h = this.openRow(m.conversationId);
    if (m.idempotencyKey !== undefined) {
      const known = this.q.outboxByKey.get(m.conversationId, m.idempotencyKey) as Row | undefined;
      if (known) return keyAnswer(known, m, h);
    }
    if (!h) return { ok: false, reason: 'none' };
    if (h.state !== 'claimed' || h.agent !== m.agent) return { ok: false, reason: 'taken', handoff: h };
    const o = m.outbound;
    const r = this.q.insertOutbox.run({
      conversationId: m.conversationId,
      kind: o.kind,
      message: JSON.stringify(o.message),
      channel: o.channel,
      request: JSON.stringify(o.request),
      now: m.now,
      agent: m.agent,
      key: m.idempotencyKey ?? null,
      fingerprint: m.idempotencyKey === undefined ? null : (m.fingerprint ?? null),
    });
    const outboxId = Number(r.lastInsertRowid);
    this.log({ handoffId: h.id, conversationId: m.conversationId, action: 'message', agent: m.agent, via: m.via, outboxId, at: m.now });
    this.touchClaim(h.id, m.agent, m.now);
    return { ok: true, outboxId, duplicate: false };
  }

  /** Writes one handoff log row (inside the caller's transaction); returns it. */
  log(e: NewLogEntry): HandoffLogEntry {
    return logEntryOf(Number(this.q.insertLog.run(...logValues(e)).lastInsertRowid), e);
  }

  /** The conversation's open handoff (waiting or claimed), if any. */
  openRow(conversationId: number): HandoffRecord | undefined {
    const r = this.q.open.get(conversationId) as Row | undefined;
    return r && toHandoff(r);
  }

  /**
   * Agent activity on a handoff (a message, a note): when `agent` holds its claim, the claim's idle
   * deadline moves to `now` plus the idle time it was claimed under. Inside the caller's transaction.
   */
  touchClaim(handoffId: number, agent: string, now: number): void {
    this.q.touchClaim.run({ id: handoffId, agent, now });
  }

  /**
   * Returns a claimed handoff to the queue, inside the caller's transaction: waiting again (the
   * agent column keeps who held it), its `handoff.timeout` timer armed for its own timeout from
   * now, and `handoff.claim_expired` queued with `reason`. Undefined (nothing changed) when `h` is
   * no longer claimed by the same agent: a release, a timeout or another claim came first.
   */
  returnClaimToQueue(h: HandoffRecord, reason: ClaimExpiryReason, w: HandoffWrite): HandoffRecord | undefined {
    if (this.q.requeue.run({ id: h.id, agent: h.agent, now: w.now }).changes !== 1) return undefined;
    const back = this.byId(h.id);
    const timeoutMs = back.timeoutAt! - w.now;
    const event = handoffTimeoutEvent({ timeoutMs, reason: back.reason ?? undefined, queue: back.queue ?? undefined });
    this.q.upsertTimer.run({ conversationId: h.conversationId, botId: h.botId, user: h.user, key: HANDOFF_TIMER_KEY, event: JSON.stringify(event), fireAt: back.timeoutAt });
    this.log({ handoffId: h.id, conversationId: h.conversationId, action: 'claim_expired', agent: h.agent, text: reason, at: w.now });
    this.event('handoff.claim_expired', h.id, w, undefined, reason);
    return back;
  }

  /** Whether a claim is idle past its deadline at `now` (read without a write). */
  hasIdleClaims(now: number): boolean {
    return this.q.anyIdleClaim.get(now) !== undefined;
  }

  /** Returns up to `limit` claims idle past their deadline at `w.now` to the queue (the worker's `idle` work); those returned. */
  expireIdleClaims(limit: number, w: HandoffWrite): HandoffRecord[] {
    const due = (this.q.idleClaims.all(w.now, limit) as Row[]).map(toHandoff);
    return due.flatMap((h) => this.returnClaimToQueue(h, 'idle', w) ?? []);
  }

  /** Whether a handoff is open on an ended conversation: the common answer, no, needs no write. */
  hasOrphans(): boolean {
    return this.q.orphans.get() !== undefined;
  }

  closeOrphanHandoffs(w: HandoffWrite): number {
    const rows = (this.q.orphans.all() as Row[]).map(toHandoff);
    for (const h of rows) this.closeOpen(h.conversationId, 'system', w);
    return rows.length;
  }

  private byId(id: number): HandoffRecord {
    return toHandoff(this.q.byId.get(id) as Row);
  }

  /** Closes the conversation's open handoff, if any: its conversation ended or expired. */
  private closeOpen(conversationId: number, by: string, w: HandoffWrite): void {
    const h = this.openRow(conversationId);
    if (!h) return;
    this.q.end.run({ id: h.id, state: 'closed', by, note: null, now: w.now });
    this.q.deleteTimer.run(conversationId, HANDOFF_TIMER_KEY);
    this.log({ handoffId: h.id, conversationId, action: 'closed', agent: null, at: w.now });
    this.event('handoff.ended', h.id, w);
  }

  private event(type: HandoffEventType, handoffId: number, w: HandoffWrite, message?: HandoffEventBody['message'], reason?: string): void {
    if (!w.notify) return;
    const body = handoffEventBody(type, this.byId(handoffId), w.now, message, reason);
    this.q.insertEvent.run({ eventId: body.id, handoffId, type, payload: JSON.stringify(body), now: w.now });
  }
}
