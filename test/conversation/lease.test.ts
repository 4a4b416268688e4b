/** A send that outlives its lease is never sent twice, and a stale claim records nothing, on both engines. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { openStore } from '../../src/store/open.js';
import counterBot from '../fixtures/counter-bot.js';
import { eventually } from '../support/eventually.js';
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
    it('a send still in flight when its lease would end is kept alive, not claimed and sent again', async () => {
      const user = userOn(engine, '001');
      const clock = new ManualClock();
      sb.sandbox.faults.latency(90_000, { endpoint: 'sms', times: 1 });
      const w = await world([counterBot], { engine, sb, clock });
      await w.runtime.receive({ botId: 'counter', user, providerId: `wamid.lease1.${engine}`, source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
      while (smsTo(user).length === 0) await new Promise((r) => setTimeout(r, 5));
      for (let i = 0; i < 40; i++) {
        // two minutes in 3 s steps (under the 10 s lease), letting each lease renewal land
        clock.advance(3_000);
        await new Promise((r) => setTimeout(r, 10));
        await w.runtime.poke();
      }
      expect(smsTo(user)).toHaveLength(1);
      held.splice(0).forEach((r) => r());
      await w.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      expect(await w.rows('SELECT state, attempts, claim FROM outbox')).toEqual([{ state: 'sent', attempts: 1, claim: null }]);
      await w.stop();
    });

    it('a send slower than a short lease is sent once (real time)', async () => {
      const user = userOn(engine, '002');
      sb.sandbox.faults.latency(600, { endpoint: 'sms', times: 1 });
      const { systemClock } = await import('../../src/conversation/clock.js');
      const w = await world([counterBot], { engine, sb, clock: systemClock as unknown as ManualClock, dispatcher: { leaseMs: 200 } });
      await w.runtime.receive({ botId: 'counter', user, providerId: `wamid.lease2.${engine}`, source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
      while ((await w.rows('SELECT state FROM outbox'))[0]?.['state'] !== 'sent') await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300)); // past another lease: nothing more goes out
      await w.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      await w.stop();
    });
  });

  describe('send lease length', () => {
    const leaseLeft = async (w: { rows: (sql: string) => Promise<Record<string, unknown>[]> }, now: number) =>
      Number((await w.rows(`SELECT lease_until FROM outbox WHERE state = 'sending'`))[0]!['lease_until']) - now;

    it.each([
      [{}, 10_000, 3_333],
      [{ leaseMs: 4_000, heartbeatMs: 1_000 }, 4_000, 1_000],
    ])('a send in flight holds a short lease (%j), renewed by a heartbeat, so a crash re-sends it within seconds', async (dispatcher, lease, beat) => {
      const user = userOn(engine, `1${lease}`);
      const clock = new ManualClock();
      sb.sandbox.faults.latency(90_000, { endpoint: 'sms', times: 1 });
      const w = await world([counterBot], { engine, sb, clock, dispatcher });
      await w.runtime.receive({ botId: 'counter', user, providerId: `wamid.leaselen${lease}.${engine}`, source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
      while (smsTo(user).length === 0) await new Promise((r) => setTimeout(r, 5));
      expect(await leaseLeft(w, clock.now())).toBe(lease);
      clock.advance(beat);
      // renewed at the beat: a full lease ahead again
      await eventually(async () => expect(await leaseLeft(w, clock.now())).toBe(lease), { what: 'the lease renewed at the heartbeat' });
      held.splice(0).forEach((r) => r());
      await w.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      await w.stop();
    });

    it('refuses a heartbeat that is not shorter than the lease', async () => {
      await expect(world([counterBot], { engine, sb, dispatcher: { leaseMs: 1_000, heartbeatMs: 1_000 } })).rejects.toThrow(/heartbeatMs/);
    });
  });

  describe('claim tokens', () => {
    it('a result from a claim that was taken over is not recorded', async () => {
      const store = await openStore(engine === 'postgres' ? await freshDatabaseUrl() : ':memory:');
      const key = { botId: 'counter', user: USER };
      await queueSms(store, key, 'a', 'ft_x', 1000);
      const [mine] = await store.claimOutbound(1000, 10, 100);
      const [theirs] = await store.claimOutbound(1100, 10, 100); // the lease ran out: another process claims it
      expect(mine!.claim).not.toBe(theirs!.claim);
      expect(await store.renewLease(1, mine!.claim!, 5000)).toBe(false);
      expect(await store.finishOutbound(1, { state: 'sent', providerId: 'late' }, 1200, mine!.claim!)).toBe(false);
      expect(await store.retryOutbound(1, 9999, 'late', undefined, mine!.claim!)).toBe(false);
      expect(await store.outbound(1)).toMatchObject({ state: 'sending', providerId: null, claim: theirs!.claim, attempts: 2 });
      expect(await store.finishOutbound(1, { state: 'sent', providerId: 'p1' }, 1200, theirs!.claim!)).toBe(true);
      expect(await store.outbound(1)).toMatchObject({ state: 'sent', providerId: 'p1', claim: null });
      await store.close();
    });
  });
});
