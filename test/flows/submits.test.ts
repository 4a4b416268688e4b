/**
 * Durable flow submits against what can happen around them: an invocation the submit starts, a
 * retry after the submit's own turn sent the next flow, the same data sent again after another
 * choice, and a person holding the conversation. (Found by review; each failed before its fix.)
 */
import { afterEach, expect, it } from 'vitest';
import { assign, fromPromise, setup } from 'xstate';
import { defineBot, flow, flowComplete, flowScreen, handoff, say, text, type ColloquyEvent } from '../../src/index.js';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';

let t: TestConversation | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const texts = (c: TestConversation): string[] => c.sent.map((s) => s.text).filter((x): x is string => typeof x === 'string' && x !== '');

it('a durable submit entering an invoke: the invocation runs once and its result is committed', async () => {
  let calls = 0;
  const bookApi = fromPromise(async ({ input }: { input: { slot: string } }) => {
    calls++;
    await sleep(100);
    return `ref-${input.slot}`;
  });
  const machine = setup({ types: { context: {} as { slot?: string; ref?: string }, events: {} as ColloquyEvent | { type: 'book'; slot: string } }, actors: { bookApi } }).createMachine({
    initial: 'picking',
    context: {},
    states: {
      picking: { entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })), on: { book: { target: 'booking', actions: assign({ slot: ({ event }) => event.slot }) } } },
      booking: { invoke: { src: 'bookApi', input: ({ context }) => ({ slot: context.slot! }), onDone: { target: 'booked', actions: assign({ ref: ({ event }) => event.output }) } } },
      booked: { entry: say(({ context }) => text(`Booked ${context.slot}, ref ${context.ref}`)), on: { text: 'booked' } },
    },
  });
  const bot = defineBot({
    id: 'inv',
    machine,
    options: { flows: { picking: { open: () => flowScreen('PICK'), screens: { PICK: { event: ({ data }) => ({ type: 'book', slot: String(data['slot']) }), answer: () => flowComplete({}) } } } } },
  });
  t = await createTestBot(bot);
  await t.type('hi');
  const token = t.conversation!.flowToken;
  expect((await t.runtime.flows.handle({ version: '3.0', action: 'data_exchange', screen: 'PICK', data: { slot: '9' }, flow_token: token })).status).toBe(200);
  await t.untilInvocationsSettle();
  await t.send({ type: 'flow', token, data: {} }); // the nfm_reply (skipped: flow-completed)
  await t.settled();
  await t.type('hello?');
  await t.settled();
  expect(calls).toBe(1);
  expect(texts(t).filter((x) => x.startsWith('Booked'))).toHaveLength(1);
});

it('a retry of a submit answers what was stored even when its turn sent the next flow', async () => {
  const machine = setup({ types: { context: {} as { slot?: string }, events: {} as ColloquyEvent | { type: 'book'; slot: string } } }).createMachine({
    initial: 'picking',
    context: {},
    states: {
      picking: { entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })), on: { book: { target: 'survey', actions: assign({ slot: ({ event }) => event.slot }) } } },
      survey: { entry: [say(({ context }) => text(`Booked ${context.slot}`)), say(flow({ body: 'Rate us', flowId: '43', cta: 'Rate', action: 'data_exchange' }))] },
    },
  });
  const bot = defineBot({
    id: 'rot',
    machine,
    options: { flows: { picking: { open: () => flowScreen('PICK'), screens: { PICK: { event: ({ data }) => ({ type: 'book', slot: String(data['slot']) }), answer: () => flowComplete({}) } } } } },
  });
  t = await createTestBot(bot);
  await t.type('hi');
  const submit = { version: '3.0', action: 'data_exchange' as const, screen: 'PICK', data: { slot: '9' }, flow_token: t.conversation!.flowToken };
  const first = await t.runtime.flows.handle(submit);
  const retry = await t.runtime.flows.handle(submit);
  expect(retry).toMatchObject({ status: 200, body: first.body });
});

it('the same data submitted again after another choice is a new submit, not a replay', async () => {
  let free: Record<string, string[]> = { mon: ['9', '10'], tue: ['14'] };
  const machine = setup({ types: { context: {} as { day?: string; slot?: string }, events: {} as ColloquyEvent | { type: 'day'; day: string } | { type: 'book'; slot: string } } }).createMachine({
    initial: 'picking',
    context: {},
    states: {
      picking: {
        entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })),
        on: { day: { actions: assign({ day: ({ event }) => event.day }) }, book: { target: 'booked', actions: assign({ slot: ({ event }) => event.slot }) } },
      },
      booked: { type: 'final', entry: say(({ context }) => text(`Booked ${context.day} at ${context.slot}`)) },
    },
  });
  const bot = defineBot({
    id: 'days',
    machine,
    options: {
      flows: {
        picking: {
          open: () => flowScreen('DAYS'),
          screens: {
            DAYS: { event: ({ data }) => ({ type: 'day', day: String(data['day']) }), answer: ({ context }) => flowScreen('SLOTS', { day: context.day, slots: free[context.day!] }) },
            SLOTS: { event: ({ data }) => ({ type: 'book', slot: String(data['slot']) }), answer: () => flowComplete({}) },
          },
        },
      },
    },
  });
  t = await createTestBot(bot);
  await t.type('hi');
  const flow_token = t.conversation!.flowToken;
  const day = (d: string) => t!.runtime.flows.handle({ version: '3.0', action: 'data_exchange', screen: 'DAYS', data: { day: d }, flow_token });
  await day('mon');
  await day('tue');
  free = { mon: ['10'], tue: ['14'] };
  const again = await day('mon');
  await t.refresh();
  expect(t.context).toMatchObject({ day: 'mon' });
  expect(again.body).toMatchObject({ data: { slots: ['10'] } });
});

it('a durable submit does not run the machine while an agent holds the conversation', async () => {
  const machine = setup({ types: { context: {} as { slot?: string }, events: {} as ColloquyEvent | { type: 'book'; slot: string } } }).createMachine({
    initial: 'picking',
    context: {},
    states: {
      picking: {
        entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })),
        initial: 'form',
        states: { form: { on: { text: 'human' } }, human: { entry: [say(text('Connecting you to a person.')), handoff({ reason: 'asked' })] } },
        on: { book: { target: 'booked', actions: assign({ slot: ({ event }) => event.slot }) } },
      },
      booked: { entry: say(({ context }) => text(`Booked ${context.slot}`)) },
    },
  });
  const bot = defineBot({
    id: 'hand',
    machine,
    options: { flows: { picking: { open: () => flowScreen('PICK'), screens: { PICK: { event: ({ data }) => ({ type: 'book', slot: String(data['slot']) }), answer: () => flowComplete({}) } } } } },
  });
  t = await createTestBot(bot);
  await t.type('hi');
  const flow_token = t.conversation!.flowToken;
  await t.type('a person please');
  await t.runtime.flows.handle({ version: '3.0', action: 'data_exchange', screen: 'PICK', data: { slot: '9' }, flow_token });
  await t.settled();
  expect(texts(t)).not.toContain('Booked 9');
});
