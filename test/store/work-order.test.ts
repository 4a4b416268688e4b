/**
 * The work contract on every engine, continued (see work.test.ts): per-conversation order of sends
 * and per-handoff order of connector events through retries and lapsed claims, the next due time,
 * timers fired into the inbox, inbounds stored with their lane's claim, and a drained lane's settle.
 */
import { describe, expect, it } from 'vitest';
import type { Claimant, Store } from '../../src/store/types.js';
import { ALICE, BOB, DIALECTS, T0, allInbound, inbound, text, turn } from './helpers.js';

const LONG = 60_000;
const A: Claimant = { owner: 'process-a', leaseMs: LONG, lapsed: true };
const B: Claimant = { owner: 'process-b', leaseMs: LONG, lapsed: true };
const CAREFUL: Claimant = { owner: 'process-c', leaseMs: LONG, lapsed: false };
const W = { now: T0, notify: true };

const ids = async (s: Store, who: Claimant, now = T0) => (await s.claim(who, { kind: 'send', limit: 10, now })).map((o) => [o.id, o.claim!] as const);

describe.each(DIALECTS)('the work contract, in order ($name)', ({ open }) => {
  it("holds a conversation's sends in order through a retry and a lapsed claim", async () => {
    const store = await open();
    const { outboxIds } = await store.commitTurn(turn({ outbox: [text('one'), text('two'), text('three')] }));
    await store.commitTurn(turn({ key: BOB, outbox: [text('bob')] }));
    const [one, bob] = await ids(store, A);
    expect([one![0], bob![0]]).toEqual([outboxIds[0], 4]); // one head per conversation
    expect(await ids(store, B, T0 + LONG)).toEqual([]); // nothing behind an in-flight row
    expect(await store.settleSend(one![0], one![1], { kind: 'retry', at: T0 + 100, error: 'busy' }, T0)).toBe(true);
    expect(await ids(store, B, T0 + 99)).toEqual([]); // the head waits for its retry, and the rest behind it
    const [again] = await ids(store, B, T0 + 100);
    expect(again![0]).toBe(outboxIds[0]);
    expect(await store.outbound(again![0])).toMatchObject({ attempts: 2, resends: 0, error: 'busy' });
    await store.renew(B.owner, 0); // B dies with the row in flight: A takes it back, and nothing behind it
    const [back, ...none] = await ids(store, A, T0 + 100);
    expect(none).toEqual([]);
    expect(back![0]).toBe(outboxIds[0]);
    expect(await store.outbound(back![0])).toMatchObject({ state: 'sending', attempts: 3, resends: 1 });
    expect(await store.settleSend(back![0], back![1], { kind: 'sent', record: { state: 'sent', providerId: 'wamid.one' } }, T0)).toBe(true);
    expect((await ids(store, B, T0 + 100)).map(([id]) => id)).toEqual([outboxIds[1]]);
  });

  it('takes a lapsed head back before anything behind it', async () => {
    const store = await open();
    const { outboxIds } = await store.commitTurn(turn({ outbox: [text('one'), text('two')] }));
    await ids(store, A);
    await store.renew(A.owner, 0);
    expect(await ids(store, CAREFUL)).toEqual([]);
    const [taken, ...rest] = await ids(store, B);
    expect(rest).toEqual([]);
    expect(taken![0]).toBe(outboxIds[0]);
    expect(await store.settleSend(taken![0], taken![1], { kind: 'sent', record: { state: 'sent', providerId: 'wamid.1' } }, T0)).toBe(true);
    expect((await ids(store, B)).map(([id]) => id)).toEqual([outboxIds[1]]);
    expect(await store.outbound(outboxIds[1]!)).toMatchObject({ resends: 0, attempts: 1 });
  });

  it("holds a handoff's connector events in order through a retry and a lapsed claim", async () => {
    const store = await open();
    const { conversationId } = await store.commitTurn(turn({ handoff: { open: { timeoutMs: LONG } }, notifyHandoffs: true }));
    await store.claimHandoff(conversationId, 'agent', W);
    await store.releaseHandoff(conversationId, 'agent', undefined, W);
    const events = (who: Claimant, now = T0) => store.claim(who, { kind: 'event', limit: 10, now });
    const [started, ...behind] = await events(A);
    expect(started).toMatchObject({ type: 'handoff.started', attempts: 1 });
    expect(behind).toEqual([]);
    expect(await store.settleEvent(started!.id, started!.claim, { sent: false, error: 'down', retryAt: T0 + 50 }, T0)).toBe(true);
    expect(await events(B, T0 + 49)).toEqual([]);
    const [retried] = await events(B, T0 + 50);
    expect(retried).toMatchObject({ id: started!.id, attempts: 2 });
    await store.renew(B.owner, 0);
    expect(await events(CAREFUL, T0 + 50)).toEqual([]);
    const [lapsed] = await events(A, T0 + 50);
    expect(lapsed).toMatchObject({ id: started!.id, attempts: 3 });
    expect(await store.settleEvent(lapsed!.id, lapsed!.claim, { sent: true }, T0)).toBe(true);
    const [claimed] = await events(A, T0 + 50);
    expect(claimed).toMatchObject({ type: 'handoff.claimed' });
    expect(await store.settleEvent(claimed!.id, claimed!.claim, { sent: false, error: 'gone' }, T0)).toBe(true); // failed for good
    expect((await events(A, T0 + 50)).map((e) => e.type)).toEqual(['handoff.ended']);
  });

  it('nextDue is the earliest pending send, connector event or timer at the head of its line', async () => {
    const store = await open();
    expect(await store.nextDue()).toBeUndefined();
    const timers = { upsert: [{ key: 'nudge', stateNode: null, event: { type: 'nudge' }, fireAt: T0 + 500 }], remove: [], activeStateNodes: [] };
    const c = await store.commitTurn(turn({ timers }));
    expect(await store.nextDue()).toBe(T0 + 500);
    await store.commitTurn(turn({ key: BOB, outbox: [text('one'), text('two')], now: T0 + 300 }));
    expect(await store.nextDue()).toBe(T0 + 300);
    const [o] = await store.claim(A, { kind: 'send', limit: 10, now: T0 + 300 });
    expect(await store.nextDue()).toBe(T0 + 500); // in flight: neither it nor the row behind it is due
    await store.settleSend(o!.id, o!.claim!, { kind: 'retry', at: T0 + 400, error: 'busy' }, T0);
    expect(await store.nextDue()).toBe(T0 + 400);
    await store.commitTurn(turn({ conversationId: c.conversationId, expectedVersion: c.version, handoff: { open: { timeoutMs: 10_000 } }, notifyHandoffs: true, now: T0 + 200 }));
    expect(await store.nextDue()).toBe(T0 + 200); // handoff.started
    const [e] = await store.claim(A, { kind: 'event', limit: 10, now: T0 + 200 });
    expect(await store.nextDue()).toBe(T0 + 400);
    await store.settleEvent(e!.id, e!.claim, { sent: false, error: 'down', retryAt: T0 + 250 }, T0);
    expect(await store.nextDue()).toBe(T0 + 250);
  });

  it('a timer claim moves due timers into the inbox, bumping their lanes, in firing order', async () => {
    const store = await open();
    const at = (key: string, fireAt: number) => ({ upsert: [{ key, stateNode: null, event: { type: key }, fireAt }], remove: [], activeStateNodes: [] });
    await store.commitTurn(turn({ key: BOB, timers: at('late', T0 + 20) }));
    await store.commitTurn(turn({ key: ALICE, timers: at('early', T0 + 10) }));
    expect(await store.claim(A, { kind: 'timer', limit: 10, now: T0 + 9 })).toEqual([]);
    expect(await store.claim(A, { kind: 'timer', limit: 1, now: T0 + 30 })).toEqual([ALICE]);
    expect(await store.claim(B, { kind: 'timer', limit: 10, now: T0 + 30 })).toEqual([BOB]);
    expect(await store.claim(B, { kind: 'timer', limit: 10, now: T0 + 30 })).toEqual([]);
    expect((await allInbound(store)).map((i) => [i.user, i.source, i.event.type, i.timer?.key])).toEqual([
      [ALICE.user, 'timer', 'early', 'early'],
      [BOB.user, 'timer', 'late', 'late'],
    ]);
    expect(await store.nextDue()).toBeUndefined();
    const lanes = await store.claim(A, { kind: 'lane', limit: 10, now: T0 });
    expect(lanes.map((l) => `${l.key.user}:${l.workSeq}`).sort()).toEqual([`${ALICE.user}:1`, `${BOB.user}:1`]);
  });

  it('stores an inbound with its lane claimed, unless another owner holds the lane; a lapsed one only when asked', async () => {
    const store = await open();
    expect(await store.addInbound(inbound({ providerId: 'wamid.1' }), A)).toMatchObject({ duplicate: false, claim: { key: ALICE, fence: 1, workSeq: 1, takeover: false } });
    expect((await store.addInbound(inbound({ providerId: 'wamid.2' }), A)).claim).toEqual({ key: ALICE, fence: 1, workSeq: 2, takeover: false });
    const taken = await store.addInbound(inbound({ providerId: 'wamid.3' }), B);
    expect(taken.claim).toBeUndefined();
    expect(taken.duplicate).toBe(false);
    expect(await store.addInbound(inbound({ providerId: 'wamid.3' }), B)).toMatchObject({ duplicate: true, id: taken.id });
    await store.renew(A.owner, 0);
    expect((await store.addInbound(inbound({ providerId: 'wamid.4' }), CAREFUL)).claim).toBeUndefined();
    expect((await store.addInbound(inbound({ providerId: 'wamid.5' }), B)).claim).toEqual({ key: ALICE, fence: 2, workSeq: 5, takeover: true });
    expect(await store.addInbound(inbound({ providerId: 'wamid.6' }))).toEqual({ id: expect.any(Number), duplicate: false });
    expect((await store.renew(B.owner, LONG)).lanes).toEqual([{ key: ALICE, fence: 2, workSeq: 6 }]);
  });

  it('settles a drained lane: the next inbound, released, more work, or lost', async () => {
    const store = await open();
    const first = await store.addInbound(inbound({ providerId: 'wamid.1' }), A);
    const { fence, workSeq } = first.claim!;
    expect(await store.settleLane(A.owner, ALICE, fence, workSeq)).toMatchObject({ outcome: 'next', inbound: { id: first.id, state: 'pending' } });
    await store.commitTurn(turn({ inboxId: first.id }));
    await store.addInbound(inbound({ providerId: 'wamid.2' }));
    const second = (await store.settleLane(A.owner, ALICE, fence, workSeq)) as { outcome: 'next'; inbound: { id: number } };
    expect(second).toMatchObject({ outcome: 'next', inbound: { providerId: 'wamid.2' } });
    await store.skipInbound(second.inbound.id, 'skipped', T0);
    expect(await store.settleLane(A.owner, ALICE, fence, workSeq)).toEqual({ outcome: 'more', workSeq: 2 });
    expect(await store.settleLane(B.owner, ALICE, fence, 2)).toEqual({ outcome: 'lost' });
    expect(await store.settleLane(A.owner, ALICE, fence + 1, 2)).toEqual({ outcome: 'lost' });
    expect(await store.settleLane(A.owner, ALICE, fence, 2)).toEqual({ outcome: 'released' });
    expect(await store.claim(B, { kind: 'lane', limit: 10, now: T0 })).toEqual([]); // released with no work left
    expect((await store.renew(A.owner, LONG)).lanes).toEqual([]);
    await store.addInbound(inbound({ providerId: 'wamid.3' }));
    expect(await store.claim(B, { kind: 'lane', limit: 10, now: T0 })).toEqual([{ key: ALICE, fence: 2, workSeq: 3, takeover: false }]);
    await store.renew(B.owner, 0);
    const [c] = await store.claim(A, { kind: 'lane', limit: 10, now: T0 });
    expect(c).toEqual({ key: ALICE, fence: 3, workSeq: 3, takeover: true });
    expect(await store.settleLane(B.owner, ALICE, 2, 3)).toEqual({ outcome: 'lost' });
  });
});
