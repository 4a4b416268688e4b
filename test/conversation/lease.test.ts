/** A send that outlives its lease is never sent twice, and a stale claim records nothing, on both engines. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { openStore } from '../../src/store/open.js';
import counterBot from '../fixtures/counter-bot.js';
import { eventually, sleep } from '../support/eventually.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { ENGINES, USER, queueSms, world, type Engine } from './helpers.js';

let sb: RunningSandbox;
const held: (() => void)[] = [];
beforeAll(async () => {
  // Latency faults wait here until the test lets them go (or for real time with `realSleep`).
  sb = await startSandbox({
    port: 0,
    sleep: (ms) =>
      new Promise<void>((r) => {
        if (ms >= 30_000) held.push(r);
        else setTimeout(r, ms);
      }),
  });
});
afterAll(async () => {
  held.forEach((r) => r());
  await sb.close();
});

const smsTo = (user: string) => sb.sandbox.requests.filter((q) => q.endpoint === 'sms' && JSON.stringify(q.body).includes(user));
/** A user of its own for each engine: the sandbox is shared, and its requests are told apart by user. */
const userOn = (engine: Engine, n: string) => `52155000${engine === 'sqlite' ? 7 : 8}${n}`;

describe.each(ENGINES)('on %s', (engine) => {
  describe('send leases', () => {
    it('a send still in flight when its lease would end is kept alive by the heartbeat, not claimed and sent again (real time)', async () => {
      const user = userOn(engine, '001');
      sb.sandbox.faults.latency(2_500, { endpoint: 'sms', times: 1 });
      const { systemClock } = await import('../../src/conversation/clock.js');
      // The send takes two and a half leases; a poll every 100 ms would take any lapsed claim at once.
      const w = await world([counterBot], { engine, sb, clock: systemClock as unknown as ManualClock, work: { leaseMs: 1_000, heartbeatMs: 250 }, pollMs: 100 });
      await w.runtime.receive({ botId: 'counter', user, providerId: `wamid.lease1.${engine}`, source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
      await eventually(async () => expect((await w.rows('SELECT state FROM outbox'))[0]?.['state']).toBe('sent'), { what: 'the slow send recorded', timeoutMs: 10_000 });
      await w.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      expect(await w.rows('SELECT state, attempts, resends, claim FROM outbox')).toEqual([{ state: 'sent', attempts: 1, resends: 0, claim: null }]);
      await w.stop();
    });

    it('a send slower than a short lease is sent once (real time)', async () => {
      const user = userOn(engine, '002');
      sb.sandbox.faults.latency(600, { endpoint: 'sms', times: 1 });
      const { systemClock } = await import('../../src/conversation/clock.js');
      const w = await world([counterBot], { engine, sb, clock: systemClock as unknown as ManualClock, work: { leaseMs: 200 } });
      await w.runtime.receive({ botId: 'counter', user, providerId: `wamid.lease2.${engine}`, source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
      await eventually(async () => expect((await w.rows('SELECT state FROM outbox'))[0]?.['state']).toBe('sent'), { what: 'the slow send recorded' });
      // Whatever a claim could take now (its own lapsed lease included) is taken: still the one send.
      await w.runtime.poke();
      await w.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      expect(await w.rows('SELECT state, attempts, resends FROM outbox')).toEqual([{ state: 'sent', attempts: 1, resends: 0 }]);
      await w.stop();
    });
  });

  describe('send lease length', () => {
    /** How far a lease reaches past the database's clock now. */
    const leaseLeft = async (w: { rows: (sql: string) => Promise<Record<string, unknown>[]> }) => {
      const [row] = await w.rows(`SELECT lease_until FROM outbox WHERE state = 'sending'`);
      const dbNow = engine === 'postgres' ? Number((await w.rows('SELECT (EXTRACT(EPOCH FROM now()) * 1000)::bigint AS t'))[0]!['t']) : Date.now();
      return Number(row!['lease_until']) - dbNow;
    };

    it.each([
      [{}, 10_000, 3_000],
      [{ leaseMs: 4_000, heartbeatMs: 1_000 }, 4_000, 1_000],
    ])('a send in flight holds a short lease (%j) on the database clock, renewed by the heartbeat, so a crash re-sends it within seconds', async (work, lease, beat) => {
      const user = userOn(engine, `1${lease}`);
      const clock = new ManualClock();
      sb.sandbox.faults.latency(90_000, { endpoint: 'sms', times: 1 });
      const w = await world([counterBot], { engine, sb, clock, work });
      await w.runtime.receive({ botId: 'counter', user, providerId: `wamid.leaselen${lease}.${engine}`, source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
      await eventually(() => expect(smsTo(user)).not.toEqual([]), { what: 'the send in flight', intervalMs: 5 });
      const first = await leaseLeft(w);
      expect(first).toBeGreaterThan(lease - 2_000);
      expect(first).toBeLessThanOrEqual(lease);
      const [before] = await w.rows(`SELECT lease_until FROM outbox WHERE state = 'sending'`);
      await sleep(5); // the database's clock moves on
      clock.advance(beat);
      // renewed at the beat: a full lease ahead of the database's clock again
      await eventually(async () => expect(Number((await w.rows(`SELECT lease_until FROM outbox WHERE state = 'sending'`))[0]!['lease_until'])).toBeGreaterThan(Number(before!['lease_until'])), {
        what: 'the lease renewed at the heartbeat',
      });
      held.splice(0).forEach((r) => r());
      await w.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      await w.stop();
    });

    it('refuses a heartbeat that is not shorter than the lease', async () => {
      await expect(world([counterBot], { engine, sb, work: { leaseMs: 1_000, heartbeatMs: 1_000 } })).rejects.toThrow(/heartbeatMs/);
    });
  });

  describe('claim tokens', () => {
    it('a result from a claim that was taken over is not recorded', async () => {
      const store = await openStore(engine === 'postgres' ? await freshDatabaseUrl() : ':memory:');
      const key = { botId: 'counter', user: USER };
      await queueSms(store, key, 'a', 'ft_x', 1000);
      const a = { owner: 'a', leaseMs: 60_000, lapsed: true };
      const b = { owner: 'b', leaseMs: 60_000, lapsed: true };
      const [mine] = await store.claim(a, { kind: 'send', limit: 10, now: 1000 });
      expect(await store.claim(b, { kind: 'send', limit: 10, now: 1000 })).toEqual([]); // a live claim is never taken
      await store.renew('a', 0); // a's claims lapse at once (as if it had died)
      const [theirs] = await store.claim(b, { kind: 'send', limit: 10, now: 1100 });
      expect(mine!.claim).not.toBe(theirs!.claim);
      expect(theirs).toMatchObject({ attempts: 2, resends: 1 });
      expect(await store.settleSend(1, mine!.claim!, { kind: 'sent', record: { state: 'sent', providerId: 'late' } }, 1200)).toBe(false);
      expect(await store.settleSend(1, mine!.claim!, { kind: 'retry', at: 9999, error: 'late' }, 1200)).toBe(false);
      expect(await store.outbound(1)).toMatchObject({ state: 'sending', providerId: null, claim: theirs!.claim, attempts: 2 });
      expect(await store.settleSend(1, theirs!.claim!, { kind: 'sent', record: { state: 'sent', providerId: 'p1' } }, 1200)).toBe(true);
      expect(await store.outbound(1)).toMatchObject({ state: 'sent', providerId: 'p1', claim: null });
      await store.close();
    });
  });
});
