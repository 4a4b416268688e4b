import { describe, expect, it } from 'vitest';
import type { ConversationKey, InboxRecord, Store } from '../../src/store/types.js';
import { ALICE, BOB, T0, inbound, DIALECTS, turn, allInbound, claimLanes, nextPending } from './helpers.js';

/** What a lane's owner runs next: the lane claimed by its key, then its settle's `next` (undefined when it released the lane). */
async function next(store: Store, key: ConversationKey): Promise<InboxRecord | undefined> {
  const [lane] = await claimLanes(store, 'worker', { key });
  const r = await store.settleLane('worker', key, lane!.fence, lane!.workSeq);
  return r.outcome === 'next' ? r.inbound : undefined;
}

describe.each(DIALECTS)('$name', ({ open }) => {
  describe('addInbound', () => {
    it('stores an inbound as pending with its event and raw payload', async () => {
      const store = await open();
      const r = await store.addInbound(inbound({ providerId: 'wamid.A', event: { type: 'reply.small', id: 'small', title: 'Small', via: 'button' }, raw: { entry: [1] }, receivedAt: T0 + 5 }));
      expect(r).toEqual({ id: 1, duplicate: false });
      expect(await store.inbound(1)).toEqual({
        id: 1,
        providerId: 'wamid.A',
        ...ALICE,
        source: 'whatsapp',
        event: { type: 'reply.small', id: 'small', title: 'Small', via: 'button' },
        raw: { entry: [1] },
        state: 'pending',
        conversationId: null,
        attempts: 0,
        error: null,
        receivedAt: T0 + 5,
        processedAt: null,
      });
    });

    it('stores a missing raw payload as null', async () => {
      const store = await open();
      const { raw: _raw, ...noRaw } = inbound({ providerId: 'api:1', source: 'api' });
      const { id } = await store.addInbound(noRaw);
      expect((await store.inbound(id))?.raw).toBeNull();
    });

    it('dedupes on the provider id: a redelivery reports the same id and changes nothing', async () => {
      const store = await open();
      const first = await store.addInbound(inbound({ providerId: 'wamid.DUP', event: { type: 'text', text: 'first' }, receivedAt: T0 }));
      await store.addInbound(inbound({ providerId: 'wamid.OTHER' }));
      const before = await allInbound(store);

      const again = await store.addInbound(inbound({ providerId: 'wamid.DUP', ...BOB, source: 'sms', event: { type: 'text', text: 'second' }, raw: { other: true }, receivedAt: T0 + 999 }));
      expect(again).toEqual({ id: first.id, duplicate: true });
      expect(await allInbound(store)).toEqual(before);
      expect((await store.inbound(first.id))?.event).toEqual({ type: 'text', text: 'first' });
    });

    it('still reports a duplicate after the inbound was processed', async () => {
      const store = await open();
      const { id } = await store.addInbound(inbound({ providerId: 'wamid.X' }));
      await store.commitTurn(turn({ inboxId: id }));
      expect(await store.addInbound(inbound({ providerId: 'wamid.X' }))).toEqual({ id, duplicate: true });
      expect((await store.inbound(id))?.state).toBe('done');
      expect(await nextPending(store, ALICE)).toBeUndefined();
    });
  });

  describe('the next inbound of a lane', () => {
    it('is the oldest pending inbound of the conversation, not of another one', async () => {
      const store = await open();
      const b1 = await store.addInbound(inbound({ ...BOB, providerId: 'b1' }));
      const a1 = await store.addInbound(inbound({ providerId: 'a1', receivedAt: T0 + 10 }));
      const a2 = await store.addInbound(inbound({ providerId: 'a2', receivedAt: T0 }));
      await store.addInbound(inbound({ botId: 'other-bot', user: ALICE.user, providerId: 'o1' }));

      expect((await next(store, ALICE))?.id).toBe(a1.id);
      expect((await next(store, BOB))?.id).toBe(b1.id);

      await store.commitTurn(turn({ inboxId: a1.id }));
      expect((await next(store, ALICE))?.id).toBe(a2.id);
      await store.failInbound(a2.id, 'bot broke', T0 + 20);
      expect(await next(store, ALICE)).toBeUndefined();
      expect(await next(store, { botId: 'nobody', user: 'x' })).toBeUndefined();
    });

    it('lanes with work are claimed the one with the oldest pending inbound first', async () => {
      const store = await open();
      expect(await claimLanes(store, 'worker')).toEqual([]);
      await store.addInbound(inbound({ ...BOB, providerId: 'b1' }));
      const a1 = await store.addInbound(inbound({ providerId: 'a1' }));
      await store.addInbound(inbound({ providerId: 'a2' }));
      await store.addInbound(inbound({ ...BOB, providerId: 'b2' }));
      await store.addInbound(inbound({ botId: 'quiz', user: ALICE.user, providerId: 'q1' }));
      await store.failInbound(a1.id, 'boom', T0);
      await store.skipInbound((await nextPending(store, BOB))!.id, 'ended', T0);
      // Pending now: a2 (3), b2 (4), q1 (5).
      const order = [];
      for (let lanes = await claimLanes(store, 'worker', { limit: 1 }); lanes.length > 0; lanes = await claimLanes(store, 'worker', { limit: 1 })) order.push(...lanes.map((l) => l.key));
      expect(order).toEqual([ALICE, BOB, { botId: 'quiz', user: ALICE.user }]);
    });
  });

  describe('failInbound and skipInbound', () => {
    it('marks an inbound failed with its error, counting the attempt', async () => {
      const store = await open();
      const { id } = await store.addInbound(inbound({ providerId: 'f1' }));
      await store.failInbound(id, 'Bot "pizza" failed in state "menu": nope', T0 + 7);
      expect(await store.inbound(id)).toMatchObject({ state: 'failed', error: 'Bot "pizza" failed in state "menu": nope', attempts: 1, processedAt: T0 + 7 });
    });

    it('marks an inbound done without a turn, with a note and no attempt', async () => {
      const store = await open();
      const { id } = await store.addInbound(inbound({ providerId: 'timer:1:1', source: 'timer', event: { type: 'xstate.after.1000.bot.menu' } }));
      await store.skipInbound(id, 'its conversation has ended', T0 + 8);
      expect(await store.inbound(id)).toMatchObject({ state: 'done', error: 'its conversation has ended', attempts: 0, processedAt: T0 + 8, conversationId: null });
    });

    it('does not turn an inbound another process already consumed into a failure', async () => {
      const store = await open();
      const { id } = await store.addInbound(inbound({ providerId: 'c1' }));
      await store.commitTurn(turn({ inboxId: id, now: T0 + 1 }));
      await store.failInbound(id, 'lost a race', T0 + 2);
      await store.skipInbound(id, 'late', T0 + 3);
      expect(await store.inbound(id)).toMatchObject({ state: 'done', error: null, attempts: 1, processedAt: T0 + 1, conversationId: 1 });
    });
  });
});
