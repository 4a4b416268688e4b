/**
 * A bot author's test for bots/pizza.ts, with the `colloquy/testing` harness: the real runtime,
 * a `:memory:` store, a manual clock and the sandbox provider over HTTP on 127.0.0.1.
 *
 *   npx vitest run examples/harness-test.test.ts
 */
import { afterEach, expect, it } from 'vitest';
import { createTestBot, type TestConversation } from 'colloquy/testing';
import pizza from '../bots/pizza.js';

let chat: TestConversation;
afterEach(() => chat.close()); // stops the runtime and frees the store and the sandbox

it('orders a large margherita, start to finish', async () => {
  chat = await createTestBot(pizza);
  await chat.type('hi'); // any first message starts the conversation
  chat.expectState({ ordering: 'menu' }).expectChoices(['Margherita', 'Pepperoni', 'Garden', 'Lemonade']);

  await chat.tap('Margherita'); // by title or by row id
  chat.expectSent({ kind: 'buttons', text: /Margherita: which size/ });

  await chat.tap('large');
  chat.expectSent({ kind: 'flow', text: 'Where should we deliver?' });

  await chat.submitFlow({ street: 'Calle 5 de Mayo 12', city: 'Puebla' }); // with the conversation's flow token
  chat.expectState('placed').expectText(/large Margherita for \$15\.20, to Calle 5 de Mayo 12, Puebla/);
  expect(chat.context).toMatchObject({ item: 'margherita', size: 'large' });

  await chat.tap("That's all");
  chat.expectState('done').expectText('Enjoy your meal!');
});

it('nudges a quiet customer after 5 minutes and gives up after 30', async () => {
  chat = await createTestBot(pizza);
  await chat.type('hi');
  await chat.tap('Pepperoni');
  await chat.advance('5m'); // moves the manual clock; durable timers fire through the inbox
  chat.expectSent({ kind: 'text', text: /Still there\?/ });
  await chat.advance('25m');
  chat.expectState('abandoned').expectText(/cancelled/);
});

it('carries on by SMS when WhatsApp refuses the user (131047), and takes a number as the answer', async () => {
  chat = await createTestBot(pizza);
  chat.sandbox.faults.refuseInteractive(chat.user); // the provider answers 400 / 131047
  await chat.type('hi');
  chat.expectSent({ kind: 'list', channel: 'sms', text: /1\. Margherita/ });
  expect(chat.last?.fallback).toBe(true);

  await chat.sms('2'); // "2" picks the second choice of the list it was shown
  chat.expectState({ ordering: 'size' }).expectSent({ channel: 'sms', text: /Pepperoni: which size/ });
});
