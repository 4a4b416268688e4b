/**
 * Storing an inbound and claiming its lane in one statement (`Store.addInbound` with a claim,
 * PostgreSQL): the claim is granted as a claim by key would be, never from a live owner; the turn's
 * next inbound is right even when another writer's inbound got in between the statement's snapshot
 * and its lock; calls that share a statement each get their own answer.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { ALICE, BOB, T0, inbound, postgres } from './helpers.js';
import { blockedOnLock } from '../support/postgres.js';

const A = { owner: 'process-a', leaseMs: 60_000, lapsed: true };
const B = { owner: 'process-b', leaseMs: 60_000, lapsed: true };
const nextOf = (store: Store, owner: string, fence: number, seen: number) => store.settleLane(owner, ALICE, fence, seen);

describe('an inbound that claims its lane (postgres)', () => {
  it('claims a free lane for its owner, with the inbound as the turn’s next; another owner gets no claim', async () => {
    const store = await postgres.open();
    const r = await store.addInbound(inbound({ providerId: 'wamid.1' }), A);
    expect(r).toMatchObject({ duplicate: false, claim: { key: ALICE, fence: 1, workSeq: 1, takeover: false } });
    expect(await store.claim(B, { kind: 'lane', limit: 1, now: T0, key: ALICE })).toEqual([]);
    const b = await store.addInbound(inbound({ providerId: 'wamid.2' }), B);
    expect(b).toMatchObject({ duplicate: false });
    expect(b.claim).toBeUndefined();
    // The lane stays A's, its work counted: A's look finds the first inbound, then the second.
    expect(await nextOf(store, A.owner, 1, 2)).toMatchObject({ outcome: 'next', inbound: { id: r.id } });
    await store.skipInbound(r.id, 'done', T0);
    expect(await nextOf(store, A.owner, 1, 2)).toMatchObject({ outcome: 'next', inbound: { id: b.id } });
    // A redelivery is a duplicate and claims nothing.
    expect(await store.addInbound(inbound({ providerId: 'wamid.1' }), B)).toEqual({ id: r.id, duplicate: true, claim: undefined });
  });

  it('its own lane again: the same fence; a lapsed claim: taken over with a new one, only by a claimant that takes lapsed claims', async () => {
    const store = await postgres.open();
    await store.addInbound(inbound(), A);
    expect((await store.addInbound(inbound(), A)).claim).toEqual({ key: ALICE, fence: 1, workSeq: 2, takeover: false });
    await store.renew(A.owner, 0); // A stops renewing: its claim lapses now
    const cautious = await store.addInbound(inbound(), { ...B, lapsed: false });
    expect(cautious.claim).toBeUndefined();
    expect((await store.addInbound(inbound(), B)).claim).toEqual({ key: ALICE, fence: 2, workSeq: 4, takeover: true });
    expect((await store.renew(A.owner, A.leaseMs)).lanes).toEqual([]);
    expect((await store.renew(B.owner, B.leaseMs)).lanes).toEqual([{ key: ALICE, fence: 2, workSeq: 4 }]);
  });

  it('never takes a live claim of another owner, whatever the caller’s clock says', async () => {
    const store = await postgres.open();
    await store.addInbound(inbound(), A);
    const late = await store.addInbound({ ...inbound(), receivedAt: T0 + 10 * 365 * 86_400_000 }, B);
    expect(late.claim).toBeUndefined();
    expect(await store.claim(B, { kind: 'lane', limit: 5, now: T0 + 10 * 365 * 86_400_000 })).toEqual([]);
    expect(await store.claim(B, { kind: 'lane', limit: 1, now: T0 + 10 * 365 * 86_400_000, key: ALICE })).toEqual([]);
  });

  it('an older inbound committed between its snapshot and its lock is the turn’s next, not its own', async () => {
    const url = await postgres.fresh();
    const store = await postgres.open(url);
    await store.addInbound(inbound({ providerId: 'wamid.0', ...BOB })); // the lanes table has a row, the statement is prepared
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    let mine: Awaited<ReturnType<Store['addInbound']>>;
    try {
      // Another process stores an inbound of the same conversation: it holds the lane's row until it commits.
      await other.query('BEGIN');
      await other.query('INSERT INTO lanes (bot_id, user_number, work_seq) VALUES ($1, $2, 1)', [ALICE.botId, ALICE.user]);
      await other.query(`INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at) VALUES ('wamid.1', $1, $2, 'whatsapp', '{"type":"text","text":"first"}', NULL, $3)`, [
        ALICE.botId,
        ALICE.user,
        T0,
      ]);
      const pending = store.addInbound(inbound({ providerId: 'wamid.2' }), A);
      await blockedOnLock(url); // the statement has its snapshot and waits for the lane's row
      await other.query('COMMIT');
      mine = await pending;
    } finally {
      await other.end();
    }
    expect(mine.claim).toMatchObject({ key: ALICE, fence: 1, workSeq: 2 });
    expect(await nextOf(store, A.owner, 1, 2)).toMatchObject({ outcome: 'next', inbound: { providerId: 'wamid.1' } });
  });

  it('inbounds stored together: each its own id and claim, a lane counting its new work once per inbound', async () => {
    const store = await postgres.open();
    const out = await Promise.all([
      store.addInbound(inbound({ providerId: 'wamid.a1' }), A),
      store.addInbound(inbound({ providerId: 'wamid.a2' }), A),
      store.addInbound(inbound({ providerId: 'wamid.b1', ...BOB }), A),
    ]);
    expect(new Set(out.map((o) => o.id)).size).toBe(3);
    expect(out.map((o) => o.claim)).toEqual([
      { key: ALICE, fence: 1, workSeq: 2, takeover: false },
      { key: ALICE, fence: 1, workSeq: 2, takeover: false },
      { key: BOB, fence: 1, workSeq: 1, takeover: false },
    ]);
    expect(await nextOf(store, A.owner, 1, 2)).toMatchObject({ outcome: 'next', inbound: { providerId: 'wamid.a1' } });
  });
});
