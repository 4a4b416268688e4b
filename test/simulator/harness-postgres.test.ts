/** The test harness on PostgreSQL: the whole runtime (turns, timers, flows, invocations, sends) on a real server. */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';
import orderBot from '../fixtures/order-bot.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { ORDER_USER, orderThroughFlow } from './order-scenario.js';

let conv: TestConversation | undefined;
afterEach(async () => {
  await conv?.close();
  conv = undefined;
});

describe('createTestBot({ database: postgres://… })', () => {
  it('fires a durable timer from PostgreSQL when the clock moves past it', async () => {
    const c = (conv = await createTestBot(orderBot, { database: await freshDatabaseUrl() }));
    await c.type('hi');
    await c.tap('Margherita');
    c.expectState('size').expectChoices(['Small', 'Large']);
    await c.advance(599_999);
    c.expectNothingSent().expectState('size');
    await c.advance('1s');
    c.expectState('menu').expectText('Still there? Starting over.');
  });

  it('runs to the final state through a flow and an invoked promise, with the transcript in order', async () => {
    const c = (conv = await createTestBot(orderBot, { user: ORDER_USER, database: await freshDatabaseUrl() }));
    await orderThroughFlow(c);
    const directions = (await c.store.transcript(c.conversation!.id)).map((e) => e.direction);
    expect(directions[0]).toBe('in');
    expect(directions.filter((d) => d === 'in')).toHaveLength(5);
  });
});
