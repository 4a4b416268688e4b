import { describe, expect, it } from 'vitest';
import { withPacing, type Outbound, type SendAdapter } from '../../src/transport/index.js';
import { FakeClock } from './helpers.js';

/** An adapter that records when (in fake time) each message reached it. */
function recorder(clock: FakeClock): SendAdapter & { at: [string, number][] } {
  const t0 = clock.now();
  const at: [string, number][] = [];
  return {
    at,
    async send(o) {
      at.push([o.channel === 'interactive' ? String(o.request.to) : o.request.msisdns[0]!, clock.now() - t0]);
      return { ok: true, channel: o.channel, status: 200, providerId: undefined, raw: {}, attempts: 1 };
    },
    close: async () => undefined,
  };
}

const list = (from: string, to: string): Outbound => ({
  channel: 'interactive',
  request: { from, to, type: 'contacts', listMessages: { body: 'b', buttonText: 'Open', sections: [{ messages: [{ id: '1', title: 'One' }] }] } },
});
const sms = (to: string): Outbound => ({ channel: 'sms', request: { msisdns: [to], message: 'hi' } });

describe('withPacing', () => {
  it('lets a burst through, then spaces sends at the rate, in order', async () => {
    const clock = new FakeClock();
    const inner = recorder(clock);
    const paced = withPacing(inner, { perSecond: 5, clock });
    await Promise.all(Array.from({ length: 9 }, (_, i) => paced.send(list('5550001', `52155000000${i}`))));
    expect(inner.at).toEqual([0, 0, 0, 0, 0, 200, 400, 600, 800].map((t, i) => [`52155000000${i}`, t]));
  });

  it('paces each sending number on its own, and SMS apart from them', async () => {
    const clock = new FakeClock();
    const inner = recorder(clock);
    const paced = withPacing(inner, { perSecond: 1, burst: 1, clock });
    await Promise.all([paced.send(list('5550001', '5215500000001')), paced.send(list('5550001', '5215500000002')), paced.send(list('5550002', '5215500000003')), paced.send(sms('5215500000004'))]);
    expect(Object.fromEntries(inner.at)).toEqual({ '5215500000001': 0, '5215500000003': 0, '5215500000004': 0, '5215500000002': 1000 });
  });

  it('refills while idle, up to the burst', async () => {
    const clock = new FakeClock();
    const inner = recorder(clock);
    const paced = withPacing(inner, { perSecond: 2, burst: 2, clock });
    await Promise.all([1, 2, 3].map((i) => paced.send(list('5550001', `521550000000${i}`))));
    clock.advance(10_000); // idle: the bucket refills to 2, not 20
    await Promise.all([4, 5, 6].map((i) => paced.send(list('5550001', `521550000000${i}`))));
    expect(inner.at.map(([, t]) => t)).toEqual([0, 0, 500, 10_500, 10_500, 11_000]);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => withPacing(recorder(new FakeClock()), { perSecond: 0 })).toThrow('perSecond must be a positive number');
  });
});
