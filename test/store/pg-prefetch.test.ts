/**
 * A lane claim by key reads what the lane's next step reads (its oldest pending inbound, its active
 * conversation); the store answers that step (`settleLane`, `activeConversation`) from it, once.
 */
import { describe, expect, it } from 'vitest';
import type { PgStore } from '../../src/store/postgres/store.js';
import type { ConversationKey, LaneNext } from '../../src/store/types.js';
import { ALICE, T0, inbound, postgres, turn } from './helpers.js';

const A = 'process-a';
const LONG = 60_000;
const who = (owner: string, leaseMs = LONG) => ({ owner, leaseMs, lapsed: true });
const claimLane = (store: PgStore, owner: string, key?: ConversationKey) => store.claim(who(owner), { kind: 'lane', limit: 1, now: T0, key });
/** The id of the inbound a `next` outcome carries (undefined for the others). */
const nextId = (n: LaneNext): number | undefined => (n.outcome === 'next' ? n.inbound.id : undefined);

/** Marks an inbound done behind the store's back (another connection), as another writer would. */
const doneElsewhere = async (store: PgStore, id: number) => store.db.pool.query(`UPDATE inbox SET state = 'done' WHERE id = $1`, [id]);

describe('what a claim reads for the next step (postgres)', () => {
  it('answers the next inbound and the active conversation from the claim, once each', async () => {
    const store = (await postgres.open()) as PgStore;
    const first = await store.addInbound(inbound());
    await store.commitTurn(turn({ inboxId: first.id }));
    const second = await store.addInbound(inbound());
    const [claim] = await claimLane(store, A, ALICE);
    expect(claim).toMatchObject({ key: ALICE, workSeq: 2 });
    const conv = await store.activeConversation(ALICE);
    // Changed behind the store's back after the claim: the claim's reading is answered once, then the database's.
    await doneElsewhere(store, second.id);
    await store.db.pool.query(`UPDATE conversations SET state = 'elsewhere' WHERE id = $1`, [conv!.id]);
    expect(nextId(await store.settleLane(A, ALICE, claim!.fence, claim!.workSeq))).toBe(second.id);
    expect(await store.settleLane(A, ALICE, claim!.fence, claim!.workSeq)).toEqual({ outcome: 'released' });
    expect((await store.activeConversation(ALICE))?.state).toBe('elsewhere');
    expect(conv).toMatchObject({ id: 1, botId: ALICE.botId, user: ALICE.user, status: 'active', version: 1, state: 'menu' });
  });

  it('keeps the conversation the claim read, including none', async () => {
    const store = (await postgres.open()) as PgStore;
    await store.addInbound(inbound());
    await claimLane(store, A, ALICE);
    const other = (await postgres.open(store.db.url)) as PgStore;
    const { id } = await other.addInbound(inbound());
    await other.commitTurn(turn({ inboxId: id }));
    expect(await store.activeConversation(ALICE)).toBeUndefined(); // as claimed: a turn from it fails its commit
    expect(await store.activeConversation(ALICE)).toMatchObject({ status: 'active' });
  });

  it('never keeps "nothing pending": work counted by the claim is always found', async () => {
    const store = (await postgres.open()) as PgStore;
    const { id } = await store.addInbound(inbound());
    await store.commitTurn(turn({ inboxId: id }));
    const [c] = await claimLane(store, A, ALICE);
    const later = await store.addInbound(inbound());
    expect(nextId(await store.settleLane(A, ALICE, c!.fence, c!.workSeq))).toBe(later.id);
  });

  it('forgets what it read when the store itself changes it: a commit, a failed or skipped inbound', async () => {
    const store = (await postgres.open()) as PgStore;
    const a = await store.addInbound(inbound());
    const [c] = await claimLane(store, A, ALICE);
    await store.commitTurn(turn({ inboxId: a.id }));
    expect(await store.settleLane(A, ALICE, c!.fence, 1)).toEqual({ outcome: 'released' });
    expect(await store.activeConversation(ALICE)).toMatchObject({ status: 'active' });

    const b = await store.addInbound(inbound());
    const [c2] = await claimLane(store, A, ALICE);
    await store.failInbound(b.id, 'broken', 1);
    expect(await store.settleLane(A, ALICE, c2!.fence, c2!.workSeq)).toEqual({ outcome: 'released' });

    const d = await store.addInbound(inbound());
    const [c3] = await claimLane(store, A, ALICE);
    await store.skipInbound(d.id, 'nothing to run', 1);
    expect(await store.settleLane(A, ALICE, c3!.fence, c3!.workSeq)).toEqual({ outcome: 'released' });
  });

  it('answers from what it read only the owner and fence whose claim read it', async () => {
    const store = (await postgres.open()) as PgStore;
    await store.addInbound(inbound());
    const [c] = await claimLane(store, A, ALICE);
    expect(await store.settleLane('process-b', ALICE, c!.fence, c!.workSeq)).toEqual({ outcome: 'lost' });
    await store.addInbound(inbound());
    const [again] = await claimLane(store, A, ALICE);
    expect(await store.settleLane(A, ALICE, again!.fence + 1, again!.workSeq)).toEqual({ outcome: 'lost' });
  });

  it('forgets what it read for a lane the heartbeat finds taken over', async () => {
    const store = (await postgres.open()) as PgStore;
    const { id } = await store.addInbound(inbound());
    const [c] = await claimLane(store, A, ALICE);
    const other = (await postgres.open(store.db.url)) as PgStore;
    await other.renew(A, 0); // A's claim lapses (as if it had stopped renewing)
    expect(await claimLane(other, 'process-b')).toHaveLength(1);
    expect((await store.renew(A, LONG)).lanes).toEqual([]);
    await doneElsewhere(store, id);
    expect(await store.settleLane(A, ALICE, c!.fence, c!.workSeq)).toEqual({ outcome: 'lost' });
  });
});
