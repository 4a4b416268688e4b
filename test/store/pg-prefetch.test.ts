/** A lane claim by key reads what the lane's next step reads; the store answers that step from it, once. */
import { describe, expect, it } from 'vitest';
import type { PgStore } from '../../src/store/postgres/store.js';
import { ALICE, inbound, postgres, turn } from './helpers.js';

const A = 'process-a';
const LONG = 60_000;

/** Marks an inbound done behind the store's back (another connection), as another writer would. */
const doneElsewhere = async (store: PgStore, id: number) => store.db.pool.query(`UPDATE inbox SET state = 'done' WHERE id = $1`, [id]);

describe('what a claim reads for the next step (postgres)', () => {
  it('answers the next inbound and the active conversation from the claim, once each', async () => {
    const store = (await postgres.open()) as PgStore;
    const first = await store.addInbound(inbound());
    await store.commitTurn(turn({ inboxId: first.id }));
    const second = await store.addInbound(inbound());
    const [claim] = await store.claimLanes(A, { leaseMs: LONG, key: ALICE });
    expect(claim).toMatchObject({ key: ALICE, workSeq: 2 });
    const conv = await store.activeConversation(ALICE);
    // Changed behind the store's back after the claim: the claim's reading is answered once, then the database's.
    await doneElsewhere(store, second.id);
    await store.db.pool.query(`UPDATE conversations SET state = 'elsewhere' WHERE id = $1`, [conv!.id]);
    expect((await store.nextInbound(ALICE))?.id).toBe(second.id);
    expect(await store.nextInbound(ALICE)).toBeUndefined();
    expect((await store.activeConversation(ALICE))?.state).toBe('elsewhere');
    expect(conv).toMatchObject({ id: 1, botId: ALICE.botId, user: ALICE.user, status: 'active', version: 1, state: 'menu' });
  });

  it('keeps the conversation the claim read, including none', async () => {
    const store = (await postgres.open()) as PgStore;
    await store.addInbound(inbound());
    await store.claimLanes(A, { leaseMs: LONG, key: ALICE });
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
    await store.claimLanes(A, { leaseMs: LONG, key: ALICE });
    const later = await store.addInbound(inbound());
    expect((await store.nextInbound(ALICE))?.id).toBe(later.id);
  });

  it('forgets what it read when the store itself changes it: a commit, a failed or skipped inbound, a release', async () => {
    const store = (await postgres.open()) as PgStore;
    const a = await store.addInbound(inbound());
    const [c] = await store.claimLanes(A, { leaseMs: LONG, key: ALICE });
    await store.commitTurn(turn({ inboxId: a.id }));
    expect(await store.nextInbound(ALICE)).toBeUndefined();
    expect(await store.activeConversation(ALICE)).toMatchObject({ status: 'active' });

    const b = await store.addInbound(inbound());
    expect(await store.releaseLane(A, ALICE, c!.fence, c!.workSeq)).toEqual({ outcome: 'more', workSeq: 2 });
    await store.claimLanes(A, { leaseMs: LONG, key: ALICE });
    await store.failInbound(b.id, 'broken', 1);
    expect(await store.nextInbound(ALICE)).toBeUndefined();

    const d = await store.addInbound(inbound());
    await store.claimLanes(A, { leaseMs: LONG, key: ALICE });
    await store.skipInbound(d.id, 'nothing to run', 1);
    expect(await store.nextInbound(ALICE)).toBeUndefined();

    const e = await store.addInbound(inbound());
    const [again] = await store.claimLanes(A, { leaseMs: LONG, key: ALICE });
    expect(await store.releaseLane(A, ALICE, again!.fence, again!.workSeq - 1)).toEqual({ outcome: 'more', workSeq: again!.workSeq });
    await doneElsewhere(store, e.id);
    expect(await store.nextInbound(ALICE)).toBeUndefined();
  });

  it('forgets what it read for a lane the heartbeat finds taken over', async () => {
    const store = (await postgres.open()) as PgStore;
    const { id } = await store.addInbound(inbound());
    await store.claimLanes(A, { leaseMs: 1, key: ALICE });
    await new Promise((r) => setTimeout(r, 20));
    expect(await store.claimLanes('process-b', { leaseMs: LONG })).toHaveLength(1); // A's lease ran out
    expect(await store.renewLanes(A, LONG)).toEqual([]);
    await doneElsewhere(store, id);
    expect(await store.nextInbound(ALICE)).toBeUndefined();
  });
});
