/**
 * What another process hears (`onWork`, PostgreSQL's NOTIFY) of the work contract: work another
 * process adds, a send or an event put back for retry, claims given up with `renew(owner, 0)`
 * (lanes, sends and events), an SMS fallback queued by a failed send, a connector event queued by a
 * turn, a timer fired into the inbox; and what is not announced: an inbound whose lane its receiver
 * took, a store's own work, anything after the listener stopped. Each step waits until the
 * listener has heard one more; what must not be announced is checked against a sentinel NOTIFY sent
 * after it (notifications on one channel arrive in commit order), never after a fixed sleep.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { WORK_CHANNEL } from '../../src/store/postgres/lanes.js';
import type { Claimant, Store } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { execAt, rowsAt } from '../support/rows.js';
import { ALICE, claimLanes, inbound, postgres, T0, text, turn } from './helpers.js';

const WORKER: Claimant = { owner: 'worker-x', leaseMs: 60_000, lapsed: true };

/** A listening store and another process's store on one database; `heard()` resolves once the listener hears one more. */
async function listening(): Promise<{ url: string; actor: Store; count: () => number; heard: () => Promise<void>; stop: () => Promise<void> }> {
  const url = await postgres.fresh();
  const listener = await postgres.open(url);
  const actor = await postgres.open(url);
  let count = 0;
  const stop = await listener.onWork!(() => {
    count++;
  });
  await eventually(() => count >= 1, { what: 'the notification on connecting' });
  let seen = count;
  const heard = async () => {
    await eventually(() => count > seen, { what: 'a work notification' });
    seen = count;
  };
  return { url, actor, count: () => count, heard, stop };
}

const channels: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(channels.splice(0).map((c) => c.end()));
});

/**
 * A plain LISTEN of the test's own on the work channel: it hears every NOTIFY, a store's own
 * included, with its payload. `since()` sends a sentinel NOTIFY from yet another connection, waits
 * for it, and resolves to the payloads heard before it since the last call: everything committed
 * before the sentinel.
 */
async function channel(url: string): Promise<{ since: () => Promise<string[]> }> {
  const c = new pg.Client({ connectionString: url });
  channels.push(c);
  await c.connect();
  const got: string[] = [];
  c.on('notification', (n) => got.push(n.payload ?? ''));
  await c.query(`LISTEN ${WORK_CHANNEL}`);
  let marks = 0;
  const since = async () => {
    const mark = `sentinel-${++marks}`;
    await execAt(url, `SELECT pg_notify('${WORK_CHANNEL}', '${mark}')`);
    await eventually(() => expect(got).toContain(mark), { what: `the sentinel NOTIFY ${mark}` });
    return got.splice(0, got.indexOf(mark) + 1).slice(0, -1);
  };
  return { since };
}

describe('work notifications of the work contract (postgres)', () => {
  it('a retry, claims given up, a fallback, a connector event and a fired timer are announced', async () => {
    const { actor, heard, stop } = await listening();
    try {
      await actor.commitTurn(turn({ outbox: [text('one')], now: T0 }));
      const [row] = await actor.claim(WORKER, { kind: 'send', limit: 1, now: T0 });
      expect(await actor.settleSend(row!.id, row!.claim!, { kind: 'retry', at: T0 + 1_000, error: 'busy' }, T0)).toBe(true);
      await heard(); // put back for retry

      const [again] = await actor.claim(WORKER, { kind: 'send', limit: 1, now: T0 + 1_000 });
      expect(again).toMatchObject({ id: row!.id });
      expect((await actor.renew(WORKER.owner, 0)).lanes).toEqual([]); // no lanes held, but a send given up
      await heard();

      const [third] = await actor.claim(WORKER, { kind: 'send', limit: 1, now: T0 + 1_000 });
      expect(third).toMatchObject({ id: row!.id, resends: 1 });
      const fallback = { ...text('one by sms'), channel: 'sms' as const, request: { to: ALICE.user } };
      expect(await actor.settleSend(third!.id, third!.claim!, { kind: 'failed', follow: { fallback } }, T0 + 2_000)).toBe(true);
      await heard(); // the SMS fallback, for whichever process sends first

      await actor.commitTurn(turn({ conversationId: 1, expectedVersion: 1, handoff: { open: { timeoutMs: 60_000 } }, notifyHandoffs: true, now: T0 + 3_000 }));
      await heard(); // handoff.started, for the connector
      const [event] = await actor.claim(WORKER, { kind: 'event', limit: 1, now: T0 + 3_000 });
      expect(event).toMatchObject({ type: 'handoff.started' });
      expect(await actor.settleEvent(event!.id, event!.claim, { sent: false, error: 'down', retryAt: T0 + 4_000 }, T0 + 3_000)).toBe(true);
      await heard();

      // The handoff's timeout timer falls due: fired into the inbox, its lane gets work.
      expect(await actor.claim(WORKER, { kind: 'timer', limit: 10, now: T0 + 3_000 + 60_000 })).toEqual([ALICE]);
      await heard();
    } finally {
      await stop();
    }
  });
});

describe('work notifications of lanes (postgres)', () => {
  const A = 'process-a';
  const B = 'process-b';
  const C = 'process-c';
  const LONG = 60_000;

  it('a process LISTENing hears work another process adds, and lanes another gives up; nothing once it stopped', async () => {
    const { url, actor: other, count, heard, stop } = await listening();
    const before = count();
    await other.addInbound(inbound());
    await heard();
    expect(count()).toBe(before + 1);
    await claimLanes(other, B);
    await other.renew(B, 0);
    await heard();
    expect(count()).toBe(before + 2);
    await stop();
    // Its connection is gone (the only LISTENing one on this database): nothing can reach the listener any more.
    const listeners = `SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'colloquy-listen'`;
    await eventually(async () => expect(await rowsAt(url, listeners)).toEqual([{ n: 0 }]), { what: 'the stopped listener to disconnect' });
    const ch = await channel(url);
    await other.addInbound(inbound({ providerId: 'wamid.after-stop' }));
    expect(await ch.since()).toHaveLength(1); // announced, to whoever still listens
    expect(count()).toBe(before + 2);
  });

  it('an inbound whose lane its receiver took is not announced; one whose lane another process holds is', async () => {
    const url = await postgres.fresh();
    const ch = await channel(url);
    const listening = await postgres.open(url);
    const other = await postgres.open(url);
    const taken = await other.addInbound(inbound({ providerId: 'wamid.taken' }), { owner: B, leaseMs: LONG, lapsed: true });
    expect(taken.claim).toBeDefined();
    expect(await ch.since()).toEqual([]); // B drains it; nobody else could
    // Held by B: A's inbound for the same conversation goes to B, who must hear of it.
    const held = await listening.addInbound(inbound({ providerId: 'wamid.held' }), { owner: A, leaseMs: LONG, lapsed: true });
    expect(held.claim).toBeUndefined();
    expect(await ch.since()).toHaveLength(1);
    const third = await postgres.open(url);
    let heardByB = 0;
    const stopB = await other.onWork!(() => {
      heardByB++;
    });
    await eventually(() => heardByB >= 1, { what: 'the notification on connecting' });
    const beforeB = heardByB;
    await third.addInbound(inbound({ providerId: 'wamid.held-too' }), { owner: C, leaseMs: LONG, lapsed: true });
    await eventually(() => expect(heardByB).toBe(beforeB + 1), { what: "B to hear of C's inbound" });
    await stopB();
  });

  it("a process does not hear the work it added itself (it acts on that already), only the others'", async () => {
    const url = await postgres.fresh();
    const ch = await channel(url);
    const store = await postgres.open(url);
    const other = await postgres.open(url);
    let heard = 0;
    const stop = await store.onWork!(() => {
      heard++;
    });
    await eventually(() => heard >= 1, { what: 'the notification on connecting' });
    const before = heard;
    await store.addInbound(inbound({ providerId: 'wamid.own' }));
    await claimLanes(store, A);
    await store.renew(A, 0);
    // Announced on the channel by the store's own connections; the sentinel, sent after them, is the first its listener hears.
    expect(await ch.since()).toHaveLength(2);
    await eventually(() => heard > before, { what: 'the sentinel NOTIFY' });
    expect(heard).toBe(before + 1);
    await other.addInbound(inbound({ providerId: 'wamid.other' }));
    await eventually(() => heard > before + 1, { what: "the other process's work" });
    expect(heard).toBe(before + 2);
    await stop();
  });
});
