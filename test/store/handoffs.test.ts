/** The store's handoff methods on real SQLite: opened with a turn, claimed, held, released, timed out, notified. */
import { describe, expect, it } from 'vitest';
import { HANDOFF_TIMER_KEY } from '../../src/store/handoff-types.js';
import { ALICE, BOB, inbound, open, rows, T0, text, turn } from './helpers.js';

const W = (now = T0, notify = true) => ({ now, notify });
const OPEN = { open: { reason: 'charged twice', queue: 'billing', timeoutMs: 600_000 } } as const;

async function handedOff(notify = true) {
  const s = open();
  const c = await s.commitTurn(turn({ handoff: OPEN, notifyHandoffs: notify }));
  return { s, id: c.conversationId };
}

describe('store: handoffs', () => {
  it('a turn opens a handoff with its timeout timer and a handoff.started event, atomically', async () => {
    const { s, id } = await handedOff();
    expect(await s.openHandoff(id)).toMatchObject({ conversationId: id, ...ALICE, state: 'waiting', reason: 'charged twice', queue: 'billing', timeoutAt: T0 + 600_000, startedAt: T0 });
    expect(await s.timers(id)).toEqual([{ key: HANDOFF_TIMER_KEY, stateNode: null, event: { type: 'handoff.timeout', waitedMs: 600_000, reason: 'charged twice', queue: 'billing' }, fireAt: T0 + 600_000 }]);
    expect(rows(s, 'handoff_events').map((r) => r['type'])).toEqual(['handoff.started']);
    // Asking again while one is open changes nothing.
    await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, handoff: { open: { timeoutMs: 5 } }, notifyHandoffs: true, now: T0 + 1 }));
    expect(await s.handoffs(id)).toHaveLength(1);
    expect((await s.timers(id))[0]!.fireAt).toBe(T0 + 600_000);
    expect(rows(s, 'handoff_events')).toHaveLength(1);
  });

  it('a failed commit opens nothing', async () => {
    const { s, id } = await handedOff();
    await expect(s.commitTurn(turn({ conversationId: id, expectedVersion: 7, handoff: OPEN }))).rejects.toThrow();
    expect(await s.handoffs(id)).toHaveLength(1);
  });

  it('claims once: the same agent again is a no-op, another agent is refused; the timeout is removed', async () => {
    const { s, id } = await handedOff();
    expect(await s.claimHandoff(id, 'ana', W(T0 + 5))).toMatchObject({ ok: true, fresh: true, handoff: { state: 'claimed', agent: 'ana', claimedAt: T0 + 5, timeoutAt: null } });
    expect(await s.claimHandoff(id, 'ana', W(T0 + 6))).toMatchObject({ ok: true, fresh: false });
    expect(await s.claimHandoff(id, 'bob', W())).toMatchObject({ ok: false, reason: 'taken', handoff: { agent: 'ana' } });
    expect(await s.timers(id)).toEqual([]);
    expect(await s.claimHandoff(999, 'ana', W())).toEqual({ ok: false, reason: 'none' });
    expect(rows(s, 'handoff_events').map((r) => r['type'])).toEqual(['handoff.started', 'handoff.claimed']);
  });

  it('agents\' messages: only the holder, a known idempotency key returns its row, keys are per conversation', async () => {
    const { s, id } = await handedOff();
    const msg = (agent: string, key?: string) => s.addAgentMessage({ conversationId: id, agent, outbound: text('hello'), idempotencyKey: key, now: T0 });
    expect(await msg('ana', 'k')).toMatchObject({ ok: false, reason: 'taken' }); // waiting: claim first
    await s.claimHandoff(id, 'ana', W());
    expect(await msg('bob', 'k')).toMatchObject({ ok: false, reason: 'taken' });
    const first = await msg('ana', 'k');
    expect(first).toMatchObject({ ok: true, duplicate: false });
    expect(await msg('ana', 'k')).toEqual({ ok: true, outboxId: (first as { outboxId: number }).outboxId, duplicate: true });
    expect(await msg('ana')).toMatchObject({ ok: true, duplicate: false });
    const out = rows(s, 'outbox');
    expect(out.map((r) => [r['agent'], r['idempotency_key'], r['bot_id'], r['user_number']])).toEqual([['ana', 'k', ALICE.botId, ALICE.user], ['ana', null, ALICE.botId, ALICE.user]]);
    expect((await s.outbound(Number(out[0]!['id'])))!.agent).toBe('ana');
    const other = await s.commitTurn(turn({ key: BOB, handoff: OPEN }));
    await s.claimHandoff(other.conversationId, 'ana', W());
    expect(await s.addAgentMessage({ conversationId: other.conversationId, agent: 'ana', outbound: text('hi'), idempotencyKey: 'k', now: T0 })).toMatchObject({ ok: true, duplicate: false });
  });

  it('holds a user\'s inbound once: done for the conversation, activity counted, handoff.message queued', async () => {
    const { s, id } = await handedOff();
    const h = (await s.openHandoff(id))!;
    const { id: inboxId } = await s.addInbound(inbound({ event: { type: 'text', text: 'hello?' }, source: 'sms' }));
    expect(await s.holdInbound(inboxId, h, 'sms', W(T0 + 100))).toBe(true);
    expect(await s.holdInbound(inboxId, h, 'sms', W(T0 + 100))).toBe(false);
    expect(await s.inbound(inboxId)).toMatchObject({ state: 'done', conversationId: id });
    expect(await s.conversation(id)).toMatchObject({ lastActivityAt: T0 + 100, channel: 'sms', version: 1 });
    expect(await s.nextInbound(ALICE)).toBeUndefined();
    const ev = rows(s, 'handoff_events').at(-1)!;
    expect(JSON.parse(String(ev['payload']))).toMatchObject({ type: 'handoff.message', message: { event: { type: 'text', text: 'hello?' }, source: 'sms' }, handoff: { id: h.id } });
  });

  it('release: the holder (or anyone while waiting) ends it and queues handoff.ended in the inbox, once', async () => {
    const { s, id } = await handedOff();
    await s.claimHandoff(id, 'ana', W());
    expect(await s.releaseHandoff(id, 'bob', undefined, W())).toMatchObject({ ok: false, reason: 'taken' });
    const r = await s.releaseHandoff(id, 'ana', 'done', W(T0 + 9));
    expect(r).toMatchObject({ ok: true, handoff: { state: 'ended', endedBy: 'ana', note: 'done', endedAt: T0 + 9 } });
    expect(await s.inbound((r as { inboxId: number }).inboxId)).toMatchObject({ source: 'internal', state: 'pending', event: { type: 'handoff.ended', by: 'ana', note: 'done' }, raw: { conversationId: id } });
    expect(await s.releaseHandoff(id, 'ana', 'done', W())).toEqual({ ok: false, reason: 'none' });
    expect(await s.openHandoff(id)).toBeUndefined();
    // An inbound that arrived before the release still belongs to it until handoff.ended has run.
    const endedId = (r as { inboxId: number }).inboxId;
    expect(await s.openHandoff(id, endedId - 1)).toMatchObject({ state: 'ended' });
    expect(await s.openHandoff(id, endedId + 1)).toBeUndefined();
    await s.skipInbound(endedId, 'test', T0);
    expect(await s.openHandoff(id, endedId - 1)).toBeUndefined();

    const again = await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, handoff: OPEN }));
    expect(again.version).toBe(2);
    expect(await s.releaseHandoff(id, 'carl', undefined, W())).toMatchObject({ ok: true, handoff: { state: 'ended', endedBy: 'carl', claimedAt: null } });
    expect(await s.timers(id)).toEqual([]);
  });

  it('a timeout settles only a handoff still waiting (else the turn conflicts)', async () => {
    const { s, id } = await handedOff();
    const h = (await s.openHandoff(id))!;
    await s.claimHandoff(id, 'ana', W());
    await expect(s.commitTurn(turn({ conversationId: id, expectedVersion: 1, handoff: { timeout: { id: h.id } } }))).rejects.toThrow(/version/i);
    const { s: s2, id: id2 } = await handedOff();
    const h2 = (await s2.openHandoff(id2))!;
    await s2.commitTurn(turn({ conversationId: id2, expectedVersion: 1, handoff: { timeout: { id: h2.id } }, notifyHandoffs: true }));
    expect(await s2.handoffs(id2)).toMatchObject([{ state: 'timeout', endedBy: 'timeout' }]);
    expect(rows(s2, 'handoff_events').map((r) => r['type'])).toEqual(['handoff.started', 'handoff.timeout']);
  });

  it('an ending or expiring conversation closes its handoff; orphans are closed', async () => {
    const { s, id } = await handedOff();
    await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, status: 'done', notifyHandoffs: true }));
    expect(await s.handoffs(id)).toMatchObject([{ state: 'closed', endedBy: 'system' }]);
    const b = await s.commitTurn(turn({ key: BOB, handoff: OPEN, notifyHandoffs: true }));
    expect(await s.expireIdle(BOB.botId, T0 + 1, T0 + 1)).toBe(1);
    expect((await s.openHandoffs()).map((h) => h.conversationId)).toEqual([]); // not listed once its conversation ended
    expect(await s.closeOrphanHandoffs(W(T0 + 2))).toBe(1);
    expect(await s.handoffs(b.conversationId)).toMatchObject([{ state: 'closed', endedBy: 'system' }]);
    expect(await s.closeOrphanHandoffs(W(T0 + 3))).toBe(0);
  });

  it('connector events: the oldest unsent of each handoff, one in flight at a time; retries and failures recorded', async () => {
    const { s, id } = await handedOff();
    await s.claimHandoff(id, 'ana', W(T0 + 1));
    const b = await s.commitTurn(turn({ key: BOB, handoff: OPEN, notifyHandoffs: true }));
    const first = await s.claimHandoffEvents(T0 + 10, 10, 60_000);
    expect(first.map((e) => [e.handoffId, e.type, e.attempts])).toEqual([[1, 'handoff.started', 1], [2, 'handoff.started', 1]]);
    expect(first[0]!.payload).toMatchObject({ id: first[0]!.eventId, type: 'handoff.started', handoff: { conversationId: id, state: 'waiting' } });
    expect(await s.claimHandoffEvents(T0 + 10, 10, 60_000)).toEqual([]); // in flight: nothing behind them either
    expect(await s.settleHandoffEvent(first[0]!.id, first[0]!.claim, { sent: true }, T0 + 11)).toBe(true);
    expect(await s.settleHandoffEvent(first[1]!.id, first[1]!.claim, { sent: false, error: 'HTTP 503', retryAt: T0 + 5_000 }, T0 + 11)).toBe(true);
    expect(await s.settleHandoffEvent(first[1]!.id, first[1]!.claim, { sent: true }, T0 + 12)).toBe(false); // the claim is spent
    expect(await s.nextHandoffEventAt()).toBe(T0 + 1); // ana's claim event, due since it was queued
    const next = await s.claimHandoffEvents(T0 + 20, 10, 60_000);
    expect(next.map((e) => e.type)).toEqual(['handoff.claimed']);
    expect(await s.claimHandoffEvents(T0 + 5_000, 10, 60_000)).toMatchObject([{ handoffId: 2, attempts: 2 }]);
    // A lease that ran out (a process died mid-POST) makes the event claimable again.
    expect((await s.claimHandoffEvents(T0 + 60_021, 10, 60_000)).map((e) => e.type)).toEqual(['handoff.claimed']);
    void b;
  });

  it('queues no connector events when no connector is configured', async () => {
    const { s, id } = await handedOff(false);
    await s.claimHandoff(id, 'ana', W(T0, false));
    expect(rows(s, 'handoff_events')).toEqual([]);
  });
});
