/**
 * `createTestBot` walking live flows screen by screen: each request shaped as WhatsApp sends it,
 * answered by the runtime's Flow exchange on the harness's store (SQLite `:memory:` and
 * PostgreSQL), the completion followed by its `nfm_reply` as the webhook would deliver it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { defineBot, flow, flowComplete, flowError, flowScreen, say, text, type Bot, type ColloquyEvent, type FlowRequestInfo } from '../../src/index.js';
import { TestFlow } from '../../src/simulator/harness-flow.js';
import { createTestBot, ExpectationError, type TestConversation, type TestFlow as TestFlowType } from '../../src/simulator/testing.js';
import { freshDatabaseUrl } from '../support/postgres.js';

type Ctx = { day?: string; slot?: string; notes: string[] };
type Ev = ColloquyEvent | { type: 'book'; day: string; slot: string } | { type: 'note'; text: string };

const liveFlow = flow({ body: 'Pick a time', flowId: '1234567890', cta: 'See times', action: 'data_exchange' });
const machine = setup({ types: { context: {} as Ctx, events: {} as Ev } }).createMachine({
  id: 'live',
  initial: 'idle',
  context: { notes: [] },
  states: {
    idle: { on: { text: 'picking', 'reply.navigate': 'form' } },
    form: { entry: say(flow({ body: 'Fill this in', flowId: '42', cta: 'Open', action: 'navigate', screen: 'FORM' })), on: { flow: 'idle' } },
    picking: {
      entry: say(liveFlow),
      on: {
        text: { target: 'picking', reenter: true },
        note: { actions: [assign({ notes: ({ context, event }) => [...context.notes, event.text] }), say(({ event }) => text(`Noted: ${event.text}`))] },
        book: { target: 'booked', actions: assign({ day: ({ event }) => event.day, slot: ({ event }) => event.slot }) },
      },
    },
    booked: { type: 'final', entry: say(({ context }) => text(`Booked: ${context.day} ${context.slot}`)) },
  },
});

/** What the DAYS handler was told, request by request. */
const seen: FlowRequestInfo[] = [];

const bot = defineBot({
  id: 'live',
  machine,
  options: {
    flows: {
      picking: {
        firstScreen: 'DAYS',
        expired: 'This booking form has expired.',
        open: ({ context }) => flowScreen('DAYS', { days: [{ id: 'mon', title: 'Monday' }], notes: context.notes.length }),
        back: () => flowScreen('DAYS', { days: [{ id: 'mon', title: 'Monday' }], refreshed: true }),
        screens: {
          DAYS: (info) => {
            seen.push(info);
            return flowScreen('SLOTS', { day: info.data['day'], slots: [{ id: '0900', title: '09:00' }] });
          },
          SLOTS: ({ data }) => (data['slot'] === 'taken' ? flowError('That time was just taken') : flowScreen('CONFIRM', { day: data['day'], slot: data['slot'] })),
          NOTE: { event: ({ data }) => ({ type: 'note', text: String(data['text']) }), answer: ({ context }) => flowScreen('DAYS', { notes: context.notes.length }) },
          CONFIRM: {
            event: ({ data }) => ({ type: 'book', day: String(data['day']), slot: String(data['slot']) }),
            answer: ({ context }) => flowComplete({ booking: `B-${context.day}-${context.slot}` }),
          },
        },
      },
    },
  },
});

const ENGINES = [
  { name: 'sqlite :memory:', database: async (): Promise<string | undefined> => undefined },
  { name: 'postgres', database: async (): Promise<string | undefined> => freshDatabaseUrl() },
] as const;

let conv: TestConversation | undefined;
afterEach(async () => {
  await conv?.close();
  conv = undefined;
  seen.length = 0;
});

const booked = (c: TestConversation) => c.sent.filter((s) => 'text' in s && s.text?.startsWith('Booked'));

describe.each(ENGINES)('createTestBot(...).openFlow() on $name', ({ database }) => {
  async function start(b: Bot = bot): Promise<TestConversation> {
    const db = await database();
    conv = await createTestBot(b, db === undefined ? {} : { database: db });
    return conv;
  }

  it('walks a live flow: open, each screen, an error, back, and a completion whose nfm_reply says nothing twice', async () => {
    const t = await start();
    await t.type('hi');
    const f: TestFlowType = await t.openFlow(); // the type colloquy/testing exports
    expect(f.token).toBe(t.conversation?.flowToken);
    expect(f.flowId).toBe('1234567890');
    f.expectScreen('DAYS', { days: [{ id: 'mon', title: 'Monday' }] });

    await f.submit({ day: 'mon' });
    f.expectScreen('SLOTS', { day: 'mon' });
    expect(seen.map((i) => [i.screen, i.data, i.token, i.state])).toEqual([['DAYS', { day: 'mon' }, f.token, 'picking']]);

    await f.back();
    f.expectScreen('DAYS', { refreshed: true });
    await f.submit({ day: 'mon' });

    await f.submit({ day: 'mon', slot: 'taken' });
    expect(f.screen).toBe('SLOTS');
    expect(f.errorMessage).toBe('That time was just taken');
    expect(f.data['slots']).toEqual([{ id: '0900', title: '09:00' }]); // the screen keeps its data under the error
    expect(f.reply).toMatchObject({ status: 200, outcome: 'screen_error' });

    await f.submit({ day: 'mon', slot: '0900' });
    f.expectScreen('CONFIRM', { day: 'mon', slot: '0900' });
    expect(f.errorMessage).toBeUndefined();
    t.expectNothingSent().expectState('picking');

    await f.submit({ day: 'mon', slot: '0900' });
    expect(f.completed).toBe(true);
    expect(f.screen).toBe('SUCCESS');
    expect(f.params).toEqual({ booking: 'B-mon-0900', flow_token: f.token });
    t.expectText('Booked: mon 0900');
    expect(booked(t)).toHaveLength(1);
    expect(t.conversation?.status).toBe('done');
    // The nfm_reply arrived as the webhook would deliver it, and ran no turn.
    const inbox = await Promise.all([1, 2, 3].map((id) => t.store.inbound(id)));
    expect(inbox.filter((i) => i?.event.type === 'flow')).toEqual([
      expect.objectContaining({ event: { type: 'flow', token: f.token, data: { booking: 'B-mon-0900' } }, state: 'done', error: expect.stringMatching(/completed at the Flow endpoint/) }),
    ]);
    expect(t.steps.at(-1)).toMatchObject({ action: { flow: { booking: 'B-mon-0900' } }, state: 'booked' });
    await expect(f.submit({})).rejects.toThrow(/completed already/);
    await expect(f.back()).rejects.toThrow(/completed already/);
    // The conversation ended with the booking: its token opens nothing any more.
    expect(await t.flowRequest({ version: '3.0', action: 'INIT', flow_token: f.token })).toMatchObject({ status: 427, body: { error_msg: 'This booking form has expired.' } });
  });

  it('replays a submit as WhatsApp retries it: the same answer, nothing run or sent twice', async () => {
    const t = await start();
    await t.type('hi');
    const f = await t.openFlow();
    await f.submit({ text: 'ring first' }, { screen: 'NOTE' });
    t.expectText('Noted: ring first');
    f.expectScreen('DAYS', { notes: 1 });
    const version = t.conversation?.version;
    const first = f.reply;
    expect(await f.replay()).toEqual({ ...first, outcome: 'replayed' });
    t.expectNothingSent();
    expect(t.sent.filter((s) => 'text' in s && s.text === 'Noted: ring first')).toHaveLength(1);
    expect(t.conversation?.version).toBe(version);
    expect(t.context).toMatchObject({ notes: ['ring first'] });

    await f.submit({ day: 'mon' });
    await f.submit({ day: 'mon', slot: '0900' });
    const done = await f.submit({ slot: '0900', day: 'mon' });
    const ended = t.conversation;
    expect((await f.replay()).body).toEqual(done.body);
    expect(f.completed).toBe(true);
    expect(booked(t)).toHaveLength(1);
    expect(t.conversation).toEqual(ended);
    expect(t.steps.filter((s) => 'flow' in s.action)).toHaveLength(1); // the nfm_reply was delivered once
  });

  it('makes an older flow expire when the bot sends a newer one', async () => {
    const t = await start();
    await t.type('hi');
    const old = await t.openFlow();
    await t.type('again');
    t.expectState('picking').expectSent({ kind: 'flow' });
    await old.submit({ day: 'mon' });
    expect(old.expired).toBe('This booking form has expired.');
    expect(old.reply).toMatchObject({ status: 427, outcome: 'expired' });
    expect(() => old.expectScreen('DAYS')).toThrow(/expired \(427/);
    const current = await t.openFlow();
    expect(current.token).not.toBe(old.token);
    expect(current.expired).toBeUndefined();
    current.expectScreen('DAYS');
    expect(seen).toHaveLength(0);
  });

  it('answers raw requests: ping, an error notification, an unknown token, a bad request', async () => {
    const t = await start();
    expect(await t.flowRequest({ version: '3.0', action: 'ping' })).toEqual({ status: 200, outcome: 'ok', body: { data: { status: 'active' } } });
    expect(await t.flowRequest({ version: '3.0', action: 'data_exchange', screen: 'DAYS', flow_token: 'ft_x', data: { error: 'invalid-screen-transition' } })).toMatchObject({
      status: 200,
      body: { data: { acknowledged: true } },
    });
    expect(await t.flowRequest({ version: '3.0', action: 'INIT', flow_token: 'ft_nobody' })).toMatchObject({ status: 427, body: { error_msg: expect.any(String) } });
    expect(await t.flowRequest({ version: '3.0', action: 'BACK', flow_token: 'ft_nobody' })).toMatchObject({ status: 400, outcome: 'bad_request' });
    expect(t.sent).toHaveLength(0);
  });
});

describe('openFlow() refuses what WhatsApp would not open', () => {
  it('with no flow sent, or a navigate flow last', async () => {
    const t = (conv = await createTestBot(bot));
    await expect(t.openFlow()).rejects.toThrow(ExpectationError);
    await expect(t.openFlow()).rejects.toThrow(/the bot sent none/);
    await t.send({ type: 'reply.navigate', id: 'navigate', title: 'Navigate', via: 'button' });
    t.expectState('form');
    await expect(t.openFlow()).rejects.toThrow(/flow 42 .*navigate flow.*submitFlow\(\)/);
  });

  it('when the flow went by SMS', async () => {
    const t = (conv = await createTestBot(bot));
    t.sandbox.faults.refuseInteractive(t.user);
    await t.type('hi');
    t.expectSent({ kind: 'flow', channel: 'sms' });
    await expect(t.openFlow()).rejects.toThrow(/flow 1234567890: it went by SMS/);
  });

  it('opens a flow whose state declares no answers as expired (427), as the endpoint would', async () => {
    const bare = defineBot({ id: 'bare', machine });
    const t = (conv = await createTestBot(bare));
    await t.type('hi');
    const f = await t.openFlow();
    expect(f).toBeInstanceOf(TestFlow);
    expect(f.screen).toBeUndefined();
    expect(f.expired).toEqual(expect.any(String));
    await expect(f.submit({ day: 'mon' })).rejects.toThrow(/no screen is shown .*expired/);
    await expect(f.back()).rejects.toThrow(/no screen came before/);
  });
});

describe('on the Cloud API', () => {
  it('walks the live flow the Cloud API carried, to one confirmation', async () => {
    const t = (conv = await createTestBot(bot, { provider: 'cloud-api' }));
    await t.type('hi');
    const f = await t.openFlow();
    expect(f.token).toBe(t.conversation?.flowToken);
    await f.submit({ day: 'tue' });
    await f.submit({ day: 'tue', slot: '0900' });
    await f.submit({ day: 'tue', slot: '0900' });
    expect(f.params).toMatchObject({ booking: 'B-tue-0900' });
    t.expectText('Booked: tue 0900');
    expect(booked(t)).toHaveLength(1);
  });
});

describe('an answer past its budget', () => {
  const never = () => new Promise<never>(() => undefined);
  const slow = (firstScreen: string | undefined) =>
    defineBot({
      id: 'slow',
      machine,
      options: { flows: { picking: { budgetMs: 1, ...(firstScreen !== undefined && { firstScreen }), open: never, screens: { DAYS: never } } } },
    });

  it('shows an error on the first screen when it declares one', async () => {
    const t = (conv = await createTestBot(slow('DAYS')));
    await t.type('hi');
    const f = await t.openFlow();
    expect(f.screen).toBe('DAYS');
    expect(f.errorMessage).toMatch(/longer than it should/);
    await f.submit({ day: 'mon' });
    expect(f.reply).toMatchObject({ status: 200, outcome: 'screen_error' });
    expect(f.screen).toBe('DAYS');
    expect(f.errorMessage).toMatch(/longer than it should/);
  });

  it('fails opening with the endpoint’s 500 when there is no first screen to show it on', async () => {
    const t = (conv = await createTestBot(slow(undefined)));
    await t.type('hi');
    await expect(t.openFlow()).rejects.toThrow(/The Flow endpoint answered 500 to INIT: This is taking longer/);
  });
});
