/**
 * The work contract on every engine (`Store.claim`, `renew`, `nextDue`, `settleLane`, `settleSend`,
 * `settleEvent`): one claimant per item, lapsed claims taken only when asked for, the heartbeat
 * by owner, settles guarded by their claim. Claims lapse here through `renew(owner, 0)`, never a
 * sleep. Ordering through retries and lapses is in work-order.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Claimant, ConversationKey, Store } from '../../src/store/types.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { rowsAt } from '../support/rows.js';
import { ALICE, BOB, DIALECTS, T0, allInbound, inbound, text, turn } from './helpers.js';

const LONG = 60_000;
const A: Claimant = { owner: 'process-a', leaseMs: LONG, lapsed: true };
const B: Claimant = { owner: 'process-b', leaseMs: LONG, lapsed: true };
const C: Claimant = { owner: 'process-c', leaseMs: LONG, lapsed: true };
const CAREFUL: Claimant = { ...C, lapsed: false };
const OPEN = { open: { timeoutMs: 600_000 } } as const;
const FAR = T0 + 365 * 86_400_000;

/** A conversation with a consumed inbound (its lane has work), `sends` outbox rows, a handoff (one connector event) and a timer due at T0. */
async function seed(store: Store, key: ConversationKey, sends = 1): Promise<{ conversationId: number; outboxIds: readonly number[] }> {
  const { id } = await store.addInbound(inbound({ ...key }));
  const outbox = Array.from({ length: sends }, (_, i) => text(`${key.user} ${i}`));
  const timers = { upsert: [{ key: 'nudge', stateNode: null, event: { type: 'nudge' }, fireAt: T0 }], remove: [], activeStateNodes: [] };
  return store.commitTurn(turn({ key, inboxId: id, outbox, timers, handoff: OPEN, notifyHandoffs: true }));
}

const user = (n: number): ConversationKey => ({ botId: 'pizza', user: `+4915200${String(n).padStart(5, '0')}` });

describe.each(DIALECTS)('the work contract ($name)', ({ open, fresh }) => {
  it('never hands one item of any kind to two claimants racing on separate connections', async () => {
    const location = await fresh();
    const [a, b] = [await open(location), await open(location)];
    const taken = { lane: [] as string[], send: [] as number[], event: [] as number[], timer: [] as string[] };
    let n = 0;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 6; i++) await seed(a, user(n++));
      const race = async <T>(claim: (s: Store, who: Claimant) => Promise<T[]>, into: T[]) => {
        for (;;) {
          const [x, y] = await Promise.all([claim(a, A), claim(b, B)]);
          if (x.length + y.length === 0) return;
          into.push(...x, ...y);
        }
      };
      await race(async (s, who) => (await s.claim(who, { kind: 'lane', limit: 2, now: T0 })).map((l) => l.key.user), taken.lane);
      await race(async (s, who) => (await s.claim(who, { kind: 'send', limit: 2, now: T0 })).map((o) => o.id), taken.send);
      await race(async (s, who) => (await s.claim(who, { kind: 'event', limit: 2, now: T0 })).map((e) => e.id), taken.event);
      await race(async (s, who) => (await s.claim(who, { kind: 'timer', limit: 2, now: T0 })).map((k) => k.user), taken.timer);
    }
    for (const ids of Object.values(taken)) {
      expect(ids).toHaveLength(n);
      expect(new Set<unknown>(ids).size).toBe(n);
    }
  });

  it('inbounds of one conversation stored at once through two connections, each with a claim: one owner gets the lane', async () => {
    const location = await fresh();
    const [a, b] = [await open(location), await open(location)];
    for (let round = 0; round < 12; round++) {
      const key = user(round);
      const [x, y] = await Promise.all([a.addInbound(inbound({ ...key }), A), b.addInbound(inbound({ ...key }), B)]);
      expect([x.claim, y.claim].filter((c) => c !== undefined)).toEqual([{ key, fence: 1, workSeq: expect.any(Number), takeover: false }]);
    }
  });

  it('hands out at most `limit` items, sends and events in id order', async () => {
    const store = await open();
    await seed(store, ALICE);
    await seed(store, BOB);
    await seed(store, user(1));
    const sends = await store.claim(A, { kind: 'send', limit: 2, now: T0 });
    expect(sends.map((o) => o.id)).toEqual([1, 2]);
    expect(sends[0]).toMatchObject({ state: 'sending', attempts: 1, resends: 0 });
    expect(sends[0]!.claim).not.toBe(sends[1]!.claim);
    expect((await store.claim(A, { kind: 'event', limit: 2, now: T0 })).map((e) => e.id)).toEqual([1, 2]);
    expect(await store.claim(A, { kind: 'lane', limit: 2, now: T0 })).toHaveLength(2);
    expect(await store.claim(A, { kind: 'timer', limit: 2, now: T0 })).toEqual([ALICE, BOB]);
    expect(await store.claim(A, { kind: 'send', limit: 0, now: T0 })).toEqual([]);
    for (const limit of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(store.claim(A, { kind: 'lane', limit, now: T0 })).rejects.toThrow(/limit is a whole number/);
    }
  });

  it('takes a lapsed claim only when asked, a send with one more resend and attempt', async () => {
    const store = await open();
    const { outboxIds } = await seed(store, ALICE);
    const [first] = await store.claim(A, { kind: 'send', limit: 10, now: T0 });
    const [event] = await store.claim(A, { kind: 'event', limit: 10, now: T0 });
    const [lane] = await store.claim(A, { kind: 'lane', limit: 10, now: T0 });
    expect(lane).toEqual({ key: ALICE, fence: 1, workSeq: 1, takeover: false });
    // Live: nobody takes them, not even their own owner a second time (a lane by key excepted).
    for (const who of [A, B]) {
      expect(await store.claim(who, { kind: 'send', limit: 10, now: FAR })).toEqual([]);
      expect(await store.claim(who, { kind: 'event', limit: 10, now: FAR })).toEqual([]);
      expect(await store.claim(who, { kind: 'lane', limit: 10, now: FAR })).toEqual([]);
    }
    expect(await store.claim(B, { kind: 'lane', limit: 10, now: T0, key: ALICE })).toEqual([]);
    expect(await store.claim(A, { kind: 'lane', limit: 10, now: T0, key: ALICE })).toEqual([lane]);

    expect((await store.renew(A.owner, 0)).lanes).toEqual([{ key: ALICE, fence: 1, workSeq: 1 }]); // given up: lapsed now
    for (const kind of ['send', 'event', 'lane'] as const) expect(await store.claim(CAREFUL, { kind, limit: 10, now: T0 })).toEqual([]);
    expect(await store.claim(CAREFUL, { kind: 'lane', limit: 10, now: T0, key: ALICE })).toEqual([]);

    const [again] = await store.claim(B, { kind: 'send', limit: 10, now: T0 });
    expect(again).toMatchObject({ id: outboxIds[0], state: 'sending', attempts: 2, resends: 1 });
    expect(again!.claim).not.toBe(first!.claim);
    const [event2] = await store.claim(B, { kind: 'event', limit: 10, now: T0 });
    expect(event2).toMatchObject({ id: event!.id, attempts: 2 });
    expect(event2!.claim).not.toBe(event!.claim);
    expect(await store.claim(B, { kind: 'lane', limit: 10, now: T0 })).toEqual([{ key: ALICE, fence: 2, workSeq: 1, takeover: true }]);
  });

  it('renew extends every claim of its owner and nothing of another', async () => {
    const location = await fresh();
    const store = await open(location);
    await seed(store, ALICE);
    await seed(store, BOB);
    for (const [who, key] of [
      [A, ALICE],
      [B, BOB],
    ] as const) {
      expect(await store.claim(who, { kind: 'lane', limit: 1, now: T0, key })).toHaveLength(1);
      expect(await store.claim(who, { kind: 'send', limit: 1, now: T0 })).toMatchObject([key]);
      expect(await store.claim(who, { kind: 'event', limit: 1, now: T0 })).toHaveLength(1);
    }
    await store.renew(A.owner, 0);
    await store.renew(B.owner, 0);
    const held = await store.renew(A.owner, LONG);
    expect(held.lanes).toEqual([{ key: ALICE, fence: 1, workSeq: 1 }]);
    expect(held.sends).toHaveLength(1); // A's send and event, with their claims
    expect(held.events).toHaveLength(1);
    expect(held.sends[0]!.claim).toEqual(expect.any(String));
    // A's claims live again, B's still lapsed: a claimant of lapsed work gets exactly B's.
    expect((await store.claim(C, { kind: 'lane', limit: 10, now: T0 })).map((l) => l.key)).toEqual([BOB]);
    expect(await store.claim(C, { kind: 'send', limit: 10, now: T0 })).toMatchObject([BOB]);
    expect(await store.claim(C, { kind: 'event', limit: 10, now: T0 })).toHaveLength(1);
    const owners = async (table: string) => (await rowsAt(location, `SELECT owner FROM ${table} WHERE owner IS NOT NULL ORDER BY owner`)).map((r) => r['owner']);
    for (const table of ['lanes', 'outbox', 'handoff_events']) expect(await owners(table)).toEqual([A.owner, C.owner]);
  });

  it('records a settle only while its claim holds the row', async () => {
    const store = await open();
    await seed(store, ALICE, 2);
    const [stale] = await store.claim(A, { kind: 'send', limit: 10, now: T0 });
    await store.renew(A.owner, 0);
    const [fresh] = await store.claim(B, { kind: 'send', limit: 10, now: T0 });
    const before = await store.outbound(stale!.id);
    expect(await store.settleSend(stale!.id, stale!.claim!, { kind: 'sent', record: { state: 'sent', providerId: 'wamid.stale' } }, T0)).toBe(false);
    expect(await store.settleSend(stale!.id, stale!.claim!, { kind: 'retry', at: T0, error: 'late' }, T0)).toBe(false);
    expect(await store.settleSend(stale!.id, stale!.claim!, { kind: 'failed', follow: { channel: 'sms', inbound: inbound({ providerId: 'delivery:x' }) } }, T0)).toBe(false);
    expect(await store.outbound(stale!.id)).toEqual(before);
    expect(await allInbound(store)).toHaveLength(1); // the follow-up's inbound was not added
    expect(await store.settleSend(fresh!.id, fresh!.claim!, { kind: 'sent', record: { state: 'sent', providerId: 'wamid.ok', httpStatus: 200 } }, T0 + 5)).toBe(true);
    expect(await store.outbound(fresh!.id)).toMatchObject({ state: 'sent', providerId: 'wamid.ok', claim: null, sentAt: T0 + 5, resends: 1 });
    expect(await store.settleSend(fresh!.id, fresh!.claim!, { kind: 'retry', at: T0, error: 'twice' }, T0)).toBe(false); // settled already

    const [e1] = await store.claim(A, { kind: 'event', limit: 10, now: T0 });
    await store.renew(A.owner, 0);
    const [e2] = await store.claim(B, { kind: 'event', limit: 10, now: T0 });
    expect(await store.settleEvent(e1!.id, e1!.claim, { sent: true }, T0)).toBe(false);
    expect(await store.settleEvent(e2!.id, e2!.claim, { sent: false, error: 'down', retryAt: T0 + 10 }, T0)).toBe(true);
    expect(await store.settleEvent(e2!.id, e2!.claim, { sent: true }, T0)).toBe(false);
  });

  it('a failed send records its failure and what follows in one settle; failOutbound adds follow-ups once', async () => {
    const store = await open();
    const { conversationId } = await seed(store, ALICE, 2);
    const [o] = await store.claim(A, { kind: 'send', limit: 10, now: T0 });
    const fallback = text('by sms', { channel: 'sms', kind: 'sms' });
    const follow = { fallback, channel: 'sms' as const };
    expect(await store.settleSend(o!.id, o!.claim!, { kind: 'failed', record: { state: 'failed', httpStatus: 400, error: 'bad' }, follow }, T0)).toBe(true);
    expect(await store.outbound(o!.id)).toMatchObject({ state: 'failed', httpStatus: 400, error: 'bad', claim: null });
    expect(await store.conversation(conversationId)).toMatchObject({ channel: 'sms' });
    // The fallback goes right after the row it stands in for, before the conversation's second row.
    const [next] = await store.claim(A, { kind: 'send', limit: 10, now: T0 });
    expect(next).toMatchObject({ fallbackOf: o!.id, kind: 'sms' });
    expect(await store.settleSend(next!.id, next!.claim!, { kind: 'sent', record: { state: 'sent', providerId: 'sms.1' } }, T0)).toBe(true);
    // A sent row the provider later reports failed: follow-ups only, and only once.
    const sent = (await store.outbound(next!.id))!;
    const delivery = inbound({ providerId: `delivery:${sent.id}`, source: 'delivery', event: { type: 'delivery.failed' } });
    expect(await store.failOutbound(sent.id, T0, { inbound: delivery })).toBe(true);
    expect(await store.failOutbound(sent.id, T0, { inbound: delivery })).toBe(true);
    expect(await store.outbound(sent.id)).toMatchObject({ state: 'sent' });
    expect(await store.claim(B, { kind: 'lane', limit: 10, now: T0 })).toEqual([{ key: ALICE, fence: 1, workSeq: 2, takeover: false }]);
    expect(await store.failOutbound(9999, T0, { inbound: delivery })).toBe(false);
  });

  it('a claim with a `now` far ahead still honours a live claim: leases are on the database clock', async () => {
    const store = await open();
    await seed(store, ALICE);
    const short: Claimant = { ...A, leaseMs: 1 };
    expect(await store.claim(short, { kind: 'send', limit: 10, now: T0 })).toHaveLength(1);
    await store.renew(short.owner, LONG);
    expect(await store.claim(B, { kind: 'send', limit: 10, now: FAR })).toEqual([]);
    expect(await store.claim(B, { kind: 'lane', limit: 10, now: FAR })).toHaveLength(1);
    expect(await store.claim(C, { kind: 'lane', limit: 10, now: FAR })).toEqual([]);
  });
});

describe('the work contract (sqlite): the lease clock', () => {
  it('compares leases with the store clock, not the `now` a claim passes', async () => {
    let clock = 5_000;
    const store = openSqliteStore({ path: ':memory:', now: () => clock, checkpoint: false });
    try {
      await seed(store, ALICE);
      for (const kind of ['lane', 'send', 'event'] as const) expect(await store.claim({ ...A, leaseMs: 100 }, { kind, limit: 10, now: T0 })).toHaveLength(1);
      expect(await rowsOf(store, 'SELECT lease_until FROM outbox WHERE owner IS NOT NULL')).toEqual([{ lease_until: 5_100 }]);
      clock = 5_099;
      for (const kind of ['lane', 'send', 'event'] as const) expect(await store.claim(B, { kind, limit: 10, now: FAR })).toEqual([]);
      await store.renew(A.owner, 1_000); // until 6_099
      clock = 6_000;
      for (const kind of ['lane', 'send', 'event'] as const) expect(await store.claim(B, { kind, limit: 10, now: 0 })).toEqual([]);
      clock = 6_099;
      expect(await store.claim(B, { kind: 'send', limit: 10, now: T0 })).toMatchObject([{ resends: 1, attempts: 2 }]);
      expect(await store.claim(B, { kind: 'event', limit: 10, now: T0 })).toHaveLength(1);
      expect(await store.claim(B, { kind: 'lane', limit: 10, now: T0 })).toMatchObject([{ takeover: true, fence: 2 }]);
      // Due times are the caller's clock: a timer due at T0 waits for a `now` that reaches it.
      expect(await store.claim(B, { kind: 'timer', limit: 10, now: T0 - 1 })).toEqual([]);
      expect(await store.claim(B, { kind: 'timer', limit: 10, now: T0 })).toEqual([ALICE]);
    } finally {
      await store.close();
    }
  });
});

async function rowsOf(store: SqliteStore, sql: string): Promise<unknown[]> {
  return store.db.prepare(sql).all();
}
