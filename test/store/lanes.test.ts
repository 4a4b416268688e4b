/** Lanes in the database: who runs a conversation's work is a lease, claimed, renewed and settled. */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { ALICE, BOB, DIALECTS, T0, allInbound, claimLanes, inbound, text, turn, WORKER } from './helpers.js';

const A = 'process-a';
const B = 'process-b';
const LONG = 60_000;

/** Marks every pending inbound done, as the turns that ran them would have. */
async function consumeAll(store: Store): Promise<void> {
  for (const i of await allInbound(store)) if (i.state === 'pending') await store.skipInbound(i.id, 'ran', T0);
}

describe.each(DIALECTS)('lanes ($name)', ({ open: openStore }) => {
  it('an inbound adds work to its lane; a redelivery adds none', async () => {
    const store = await openStore();
    await store.addInbound(inbound({ providerId: 'wamid.1' }));
    await store.addInbound(inbound({ providerId: 'wamid.1' }));
    await store.addInbound(inbound({ providerId: 'wamid.2' }));
    expect(await claimLanes(store, A)).toEqual([{ key: ALICE, fence: 1, workSeq: 2, takeover: false }]);
  });

  it('a lane whose lease is live is not claimed by another owner, with or without its key', async () => {
    const store = await openStore();
    await store.addInbound(inbound());
    expect(await claimLanes(store, A)).toHaveLength(1);
    expect(await claimLanes(store, B)).toEqual([]);
    expect(await claimLanes(store, B, { key: ALICE })).toEqual([]);
    // Its own owner may claim it again (the fast path after its own inbound): same fence.
    expect(await claimLanes(store, A, { key: ALICE })).toEqual([{ key: ALICE, fence: 1, workSeq: 1, takeover: false }]);
  });

  it('releases only when no work was added since the owner looked', async () => {
    const store = await openStore();
    await store.addInbound(inbound());
    const [c] = await claimLanes(store, A);
    await store.addInbound(inbound());
    await consumeAll(store);
    expect(await store.settleLane(A, ALICE, c!.fence, c!.workSeq)).toEqual({ outcome: 'more', workSeq: 2 });
    expect(await store.settleLane(A, ALICE, c!.fence, 2)).toEqual({ outcome: 'released' });
    expect(await claimLanes(store, B)).toEqual([]); // no work left
    await store.addInbound(inbound());
    expect(await claimLanes(store, B)).toEqual([{ key: ALICE, fence: 2, workSeq: 3, takeover: false }]);
  });

  it('a lapsed claim is taken over (a new fence); the old owner can neither settle nor renew it', async () => {
    const store = await openStore();
    await store.addInbound(inbound());
    const [c] = await claimLanes(store, A);
    await store.renew(A, 0);
    expect(await claimLanes(store, B, { lapsed: false })).toEqual([]);
    expect(await claimLanes(store, B)).toEqual([{ key: ALICE, fence: c!.fence + 1, workSeq: 1, takeover: true }]);
    expect(await store.settleLane(A, ALICE, c!.fence, 1)).toEqual({ outcome: 'lost' });
    expect((await store.renew(A, LONG)).lanes).toEqual([]);
    expect((await store.renew(B, LONG)).lanes).toEqual([{ key: ALICE, fence: c!.fence + 1, workSeq: 1 }]);
  });

  it('a renewal makes a lapsed claim live again while nobody took it', async () => {
    const store = await openStore();
    await store.addInbound(inbound());
    await claimLanes(store, A);
    await store.renew(A, 0);
    expect((await store.renew(A, LONG)).lanes).toEqual([{ key: ALICE, fence: 1, workSeq: 1 }]);
    expect(await claimLanes(store, B)).toEqual([]);
  });

  it('an owner that gives its lanes up (lease 0) has them taken over at once', async () => {
    const store = await openStore();
    await store.addInbound(inbound());
    await store.addInbound(inbound({ ...BOB }));
    await claimLanes(store, A);
    expect((await store.renew(A, 0)).lanes.map((l) => l.key)).toEqual(expect.arrayContaining([ALICE, BOB]));
    const taken = await claimLanes(store, B);
    expect(taken.map((t) => [t.key.user, t.takeover])).toEqual(
      expect.arrayContaining([
        [ALICE.user, true],
        [BOB.user, true],
      ]),
    );
  });

  it('claims the lanes whose pending inbound is oldest first, up to the limit', async () => {
    const store = await openStore();
    await store.addInbound(inbound({ ...BOB }));
    await store.addInbound(inbound({ ...ALICE }));
    await store.addInbound(inbound({ ...BOB }));
    expect((await claimLanes(store, A, { limit: 1 })).map((c) => c.key)).toEqual([BOB]);
    // The lanes it holds live are not handed out again (a poll in batches moves on to the next ones).
    expect((await claimLanes(store, A, { limit: 5 })).map((c) => c.key)).toEqual([ALICE]);
    expect(await claimLanes(store, A, { limit: 5 })).toEqual([]);
  });

  it('a lane claimed by its key without work is released at once', async () => {
    const store = await openStore();
    const [c] = await claimLanes(store, A, { key: ALICE });
    expect(c).toEqual({ key: ALICE, fence: 1, workSeq: 0, takeover: false });
    expect(await store.settleLane(A, ALICE, 1, 0)).toEqual({ outcome: 'released' });
    expect((await store.renew(A, LONG)).lanes).toEqual([]);
  });

  it('a fired timer and a delivery failure for the bot add work to their lane', async () => {
    const store = await openStore();
    const { conversationId } = await store.commitTurn(
      turn({
        outbox: [text('hi')],
        timers: { upsert: [{ key: 't1', stateNode: null, event: { type: 'tick' }, fireAt: T0 + 10 }], remove: [], activeStateNodes: [] },
      }),
    );
    expect(await claimLanes(store, A)).toEqual([]);
    await store.claim(WORKER, { kind: 'timer', limit: 10, now: T0 + 10 });
    expect(await claimLanes(store, A)).toEqual([{ key: ALICE, fence: 1, workSeq: 1, takeover: false }]);
    await store.failOutbound(1, T0 + 11, {
      inbound: { ...ALICE, providerId: 'delivery:1', source: 'delivery', event: { type: 'delivery.failed', channel: 'interactive', reason: 'x' }, raw: { conversationId }, receivedAt: T0 + 11 },
    });
    await consumeAll(store);
    expect(await store.settleLane(A, ALICE, 1, 1)).toEqual({ outcome: 'more', workSeq: 2 });
  });
});
