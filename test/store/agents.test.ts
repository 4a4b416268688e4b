/**
 * The store's agent methods on every dialect, through the port: agents kept by token hash, inbox
 * sessions that end with their agent or its token, removing an agent (its claims back to the
 * queue), notes, and the handoff log written with each claim, message, release, timeout and close.
 */
import { describe, expect, it } from 'vitest';
import type { HandoffLogEntry } from '../../src/store/agent-types.js';
import { HANDOFF_TIMER_KEY, type HandoffEventRecord } from '../../src/store/handoff-types.js';
import type { Store } from '../../src/store/types.js';
import { BOB, DIALECTS, WORKER, T0, text, turn } from './helpers.js';

const W = (now = T0, notify = true) => ({ now, notify });
const OPEN = { open: { reason: 'charged twice', queue: 'billing', timeoutMs: 600_000 } } as const;
const FAR = T0 + 365 * 86_400_000;
const HOUR = 3_600_000;

/** Every connector event queued since the last call, taken (and marked sent) through the port. */
async function drain(s: Store): Promise<HandoffEventRecord[]> {
  const out: HandoffEventRecord[] = [];
  const claim = () => s.claim(WORKER, { kind: 'event', limit: 100, now: FAR });
  for (let batch = await claim(); batch.length > 0; batch = await claim()) {
    for (const e of batch) await s.settleEvent(e.id, e.claim, { sent: true }, FAR);
    out.push(...batch);
  }
  return out.sort((a, b) => a.id - b.id);
}

/** The log as [action, agent, via, text] rows, the easiest to read in a failure. */
const lines = (log: HandoffLogEntry[]) => log.map((e) => [e.action, e.agent, e.via, e.text]);

describe.each(DIALECTS)('$name', ({ open }) => {
  async function handedOff(s?: Store, key = turn({ handoff: OPEN, notifyHandoffs: true })) {
    const store = s ?? (await open());
    const c = await store.commitTurn(key);
    return { s: store, id: c.conversationId };
  }

  describe('store: agents', () => {
    it('adds agents by name, finds them by token hash only, and refuses a taken name', async () => {
      const s = await open();
      expect(await s.addAgent('ana', 'a'.repeat(64), T0)).toBe(true);
      expect(await s.addAgent('bob', 'b'.repeat(64), T0 + 1)).toBe(true);
      expect(await s.addAgent('ana', 'c'.repeat(64), T0 + 2)).toBe(false);
      expect(await s.agents()).toEqual([
        { name: 'ana', createdAt: T0 },
        { name: 'bob', createdAt: T0 + 1 },
      ]);
      expect(await s.agentByTokenHash('a'.repeat(64))).toEqual({ name: 'ana', createdAt: T0 });
      expect(await s.agentByTokenHash('c'.repeat(64))).toBeUndefined(); // the refused add changed nothing
    });

    it('a new token replaces the old one at once and ends the sessions made from it', async () => {
      const s = await open();
      await s.addAgent('ana', 'old', T0);
      expect(await s.createAgentSession('sess', 'ana', 'csrf', T0, T0 + HOUR)).toBe(true);
      expect(await s.setAgentToken('ana', 'new')).toBe(true);
      expect(await s.agentByTokenHash('old')).toBeUndefined();
      expect(await s.agentByTokenHash('new')).toMatchObject({ name: 'ana' });
      expect(await s.agentSession('sess', T0)).toBeUndefined();
      expect(await s.setAgentToken('nobody', 'x')).toBe(false);
    });

    it('a session made from a token opens only while the agent still has that token (a rotation since the sign-in refuses it)', async () => {
      const s = await open();
      await s.addAgent('ana', 'old', T0);
      expect(await s.setAgentToken('ana', 'new')).toBe(true); // rotated between the sign-in's lookup and its insert
      expect(await s.createAgentSession('late', 'ana', 'csrf', T0, T0 + HOUR, 'old')).toBe(false);
      expect(await s.agentSession('late', T0)).toBeUndefined();
      expect(await s.createAgentSession('fresh', 'ana', 'csrf', T0, T0 + HOUR, 'new')).toBe(true);
    });

    it('sessions: live until they expire or end; none for an agent that does not exist', async () => {
      const s = await open();
      await s.addAgent('ana', 'h', T0);
      expect(await s.createAgentSession('s1', 'ana', 'c1', T0, T0 + HOUR)).toBe(true);
      expect(await s.agentSession('s1', T0 + HOUR - 1)).toEqual({ agent: 'ana', csrf: 'c1', createdAt: T0, expiresAt: T0 + HOUR });
      expect(await s.agentSession('s1', T0 + HOUR)).toBeUndefined();
      expect(await s.createAgentSession('s2', 'ana', 'c2', T0, T0 + HOUR)).toBe(true);
      await s.endAgentSession('s2');
      await s.endAgentSession('s2'); // already gone: no error
      expect(await s.agentSession('s2', T0)).toBeUndefined();
      expect(await s.createAgentSession('s3', 'nobody', 'c3', T0, T0 + HOUR)).toBe(false);
      expect(await s.agentSession('s3', T0)).toBeUndefined();
    });

    it('removing an agent ends its token and sessions and puts its claims back in the queue with their whole timeout', async () => {
      const { s, id } = await handedOff();
      const other = await handedOff(s, turn({ key: BOB, handoff: OPEN, notifyHandoffs: true }));
      await s.addAgent('ana', 'ha', T0);
      await s.addAgent('bob', 'hb', T0);
      await s.createAgentSession('s1', 'ana', 'c', T0, FAR);
      await s.createAgentSession('s2', 'ana', 'c', T0, FAR);
      await s.createAgentSession('s3', 'bob', 'c', T0, FAR);
      await s.claimHandoff(id, 'ana', { ...W(T0 + 5), via: 'token' });
      await s.claimHandoff(other.id, 'bob', W(T0 + 5));
      await drain(s);

      expect(await s.removeAgent('ana', W(T0 + 1000))).toEqual({ removed: true, sessions: 2, claims: 1 });
      expect(await s.agentByTokenHash('ha')).toBeUndefined();
      expect(await s.agentSession('s1', T0)).toBeUndefined();
      expect(await s.agentSession('s3', T0)).toMatchObject({ agent: 'bob' });
      expect((await s.agents()).map((a) => a.name)).toEqual(['bob']);
      expect(await s.openHandoff(id)).toMatchObject({ state: 'waiting', agent: 'ana', timeoutAt: T0 + 1000 + 600_000 });
      expect(await s.timers(id)).toEqual([
        { key: HANDOFF_TIMER_KEY, stateNode: null, event: { type: 'handoff.timeout', waitedMs: 600_000, reason: 'charged twice', queue: 'billing' }, fireAt: T0 + 1000 + 600_000 },
      ]);
      expect(await s.openHandoff(other.id)).toMatchObject({ state: 'claimed', agent: 'bob' }); // another agent's claim stays
      const events = await drain(s);
      expect(events.map((e) => [e.handoffId, e.type])).toEqual([[1, 'handoff.claim_expired']]);
      expect(events[0]!.payload).toMatchObject({ type: 'handoff.claim_expired', reason: 'agent_removed', handoff: { id: 1, state: 'waiting', agent: 'ana' } });
      expect(lines(await s.handoffLog(id))).toEqual([
        ['claim', 'ana', 'token', null],
        ['claim_expired', 'ana', null, 'agent_removed'],
      ]);
      // Back in the queue: anyone may claim it.
      expect(await s.claimHandoff(id, 'bob', W(T0 + 2000))).toMatchObject({ ok: true, fresh: true });
      expect(await s.removeAgent('ana', W())).toEqual({ removed: false, sessions: 0, claims: 0 });
    });

    it('the log records who claimed, wrote and released, and how they were known', async () => {
      const { s, id } = await handedOff();
      expect(await s.addAgent('ana', 'c'.repeat(64), T0)).toBe(true); // a session's agent must exist when it claims
      await s.claimHandoff(id, 'ana', { ...W(T0 + 1), via: 'session' });
      await s.claimHandoff(id, 'ana', { ...W(T0 + 2), via: 'session' }); // not fresh: no line
      const msg = (key?: string) => s.addAgentMessage({ conversationId: id, agent: 'ana', outbound: text('hi'), idempotencyKey: key, via: 'service', now: T0 + 3 });
      const sent = await msg('k');
      expect(await msg('k')).toMatchObject({ ok: true, duplicate: true }); // a retry: no second line
      expect(await s.addAgentMessage({ conversationId: id, agent: 'bob', outbound: text('no'), now: T0 + 3 })).toMatchObject({ ok: false }); // refused: no line
      await s.releaseHandoff(id, 'ana', 'refunded', W(T0 + 4)); // no via: NULL
      const log = await s.handoffLog(id);
      expect(log.map((e) => [e.action, e.agent, e.via, e.text, e.outboxId, e.at])).toEqual([
        ['claim', 'ana', 'session', null, null, T0 + 1],
        ['message', 'ana', 'service', null, (sent as { outboxId: number }).outboxId, T0 + 3],
        ['release', 'ana', null, 'refunded', null, T0 + 4],
      ]);
      expect(log.every((e) => e.conversationId === id && e.handoffId === 1)).toBe(true);
      expect(log.map((e) => e.id)).toEqual([...log.map((e) => e.id)].sort((a, b) => a - b));
    });

    it('notes: by any agent on the open handoff, never on none', async () => {
      const { s, id } = await handedOff();
      const noted = await s.addHandoffNote(id, { name: 'bob', via: 'open' }, 'VIP customer', T0 + 1);
      expect(noted).toEqual({
        ok: true,
        entry: { id: expect.any(Number), handoffId: 1, conversationId: id, action: 'note', agent: 'bob', via: 'open', text: 'VIP customer', outboxId: null, at: T0 + 1 },
      });
      await s.claimHandoff(id, 'ana', W());
      expect(await s.addHandoffNote(id, { name: 'carl', via: 'token' }, 'checked the refund', T0 + 2)).toMatchObject({ ok: true });
      await s.releaseHandoff(id, 'ana', undefined, W());
      expect(await s.addHandoffNote(id, { name: 'ana', via: 'token' }, 'late', T0 + 3)).toEqual({ ok: false, reason: 'none' });
      expect(lines(await s.handoffLog(id))).toEqual([
        ['note', 'bob', 'open', 'VIP customer'],
        ['claim', 'ana', null, null],
        ['note', 'carl', 'token', 'checked the refund'],
        ['release', 'ana', null, null],
      ]);
      expect(await s.handoffLog(999)).toEqual([]);
    });

    it('the system: a timeout, a conversation that ended and an orphan each leave a line without an agent', async () => {
      const { s, id } = await handedOff();
      const h = (await s.openHandoff(id))!;
      await s.commitTurn(turn({ conversationId: id, expectedVersion: 1, handoff: { timeout: { id: h.id, timeoutAt: h.timeoutAt } }, now: T0 + 7 }));
      expect(lines(await s.handoffLog(id))).toEqual([['timeout', null, null, null]]);
      const ended = await handedOff(s, turn({ key: BOB, handoff: OPEN }));
      await s.commitTurn(turn({ key: BOB, conversationId: ended.id, expectedVersion: 1, status: 'done' }));
      expect(lines(await s.handoffLog(ended.id))).toEqual([['closed', null, null, null]]);
      const orphan = await handedOff(s, turn({ key: { botId: 'other', user: '+1' }, handoff: OPEN }));
      await s.expireIdle('other', T0 + 1, T0 + 1);
      await s.closeOrphanHandoffs(W(T0 + 2));
      expect((await s.handoffLog(orphan.id)).map((e) => [e.action, e.agent, e.at])).toEqual([['closed', null, T0 + 2]]);
    });
  });
});
