/**
 * The store's handoff methods on every dialect, through the port: opened with a turn, claimed, held,
 * released, timed out, notified; and several store instances on one database racing for them.
 */
import { describe, expect, it } from 'vitest';
import { HANDOFF_TIMER_KEY, type HandoffEventRecord } from '../../src/store/handoff-types.js';
import type { Store } from '../../src/store/types.js';
import { ALICE, BOB, DIALECTS, WORKER, allOutbound, inbound, nextPending, T0, text, turn } from './helpers.js';

const W = (now = T0, notify = true) => ({ now, notify });
const OPEN = { open: { reason: 'charged twice', queue: 'billing', timeoutMs: 600_000 } } as const;
const FAR = T0 + 365 * 86_400_000;

/** Every connector event queued since the last call, in queue order, taken (and marked sent) through the port. */
async function drain(s: Store): Promise<HandoffEventRecord[]> {
  const out: HandoffEventRecord[] = [];
  const claim = () => s.claim(WORKER, { kind: 'event', limit: 100, now: FAR });
  for (let batch = await claim(); batch.length > 0; batch = await claim()) {
    for (const e of batch) expect(await s.settleEvent(e.id, e.claim, { sent: true }, FAR)).toBe(true);
    out.push(...batch);
  }
  return out.sort((a, b) => a.id - b.id);
}
const types = async (s: Store) => (await drain(s)).map((e) => e.type);

describe.each(DIALECTS)('$name', ({ open, fresh }) => {
  async function handedOff(notify = true) {
    const s = await open();
    const c = await s.commitTurn(turn({ handoff: OPEN, notifyHandoffs: notify }));
    return { s, id: c.conversationId };
  }

  describe('store: handoffs', () => {
    it('a turn opens a handoff with its timeout timer and a handoff.started event, atomically', async () => {
      const { s, id } = await handedOff();
      expect(await s.openHandoff(id)).toMatchObject({ conversationId: id, ...ALICE, state: 'waiting', reason: 'charged twice', queue: 'billing', timeoutAt: T0 + 600_000, startedAt: T0 });
      expect(await s.timers(id)).toEqual([
        { key: HANDOFF_TIMER_KEY, stateNode: null, event: { type: 'handoff.timeout', waitedMs: 600_000, reason: 'charged twice', queue: 'billing' }, fireAt: T0 + 600_000 },
      ]);
      expect(await types(s)).toEqual(['handoff.started']);
      // Asking again while one is open changes nothing.
      await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, handoff: { open: { timeoutMs: 5 } }, notifyHandoffs: true, now: T0 + 1 }));
      expect(await s.handoffs(id)).toHaveLength(1);
      expect((await s.timers(id))[0]!.fireAt).toBe(T0 + 600_000);
      expect(await types(s)).toEqual([]);
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
      expect(await types(s)).toEqual(['handoff.started', 'handoff.claimed']);
    });

    it("agents' messages: only the holder, a known idempotency key returns its row, keys are per conversation", async () => {
      const { s, id } = await handedOff();
      const msg = (agent: string, key?: string) => s.addAgentMessage({ conversationId: id, agent, outbound: text('hello'), idempotencyKey: key, now: T0 });
      expect(await msg('ana', 'k')).toMatchObject({ ok: false, reason: 'taken' }); // waiting: claim first
      await s.claimHandoff(id, 'ana', W());
      expect(await msg('bob', 'k')).toMatchObject({ ok: false, reason: 'taken' });
      const first = await msg('ana', 'k');
      expect(first).toMatchObject({ ok: true, duplicate: false });
      expect(await msg('ana', 'k')).toEqual({ ok: true, outboxId: (first as { outboxId: number }).outboxId, duplicate: true });
      expect(await msg('ana')).toMatchObject({ ok: true, duplicate: false });
      const out = await allOutbound(s);
      expect(out.map((o) => [o.id, o.agent, o.botId, o.user, o.conversationId, o.state])).toEqual([
        [(first as { outboxId: number }).outboxId, 'ana', ALICE.botId, ALICE.user, id, 'pending'],
        [out[1]!.id, 'ana', ALICE.botId, ALICE.user, id, 'pending'],
      ]);
      const other = await s.commitTurn(turn({ key: BOB, handoff: OPEN }));
      await s.claimHandoff(other.conversationId, 'ana', W());
      expect(await s.addAgentMessage({ conversationId: other.conversationId, agent: 'ana', outbound: text('hi'), idempotencyKey: 'k', now: T0 })).toMatchObject({ ok: true, duplicate: false });
    });

    it("an idempotency key is bound to its request's fingerprint and agent, and looked up before the holder", async () => {
      const { s, id } = await handedOff();
      await s.claimHandoff(id, 'ana', W());
      const msg = (agent: string, fingerprint: string) => s.addAgentMessage({ conversationId: id, agent, outbound: text('hello'), idempotencyKey: 'k', fingerprint, now: T0 });
      const first = await msg('ana', 'fp-1');
      expect(first).toMatchObject({ ok: true, duplicate: false });
      expect(await msg('ana', 'fp-1')).toEqual({ ok: true, outboxId: (first as { outboxId: number }).outboxId, duplicate: true });
      expect(await msg('ana', 'fp-2')).toMatchObject({ ok: false, reason: 'key_reused' });
      const bob = await msg('bob', 'fp-1'); // another agent: refused, never the holder's row
      expect(bob).toMatchObject({ ok: false, reason: 'key_taken' });
      expect(bob).not.toHaveProperty('outboxId');
      expect(await allOutbound(s)).toHaveLength(1);
    });

    it('a retry with a known key after the handoff was released is the first message; another agent or body is still refused', async () => {
      const { s, id } = await handedOff();
      await s.claimHandoff(id, 'ana', W());
      const msg = (agent: string, fingerprint: string, key = 'k') => s.addAgentMessage({ conversationId: id, agent, outbound: text('hello'), idempotencyKey: key, fingerprint, now: T0 });
      const first = await msg('ana', 'fp-1');
      expect(first).toMatchObject({ ok: true, duplicate: false });
      expect(await s.releaseHandoff(id, 'ana', undefined, W())).toMatchObject({ ok: true });
      expect(await msg('ana', 'fp-1')).toEqual({ ok: true, outboxId: (first as { outboxId: number }).outboxId, duplicate: true });
      expect(await msg('ana', 'fp-2')).toMatchObject({ ok: false, reason: 'key_reused' });
      const bob = await msg('bob', 'fp-1');
      expect(bob).toMatchObject({ ok: false, reason: 'key_taken' });
      expect(bob).not.toHaveProperty('outboxId');
      expect(await msg('ana', 'fp-1', 'k-new')).toEqual({ ok: false, reason: 'none' }); // a new key: the holder check, as always
      // Claimed again by another agent: the key still answers only its own agent.
      await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, handoff: OPEN }));
      await s.claimHandoff(id, 'bob', W());
      expect(await msg('bob', 'fp-1')).toMatchObject({ ok: false, reason: 'key_taken' });
      expect(await msg('ana', 'fp-1')).toEqual({ ok: true, outboxId: (first as { outboxId: number }).outboxId, duplicate: true });
      expect(await allOutbound(s)).toHaveLength(1);
    });

    it("holds a user's inbound once: done for the conversation, activity counted, handoff.message queued", async () => {
      const { s, id } = await handedOff();
      const h = (await s.openHandoff(id))!;
      const { id: inboxId } = await s.addInbound(inbound({ event: { type: 'text', text: 'hello?' }, source: 'sms' }));
      expect(await s.holdInbound(inboxId, h, 'sms', W(T0 + 100))).toBe(true);
      expect(await s.holdInbound(inboxId, h, 'sms', W(T0 + 100))).toBe(false);
      expect(await s.inbound(inboxId)).toMatchObject({ state: 'done', conversationId: id });
      expect(await s.conversation(id)).toMatchObject({ lastActivityAt: T0 + 100, channel: 'sms', version: 1 });
      expect(await nextPending(s, ALICE)).toBeUndefined();
      const ev = (await drain(s)).at(-1)!;
      expect(ev.payload).toMatchObject({ type: 'handoff.message', message: { event: { type: 'text', text: 'hello?' }, source: 'sms' }, handoff: { id: h.id } });
    });

    it('release: the holder (or anyone while waiting) ends it and queues handoff.ended in the inbox, once', async () => {
      const { s, id } = await handedOff();
      await s.claimHandoff(id, 'ana', W());
      expect(await s.releaseHandoff(id, 'bob', undefined, W())).toMatchObject({ ok: false, reason: 'taken' });
      const r = await s.releaseHandoff(id, 'ana', 'done', W(T0 + 9));
      expect(r).toMatchObject({ ok: true, handoff: { state: 'ended', endedBy: 'ana', note: 'done', endedAt: T0 + 9 } });
      expect(await s.inbound((r as { inboxId: number }).inboxId)).toMatchObject({
        source: 'internal',
        state: 'pending',
        event: { type: 'handoff.ended', by: 'ana', note: 'done' },
        raw: { conversationId: id },
        release: { conversationId: id, handoffId: r.ok ? r.handoff.id : -1 },
      });
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
      await expect(s.commitTurn(turn({ conversationId: id, expectedVersion: 1, handoff: { timeout: { id: h.id, timeoutAt: h.timeoutAt } } }))).rejects.toThrow(/version/i);
      expect(await s.handoffs(id)).toMatchObject([{ state: 'claimed', agent: 'ana' }]); // the failed turn changed nothing
      const { s: s2, id: id2 } = await handedOff();
      const h2 = (await s2.openHandoff(id2))!;
      await s2.commitTurn(turn({ conversationId: id2, expectedVersion: 1, handoff: { timeout: { id: h2.id, timeoutAt: h2.timeoutAt } }, notifyHandoffs: true }));
      expect(await s2.handoffs(id2)).toMatchObject([{ state: 'timeout', endedBy: 'timeout' }]);
      expect(await types(s2)).toEqual(['handoff.started', 'handoff.timeout']);
    });

    it('an ending or expiring conversation closes its handoff; orphans are closed', async () => {
      const { s, id } = await handedOff();
      await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, status: 'done', notifyHandoffs: true }));
      expect(await s.handoffs(id)).toMatchObject([{ state: 'closed', endedBy: 'system' }]);
      expect(await s.timers(id)).toEqual([]);
      expect(await types(s)).toEqual(['handoff.started', 'handoff.ended']);
      const b = await s.commitTurn(turn({ key: BOB, handoff: OPEN, notifyHandoffs: true }));
      expect(await s.expireIdle(BOB.botId, T0 + 1, T0 + 1)).toBe(1);
      expect((await s.openHandoffs()).map((h) => h.conversationId)).toEqual([]); // not listed once its conversation ended
      expect(await s.closeOrphanHandoffs(W(T0 + 2))).toBe(1);
      expect(await s.handoffs(b.conversationId)).toMatchObject([{ state: 'closed', endedBy: 'system' }]);
      expect(await s.closeOrphanHandoffs(W(T0 + 3))).toBe(0);
      expect((await drain(s)).map((e) => [e.handoffId, e.type])).toEqual([
        [2, 'handoff.started'],
        [2, 'handoff.ended'],
      ]);
    });

    it('connector events: the oldest unsent of each handoff, one in flight at a time; retries and failures recorded', async () => {
      const { s, id } = await handedOff();
      await s.claimHandoff(id, 'ana', W(T0 + 1));
      const b = await s.commitTurn(turn({ key: BOB, handoff: OPEN, notifyHandoffs: true }));
      const events = (now: number) => s.claim(WORKER, { kind: 'event', limit: 10, now });
      const first = await events(T0 + 10);
      expect(first.map((e) => [e.handoffId, e.type, e.attempts])).toEqual([
        [1, 'handoff.started', 1],
        [2, 'handoff.started', 1],
      ]);
      expect(first[0]!.payload).toMatchObject({ id: first[0]!.eventId, type: 'handoff.started', handoff: { conversationId: id, state: 'waiting' } });
      expect(await events(T0 + 10)).toEqual([]); // in flight: nothing behind them either
      expect(await s.settleEvent(first[0]!.id, first[0]!.claim, { sent: true }, T0 + 11)).toBe(true);
      expect(await s.settleEvent(first[1]!.id, first[1]!.claim, { sent: false, error: 'HTTP 503', retryAt: T0 + 5_000 }, T0 + 11)).toBe(true);
      expect(await s.settleEvent(first[1]!.id, first[1]!.claim, { sent: true }, T0 + 12)).toBe(false); // the claim is spent
      expect(await s.nextDue()).toBe(T0 + 1); // ana's claim event, due since it was queued
      const next = await events(T0 + 20);
      expect(next.map((e) => e.type)).toEqual(['handoff.claimed']);
      expect(await events(T0 + 5_000)).toMatchObject([{ handoffId: 2, attempts: 2 }]);
      // A claim that lapsed (a process died mid-POST) makes the event claimable again.
      await s.renew(WORKER.owner, 0);
      expect((await events(T0 + 5_000)).map((e) => [e.type, e.attempts])).toEqual([
        ['handoff.claimed', 2],
        ['handoff.started', 3],
      ]);
      void b;
    });

    it('queues no connector events when no connector is configured', async () => {
      const { s, id } = await handedOff(false);
      await s.claimHandoff(id, 'ana', W(T0, false));
      expect(await drain(s)).toEqual([]);
      expect(await s.nextDue()).toBeUndefined();
    });

    it("an SMS fallback of an agent's message is the agent's too; the bot's stays the bot's", async () => {
      const { s, id } = await handedOff(false);
      await s.claimHandoff(id, 'ana', W(T0, false));
      const sent = await s.addAgentMessage({ conversationId: id, agent: 'ana', outbound: text('on it'), now: T0 });
      const agentRow = (sent as { outboxId: number }).outboxId;
      const botRow = (await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, outbox: [text('bot')] }))).outboxIds[0]!;
      const sms = (body: string) => ({ fallback: text(body, { kind: 'sms', channel: 'sms' }) });
      expect(await s.failOutbound(agentRow, T0 + 1, sms('on it by sms'))).toBe(true);
      expect(await s.failOutbound(botRow, T0 + 1, sms('bot by sms'))).toBe(true);
      const rows = await allOutbound(s);
      expect(rows.find((o) => o.fallbackOf === agentRow)).toMatchObject({ agent: 'ana', channel: 'sms', conversationId: id });
      expect(rows.find((o) => o.fallbackOf === botRow)).not.toHaveProperty('agent');
    });
  });

  describe('store: handoffs from several instances on one database', () => {
    async function instances(n: number): Promise<Store[]> {
      const where = await fresh();
      const first = await open(where);
      return [first, ...(await Promise.all(Array.from({ length: n - 1 }, () => open(where))))];
    }

    it('agents claiming at once: one gets it, the others are refused; one handoff.claimed', async () => {
      const stores = await instances(4);
      const { conversationId: id } = await stores[0]!.commitTurn(turn({ handoff: OPEN, notifyHandoffs: true }));
      const results = await Promise.all(stores.map((s, i) => s.claimHandoff(id, `agent${i}`, W(T0 + 1))));
      const won = results.filter((r) => r.ok);
      expect(won).toHaveLength(1);
      const holder = (won[0] as { handoff: { agent: string } }).handoff.agent;
      expect(results.filter((r) => !r.ok)).toEqual(Array.from({ length: 3 }, () => expect.objectContaining({ ok: false, reason: 'taken', handoff: expect.objectContaining({ agent: holder }) })));
      expect(await types(stores[0]!)).toEqual(['handoff.started', 'handoff.claimed']);
    });

    it('the same agent message sent at once through several instances is queued once', async () => {
      const stores = await instances(4);
      const { conversationId: id } = await stores[0]!.commitTurn(turn({ handoff: OPEN }));
      await stores[0]!.claimHandoff(id, 'ana', W(T0, false));
      const results = await Promise.all(stores.map((s) => s.addAgentMessage({ conversationId: id, agent: 'ana', outbound: text('once'), idempotencyKey: 'req-1', now: T0 })));
      const ids = new Set(results.map((r) => (r as { outboxId: number }).outboxId));
      expect(ids.size).toBe(1);
      expect(results.filter((r) => r.ok && !r.duplicate)).toHaveLength(1);
      expect(await allOutbound(stores[0]!)).toHaveLength(1);
    });

    it('connector events are claimed once across instances, in order per handoff', async () => {
      const stores = await instances(3);
      for (const [i, key] of [ALICE, BOB, { botId: 'pizza', user: '+4915100000003' }].entries()) {
        const { conversationId: id } = await stores[0]!.commitTurn(turn({ key, handoff: OPEN, notifyHandoffs: true }));
        await stores[0]!.claimHandoff(id, `agent${i}`, W(T0, true));
        await stores[0]!.releaseHandoff(id, `agent${i}`, undefined, W(T0, true));
      }
      const seen: HandoffEventRecord[] = [];
      const worker = async (s: Store, i: number) => {
        for (let idle = 0; idle < 3; ) {
          const batch = await s.claim({ ...WORKER, owner: `process-${i}` }, { kind: 'event', limit: 2, now: T0 });
          if (!batch.length) {
            idle++;
            await new Promise((r) => setTimeout(r, 5));
            continue;
          }
          idle = 0;
          seen.push(...batch);
          for (const e of batch) expect(await s.settleEvent(e.id, e.claim, { sent: true }, T0)).toBe(true);
        }
      };
      await Promise.all(stores.map(worker));
      expect(seen.map((e) => e.id).sort((a, b) => a - b)).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
      for (const h of [1, 2, 3]) {
        expect(seen.filter((e) => e.handoffId === h).map((e) => e.type)).toEqual(['handoff.started', 'handoff.claimed', 'handoff.ended']);
      }
    });

    it('orphans closed by several instances at once are closed once', async () => {
      const stores = await instances(3);
      await stores[0]!.commitTurn(turn({ handoff: OPEN, notifyHandoffs: true }));
      await stores[0]!.expireIdle(ALICE.botId, T0 + 1, T0 + 1);
      const closed = await Promise.all(stores.map((s) => s.closeOrphanHandoffs(W(T0 + 2))));
      expect(closed.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await types(stores[0]!)).toEqual(['handoff.started', 'handoff.ended']);
    });
  });
});
