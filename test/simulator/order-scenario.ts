/** A scenario of the order bot that the harness tests run on each store. */
import { expect } from 'vitest';
import type { TestConversation } from '../../src/simulator/testing.js';

/** The user {@link orderThroughFlow} expects the conversation to be with (its status reply names them). */
export const ORDER_USER = '5215599990000';

/**
 * Drives the order bot through an invoked status lookup and the address flow to its final state,
 * checking every step on the way; the conversation must be with {@link ORDER_USER}.
 */
export async function orderThroughFlow(c: TestConversation): Promise<void> {
  await c.type('hi');
  await c.tap('status');
  c.expectText('order for 5215599990000 is on its way').expectState('menu');
  await c.tap('Pepperoni');
  await c.tap('large');
  await c.submitFlow({ address: '1 Main St' });
  c.expectState('done').expectText('Thanks! A large pepperoni to 1 Main St.');
  expect(c.conversation?.status).toBe('done');
}
