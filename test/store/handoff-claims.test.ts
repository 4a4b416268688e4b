/**
 * Claims that end, on every dialect, through the port: a claim's idle deadline, moved by its
 * agent's messages; the worker's `idle` work returning a claim idle past it to the queue (waiting,
 * its timeout armed again, `handoff.claim_expired` queued), exactly once and never against an
 * agent who acted first; and several store instances on one database racing for it.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { HANDOFF_TIMER_KEY, type HandoffEventRecord, type HandoffRecord } from '../../src/store/handoff-types.js';
import type { Store } from '../../src/store/types.js';
import { blockedOnLock } from '../support/postgres.js';
import { ALICE, BOB, DIALECTS, WORKER, allOutbound, T0, text, turn } from './helpers.js';

const IDLE = 1_800_000;
const TIMEOUT = 600_000;
const OPEN = { open: { reason: 'charged twice', queue: 'billing', timeoutMs: TIMEOUT } } as const;
const W = (now = T0, notify = true) => ({ now, notify, claimIdleMs: IDLE });
const FAR = T0 + 365 * 86_400_000;

/** Every connector event queued since the last call, taken (and marked sent) through the port. */
async function drain(s: Store): Promise<HandoffEventRecord[]> {
  const out: HandoffEventRecord[] = [];
  const claim = () => s.claim(WORKER, { kind: 'event', limit: 100, now: FAR });
  for (let batch = await claim(); batch.length > 0; batch = await claim()) {
    for (const e of batch) expect(await s.settleEvent(e.id, e.claim, { sent: true }, FAR)).toBe(true);
    out.push(...batch);
  }
  return out.sort((a, b) => a.id - b.id);
}

/** The worker's look for idle claims at `now`. */
const expire = (s: Store, now: number, notify = true, limit = 100): Promise<HandoffRecord[]> => s.claim(WORKER, { kind: 'idle', limit, now, notify });

describe.each(DIALECTS)('$name', ({ name, open, fresh }) => {
  async function claimed(notify = true) {
    const s = await open();
    const { conversationId: id } = await s.commitTurn(turn({ handoff: OPEN, notifyHandoffs: notify }));
    const r = await s.claimHandoff(id, 'ana', W(T0 + 10, notify));
    if (!r.ok) throw new Error('not claimed');
    return { s, id, h: r.handoff };
  }
  const say = (s: Store, id: number, agent: string, now: number, key?: string) => s.addAgentMessage({ conversationId: id, agent, outbound: text('still here'), idempotencyKey: key, now });

  describe('store: claims that end', () => {
    it('a fresh claim gets an idle deadline (none when claims never expire), in the record, the event and the next due time', async () => {
      const { s, id, h } = await claimed();
      expect(h).toMatchObject({ state: 'claimed', agent: 'ana', claimIdleUntil: T0 + 10 + IDLE, timeoutAt: null });
      expect(await s.openHandoff(id)).toMatchObject({ claimIdleUntil: T0 + 10 + IDLE });
      const claimedEvent = (await drain(s)).find((e) => e.type === 'handoff.claimed')!;
      expect(claimedEvent.payload).toMatchObject({ handoff: { state: 'claimed', claimIdleUntil: T0 + 10 + IDLE } });
      expect(await s.nextDue()).toBe(T0 + 10 + IDLE);
      // Claimed again by its agent: a no-op, the deadline stays.
      expect(await s.claimHandoff(id, 'ana', W(T0 + 500))).toMatchObject({ ok: true, fresh: false, handoff: { claimIdleUntil: T0 + 10 + IDLE } });

      const { conversationId: other } = await s.commitTurn(turn({ key: BOB, handoff: OPEN }));
      for (const w of [
        { now: T0, notify: false },
        { now: T0, notify: false, claimIdleMs: 0 },
      ]) {
        const r = await s.claimHandoff(other, 'bob', w);
        expect(r).toMatchObject({ ok: true, handoff: { claimIdleUntil: null } });
        await s.releaseHandoff(other, 'bob', undefined, w);
        await s.commitTurn(turn({ key: BOB, conversationId: other, expectedVersion: (await s.conversation(other))!.version, handoff: OPEN }));
      }
      expect(await expire(s, FAR)).toMatchObject([{ agent: 'ana' }]); // bob's never expire
    });

    it("the holder's message moves the deadline on (never back); a refused one does not", async () => {
      const { s, id } = await claimed();
      expect(await say(s, id, 'ana', T0 + 1_000)).toMatchObject({ ok: true });
      expect((await s.openHandoff(id))!.claimIdleUntil).toBe(T0 + 1_000 + IDLE);
      expect(await say(s, id, 'ana', T0 + 500)).toMatchObject({ ok: true }); // a process whose clock is behind
      expect((await s.openHandoff(id))!.claimIdleUntil).toBe(T0 + 1_000 + IDLE);
      expect(await say(s, id, 'bob', T0 + 5_000)).toMatchObject({ ok: false, reason: 'taken' });
      expect((await s.openHandoff(id))!.claimIdleUntil).toBe(T0 + 1_000 + IDLE);
      expect(await expire(s, T0 + 10 + IDLE)).toEqual([]); // the old deadline has passed: nothing
    });

    it("the holder's note moves the deadline too; another agent's note does not keep someone else's claim", async () => {
      const { s, id } = await claimed();
      expect(await s.addHandoffNote(id, { name: 'bob', via: 'token' }, 'ana, this one is urgent', T0 + 2_000)).toMatchObject({ ok: true });
      expect((await s.openHandoff(id))!.claimIdleUntil).toBe(T0 + 10 + IDLE);
      expect(await s.addHandoffNote(id, { name: 'ana', via: 'session' }, 'checking the refund', T0 + 3_000)).toMatchObject({ ok: true });
      expect((await s.openHandoff(id))!.claimIdleUntil).toBe(T0 + 3_000 + IDLE);
      expect(await expire(s, T0 + 10 + IDLE)).toEqual([]);
      expect(await expire(s, T0 + 3_000 + IDLE)).toMatchObject([{ id: expect.any(Number), state: 'waiting', agent: 'ana' }]);
      expect((await s.handoffLog(id)).map((e) => [e.action, e.agent, e.text])).toEqual([
        ['claim', 'ana', null],
        ['note', 'bob', 'ana, this one is urgent'],
        ['note', 'ana', 'checking the refund'],
        ['claim_expired', 'ana', 'idle'],
      ]);
    });

    it('an idle claim goes back to the queue once: waiting, the agent kept, its own timeout armed again, handoff.claim_expired queued', async () => {
      const { s, id, h } = await claimed();
      await drain(s);
      const at = T0 + 10 + IDLE;
      expect(await expire(s, at - 1)).toEqual([]);
      const [back, ...more] = await expire(s, at + 7);
      expect(more).toEqual([]);
      expect(back).toMatchObject({ id: h.id, state: 'waiting', agent: 'ana', claimedAt: T0 + 10, claimIdleUntil: null, timeoutAt: at + 7 + TIMEOUT, endedAt: null });
      expect(await s.openHandoff(id)).toEqual(back);
      expect(await s.timers(id)).toEqual([
        { key: HANDOFF_TIMER_KEY, stateNode: null, event: { type: 'handoff.timeout', waitedMs: TIMEOUT, reason: 'charged twice', queue: 'billing' }, fireAt: at + 7 + TIMEOUT },
      ]);
      const events = await drain(s);
      expect(events.map((e) => e.type)).toEqual(['handoff.claim_expired']);
      expect(events[0]!.payload).toMatchObject({
        type: 'handoff.claim_expired',
        reason: 'idle',
        createdAt: at + 7,
        handoff: { id: h.id, state: 'waiting', agent: 'ana', timeoutAt: at + 7 + TIMEOUT },
      });
      expect(await expire(s, FAR)).toEqual([]);
      expect(await s.nextDue()).toBe(at + 7 + TIMEOUT);

      // Its agent's message now is refused: the claim went back; another agent (or the same) claims it afresh.
      expect(await say(s, id, 'ana', at + 8)).toMatchObject({ ok: false, reason: 'taken', handoff: { state: 'waiting', agent: 'ana' } });
      expect(await s.claimHandoff(id, 'bob', W(at + 9))).toMatchObject({ ok: true, fresh: true, handoff: { agent: 'bob', claimIdleUntil: at + 9 + IDLE, timeoutAt: null } });
      expect(await s.timers(id)).toEqual([]);
    });

    it('queues no connector event without a connector', async () => {
      const { s } = await claimed(false);
      expect(await expire(s, T0 + 10 + IDLE, false)).toHaveLength(1);
      expect(await drain(s)).toEqual([]);
    });

    it('a release or the end of the conversation before the deadline wins: nothing to expire', async () => {
      const { s, id } = await claimed(false);
      expect(await s.releaseHandoff(id, 'ana', undefined, W(T0 + 10 + IDLE - 1, false))).toMatchObject({ ok: true, handoff: { state: 'ended', claimIdleUntil: null } });
      expect(await expire(s, FAR)).toEqual([]);
      const b = await s.commitTurn(turn({ key: BOB, handoff: OPEN }));
      await s.claimHandoff(b.conversationId, 'bob', W(T0, false));
      await s.commitTurn(turn({ key: BOB, conversationId: b.conversationId, expectedVersion: 1, status: 'done' }));
      expect(await s.handoffs(b.conversationId)).toMatchObject([{ state: 'closed', claimIdleUntil: null }]);
      expect(await expire(s, FAR)).toEqual([]);
      expect(await s.nextDue()).toBeUndefined();
    });

    it('takes at most `limit` claims a look, the most overdue first', async () => {
      const s = await open();
      const ids: number[] = [];
      for (const [i, key] of [ALICE, BOB, { botId: 'pizza', user: '+4915100000003' }].entries()) {
        const { conversationId } = await s.commitTurn(turn({ key, handoff: OPEN }));
        await s.claimHandoff(conversationId, `agent${i}`, W(T0 + 100 - i));
        ids.push(conversationId);
      }
      expect((await expire(s, FAR, false, 2)).map((h) => h.conversationId)).toEqual([ids[2], ids[1]]);
      expect((await expire(s, FAR, false, 2)).map((h) => h.conversationId)).toEqual([ids[0]]);
    });
  });

  describe('store: claims that end, several instances on one database', () => {
    async function instances(n: number): Promise<Store[]> {
      const where = await fresh();
      const first = await open(where);
      return [first, ...(await Promise.all(Array.from({ length: n - 1 }, () => open(where))))];
    }

    it('instances looking for idle claims at once return each to the queue once, with one event', async () => {
      const stores = await instances(3);
      const { conversationId: id } = await stores[0]!.commitTurn(turn({ handoff: OPEN, notifyHandoffs: true }));
      await stores[0]!.claimHandoff(id, 'ana', W(T0));
      const back = (await Promise.all(stores.map((s, i) => s.claim({ ...WORKER, owner: `process-${i}` }, { kind: 'idle', limit: 10, now: T0 + IDLE, notify: true })))).flat();
      expect(back).toHaveLength(1);
      expect((await drain(stores[0]!)).map((e) => e.type)).toEqual(['handoff.started', 'handoff.claimed', 'handoff.claim_expired']);
    });

    it.runIf(name === 'postgres')('a claim an agent’s write holds locked is left to a later look; a write waiting on an expiry finds it back in the queue', async () => {
      const where = await fresh();
      const s = await open(where);
      const { conversationId: id } = await s.commitTurn(turn({ handoff: OPEN }));
      await s.claimHandoff(id, 'ana', W(T0, false));
      const agent = new pg.Client({ connectionString: where });
      await agent.connect();
      try {
        // An agent's write in progress holds the handoff's row (as addAgentMessage's FOR UPDATE does).
        await agent.query('BEGIN');
        await agent.query('SELECT id FROM handoffs WHERE conversation_id = $1 FOR UPDATE', [id]);
        expect(await expire(s, T0 + IDLE, false)).toEqual([]); // skipped, not waited for
        await agent.query('COMMIT');
        // The other way round: an expiry holds the row; the agent's message waits, then finds it waiting.
        await agent.query('BEGIN');
        await agent.query(`UPDATE handoffs SET state = 'waiting', claim_idle_until = NULL WHERE conversation_id = $1`, [id]);
        const sent = say(s, id, 'ana', T0 + IDLE);
        await blockedOnLock(where);
        await agent.query('COMMIT');
        expect(await sent).toMatchObject({ ok: false, reason: 'taken', handoff: { state: 'waiting' } });
      } finally {
        await agent.end();
      }
    });

    it('an expiry racing its agent’s message: exactly one outcome', async () => {
      for (let round = 0; round < 5; round++) {
        const [a, b] = await instances(2);
        const { conversationId: id } = await a!.commitTurn(turn({ handoff: OPEN, notifyHandoffs: true }));
        await a!.claimHandoff(id, 'ana', W(T0));
        const [back, sent] = await Promise.all([expire(a!, T0 + IDLE), say(b!, id, 'ana', T0 + IDLE - 1)]);
        const h = (await a!.openHandoff(id))!;
        const expired = (await drain(a!)).filter((e) => e.type === 'handoff.claim_expired');
        if (sent.ok) {
          // The message came first: the claim holds, with the deadline it moved.
          expect([back, h.state, h.claimIdleUntil, expired]).toEqual([[], 'claimed', T0 + 2 * IDLE - 1, []]);
          expect(await allOutbound(a!)).toHaveLength(1);
        } else {
          expect([back.length, h.state, sent.reason, expired.length]).toEqual([1, 'waiting', 'taken', 1]);
          expect(await allOutbound(a!)).toEqual([]);
        }
      }
    });
  });
});
