import { describe, expect, it } from 'vitest';
import { checkRehydration } from '../../src/simulator/testing.js';
import pizza from '../../bots/pizza.js';

const path = [
  { event: { type: 'text', text: 'hi', via: 'whatsapp' } },
  { event: { type: 'reply.margherita', id: 'margherita', title: 'Margherita', via: 'list' } },
  { event: { type: 'reply.large', id: 'large', title: 'Large $15.20', via: 'button' } },
  { flow: { street: 'Calle 5 de Mayo 12', city: 'Puebla' } }, // the order id is stamped from Date.now()
] as const;

describe('checkRehydration and the wall clock', () => {
  it('pins Date.now() to each run’s simulated clock, so a bot stamping ids with it agrees with itself', async () => {
    for (let i = 0; i < 3; i++) {
      const runs = await checkRehydration(pizza, path);
      expect(runs.restarted.final.context).toMatchObject({ orderId: expect.stringMatching(/^P\d+$/) });
    }
    // biome-ignore lint/complexity/useDateNow: both clocks must be the real one again
    expect(Math.abs(Date.now() - new Date().getTime())).toBeLessThan(1000); // the real one is back
  });
});
