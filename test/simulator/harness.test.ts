import { afterEach, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { buttons, defineBot, say, type Bot } from '../../src/index.js';
import type { TranscriptEntry } from '../../src/entries/server.js';
import { BotTurnError, createTestBot, ExpectationError, parseDuration, type SentMessage, type TestConversation } from '../../src/simulator/testing.js';
import orderBot from '../fixtures/order-bot.js';
import variantsBot, { variants } from '../fixtures/variants-bot.js';
import { ORDER_USER, orderThroughFlow } from './order-scenario.js';

let conv: TestConversation | undefined;
afterEach(async () => {
  await conv?.close();
  conv = undefined;
});

async function start(bot: Bot, options?: Parameters<typeof createTestBot>[1]): Promise<TestConversation> {
  conv = await createTestBot(bot, options);
  return conv;
}

/** The message a function throws, for asserting on failure texts. */
function thrown(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ExpectationError);
    return (err as Error).message;
  }
  throw new Error('expected it to throw');
}

const inbound = (t: TranscriptEntry[]) => t.filter((e) => e.direction === 'in').map((e) => e.event as { type: string; via?: string });

describe('every message variant (variants bot)', () => {
  it('sends list, image, video and document buttons, flow, text and SMS, typed by kind with the seed body', async () => {
    const c = await start(variantsBot);
    expect(c.state).toBeUndefined();
    await c.type('hi');
    c.expectState('list').expectSent({ kind: 'list', text: 'Pick one', choices: ['One', 'Two'] });
    const list = c.last as Extract<SentMessage, { kind: 'list' }>;
    expect(list).toMatchObject({ kind: 'list', channel: 'interactive', listMessages: variants.list.listMessages, fallback: false });
    expect(list.choices.map((x) => x.id)).toEqual(['1', '2']);

    await c.tap('one'); // a title, in another case
    c.expectState('image').expectSent({ kind: 'buttons', text: 'Image header', choices: ['next'] });
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: { headerImage: { link: 'https://example.com/a.png' } } });
    await c.tap('Next');
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: { headerVideo: { link: 'https://example.com/a.mp4' } } });
    await c.tap('next');
    c.expectState('document').expectText('menu.pdf');
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: { headerDocument: { fileName: 'menu.pdf' } } });

    await c.tap('Next');
    c.expectState('flow').expectSent({ kind: 'flow', body: /fill this/i });
    const flow = c.lastInteractive as Extract<SentMessage, { kind: 'flow' }>;
    expect(flow.flow.action.parameters.flow_token).toBe(c.conversation?.flowToken);
    expect(flow.flow.action.parameters.flow_cta).toBe('Open form');

    await c.submitFlow({ name: 'Ada' });
    c.expectState('texts');
    expect(c.latest.map((s) => [s.kind, s.channel, s.kind === 'text' || s.kind === 'sms' ? s.text : ''])).toEqual([
      ['text', 'sms', 'Plain text'],
      ['sms', 'sms', 'An SMS on purpose'],
    ]);
    await c.type('again');
    c.expectState('list').expectChoices(['1', 'Two']);
    expect(c.sent.map((s) => s.kind)).toEqual(['list', 'buttons', 'buttons', 'buttons', 'flow', 'text', 'sms', 'list']);

    const events = inbound(await c.transcript());
    expect(events.slice(1, 3)).toEqual([
      { type: 'reply.1', id: '1', title: 'One', via: 'list' },
      { type: 'reply.next', id: 'next', title: 'Next', via: 'button' },
    ]);
    expect(events[5]).toEqual({ type: 'flow', token: c.conversation?.flowToken, data: { name: 'Ada' } });
  });

  it('lets a test inject faults: a message that cannot be delivered reaches the bot as delivery.failed', async () => {
    const c = await start({ ...variantsBot, options: { ...variantsBot.options, fallback: { enabled: false } } });
    c.sandbox.faults.fail('messaging', { status: 400 });
    await c.type('hi');
    c.expectState('failed').expectText('could not be delivered');
    expect(c.context).toEqual({ failures: 1 });
  });
});

describe('the order bot', () => {
  it('fires an after timer when the clock moves past it, and not before', async () => {
    const c = await start(orderBot);
    await c.type('hi');
    await c.tap('Margherita');
    c.expectState('size').expectChoices(['Small', 'Large']);
    await c.advance('9m');
    c.expectNothingSent().expectState('size');
    await c.advance(59_999);
    c.expectNothingSent();
    await c.advance('1s');
    c.expectState('menu')
      .expectText('Still there? Starting over.')
      .expectSent({ kind: 'list', choices: ['Margherita', 'Pepperoni', 'Order status'] });
  });

  it('runs to the final state through a flow, and waits for an invoked promise', async () => {
    const c = await start(orderBot, { user: ORDER_USER });
    await orderThroughFlow(c);
    expect(c.context).toMatchObject({ item: 'pepperoni', size: 'large', address: '1 Main St' });
  });

  it('answers by SMS: after a message went by SMS, an SMS "1" is its first choice', async () => {
    const c = await start(orderBot);
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    c.expectSent({ kind: 'list', channel: 'sms', text: '1. Margherita' });
    expect(c.last).toMatchObject({ kind: 'list', channel: 'sms', fallback: true });
    expect(thrown(() => c.expectNothingSent())).toContain('list header="Pizza Place"');
    await expect(c.tap('Margherita')).rejects.toThrow(/went by SMS, so it has no buttons; answer with sms\("1"\)/);

    await c.sms('1');
    c.expectState('size').expectSent({ kind: 'buttons', channel: 'sms', text: /1\. Small/ });
    const events = inbound(await c.transcript());
    expect(events.at(-1)).toEqual({ type: 'text', text: '1', via: 'sms' }); // what arrived; the runtime read it as reply.margherita
    expect(c.context).toMatchObject({ item: 'margherita' });
    await c.sms('large');
    c.expectState('address');
    await c.sms('1 Main St');
    c.expectState('done').expectText('A large margherita to 1 Main St.');
  });

  it('keeps users apart: forUser() is another conversation on the same runtime', async () => {
    const a = await start(orderBot);
    const b = a.forUser('15559990000');
    expect(a.forUser('15559990000')).toBe(b);
    await a.type('hi');
    await b.type('hi');
    await b.tap('Pepperoni');
    expect([a.state, b.state]).toEqual(['menu', 'size']);
    expect(a.sent.map((s) => s.kind)).toEqual(['list']);
    expect(b.sent.map((s) => s.kind)).toEqual(['list', 'buttons']);
  });
});

describe('failures read well', () => {
  it('expectState and expectSent say what was expected, what the bot sent, and the state', async () => {
    const c = await start(orderBot);
    await c.type('hi');
    expect(thrown(() => c.expectState('size'))).toBe(
      'Expected the conversation to be in state "size", but it is in "menu".\n' +
        'Since the last action (type "hi") the bot sent:\n' +
        '  1. list header="Pizza Place" "What would you like?" footer="Prices include tax" button="See menu" ' +
        'rows=["Pizzas": margherita="Margherita" ("Tomato, mozzarella"), pepperoni="Pepperoni" | "Other": status="Order status"]\n' +
        'State: menu',
    );
    expect(thrown(() => c.expectSent({ kind: 'buttons', text: 'size' }))).toMatch(
      /^Expected the bot to send a buttons message with text containing "size"\.\nSince the last action \(type "hi"\) the bot sent:\n {2}1\. list /,
    );
    expect(thrown(() => c.expectSent({ choices: ['Margherita'] }))).toContain('Expected the bot to send a message with the choices ["Margherita"].');
    expect(thrown(() => c.expectText(/hawaiian/i))).toContain('Expected the bot to send a message with text matching /hawaiian/i.');
    expect(thrown(() => c.expectChoices(['Margherita', 'Pepperoni']))).toContain(
      'Expected the choices ["Margherita","Pepperoni"]. The last interactive message (list) shows: 1. "Margherita" (id "margherita"), 2. "Pepperoni" (id "pepperoni"), 3. "Order status" (id "status").',
    );
    expect(thrown(() => c.expectNothingSent())).toMatch(/^Expected the bot to send nothing\.\nSince the last action/);
  });

  it('a tap on a choice that is not shown lists the choices that are', async () => {
    const c = await start(orderBot);
    await c.type('hi');
    await c.tap('Margherita');
    const err = await c.tap('Hawaiian').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(ExpectationError);
    expect((err as Error).message).toBe(
      'Cannot tap "Hawaiian": no such choice on the last interactive message (buttons). Choices shown: 1. "Small" (id "small"), 2. "Large" (id "large").\n' +
        'Since the last action (tap "Margherita") the bot sent:\n' +
        '  1. buttons image=https://example.com/pizza.jpg "Which size of margherita?" footer="Tap one" buttons=[small="Small", large="Large"]\n' +
        'State: size',
    );
    await c.tap('Small');
    await expect(c.tap('Small')).rejects.toThrow('Cannot tap "Small": the last interactive message is a flow, which has no buttons or rows.');
  });

  it('before anything was sent, says so', async () => {
    const c = await start(orderBot);
    await expect(c.tap('Margherita')).rejects.toThrow(
      'Cannot tap "Margherita": the bot has sent no list or buttons yet.\nSince the last action ((none yet)) the bot sent nothing.\nState: (no conversation yet)',
    );
    await expect(c.submitFlow({})).rejects.toThrow(/Cannot submit a flow: the conversation has not started/);
  });

  it("an action whose turn failed in the bot throws with the bot's error", async () => {
    const machine = setup({}).createMachine({
      id: 'broken',
      initial: 'a',
      states: { a: { entry: say(() => buttons({ body: 'Too many', buttons: [1, 2, 3, 4].map((n) => ({ id: `b${n}`, title: `B${n}` })) })) } },
    });
    const c = await start(defineBot({ id: 'broken', machine }));
    const err = await c.type('hi').catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(BotTurnError);
    expect((err as Error).message).toMatch(/^The bot failed handling type "hi": .*at most 3 buttons/s);
    expect(c.steps.at(-1)?.error).toMatch(/at most 3 buttons/);
  });
});

describe('time', () => {
  it('reads durations as people write them', () => {
    expect([parseDuration('500ms'), parseDuration('30s'), parseDuration('10m'), parseDuration('2h'), parseDuration('1d'), parseDuration('1h30m'), parseDuration(25)]).toEqual([
      500, 30_000, 600_000, 7_200_000, 86_400_000, 5_400_000, 25,
    ]);
    expect(() => parseDuration('10 minutes')).toThrow('Cannot read the duration "10 minutes": write it like 500ms, 30s, 10m, 2h, 1d or 1h30m');
    expect(() => parseDuration(-1)).toThrow(/non-negative/);
  });

  it('a ten-step conversation takes milliseconds after setup', async () => {
    const c = await start(orderBot);
    const t = performance.now();
    await c.type('hi');
    await c.tap('Margherita');
    await c.advance('10m');
    await c.tap('Pepperoni');
    await c.tap('Large');
    await c.submitFlow({ address: '1 Main St' });
    await c.type('hello again');
    await c.tap('Margherita');
    await c.tap('Small');
    await c.type('2 Side St');
    const ms = performance.now() - t;
    c.expectState('done');
    expect(c.sent).toHaveLength(11);
    expect(ms).toBeLessThan(1000); // about 20 ms on a 2-core machine; generous against CI load
  });
});

describe('the package entry point', () => {
  it('colloquy/testing resolves to the harness', async () => {
    const spec = 'colloquy/testing';
    const mod = (await import(spec)) as Record<string, unknown>;
    expect(mod['createTestBot']).toBe(createTestBot);
  });
});

describe('messages sent between actions', () => {
  it('what an invocation sends after an action ends is reported by the next action', async () => {
    const pizza = (await import('../../bots/pizza.js')).default;
    const c = await createTestBot(pizza);
    try {
      await c.type('hi');
      await c.tap('Margherita');
      await c.tap('large');
      await c.submitFlow({ street: 'Calle 5 de Mayo 12', city: 'Puebla' });
      await c.tap('Track my order'); // the lookup takes 50 ms of real time
      await c.settled();
      expect(c.latest.map((s) => s.kind)).toEqual(['text', 'text']);
      c.expectText(/is in the oven/).expectState('done');
    } finally {
      await c.close();
    }
  });
});

describe('nested states', () => {
  it('expectState takes dotted paths, the parent included, and says where it is in the same terms', async () => {
    const pizza = (await import('../../bots/pizza.js')).default;
    const c = await createTestBot(pizza);
    try {
      await c.type('hi');
      c.expectState('ordering.menu').expectState('ordering').expectState({ ordering: 'menu' });
      expect(() => c.expectState('ordering.size')).toThrow('Expected the conversation to be in state "ordering.size", but it is in "ordering.menu, ordering".');
    } finally {
      await c.close();
    }
  });
});

describe('chat.settled()', () => {
  it("waits for the live actor's invocation; what it sent is in latest", async () => {
    const pizza = (await import('../../bots/pizza.js')).default;
    const c = await createTestBot(pizza);
    try {
      await c.type('hi');
      await c.settled(); // nothing invoked: returns at once, as a step of its own
      expect(c.latest).toEqual([]);
      await c.tap('Margherita');
      await c.tap('large');
      await c.submitFlow({ street: 'Calle 5 de Mayo 12', city: 'Puebla' });
      await c.tap('Track my order'); // the lookup takes 50 ms of real time
      expect(c.invoking).toBe(true);
      c.expectState('tracking').expectNothingSent();
      await c.settled();
      expect(c.invoking).toBe(false);
      c.expectText(/is in the oven/).expectState('done');
      expect(c.steps.at(-1)).toMatchObject({ action: { settle: true }, state: 'done' });
    } finally {
      await c.close();
    }
  });

  it('names the state when an invocation does not settle in time', async () => {
    const { fromPromise } = await import('xstate');
    const pizza = (await import('../../bots/pizza.js')).default;
    const never = fromPromise<string, { orderId: string }>(() => new Promise<string>(() => {}));
    const c = await createTestBot({ ...pizza, machine: pizza.machine.provide({ actors: { trackOrder: never } }) });
    try {
      await c.type('hi');
      await c.tap('Margherita');
      await c.tap('large');
      await c.submitFlow({ street: 'Calle 5 de Mayo 12', city: 'Puebla' });
      await c.tap('Track my order');
      await expect(c.settled({ timeoutMs: 50 })).rejects.toThrow(/invocations of state tracking were still running after 50 ms/);
    } finally {
      await c.close();
    }
  });
});
