/**
 * A handoff can now go waiting → claimed → waiting (its claim idle, or its agent
 * removed) without the conversation's version moving. A turn that settles `handoff.timeout` for
 * the first waiting period (its facts read before the claim) must not time out the second one:
 * the store guards the timeout with `state = 'waiting'` only, which the second waiting period
 * passes again.
 */
import { describe, expect, it } from 'vitest';
import { DIALECTS, T0, WORKER, turn } from './helpers.js';

const IDLE = 1_800_000;
const TIMEOUT = 600_000;
const OPEN = { open: { queue: 'billing', timeoutMs: TIMEOUT } } as const;

describe.each(DIALECTS)('$name', ({ open }) => {
  for (const back of ['idle', 'agent_removed'] as const) {
    it(`a timeout decided before a claim that went back (${back}) is refused, like one decided before a claim`, async () => {
      const s = await open();
      const { conversationId: id } = await s.commitTurn(turn({ handoff: OPEN }));
      const first = (await s.openHandoff(id))!;
      expect(first.timeoutAt).toBe(T0 + TIMEOUT);
      // The turn for the first timer: it read the handoff waiting with this timeout, and runs the machine...
      const settle = turn({ conversationId: id, expectedVersion: 1, handoff: { timeout: { id: first.id, timeoutAt: first.timeoutAt } }, now: T0 + TIMEOUT });
      // ...while an agent claims it and the claim goes back to the queue (no machine turn, no new version).
      await s.addAgent('ana', 'a'.repeat(64), T0);
      expect(await s.claimHandoff(id, 'ana', { now: T0 + TIMEOUT - 5, notify: false, claimIdleMs: IDLE })).toMatchObject({ ok: true });
      if (back === 'idle') expect(await s.claim(WORKER, { kind: 'idle', limit: 10, now: T0 + TIMEOUT - 5 + IDLE, notify: false })).toHaveLength(1);
      else expect(await s.removeAgent('ana', { now: T0 + TIMEOUT - 1, notify: false })).toMatchObject({ claims: 1 });
      const again = (await s.openHandoff(id))!;
      expect(again).toMatchObject({ state: 'waiting' });
      expect(again.timeoutAt).toBeGreaterThan(T0 + TIMEOUT);
      expect((await s.conversation(id))!.version).toBe(1);
      // The stale turn commits now: it must not end the new waiting period.
      await expect(s.commitTurn(settle)).rejects.toThrow(/version/i);
      expect(await s.openHandoff(id)).toMatchObject({ state: 'waiting', timeoutAt: again.timeoutAt });
    });
  }
});
