/**
 * What another process hears (`onWork`, PostgreSQL's NOTIFY) of the work contract: a send or an
 * event put back for retry, claims given up with `renew(owner, 0)` (sends and events, not only
 * lanes), an SMS fallback queued by a failed send, a connector event queued by a turn, a timer fired
 * into the inbox. Each step waits until the listener has heard one more (never a fixed sleep).
 */
import { describe, expect, it } from 'vitest';
import type { Claimant, Store } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { ALICE, postgres, T0, text, turn } from './helpers.js';

const WORKER: Claimant = { owner: 'worker-x', leaseMs: 60_000, lapsed: true };

/** A listening store and another process's store on one database; `heard()` resolves once the listener hears one more. */
async function listening(): Promise<{ actor: Store; heard: () => Promise<void>; stop: () => Promise<void> }> {
  const url = await postgres.fresh();
  const listener = await postgres.open(url);
  const actor = await postgres.open(url);
  let count = 0;
  const stop = await listener.onWork!(() => {
    count++;
  });
  await eventually(() => count >= 1, { what: 'the notification on connecting' });
  let seen = count;
  const heard = async () => {
    await eventually(() => count > seen, { what: 'a work notification' });
    seen = count;
  };
  return { actor, heard, stop };
}

describe('work notifications of the work contract (postgres)', () => {
  it('a retry, claims given up, a fallback, a connector event and a fired timer are announced', async () => {
    const { actor, heard, stop } = await listening();
    try {
      await actor.commitTurn(turn({ outbox: [text('one')], now: T0 }));
      const [row] = await actor.claim(WORKER, { kind: 'send', limit: 1, now: T0 });
      expect(await actor.settleSend(row!.id, row!.claim!, { kind: 'retry', at: T0 + 1_000, error: 'busy' }, T0)).toBe(true);
      await heard(); // put back for retry

      const [again] = await actor.claim(WORKER, { kind: 'send', limit: 1, now: T0 + 1_000 });
      expect(again).toMatchObject({ id: row!.id });
      expect(await actor.renew(WORKER.owner, 0)).toEqual([]); // no lanes held, but a send given up
      await heard();

      const [third] = await actor.claim(WORKER, { kind: 'send', limit: 1, now: T0 + 1_000 });
      expect(third).toMatchObject({ id: row!.id, resends: 1 });
      const fallback = { ...text('one by sms'), channel: 'sms' as const, request: { to: ALICE.user } };
      expect(await actor.settleSend(third!.id, third!.claim!, { kind: 'failed', follow: { fallback } }, T0 + 2_000)).toBe(true);
      await heard(); // the SMS fallback, for whichever process sends first

      await actor.commitTurn(turn({ conversationId: 1, expectedVersion: 1, handoff: { open: { timeoutMs: 60_000 } }, notifyHandoffs: true, now: T0 + 3_000 }));
      await heard(); // handoff.started, for the connector
      const [event] = await actor.claim(WORKER, { kind: 'event', limit: 1, now: T0 + 3_000 });
      expect(event).toMatchObject({ type: 'handoff.started' });
      expect(await actor.settleEvent(event!.id, event!.claim, { sent: false, error: 'down', retryAt: T0 + 4_000 }, T0 + 3_000)).toBe(true);
      await heard();

      // The handoff's timeout timer falls due: fired into the inbox, its lane gets work.
      expect(await actor.claim(WORKER, { kind: 'timer', limit: 10, now: T0 + 3_000 + 60_000 })).toEqual([ALICE]);
      await heard();
    } finally {
      await stop();
    }
  });
});
