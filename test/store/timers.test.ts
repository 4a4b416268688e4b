import { describe, expect, it } from 'vitest';
import type { TimerChanges, TimerSpec, Store } from '../../src/store/types.js';
import { ALICE, BOB, NO_TIMERS, T0, DIALECTS, turn, allInbound, claimLanes, nextPending, WORKER } from './helpers.js';

/** Fires the timers due at `now` (up to `limit`) into the inbox; the conversations touched, in firing order. */
const fire = (store: Store, now: number, limit = 10) => store.claim(WORKER, { kind: 'timer', limit, now });

const timer = (key: string, stateNode: string | null, fireAt: number, extra: Record<string, unknown> = {}): TimerSpec => ({ key, stateNode, event: { type: `xstate.after.${key}`, ...extra }, fireAt });

/** Creates ALICE's conversation (id 1) and returns a function committing timer changes to it. */
async function conversation(store: Store): Promise<(changes: Partial<TimerChanges>) => Promise<void>> {
  await store.commitTurn(turn({ now: T0 }));
  let version = 1;
  return async (changes) => {
    await store.commitTurn(turn({ conversationId: 1, expectedVersion: version, timers: { ...NO_TIMERS, ...changes }, now: T0 }));
    version++;
  };
}

describe.each(DIALECTS)('$name', ({ open, failInboxInserts }) => {
  describe('timers in commitTurn', () => {
    it('upserts by key: the same key replaces fire time, event and state node', async () => {
      const store = await open();
      const commit = await conversation(store);
      await commit({ upsert: [timer('remind', null, T0 + 1_000), timer('other', null, T0 + 5_000)] });
      await commit({ upsert: [{ key: 'remind', stateNode: 'bot.menu', event: { type: 'nudge', n: 2 }, fireAt: T0 + 3_000 }], activeStateNodes: ['bot.menu'] });
      expect(await store.timers(1)).toEqual([{ key: 'remind', stateNode: 'bot.menu', event: { type: 'nudge', n: 2 }, fireAt: T0 + 3_000 }, timer('other', null, T0 + 5_000)]);
      expect(await store.timers(1)).toHaveLength(2);
    });

    it('removes timers by key, leaving the others', async () => {
      const store = await open();
      const commit = await conversation(store);
      await commit({ upsert: [timer('a', null, T0 + 1), timer('b', null, T0 + 2), timer('c', null, T0 + 3)] });
      await commit({ remove: ['b', 'not-there'] });
      expect((await store.timers(1)).map((t) => t.key)).toEqual(['a', 'c']);
    });

    it('deletes timers armed by states that are no longer active; keeps those without a state node', async () => {
      const store = await open();
      const commit = await conversation(store);
      await commit({
        upsert: [timer('menu', 'bot.menu', T0 + 1), timer('size', 'bot.order.size', T0 + 2), timer('order', 'bot.order', T0 + 3), timer('raised', null, T0 + 4)],
        activeStateNodes: ['bot.menu', 'bot.order', 'bot.order.size'],
      });
      expect(await store.timers(1)).toHaveLength(4);

      await commit({ activeStateNodes: ['bot', 'bot.order', 'bot.order.crust'] });
      expect((await store.timers(1)).map((t) => t.key)).toEqual(['order', 'raised']);

      await commit({ activeStateNodes: [] });
      expect(await store.timers(1)).toEqual([timer('raised', null, T0 + 4)]);
    });

    it('keeps the timers of other conversations apart, with the same keys', async () => {
      const store = await open();
      const commit = await conversation(store);
      await store.commitTurn(turn({ key: BOB, timers: { ...NO_TIMERS, upsert: [timer('remind', 'bot.menu', T0 + 50)] } }));
      await commit({ upsert: [timer('remind', 'bot.menu', T0 + 10)], activeStateNodes: ['bot.menu'] });
      await commit({ remove: ['remind'] });
      expect(await store.timers(1)).toEqual([]);
      expect(await store.timers(2)).toEqual([timer('remind', 'bot.menu', T0 + 50)]);
    });
  });

  describe('nextDue of timers', () => {
    it('is the earliest fire time of any conversation, or undefined', async () => {
      const store = await open();
      expect(await store.nextDue()).toBeUndefined();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('a', null, T0 + 300), timer('b', null, T0 + 200)] } }));
      await store.commitTurn(turn({ key: BOB, timers: { ...NO_TIMERS, upsert: [timer('a', null, T0 + 250)] } }));
      expect(await store.nextDue()).toBe(T0 + 200);
      await fire(store, T0 + 200);
      expect(await store.nextDue()).toBe(T0 + 250);
    });
  });

  describe('claims of timers', () => {
    it('moves only due timers into the inbox as timer rows and deletes them', async () => {
      const store = await open();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('due', 'bot.menu', T0 + 100, { payload: { x: 1 } }), timer('later', null, T0 + 101)] } }));
      await store.commitTurn(turn({ key: BOB, timers: { ...NO_TIMERS, upsert: [timer('also-due', null, T0 + 50)] } }));

      expect(await fire(store, T0 + 100)).toEqual([BOB, ALICE]);
      expect(await store.timers(1)).toEqual([timer('later', null, T0 + 101)]);
      expect(await store.timers(2)).toEqual([]);

      const inbox = await nextPending(store, ALICE);
      expect(inbox).toEqual({
        id: 2,
        providerId: 'timer:1:1',
        ...ALICE,
        source: 'timer',
        event: { type: 'xstate.after.due', payload: { x: 1 } },
        raw: { key: 'due', fireAt: T0 + 100, conversationId: 1 },
        timer: { key: 'due', fireAt: T0 + 100, conversationId: 1 },
        state: 'pending',
        conversationId: null,
        attempts: 0,
        error: null,
        receivedAt: T0 + 100,
        processedAt: null,
      });
      expect(await nextPending(store, BOB)).toMatchObject({
        id: 1,
        providerId: 'timer:2:3',
        source: 'timer',
        event: { type: 'xstate.after.also-due' },
        raw: { key: 'also-due', fireAt: T0 + 50, conversationId: 2 },
      });
      // Each inbound is its lane's work: the lanes are claimed, the oldest pending inbound first.
      expect((await claimLanes(store, 'worker')).map((l) => [l.key, l.workSeq])).toEqual([
        [BOB, 1],
        [ALICE, 1],
      ]);
    });

    it('is idempotent: a second call fires nothing more', async () => {
      const store = await open();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('a', null, T0)] } }));
      expect(await fire(store, T0)).toEqual([ALICE]);
      const inbox = await allInbound(store);
      expect(await fire(store, T0)).toEqual([]);
      expect(await fire(store, T0 + 60_000)).toEqual([]);
      expect(await allInbound(store)).toEqual(inbox);
      expect(inbox).toHaveLength(1);
    });

    it('fires the earliest first, up to the limit', async () => {
      const store = await open();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('c', null, T0 + 3), timer('a', null, T0 + 1), timer('b', null, T0 + 2)] } }));
      await fire(store, T0 + 10, 2);
      expect((await allInbound(store)).map((r) => (r.raw as { key: string }).key)).toEqual(['a', 'b']);
      expect((await store.timers(1)).map((t) => t.key)).toEqual(['c']);
    });

    it('fires a timer re-armed with the same key again (a new inbox row, not a duplicate)', async () => {
      const store = await open();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('remind', null, T0 + 10)] } }));
      await fire(store, T0 + 10);
      await store.commitTurn(turn({ conversationId: 1, expectedVersion: 1, inboxId: 1, timers: { ...NO_TIMERS, upsert: [timer('remind', null, T0 + 20)] } }));
      await fire(store, T0 + 20);
      expect((await allInbound(store)).map((r) => [r.providerId, r.state])).toEqual([
        ['timer:1:1', 'done'],
        ['timer:1:2', 'pending'],
      ]);
    });

    it('moves nothing when one insert fails (all or nothing)', async () => {
      const store = await open();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('ok', null, T0 + 1), timer('boom', null, T0 + 2)] } }));
      const undo = await failInboxInserts(store, 'boom');
      await expect(fire(store, T0 + 5)).rejects.toThrow('boom');
      expect(await allInbound(store)).toEqual([]);
      expect((await store.timers(1)).map((t) => t.key)).toEqual(['ok', 'boom']);

      await undo();
      await fire(store, T0 + 5);
      expect((await allInbound(store)).map((r) => r.event.type)).toEqual(['xstate.after.ok', 'xstate.after.boom']);
      expect(await store.timers(1)).toEqual([]);
    });
  });
});
