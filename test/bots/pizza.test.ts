/**
 * The pizza bot, through the public test harness (`colloquy/testing`): the order end to end, the
 * edge paths (stale taps, stray text, a stale flow answer, reminder, expiry, idle expiry, the
 * tracking lookup and its failure, the SMS fallback), rehydration, and `checkBot`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fromPromise } from 'xstate';
import { defineBot, type Bot } from 'colloquy';
import { checkRehydration, createTestBot, DEFAULT_TEST_USER, type RehydrationStep, type TestBotOptions, type TestConversation } from 'colloquy/testing';
import { checkBot } from '../../src/simulator/check.js';
import bot from '../../bots/pizza.js';

/** The harness clock's default start; the bot's order id reads the wall clock, so it is pinned here. */
const T0 = Date.UTC(2026, 0, 1, 12);
const ORDER_ID = 'P00018800'; // P + the user's last 4 digits (15551230001) + (T0 / 1000) % 10 000

let chat: TestConversation | undefined;
beforeEach(() => {
  vi.spyOn(Date, 'now').mockReturnValue(T0);
});
afterEach(async () => {
  await chat?.close();
  chat = undefined;
  vi.restoreAllMocks();
});

async function start(b: Bot = bot, options?: TestBotOptions): Promise<TestConversation> {
  chat = await createTestBot(b, options);
  return chat;
}

/** The bot with its order lookup replaced. */
function withTracker(trackOrder: ReturnType<typeof fromPromise<string, { orderId: string }>>): Bot {
  return defineBot({ ...bot, machine: bot.machine.provide({ actors: { trackOrder } }) });
}

/** A lookup the test settles by hand. */
function heldTracker() {
  const calls: string[] = [];
  let settle: { resolve: (v: string) => void; reject: (e: unknown) => void } | undefined;
  const actor = fromPromise(({ input }: { input: { orderId: string } }) => {
    calls.push(input.orderId);
    return new Promise<string>((resolve, reject) => {
      settle = { resolve, reject };
    });
  });
  return {
    actor,
    calls,
    resolve: (v: string) => settle!.resolve(v),
    reject: (e: unknown) => settle!.reject(e),
  };
}

const texts = (sent: readonly { kind: string; text?: string }[]) => sent.map((s) => [s.kind, s.text]);

const MENU_LIST = {
  headerText: "Luigi's Pizza",
  body: 'Hi! What would you like today?',
  footer: 'Delivery in about 30 minutes',
  buttonText: 'See the menu',
  sections: [
    {
      title: 'Pizzas',
      messages: [
        { id: 'margherita', title: 'Margherita', description: 'Tomato, mozzarella, basil - from $9.5' },
        { id: 'pepperoni', title: 'Pepperoni', description: 'Tomato, mozzarella, pepperoni - from $11' },
        { id: 'veggie', title: 'Garden', description: 'Peppers, olives, onion, mushrooms - from $10.5' },
      ],
    },
    { title: 'Drinks', messages: [{ id: 'lemonade', title: 'Lemonade', description: 'Fresh, 500 ml' }] },
  ],
};
const MARGHERITA_SIZES = {
  headerImage: { link: 'https://images.example.com/pizza/margherita.jpg' },
  body: 'Margherita: which size?',
  footer: 'Prices include tax',
  buttons: [
    { id: 'small', title: 'Small $9.50' },
    { id: 'medium', title: 'Medium $12.35' },
    { id: 'large', title: 'Large $15.20' },
  ],
};
const ENJOY = 'Enjoy your meal! Write any time to order again.';

/** hi → Margherita → the size buttons. */
async function toSize(c: TestConversation): Promise<void> {
  await c.type('hi');
  await c.tap('Margherita');
  c.expectState({ ordering: 'size' });
}

describe('pizza: the order end to end', () => {
  it('menu list → sizes with the photo → address flow → receipt with the PDF → tracking (the bot’s own lookup) → done', async () => {
    const c = await start();
    expect(c.state).toBeUndefined();

    await c.type('hi');
    c.expectState({ ordering: 'menu' }).expectSent({ kind: 'list', channel: 'interactive', text: 'What would you like today?', choices: ['Margherita', 'Pepperoni', 'Garden', 'Lemonade'] });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', fallback: false, listMessages: MENU_LIST });
    expect(c.last!.request).toMatchObject({ from: '15550000001', to: c.user, type: 'contacts' });

    await c.tap('Margherita'); // by title
    c.expectState({ ordering: 'size' }).expectChoices(['Small $9.50', 'Medium $12.35', 'Large $15.20']);
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'interactive', replyButtons: MARGHERITA_SIZES });
    expect(c.context).toEqual({ user: c.user, item: 'margherita' });

    await c.tap('large'); // by id
    c.expectState({ ordering: 'address' }).expectSent({ kind: 'flow', body: 'Where should we deliver?' });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({
      kind: 'flow',
      channel: 'interactive',
      flow: {
        body: 'Where should we deliver?',
        action: {
          name: 'flow',
          parameters: {
            mode: 'draft',
            flow_message_version: '3', // draft: the builder's default (see the report)
            flow_id: '771203945',
            flow_cta: 'Enter address',
            flow_action: 'navigate',
            flow_action_payload: { screen: 'DELIVERY_ADDRESS', data: { product_name: 'Margherita', product_description: 'large - Tomato, mozzarella, basil', product_price: 15.2 } },
          },
        },
      },
    });
    const flowToken = c.conversation!.flowToken;
    expect(c.last).toMatchObject({ flow: { action: { parameters: { flow_token: flowToken } } } });
    expect(flowToken).toMatch(/^ft_/);

    await c.submitFlow({ street: 'Calle 5 de Mayo 12', city: 'Puebla', notes: 'Blue door' });
    c.expectState('placed').expectChoices(['Track my order', "That's all"]);
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({
      kind: 'buttons',
      channel: 'interactive',
      replyButtons: {
        headerDocument: { link: `https://receipts.example.com/${ORDER_ID}.pdf`, fileName: `receipt-${ORDER_ID}.pdf` },
        body: 'Thanks! large Margherita for $15.20, to Calle 5 de Mayo 12, Puebla. Your receipt is attached.',
      },
    });
    c.expectText(`receipt-${ORDER_ID}.pdf`);
    expect(c.context).toEqual({ user: c.user, item: 'margherita', size: 'large', address: 'Calle 5 de Mayo 12, Puebla', orderId: ORDER_ID });

    const before = c.sent.length;
    await c.tap('Track my order');
    await c.settled(); // the bot's own trackOrder waits 50 ms (real time)
    expect(c.state).toBe('done');
    expect(c.conversation).toMatchObject({ status: 'done' });
    expect(c.conversation!.endedAt).not.toBeNull();
    const status = `Order ${ORDER_ID} is in the oven and leaves in about 15 minutes.`;
    expect(texts(c.sent.slice(before))).toEqual([
      ['text', status],
      ['text', ENJOY],
    ]);
    expect(c.sent.slice(before).every((s) => s.channel === 'sms')).toBe(true); // text has no interactive body
    expect(c.context).toMatchObject({ orderId: ORDER_ID, status });
    expect(c.sent.map((s) => s.kind)).toEqual(['list', 'buttons', 'flow', 'buttons', 'text', 'text']);

    const inbound = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => e.event);
    expect(inbound.slice(1, 3)).toEqual([
      { type: 'reply.margherita', id: 'margherita', title: 'Margherita', via: 'list' },
      { type: 'reply.large', id: 'large', title: 'Large $15.20', via: 'button' },
    ]);
  });

  it("takes a typed address instead of the flow; “That's all” ends it, and the next message starts a new conversation", async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('Pepperoni');
    expect(c.last).toMatchObject({ replyButtons: { headerImage: { link: 'https://images.example.com/pizza/pepperoni.jpg' }, body: 'Pepperoni: which size?' } });
    c.expectChoices(['Small $11.00', 'Medium $14.30', 'Large $17.60']);
    await c.tap('Medium $14.30');
    expect(c.last).toMatchObject({
      kind: 'flow',
      flow: { action: { parameters: { flow_action_payload: { data: { product_name: 'Pepperoni', product_description: 'medium - Tomato, mozzarella, pepperoni', product_price: 14.3 } } } } },
    });
    await c.type('  Av. Juárez 5, Puebla  ');
    c.expectState('placed').expectSent({ kind: 'buttons', text: 'Thanks! medium Pepperoni for $14.30, to Av. Juárez 5, Puebla. Your receipt is attached.' });
    const first = c.conversation!;

    await c.tap("That's all");
    c.expectState('done');
    expect(texts(c.latest)).toEqual([['text', ENJOY]]);
    expect(c.conversation).toMatchObject({ id: first.id, status: 'done' });

    await c.type('hi again');
    c.expectState({ ordering: 'menu' }).expectSent({ kind: 'list', choices: ['Margherita', 'Pepperoni', 'Garden', 'Lemonade'] });
    expect(c.latest).toHaveLength(1);
    expect(c.conversation!.id).not.toBe(first.id);
    expect(c.conversation!.status).toBe('active');
    expect(c.conversation!.flowToken).not.toBe(first.flowToken);
    expect(c.context).toEqual({ user: c.user });
  });
});

describe('pizza: unhandled input', () => {
  it('a stale tap (a menu row, after the menu) re-sends the size buttons and changes nothing', async () => {
    const c = await start();
    await toSize(c);
    await c.send({ type: 'reply.pepperoni', id: 'pepperoni', title: 'Pepperoni', via: 'list' });
    c.expectState({ ordering: 'size' });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: MARGHERITA_SIZES });
    expect(c.context).toEqual({ user: c.user, item: 'margherita' });
  });

  it('a stale tap on the receipt’s older size buttons re-sends the receipt', async () => {
    const c = await start();
    await toSize(c);
    await c.tap('Small $9.50');
    await c.submitFlow({ street: 'Reforma 1', city: 'CDMX' });
    c.expectState('placed');
    await c.send({ type: 'reply.large', id: 'large', title: 'Large $15.20', via: 'button' });
    c.expectState('placed').expectSent({ kind: 'buttons', text: 'Thanks! small Margherita for $9.50, to Reforma 1, CDMX.', choices: ['Track my order', "That's all"] });
    expect(c.latest).toHaveLength(1);
    expect(c.context).toMatchObject({ size: 'small' });
  });

  it('unexpected text re-sends the current prompt (the menu, then the sizes)', async () => {
    const c = await start();
    await c.type('hi');
    await c.type('do you have calzone?');
    c.expectState({ ordering: 'menu' });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', listMessages: MENU_LIST });
    await c.tap('Garden');
    await c.type('the big one');
    c.expectState({ ordering: 'size' }).expectSent({ kind: 'buttons', text: 'Garden: which size?', choices: ['Small $10.50', 'Medium $13.65', 'Large $16.80'] });
    expect(c.latest).toHaveLength(1);
  });

  it('a flow answer with a token that is not this conversation’s is not taken: the flow is sent again', async () => {
    const c = await start();
    await toSize(c);
    await c.tap('Large');
    await c.send({ type: 'flow', token: 'ft_from_another_conversation', data: { street: 'Nowhere 1', city: 'X' } });
    c.expectState({ ordering: 'address' }).expectSent({ kind: 'flow', body: 'Where should we deliver?' });
    expect(c.latest).toHaveLength(1);
    expect(c.context).not.toHaveProperty('address');
  });
});

describe('pizza: timers', () => {
  it('the reminder goes out 5 minutes after the sizes, once, and the conversation stays in size', async () => {
    const c = await start();
    await toSize(c);
    await c.advance('4m59s');
    c.expectNothingSent();
    await c.advance('1s');
    c.expectState({ ordering: 'size' });
    expect(texts(c.latest)).toEqual([['text', 'Still there? Tap a size whenever you are ready.']]);
    await c.advance('20m');
    c.expectNothingSent().expectState({ ordering: 'size' });
    await c.tap('Small $9.50'); // the size buttons still work after the nudge
    c.expectState({ ordering: 'address' });
  });

  // Regression: a reminder (same state, nothing interactive said) must keep the stored prompt.
  it('after the reminder, unhandled input re-sends the size buttons', async () => {
    const c = await start();
    await toSize(c);
    await c.advance('5m');
    c.expectText('Still there?');
    await c.type('hello?');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: MARGHERITA_SIZES });
  });

  it('an unfinished order is abandoned 30 minutes after the menu; the next message starts a new conversation', async () => {
    const c = await start();
    await toSize(c);
    await c.tap('Medium'); // an id, in another case
    c.expectState({ ordering: 'address' });
    await c.advance('29m59s');
    c.expectNothingSent().expectState({ ordering: 'address' });
    await c.advance('1s');
    c.expectState('abandoned');
    expect(texts(c.latest)).toEqual([['text', 'Your order was not finished, so we cancelled it. Write any time to start again.']]);
    expect(c.conversation).toMatchObject({ status: 'done' });
    const ended = c.conversation!;

    await expect(c.submitFlow({ street: 'Late 1', city: 'Y' })).rejects.toThrow('has not started or has ended');
    await c.type('hi');
    c.expectState({ ordering: 'menu' }).expectSent({ kind: 'list', choices: ['Margherita', 'Pepperoni', 'Garden', 'Lemonade'] });
    expect(c.conversation!.id).not.toBe(ended.id);
  });

  it('the expiry dies with the ordering state: a placed order is not abandoned', async () => {
    const c = await start();
    await toSize(c);
    await c.tap('Large');
    await c.submitFlow({ street: 'Reforma 1', city: 'CDMX' });
    c.expectState('placed');
    await c.advance('31m');
    c.expectNothingSent().expectState('placed');
    expect(c.conversation!.status).toBe('active');
  });

  it('an idle conversation expires after 2 hours (the bot’s expireAfterMs): the next message starts over', async () => {
    const c = await start();
    await toSize(c);
    await c.tap('Large');
    await c.submitFlow({ street: 'Reforma 1', city: 'CDMX' });
    const placed = c.conversation!;
    await c.advance('1h59m');
    await c.type('still there?'); // within 2 h: the same conversation, the receipt again
    c.expectState('placed').expectSent({ kind: 'buttons', choices: ['Track my order', "That's all"] });
    expect(c.conversation).toMatchObject({ id: placed.id, status: 'active' });
    await c.advance('2h');
    await c.type('hi');
    c.expectState({ ordering: 'menu' }).expectSent({ kind: 'list', choices: ['Margherita', 'Pepperoni', 'Garden', 'Lemonade'] });
    expect(c.conversation!.id).not.toBe(placed.id);
    const all = await c.store.conversations({ botId: 'pizza', user: c.user });
    expect(all.map((x) => [x.id, x.status])).toEqual([
      [placed.id, 'expired'],
      [c.conversation!.id, 'active'],
    ]);
  });
});

describe('pizza: the tracking lookup', () => {
  async function toPlaced(c: TestConversation): Promise<void> {
    await toSize(c);
    await c.tap('Large');
    await c.submitFlow({ street: 'Reforma 1', city: 'CDMX' });
    c.expectState('placed');
  }

  it('sends the lookup’s result once it settles, then ends the order', async () => {
    const lookup = heldTracker();
    const c = await start(withTracker(lookup.actor));
    await toPlaced(c);
    await c.tap('track');
    c.expectState('tracking').expectNothingSent();
    expect(lookup.calls).toEqual([ORDER_ID]);
    const before = c.sent.length;
    lookup.resolve(`Order ${ORDER_ID}: the rider is two streets away.`);
    await c.settled();
    c.expectState('done');
    expect(texts(c.sent.slice(before))).toEqual([
      ['text', `Order ${ORDER_ID}: the rider is two streets away.`],
      ['text', ENJOY],
    ]);
    expect(c.context).toMatchObject({ status: `Order ${ORDER_ID}: the rider is two streets away.` });
    expect(c.conversation!.status).toBe('done');
    expect(lookup.calls).toHaveLength(1);
  });

  it('a lookup that fails sends the apology, then ends the order', async () => {
    const lookup = heldTracker();
    const c = await start(withTracker(lookup.actor));
    await toPlaced(c);
    await c.tap('Track my order');
    const before = c.sent.length;
    lookup.reject(new Error('order system down'));
    await c.settled();
    c.expectState('done');
    expect(texts(c.sent.slice(before))).toEqual([
      ['text', 'We could not look your order up just now; it is on its way all the same.'],
      ['text', ENJOY],
    ]);
    expect(c.context).not.toHaveProperty('status');
    expect(c.conversation!.status).toBe('done');
  });

  // Regression: an invocation that settles while its own turn commits, into a final state, is
  // still committed (the live actor is kept while dirty).
  it('a lookup that settles at once is committed', async () => {
    const c = await start(withTracker(fromPromise(async ({ input }: { input: { orderId: string } }) => `Order ${input.orderId} is out.`)));
    await toPlaced(c);
    await c.tap('Track my order');
    c.expectState('done');
    expect(texts(c.latest)).toEqual([
      ['text', `Order ${ORDER_ID} is out.`],
      ['text', ENJOY],
    ]);
  });

  // Regression: a wake() during the dispatcher's last pump steps is not lost.
  it('a result committed while the dispatcher pumps is sent without waiting for another wake', async () => {
    const lookup = heldTracker();
    const c = await start(withTracker(lookup.actor));
    await toPlaced(c);
    await c.tap('track');
    lookup.resolve('Out for delivery.');
    await c.advance(0); // no tick between: the commit's wake meets the poke's pump
    c.expectState('done');
    expect(texts(c.latest)).toEqual([
      ['text', 'Out for delivery.'],
      ['text', ENJOY],
    ]);
  });
});

describe('pizza: SMS fallback', () => {
  const MENU_SMS =
    "Luigi's Pizza\n" +
    'Hi! What would you like today?\n\nPizzas\n1. Margherita - Tomato, mozzarella, basil - from $9.5\n2. Pepperoni - Tomato, mozzarella, pepperoni - from $11\n3. Garden - Peppers, olives, onion, mushrooms - from $10.5\n\nDrinks\n4. Lemonade - Fresh, 500 ml\n\nDelivery in about 30 minutes\nReply with a number.';
  const SIZES_SMS = 'Margherita: which size?\nhttps://images.example.com/pizza/margherita.jpg\n\n1. Small $9.50\n2. Medium $12.35\n3. Large $15.20\n\nPrices include tax\nReply with a number.';

  it('with WhatsApp refused, the order goes on by SMS: a number, a title and a typed address', async () => {
    const c = await start(); // the bot's own trackOrder (50 ms)
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    c.expectState({ ordering: 'menu' }).expectSent({ kind: 'list', channel: 'sms' });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', channel: 'sms', fallback: true, text: MENU_SMS });
    expect(c.sandbox.messagesTo(c.user).map((m) => m.channel)).toEqual(['sms']); // the refused request was not accepted
    expect(c.conversation!.channel).toBe('sms');

    await c.sms('1');
    c.expectState({ ordering: 'size' });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms', fallback: false, text: SIZES_SMS }); // straight by SMS now

    await c.sms('large $15.20'); // a title, any case
    c.expectState({ ordering: 'address' });
    expect(c.last).toMatchObject({ kind: 'flow', channel: 'sms', text: 'Reply with your delivery address (street, number, city).' });

    await c.sms('Calle 5 de Mayo 12, Puebla');
    c.expectState('placed');
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms' });
    expect(c.last!.text).toMatch(
      /^Thanks! large Margherita for \$15\.20, to Calle 5 de Mayo 12, Puebla\. Your receipt is attached\.\n[\s\S]*\n1\. Track my order\n2\. That's all\n\nReply with a number\.$/,
    );
    expect(c.context).toMatchObject({ address: 'Calle 5 de Mayo 12, Puebla', orderId: ORDER_ID });

    const before = c.sent.length;
    await c.sms('1.');
    await c.settled();
    c.expectState('done');
    expect(texts(c.sent.slice(before))).toEqual([
      ['text', `Order ${ORDER_ID} is in the oven and leaves in about 15 minutes.`],
      ['text', ENJOY],
    ]);
    expect(c.sent.every((s) => s.channel === 'sms')).toBe(true);

    const inbound = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => [e.source, e.event]);
    expect(inbound).toEqual([
      ['whatsapp', { type: 'text', text: 'hi', via: 'whatsapp' }],
      ['sms', { type: 'text', text: '1', via: 'sms' }],
      ['sms', { type: 'text', text: 'large $15.20', via: 'sms' }],
      ['sms', { type: 'text', text: 'Calle 5 de Mayo 12, Puebla', via: 'sms' }],
      ['sms', { type: 'text', text: '1.', via: 'sms' }],
    ]);
    expect(c.context).toMatchObject({ item: 'margherita', size: 'large' }); // "1" and the title became reply.margherita / reply.large
  });

  it('an SMS answer that names no choice re-sends the prompt by SMS', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    await c.sms('7');
    c.expectState({ ordering: 'menu' });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', channel: 'sms', text: MENU_SMS });
  });

  it('SMS mode ends when the user writes on WhatsApp again', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    await c.sms('Margherita');
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms' });
    c.sandbox.faults.allowInteractive(c.user);
    await c.type('sorry, which sizes?');
    c.expectState({ ordering: 'size' });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'interactive', fallback: false, replyButtons: MARGHERITA_SIZES });
    expect(c.conversation!.channel).toBe('interactive');
    await c.tap('Small $9.50');
    c.expectState({ ordering: 'address' }).expectSent({ kind: 'flow', channel: 'interactive' });
  });

  // Regression: the receipt's SMS stays GSM-7 (no typographic apostrophe), so the PDF's link fits.
  it('by SMS, the receipt carries the PDF’s link', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    await c.sms('1');
    await c.sms('3');
    await c.sms('Calle 5 de Mayo 12, Puebla');
    c.expectState('placed').expectText(`https://receipts.example.com/${ORDER_ID}.pdf`);
  });
});

describe('pizza: rehydration', () => {
  it('a path run in memory, and through the store with a new runtime at every step, ends the same', async () => {
    const steps: RehydrationStep[] = [
      // the bot as it is: its own trackOrder (50 ms)
      { event: { type: 'text', text: 'hi', via: 'whatsapp' } },
      { event: { type: 'reply.margherita', id: 'margherita', title: 'Margherita', via: 'list' } },
      { event: { type: 'reply.veggie', id: 'veggie', title: 'Garden', via: 'list' }, reprompts: 1 }, // stale tap
      { advance: '5m' }, // the reminder
      { event: { type: 'reply.large', id: 'large', title: 'Large $15.20', via: 'button' } },
      { flow: { street: 'Calle 5 de Mayo 12', city: 'Puebla' } },
      { event: { type: 'reply.track', id: 'track', title: 'Track my order', via: 'button' } },
    ];
    // Date.now is pinned to T0 by this file's beforeEach, so the run's own pinning is off.
    const { memory, straight, restarted } = await checkRehydration(bot, steps, { busy: ['tracking'], now: T0, pinDateNow: false });

    expect(memory.states).toEqual(['{"ordering":"menu"}', '{"ordering":"size"}', '{"ordering":"size"}', '{"ordering":"size"}', '{"ordering":"address"}', 'placed', 'done']);
    for (const run of [straight, restarted]) expect(run.final).toEqual({ state: 'done', status: 'done', context: memory.context });
    expect(memory.context).toEqual({
      user: DEFAULT_TEST_USER,
      item: 'margherita',
      size: 'large',
      address: 'Calle 5 de Mayo 12, Puebla',
      orderId: ORDER_ID,
      status: `Order ${ORDER_ID} is in the oven and leaves in about 15 minutes.`,
    });
    expect(straight.requests).toHaveLength(8); // list, sizes, sizes again, reminder, flow, receipt, status, goodbye
  });
});

it('pizza: checkBot finds nothing', () => {
  expect(checkBot(bot)).toEqual([]);
});
