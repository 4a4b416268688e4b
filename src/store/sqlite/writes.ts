/**
 * The SQLite store's writes, as plain synchronous functions. The store runs each one inside the
 * group commit (see sqlite-batch.ts): in its own savepoint of a shared transaction, so each is
 * atomic on its own and a throw rolls back only what it did.
 */
import { randomBytes } from 'node:crypto';
import { VersionConflictError } from '../../errors.js';
import { j, STATUS_RANK, toKey, toOutbox } from '../rows.js';
import type { SqliteHandoffs } from './handoffs.js';
import type { SqliteLanes } from './lanes.js';
import type { Statements } from './statements.js';
import type { Claimant, CommitResult, ConversationKey, FailureFollowUp, LaneClaim, NewInbound, NewOutbound, NewStatus, OutboxRecord, SendRecord, TurnCommit } from '../types.js';

type Row = Record<string, unknown>;

/** Every write of the SQLite store, run inside a transaction the caller holds. */
export class SqliteWrites {
  constructor(
    private readonly q: Statements,
    private readonly h: SqliteHandoffs,
    private readonly lanes: SqliteLanes,
  ) {}

  /**
   * Claim tokens are this store's random prefix and a counter: unique across processes and restarts
   * (each open draws a new prefix) without drawing random bytes per claim.
   */
  private readonly claimPrefix = randomBytes(6).toString('hex');
  private claims = 0;

  /** See `Store.addInbound`: with `claim`, the new inbound's lane is claimed in the same write. */
  addInbound(i: NewInbound, claim: Claimant | undefined): { id: number; duplicate: boolean; claim?: LaneClaim | undefined } {
    const id = this.insertInbound(i);
    if (id === undefined) return { id: Number((this.q.inboxByProvider.get(i.providerId) as Row)['id']), duplicate: true };
    if (claim === undefined) return { id, duplicate: false };
    const [lane] = this.lanes.claim(claim, 1, { botId: i.botId, user: i.user });
    return { id, duplicate: false, ...(lane && { claim: lane }) };
  }

  /** Inserts an inbound and bumps its lane's work counter; undefined for a known provider id. */
  insertInbound(i: NewInbound): number | undefined {
    const r = this.q.insertInbox.run({ ...i, event: JSON.stringify(i.event), raw: j(i.raw) });
    if (r.changes !== 1) return undefined;
    this.q.bumpLane.run(i.botId, i.user);
    return Number(r.lastInsertRowid);
  }

  /** A fresh claim token (each claimed row's is this and its id). */
  token(): string {
    return `${this.claimPrefix}${(this.claims++).toString(36)}`;
  }

  failInbound(id: number, error: string, now: number): void {
    this.q.failInbox.run(error, now, id);
  }

  skipInbound(id: number, note: string, now: number): void {
    this.q.skipInbox.run(note, now, id);
  }

  commitTurn(c: TurnCommit): CommitResult {
    if (c.expire !== undefined) {
      this.q.expireOne.run(c.now, c.now, c.expire);
      this.q.deleteTimers.run(c.expire);
    }
    const { id, version } = c.conversationId === undefined ? this.insertConversation(c) : this.updateConversation(c, c.conversationId);
    // An inbound consumed by another writer (same turn in two processes) must not run twice.
    if (c.inboxId !== undefined && this.q.markInboxDone.run(c.inboxNote ?? null, id, c.now, c.inboxId).changes !== 1) throw new VersionConflictError(id, c.expectedVersion);
    if (c.flowTokenChanged && c.conversationId !== undefined) this.q.setFlowToken.run(c.flowToken, id);
    if (c.flowSubmit) this.insertFlowSubmit(id, c);
    const outboxIds = this.insertOutbox(id, c.key, c.inboxId, c.outbox, c.now);
    this.applyTimers(id, c);
    this.h.applyTurn(id, c, c.notifyHandoffs === true);
    return { conversationId: id, version, outboxIds };
  }

  /** A second writer of the same submit (a retry racing the first) loses like a second writer of a turn. */
  private insertFlowSubmit(id: number, c: TurnCommit): void {
    const f = c.flowSubmit!;
    try {
      this.q.insertFlowSubmit.run({
        dedupeKey: f.dedupeKey,
        requestKey: f.requestKey,
        conversationId: id,
        flowToken: f.flowToken,
        screen: f.screen,
        answer: JSON.stringify(f.answer),
        completes: f.completes ? 1 : 0,
        now: c.now,
      });
    } catch (e) {
      if (String((e as { code?: string }).code).startsWith('SQLITE_CONSTRAINT')) throw new VersionConflictError(id, c.expectedVersion);
      throw e;
    }
  }

  private common(c: TurnCommit) {
    return { snapshot: JSON.stringify(c.snapshot), state: c.state, status: c.status, now: c.now, endedAt: c.status === 'active' ? null : c.now };
  }

  private insertConversation(c: TurnCommit): { id: number; version: number } {
    try {
      const r = this.q.insertConv.run({
        ...this.common(c),
        botId: c.key.botId,
        user: c.key.user,
        flowToken: c.flowToken,
        channel: c.channel ?? 'interactive',
        lastPrompt: j(c.lastPrompt),
        botVersion: c.botVersion ?? 1,
      });
      return { id: Number(r.lastInsertRowid), version: 1 };
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new VersionConflictError(0, 0);
      throw e;
    }
  }

  private updateConversation(c: TurnCommit, id: number): { id: number; version: number } {
    const args = {
      ...this.common(c),
      id,
      expectedVersion: c.expectedVersion,
      channel: c.channel ?? null,
      lastPrompt: j(c.lastPrompt),
      activity: c.userActivity ? 1 : 0,
      botVersion: c.botVersion ?? null,
    };
    // better-sqlite3 ignores the named parameters a statement does not use (status, endedAt).
    if (c.status === 'active' && this.q.updateActiveConv.run(args).changes === 1) return { id, version: c.expectedVersion + 1 };
    if (this.q.updateConv.run(args).changes !== 1) throw new VersionConflictError(id, c.expectedVersion);
    return { id, version: c.expectedVersion + 1 };
  }

  private insertOutbox(conversationId: number, key: ConversationKey, inboxId: number | undefined, rows: readonly NewOutbound[], now: number): number[] {
    return rows.map((o) =>
      Number(
        this.q.insertOutbox.run({
          conversationId,
          botId: key.botId,
          user: key.user,
          inboxId: inboxId ?? null,
          kind: o.kind,
          message: JSON.stringify(o.message),
          channel: o.channel,
          request: JSON.stringify(o.request),
          now,
          fallbackOf: o.fallbackOf ?? null,
        }).lastInsertRowid,
      ),
    );
  }

  private applyTimers(conversationId: number, c: TurnCommit): void {
    if (c.status !== 'active') {
      this.q.deleteTimers.run(conversationId);
      return;
    }
    for (const key of c.timers.remove) this.q.deleteTimer.run(conversationId, key);
    this.q.deleteStaleTimers.run(conversationId, JSON.stringify(c.timers.activeStateNodes));
    for (const t of c.timers.upsert) {
      this.q.upsertTimer.run({ conversationId, botId: c.key.botId, user: c.key.user, key: t.key, stateNode: t.stateNode, event: JSON.stringify(t.event), fireAt: t.fireAt });
    }
  }

  expireIdle(botId: string, before: number, now: number): number {
    const ids = this.q.idleIds.all(botId, before) as Row[];
    for (const r of ids) this.q.deleteTimers.run(r['id']);
    return this.q.expireIdle.run({ botId, before, now }).changes;
  }

  /** Records a claimed send's result; false (nothing recorded) when `claim` no longer holds the row. */
  finish(id: number, s: SendRecord, now: number, claim: string): boolean {
    return (
      this.q.finish.run({
        id,
        now,
        claim,
        state: s.state,
        providerId: s.providerId ?? null,
        httpStatus: s.httpStatus ?? null,
        response: j(s.response),
        smsCode: s.smsCode ?? null,
        smsMailingId: s.smsMailingId ?? null,
        smsResult: s.smsResult ?? null,
        error: s.error ?? null,
        errorCode: s.errorCode ?? null,
      }).changes === 1
    );
  }

  /** What follows a message's failure (see `Store.failOutbound`); idempotent. False when the row does not exist. */
  followFailure(id: number, now: number, follow: FailureFollowUp): boolean {
    const row = this.q.outbox.get(id) as Row | undefined;
    if (!row) return false;
    const conversationId = Number(row['conversation_id']);
    // One follow-up per failed row: planned again (a repeated status, a restart), it may differ (the
    // window has reopened since), and must not add a second one.
    if (Number((this.q.followed.get({ id }) as Row)['found']) === 1) return true;
    const once = follow.templateOnce;
    if (follow.fallback && once && Number((this.q.templateSince.get(conversationId, once.since) as Row)['found']) === 1) {
      this.insertInbound(once.otherwise);
    } else if (follow.fallback) {
      const key = toKey(row);
      this.q.insertFallback.run({
        conversationId,
        botId: key.botId,
        user: key.user,
        inboxId: row['inbox_id'],
        kind: follow.fallback.kind,
        message: JSON.stringify(follow.fallback.message),
        channel: follow.fallback.channel,
        request: JSON.stringify(follow.fallback.request),
        now,
        fallbackOf: id,
      });
    }
    if (follow.inbound) this.insertInbound(follow.inbound);
    if (follow.channel) this.q.setChannel.run(follow.channel, now, conversationId);
    return true;
  }

  addStatus(s: NewStatus): { duplicate: boolean; outbound: OutboxRecord | undefined } {
    const r = this.q.insertStatus.run({ ...s, timestamp: s.timestamp ?? null, recipient: s.recipient ?? null, errors: j(s.errors), raw: j(s.raw) });
    const row = this.q.outboxByProvider.get(s.providerMessageId) as Row | undefined;
    const outbound = row && toOutbox(row);
    if (outbound && r.changes === 1 && (STATUS_RANK[s.status] ?? 0) > (STATUS_RANK[outbound.deliveryStatus ?? ''] ?? 0)) {
      this.q.setDelivery.run(s.status, outbound.id);
      return { duplicate: false, outbound: { ...outbound, deliveryStatus: s.status } };
    }
    return { duplicate: r.changes === 0, outbound };
  }
}
