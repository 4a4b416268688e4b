/** Lanes in the database: who runs a conversation's work is a lease, claimed, renewed and settled. */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { ALICE, BOB, DIALECTS, T0, allInbound, claimLanes, inbound, text, turn, WORKER } from './helpers.js';
import { sleep } from '../support/eventually.js';

const A = 'process-a';
const B = 'process-b';
const C = 'process-c';
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
    expect(await store.renew(A, LONG)).toEqual([]);
    expect(await store.renew(B, LONG)).toEqual([{ key: ALICE, fence: c!.fence + 1, workSeq: 1 }]);
  });

  it('a renewal makes a lapsed claim live again while nobody took it', async () => {
    const store = await openStore();
    await store.addInbound(inbound());
    await claimLanes(store, A);
    await store.renew(A, 0);
    expect(await store.renew(A, LONG)).toEqual([{ key: ALICE, fence: 1, workSeq: 1 }]);
    expect(await claimLanes(store, B)).toEqual([]);
  });

  it('an owner that gives its lanes up (lease 0) has them taken over at once', async () => {
    const store = await openStore();
    await store.addInbound(inbound());
    await store.addInbound(inbound({ ...BOB }));
    await claimLanes(store, A);
    expect((await store.renew(A, 0)).map((l) => l.key)).toEqual(expect.arrayContaining([ALICE, BOB]));
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
    expect(await store.renew(A, LONG)).toEqual([]);
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

describe('work notifications (postgres)', () => {
  const pgDialect = DIALECTS.find((d) => d.name === 'postgres')!;

  it('a process LISTENing hears work another process adds, and lanes another gives up', async () => {
    const url = await pgDialect.fresh();
    const listening = await pgDialect.open(url);
    const other = await pgDialect.open(url);
    let heard = 0;
    const stop = await listening.onWork!(() => {
      heard++;
    });
    const settle = async (n: number) => {
      for (let i = 0; i < 100 && heard < n; i++) await sleep(20);
    };
    await settle(1); // one on (re)connecting: work may have come while it was not listening
    const before = heard;
    await other.addInbound(inbound());
    await settle(before + 1);
    expect(heard).toBe(before + 1);
    await claimLanes(other, B);
    await other.renew(B, 0);
    await settle(before + 2);
    expect(heard).toBe(before + 2);
    await stop();
    await other.addInbound(inbound());
    await sleep(200);
    expect(heard).toBe(before + 2);
  });

  it('an inbound whose lane its receiver took is not announced; one whose lane another process holds is', async () => {
    const url = await pgDialect.fresh();
    const listening = await pgDialect.open(url);
    const other = await pgDialect.open(url);
    let heard = 0;
    const stop = await listening.onWork!(() => {
      heard++;
    });
    for (let i = 0; i < 100 && heard < 1; i++) await sleep(20); // the one on connecting
    const before = heard;
    const taken = await other.addInbound(inbound({ providerId: 'wamid.taken' }), { owner: B, leaseMs: LONG, lapsed: true });
    expect(taken.claim).toBeDefined();
    await sleep(200);
    expect(heard).toBe(before); // B drains it; nobody else could
    // Held by B: A's inbound for the same conversation goes to B, who must hear of it.
    const held = await listening.addInbound(inbound({ providerId: 'wamid.held' }), { owner: A, leaseMs: LONG, lapsed: true });
    expect(held.claim).toBeUndefined();
    const third = await pgDialect.open(url);
    let heardByB = 0;
    const stopB = await other.onWork!(() => {
      heardByB++;
    });
    for (let i = 0; i < 100 && heardByB < 1; i++) await sleep(20);
    const beforeB = heardByB;
    await third.addInbound(inbound({ providerId: 'wamid.held-too' }), { owner: C, leaseMs: LONG, lapsed: true });
    for (let i = 0; i < 100 && heardByB < beforeB + 1; i++) await sleep(20);
    expect(heardByB).toBe(beforeB + 1);
    await stopB();
    await stop();
  });

  it("a process does not hear the work it added itself (it acts on that already), only the others'", async () => {
    const url = await pgDialect.fresh();
    const store = await pgDialect.open(url);
    const other = await pgDialect.open(url);
    let heard = 0;
    const stop = await store.onWork!(() => {
      heard++;
    });
    for (let i = 0; i < 100 && heard < 1; i++) await sleep(20); // the one on connecting
    const before = heard;
    await store.addInbound(inbound({ providerId: 'wamid.own' }));
    await claimLanes(store, A);
    await store.renew(A, 0);
    await sleep(200);
    expect(heard).toBe(before);
    await other.addInbound(inbound({ providerId: 'wamid.other' }));
    for (let i = 0; i < 100 && heard < before + 1; i++) await sleep(20);
    expect(heard).toBe(before + 1);
    await stop();
  });
});
