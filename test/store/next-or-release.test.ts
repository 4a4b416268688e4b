/**
 * A drained lane's last look and its release in one call (`Store.settleLane`, PostgreSQL): its
 * outcomes when work arrives while the call waits for the lane's row lock, when the lane was
 * lost, and for calls that share a statement (the batched form).
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { ConversationKey, Store } from '../../src/store/types.js';
import { ALICE, BOB, T0, inbound, postgres } from './helpers.js';
import { blockedOnLock } from '../support/postgres.js';

const A = 'process-a';
const B = 'process-b';
const LONG = 60_000;
const who = (owner: string) => ({ owner, leaseMs: LONG, lapsed: true });

/** Claims lanes as `owner`: by key, or those with work. */
const claimLanes = (store: Store, owner: string, key?: ConversationKey) => store.claim(who(owner), { kind: 'lane', limit: 10, now: T0, key });

/** The oldest pending inbound of a conversation, read with plain SQL. */
async function pendingOf(url: string, key: ConversationKey): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(`SELECT id FROM inbox WHERE bot_id = $1 AND user_number = $2 AND state = 'pending' ORDER BY id LIMIT 1`, [key.botId, key.user]);
    return Number(rows[0]!['id']);
  } finally {
    await c.end();
  }
}

function nextOrRelease(store: Store): Store['settleLane'] {
  return store.settleLane.bind(store);
}

describe('next inbound or release, in one call (postgres)', () => {
  it('returns the oldest pending inbound and keeps the lane; releases it once none is pending', async () => {
    const url = await postgres.fresh();
    const store = await postgres.open(url);
    const call = nextOrRelease(store);
    const first = await store.addInbound(inbound({ providerId: 'wamid.1' }));
    await store.addInbound(inbound({ providerId: 'wamid.2' }));
    const [c] = await claimLanes(store, A, ALICE);
    expect(c).toMatchObject({ fence: 1, workSeq: 2 });
    // The claim read the inbound already: answered without the database, and the lane stays held.
    expect(await call(A, ALICE, 1, 2)).toMatchObject({ outcome: 'next', inbound: { id: first.id, providerId: 'wamid.1', state: 'pending' } });
    await store.skipInbound(first.id, 'done', T0);
    expect(await call(A, ALICE, 1, 2)).toMatchObject({ outcome: 'next', inbound: { providerId: 'wamid.2' } });
    expect(await claimLanes(store, B, ALICE)).toEqual([]);
    await store.skipInbound(await pendingOf(url, ALICE), 'done', T0);
    expect(await call(A, ALICE, 1, 2)).toEqual({ outcome: 'released' });
    expect(await claimLanes(store, B)).toEqual([]); // released, and no work left
    await store.addInbound(inbound({ providerId: 'wamid.3' }));
    expect(await claimLanes(store, B)).toEqual([{ key: ALICE, fence: 2, workSeq: 3, takeover: false }]);
  });

  it('does not release when work was counted since the owner looked, nor a lane another owner took', async () => {
    const store = await postgres.open();
    const call = nextOrRelease(store);
    const one = await store.addInbound(inbound({ providerId: 'wamid.1' }));
    const [c] = await claimLanes(store, A);
    await store.skipInbound(one.id, 'done', T0);
    const two = await store.addInbound(inbound({ providerId: 'wamid.2' }));
    await store.skipInbound(two.id, 'done', T0);
    expect(await call(A, ALICE, c!.fence, c!.workSeq)).toEqual({ outcome: 'more', workSeq: 2 });
    await store.renew(A, 0); // A's claim lapses
    await store.addInbound(inbound({ providerId: 'wamid.3' }));
    expect(await claimLanes(store, B)).toMatchObject([{ key: ALICE, takeover: true }]);
    expect(await call(A, ALICE, c!.fence, 3)).toEqual({ outcome: 'lost' });
  });

  it('an inbound committed while the call waits for the lane is not stranded: the lane stays held', async () => {
    const url = await postgres.fresh();
    const store = await postgres.open(url);
    const call = nextOrRelease(store);
    const one = await store.addInbound(inbound({ providerId: 'wamid.1' }));
    const [c] = await claimLanes(store, A, ALICE);
    await store.skipInbound(one.id, 'done', T0); // also drops what the claim read of it
    // Another process stores an inbound: it holds the lane's row until it commits.
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('UPDATE lanes SET work_seq = work_seq + 1 WHERE bot_id = $1 AND user_number = $2', [ALICE.botId, ALICE.user]);
      await other.query(`INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at) VALUES ('wamid.2', $1, $2, 'whatsapp', '{"type":"text","text":"hi"}', NULL, $3)`, [
        ALICE.botId,
        ALICE.user,
        T0,
      ]);
      const pending = call(A, ALICE, c!.fence, 1);
      await blockedOnLock(url); // the call's statement is now waiting for the row lock
      await other.query('COMMIT');
      expect(await pending).toEqual({ outcome: 'more', workSeq: 2 });
    } finally {
      await other.end();
    }
    expect(await call(A, ALICE, c!.fence, 2)).toMatchObject({ outcome: 'next', inbound: { providerId: 'wamid.2' } });
    expect(await claimLanes(store, B, ALICE)).toEqual([]);
  });

  it('calls that arrive together each get their own outcome', async () => {
    const url = await postgres.fresh();
    const store = await postgres.open(url);
    const call = nextOrRelease(store);
    const keys = [ALICE, BOB, { botId: 'pizza', user: '+4915100000003' }];
    for (const k of keys) await store.addInbound(inbound({ ...k }));
    const claims = (await Promise.all(keys.map((k) => claimLanes(store, A, k)))).map((x) => x[0]!);
    // Finish ALICE's and BOB's work (which also drops what their claims read); the third's stays pending.
    for (const k of keys.slice(0, 2)) await store.skipInbound(await pendingOf(url, k), 'done', T0);
    await store.renew(A, LONG); // a heartbeat keeps what was read for the lanes still held
    const out = await Promise.all([call(A, ALICE, claims[0]!.fence, 1), call(B, BOB, claims[1]!.fence, 1), call(A, keys[2]!, claims[2]!.fence, 1)]);
    expect(out).toMatchObject([{ outcome: 'released' }, { outcome: 'lost' }, { outcome: 'next', inbound: { user: keys[2]!.user } }]);
    expect(await claimLanes(store, B, BOB)).toEqual([]); // still A's
  });
});
