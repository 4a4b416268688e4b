/**
 * A durable submit while the conversation runs an invocation: the invocation's result is committed
 * later against the version it started from, so the submit does not race it; the user is asked to
 * try again, and the same submit works once the invocation settled.
 */
import { afterEach, expect, it } from 'vitest';
import { assign, fromPromise, setup } from 'xstate';
import { defineBot, flow, flowComplete, flowScreen, say, text, type ColloquyEvent } from '../../src/index.js';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';
import { tempDir } from '../support/temp.js';

let release: (() => void) | undefined;
const slow = fromPromise(() => new Promise<void>((resolve) => (release = resolve)));

const machine = setup({ types: { context: {} as { booked?: string; looked: number }, events: {} as ColloquyEvent | { type: 'book'; slot: string } }, actors: { slow } }).createMachine({
  initial: 'picking',
  context: { looked: 0 },
  states: {
    picking: {
      entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })),
      initial: 'idle',
      states: {
        idle: { on: { text: 'looking' } },
        looking: { invoke: { src: 'slow', onDone: { target: 'idle', actions: assign({ looked: ({ context }) => context.looked + 1 }) } } },
      },
      on: { book: { target: 'booked', actions: assign({ booked: ({ event }) => event.slot }) } },
    },
    booked: { type: 'final', entry: say(({ context }) => text(`Booked ${context.booked} after ${context.looked} lookup(s)`)) },
  },
});

const bot = defineBot({
  id: 'busy',
  machine,
  options: {
    flows: {
      picking: {
        open: () => flowScreen('PICK'),
        screens: { PICK: { event: ({ data }) => ({ type: 'book', slot: String(data['slot']) }), answer: ({ context }) => flowComplete({ booked: String((context as { booked?: string }).booked) }) } },
      },
    },
  },
});

let t: TestConversation | undefined;
afterEach(() => t?.close());

it('asks the user to try again while an invocation runs, then books once it settled', async () => {
  t = await createTestBot(bot);
  await t.type('hi');
  await t.type('look it up');
  expect(t.invoking).toBe(true);
  const token = t.conversation!.flowToken; // the form's latest copy
  const submit = { version: '3.0', action: 'data_exchange' as const, screen: 'PICK', data: { slot: '9' }, flow_token: token };
  expect(await t.runtime.flows.handle(submit)).toMatchObject({ status: 200, outcome: 'screen_error', body: { screen: 'PICK', data: { error_message: expect.stringMatching(/try again/) } } });
  release!();
  await t.untilInvocationsSettle();
  expect(await t.runtime.flows.handle(submit)).toMatchObject({ status: 200, outcome: 'ok', body: { screen: 'SUCCESS' } });
  await t.settled();
  t.expectText('Booked 9 after 1 lookup(s)');
});

it('a form sent again after a deploy opens on the new version: the prompt sent again gets a token of its own', async () => {
  const plain = setup({ types: { events: {} as ColloquyEvent } }).createMachine({
    initial: 'picking',
    states: { picking: { entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })) } },
  });
  const options = { flows: { picking: { open: () => flowScreen('PICK'), screens: {} } } };
  const v1 = defineBot({ id: 'deployed', machine: plain, options });
  const v2 = defineBot({ id: 'deployed', version: 2, machine: plain, options });
  const tmp = tempDir();
  try {
    const database = tmp.path('deploy.db');
    const before = await createTestBot(v1, { database });
    await before.type('hi');
    const old = before.conversation!.flowToken;
    await before.close();
    // Version 2 is deployed while the conversation waits in `picking` with version 1's form.
    t = await createTestBot(v2, { database });
    expect((await t.runtime.flows.handle({ version: '3.0', action: 'INIT', flow_token: old })).status).toBe(427);
    await t.type('hello?'); // unhandled: the form is sent again
    const fresh = t.conversation!.flowToken;
    expect(fresh).not.toBe(old);
    expect(t.lastInteractive?.kind).toBe('flow');
    expect(await t.runtime.flows.handle({ version: '3.0', action: 'INIT', flow_token: fresh })).toMatchObject({ status: 200, body: { screen: 'PICK' } });
  } finally {
    tmp.remove();
  }
});
