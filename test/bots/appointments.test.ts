/**
 * The appointments bot, through the public test harness (`colloquy/testing`): a booking end to
 * end, the edge paths (stale taps, stray text, the slot guard, reminder, release, the slot lookup's
 * empty and failing answers, the SMS fallback), rehydration, and `checkBot`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { fromPromise } from 'xstate';
import { defineBot, type Bot } from 'colloquy';
import { checkRehydration, createTestBot, DEFAULT_TEST_USER, type RehydrationStep, type TestBotOptions, type TestConversation } from 'colloquy/testing';
import { checkBot } from '../../src/simulator/check.js';
import bot, { BOOKING_FLOW_ID, freeTimes, type Service, type Slot } from '../../bots/appointments.js';

let chat: TestConversation | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

async function start(b: Bot = bot, options?: TestBotOptions): Promise<TestConversation> {
  chat = await createTestBot(b, options);
  return chat;
}

/** The bot with its slot lookup replaced. */
function withSlots(find: (service: Service) => Promise<Slot[]>): Bot {
  const findSlots = fromPromise(({ input }: { input: { service: Service } }) => find(input.service));
  return defineBot({ ...bot, machine: bot.machine.provide({ actors: { findSlots } }) });
}

const texts = (sent: readonly { kind: string; text?: string }[]) => sent.map((s) => [s.kind, s.text]);

const SERVICE_LIST = {
  headerText: 'Studio Nova',
  body: 'Book an appointment: which service?',
  buttonText: 'Services',
  sections: [
    {
      title: 'Hair',
      messages: [
        { id: 'haircut', title: 'Haircut', description: '30 min - $25' },
        { id: 'color', title: 'Color', description: '90 min - $70' },
      ],
    },
    {
      title: 'Nails',
      messages: [
        { id: 'manicure', title: 'Manicure', description: '45 min - $20' },
        { id: 'pedicure', title: 'Pedicure', description: '60 min - $30' },
      ],
    },
  ],
};
const SERVICES = ['Haircut', 'Color', 'Manicure', 'Pedicure'];
const CHAIR = 'https://images.example.com/studio-nova/chair.png';
const TUE = [
  { id: 'slot1', label: 'Tue 10:00' },
  { id: 'slot2', label: 'Tue 13:30' },
];

/** The slot buttons' body for a haircut on Tuesday. */
const haircutSlots = {
  headerImage: { link: CHAIR },
  body: 'Haircut (30 min). Pick a time:',
  buttons: [
    { id: 'slot1', title: 'Tue 10:00' },
    { id: 'slot2', title: 'Tue 13:30' },
    { id: 'more', title: 'Other times' },
  ],
};
const confirming = (label: string, service = 'Haircut') => ({
  body: `${service} on ${label}. Shall I book it?`,
  footer: 'We hold the slot for 30 minutes',
  buttons: [
    { id: 'confirm', title: 'Book it' },
    { id: 'change', title: 'Another time' },
  ],
});

/** hi → Haircut → (the bot’s own lookup) → the slot buttons. */
async function toSlot(c: TestConversation): Promise<void> {
  await c.type('hi');
  await c.tap('Haircut');
  await c.settled();
  c.expectState('slot');
}

describe('appointments: a booking end to end', () => {
  it('service list → slots looked up (the bot’s own lookup) as buttons with the photo → confirm → booked', async () => {
    const c = await start();
    await c.type('hi');
    c.expectState('service').expectSent({ kind: 'list', channel: 'interactive', text: 'which service?', choices: SERVICES });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', listMessages: SERVICE_LIST });
    expect(c.last!.request).toMatchObject({ from: '15550000002', to: c.user, type: 'contacts' });
    expect(c.context).toEqual({ user: c.user, slots: [] });

    const before = c.sent.length;
    await c.tap('Haircut');
    // the lookup takes 50 ms: the tap itself says nothing, the slots follow
    await c.settled();
    c.expectState('slot').expectChoices(['Tue 10:00', 'Tue 13:30', 'Other times']);
    expect(c.sent.slice(before)).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'interactive', replyButtons: haircutSlots });
    expect(c.context).toEqual({ user: c.user, service: 'haircut', slots: TUE });

    await c.tap('Tue 13:30');
    c.expectState('confirming').expectChoices(['Book it', 'Another time']);
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: confirming('Tue 13:30') });
    expect(c.last).not.toHaveProperty('replyButtons.headerImage');
    expect(c.context).toMatchObject({ slot: { id: 'slot2', label: 'Tue 13:30' } });

    await c.tap('Book it');
    c.expectState('booked');
    expect(texts(c.latest)).toEqual([['text', 'Booked: Haircut, Tue 13:30. See you at Studio Nova!']]);
    expect(c.conversation).toMatchObject({ status: 'done' });
    expect(c.conversation!.endedAt).not.toBeNull();
    expect(c.sent.map((s) => s.kind)).toEqual(['list', 'buttons', 'buttons', 'text']);

    const inbound = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => e.event);
    expect(inbound).toEqual([
      { type: 'text', text: 'hi', via: 'whatsapp' },
      { type: 'reply.haircut', id: 'haircut', title: 'Haircut', via: 'list' },
      { type: 'reply.slot2', id: 'slot2', title: 'Tue 13:30', via: 'button' },
      { type: 'reply.confirm', id: 'confirm', title: 'Book it', via: 'button' },
    ]);
  });

  it('“Another time” shows the slots again; a color books on Wednesday; the next message starts a new conversation', async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('color');
    await c.settled();
    expect(c.last).toMatchObject({ replyButtons: { headerImage: { link: CHAIR }, body: 'Color (90 min). Pick a time:' } });
    c.expectChoices(['Wed 10:00', 'Wed 13:30', 'Other times']);
    await c.tap('slot1');
    expect(c.last).toMatchObject({ replyButtons: confirming('Wed 10:00', 'Color') });

    await c.tap('Another time');
    c.expectState('slot').expectSent({ kind: 'buttons', text: 'Color (90 min). Pick a time:', choices: ['Wed 10:00', 'Wed 13:30', 'Other times'] });
    expect(c.latest).toHaveLength(1);
    await c.tap('Wed 13:30');
    await c.tap('Book it');
    c.expectState('booked');
    expect(texts(c.latest)).toEqual([['text', 'Booked: Color, Wed 13:30. See you at Studio Nova!']]);
    const ended = c.conversation!;
    expect(ended.status).toBe('done');

    await c.type('hi, one more');
    c.expectState('service').expectSent({ kind: 'list', choices: SERVICES });
    expect(c.latest).toHaveLength(1);
    expect(c.conversation!.id).not.toBe(ended.id);
    expect(c.conversation!.status).toBe('active');
    expect(c.context).toEqual({ user: c.user, slots: [] });
  });
});

describe('appointments: “Other times” opens the booking flow', () => {
  it('sends a live flow (data_exchange, “See times”) with its own token; the quick slots still work', async () => {
    const c = await start();
    await toSlot(c);
    await c.tap('Other times');
    c.expectState('picking');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({
      kind: 'flow',
      flow: { body: 'Haircut: pick a day, then a time.', action: { parameters: { flow_id: BOOKING_FLOW_ID, flow_cta: 'See times', flow_action: 'data_exchange' } } },
    });
    const token = (c.last as { flow: { action: { parameters: { flow_token: string } } } }).flow.action.parameters.flow_token;
    expect(token).toBe(c.conversation!.flowToken);
    expect(c.last).not.toHaveProperty('flow.action.parameters.flow_action_payload');
    await c.send({ type: 'reply.slot2', id: 'slot2', title: 'Tue 13:30', via: 'button' });
    c.expectState('confirming');
    expect(c.context).toMatchObject({ slot: { id: 'slot2', label: 'Tue 13:30' } });
  });

  it('a flow answer that completes on the phone with { day, slot } books too; a taken time re-sends the flow', async () => {
    const c = await start();
    await toSlot(c);
    await c.tap('Other times');
    const day = '2026-11-27';
    const taken = ['09:00', '10:00', '11:30', '13:00', '14:30', '16:00', '17:30'].find((t) => !freeTimes(day).includes(t))!;
    await c.submitFlow({ day, slot: taken });
    c.expectState('picking');
    expect(c.latest.map((m) => m.kind)).toEqual(['flow']);
    await c.submitFlow({ day, slot: freeTimes(day)[0]! });
    c.expectState('booked');
    expect(texts(c.latest)).toEqual([['text', `Booked: Haircut, Fri 27 Nov ${freeTimes(day)[0]}. See you at Studio Nova!`]]);
    expect(c.context).toMatchObject({ booking: `SN-20261127-${freeTimes(day)[0]!.replace(':', '')}` });
  });

  it('by SMS the flow cannot open: its SMS text says how to get another time', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    await c.sms('1');
    await c.settled();
    await c.sms('3');
    c.expectState('picking');
    expect(c.last).toMatchObject({ kind: 'flow', channel: 'sms', text: expect.stringContaining('call us on +1 555 000 0002') as unknown });
  });
});

describe('appointments: unhandled input', () => {
  it('a stale tap (a service row, then a slot button) while confirming re-sends the confirmation and changes nothing', async () => {
    const c = await start();
    await toSlot(c);
    await c.tap('Tue 10:00');
    c.expectState('confirming');
    await c.send({ type: 'reply.color', id: 'color', title: 'Color', via: 'list' });
    c.expectState('confirming');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: confirming('Tue 10:00') });
    await c.send({ type: 'reply.slot2', id: 'slot2', title: 'Tue 13:30', via: 'button' });
    c.expectState('confirming');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: confirming('Tue 10:00') });
    expect(c.context).toMatchObject({ service: 'haircut', slot: { id: 'slot1', label: 'Tue 10:00' } });
  });

  it('a tap on the old confirmation after “Another time” re-sends the slots', async () => {
    const c = await start();
    await toSlot(c);
    await c.tap('Tue 10:00');
    await c.tap('Another time');
    c.expectState('slot');
    await c.send({ type: 'reply.confirm', id: 'confirm', title: 'Book it', via: 'button' });
    c.expectState('slot');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: haircutSlots });
  });

  it('unexpected text re-sends the current prompt (the services, then the slots)', async () => {
    const c = await start();
    await c.type('hi');
    await c.type('can I come tomorrow?');
    c.expectState('service');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', listMessages: SERVICE_LIST });
    await c.tap('Haircut');
    await c.settled();
    await c.type('morning please');
    c.expectState('slot');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: haircutSlots });
  });

  it('a slot button beyond the slots found is refused by the guard: the slots are sent again', async () => {
    const c = await start(withSlots(async () => [{ id: 'slot1', label: 'Fri 09:00' }]));
    await c.type('hi');
    await c.tap('Manicure');
    c.expectState('slot').expectChoices(['Fri 09:00', 'Other times']);
    await c.send({ type: 'reply.slot2', id: 'slot2', title: 'Tue 13:30', via: 'button' }); // from an older search
    c.expectState('slot').expectSent({ kind: 'buttons', text: 'Manicure (45 min). Pick a time:', choices: ['Fri 09:00', 'Other times'] });
    expect(c.latest).toHaveLength(1);
    expect(c.context).not.toHaveProperty('slot');
  });
});

describe('appointments: the reminder and the release', () => {
  async function toConfirming(c: TestConversation): Promise<void> {
    await toSlot(c);
    await c.tap('Tue 13:30');
    c.expectState('confirming');
  }

  it('reminds at 10 minutes, once, naming the held slot; “Book it” still works after it', async () => {
    const c = await start();
    await toConfirming(c);
    await c.advance('9m59s');
    c.expectNothingSent();
    await c.advance('1s');
    c.expectState('confirming');
    expect(texts(c.latest)).toEqual([['text', 'Reminder: Tue 13:30 is still held for you. Tap "Book it" to confirm.']]);
    await c.advance('19m');
    c.expectNothingSent().expectState('confirming');
    await c.tap('Book it');
    c.expectState('booked').expectText('Booked: Haircut, Tue 13:30.');
  });

  it('releases the slot at 30 minutes and ends the conversation; the next message starts a new one', async () => {
    const c = await start();
    await toConfirming(c);
    await c.advance('29m59s');
    expect(c.state).toBe('confirming');
    await c.advance('1s');
    c.expectState('released');
    expect(texts(c.latest)).toEqual([['text', 'We released the slot since we did not hear back. Write any time to book again.']]);
    expect(c.conversation).toMatchObject({ status: 'done' });
    const ended = c.conversation!;
    await c.advance('1h');
    c.expectNothingSent();

    await c.send({ type: 'reply.confirm', id: 'confirm', title: 'Book it', via: 'button' }); // too late: a new conversation
    c.expectState('service').expectSent({ kind: 'list', choices: SERVICES });
    expect(c.latest).toHaveLength(1);
    expect(c.conversation!.id).not.toBe(ended.id);
  });

  it('leaving the confirmation cancels its timers; coming back arms new ones', async () => {
    const c = await start();
    await toConfirming(c);
    await c.advance('8m');
    await c.tap('Another time');
    await c.tap('Tue 10:00');
    c.expectState('confirming');
    await c.advance('8m'); // 16 min after the first confirmation, 8 after the second
    c.expectNothingSent();
    await c.advance('2m');
    expect(texts(c.latest)).toEqual([['text', 'Reminder: Tue 10:00 is still held for you. Tap "Book it" to confirm.']]);
    await c.advance('19m'); // 29 min after the second confirmation
    c.expectNothingSent().expectState('confirming');
    await c.advance('1m');
    c.expectState('released');
  });

  // Regression: a reminder (same state, nothing interactive said) must keep the stored prompt.
  it('after the reminder, unhandled input re-sends the confirmation buttons', async () => {
    const c = await start();
    await toConfirming(c);
    await c.advance('10m');
    await c.type('what was it again?');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: confirming('Tue 13:30') });
  });
});

describe('appointments: the slot lookup', () => {
  it('sends what the lookup found, at most two, for the service asked, and “Other times”', async () => {
    const asked: Service[] = [];
    const c = await start(
      withSlots(async (service) => {
        asked.push(service);
        return [1, 2, 3, 4].map((i) => ({ id: `slot${i}`, label: `Thu 0${i}:00` }));
      }),
    );
    await c.type('hi');
    await c.tap('Pedicure');
    c.expectState('slot').expectSent({ kind: 'buttons', text: 'Pedicure (60 min). Pick a time:', choices: ['Thu 01:00', 'Thu 02:00', 'Other times'] });
    expect(c.latest).toHaveLength(1);
    expect(asked).toEqual(['pedicure']);
    expect((c.context as { slots: Slot[] }).slots).toHaveLength(2);
  });

  it('no free slots: says so and offers the services again', async () => {
    const c = await start(withSlots(async () => []));
    await c.type('hi');
    await c.tap('Color');
    c.expectState('service');
    expect(c.latest.map((s) => s.kind)).toEqual(['text', 'list']);
    expect(c.latest[0]).toMatchObject({ kind: 'text', text: 'No free slots this week, sorry. Another service?' });
    expect(c.latest[1]).toMatchObject({ kind: 'list', listMessages: SERVICE_LIST });
    await c.tap('Haircut'); // the list works again
    c.expectState('service').expectText('No free slots');
  });

  it('a lookup that fails says the calendar is not answering and offers the services again', async () => {
    let calls = 0;
    const c = await start(
      withSlots(async () => {
        if (++calls === 1) throw new Error('calendar timeout');
        return [{ id: 'slot1', label: 'Sat 11:00' }];
      }),
    );
    await c.type('hi');
    await c.tap('Haircut');
    c.expectState('service');
    expect(texts(c.latest.slice(0, 1))).toEqual([['text', 'Our calendar is not answering; please try again in a minute.']]);
    expect(c.latest[1]).toMatchObject({ kind: 'list', listMessages: SERVICE_LIST });
    expect(c.latest).toHaveLength(2);
    await c.tap('Haircut'); // a second try goes through
    c.expectState('slot').expectChoices(['Sat 11:00', 'Other times']);
  });
});

describe('appointments: SMS fallback', () => {
  const LIST_SMS =
    'Studio Nova\nBook an appointment: which service?\n\nHair\n1. Haircut - 30 min - $25\n2. Color - 90 min - $70\n\nNails\n3. Manicure - 45 min - $20\n4. Pedicure - 60 min - $30\n\nReply with a number.';
  const SLOTS_SMS = `Color (90 min). Pick a time:\n${CHAIR}\n\n1. Wed 10:00\n2. Wed 13:30\n3. Other times\n\nReply with a number.`;
  const CONFIRM_SMS = 'Color on Wed 13:30. Shall I book it?\n\n1. Book it\n2. Another time\n\nWe hold the slot for 30 minutes\nReply with a number.';

  it('with WhatsApp refused, the booking goes on by SMS: a number, a slot’s title, the reminder, “1”', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    c.expectState('service');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', channel: 'sms', fallback: true, text: LIST_SMS });
    expect(c.sandbox.messagesTo(c.user).map((m) => m.channel)).toEqual(['sms']);

    const before = c.sent.length;
    await c.sms('2');
    await c.settled();
    c.expectState('slot');
    expect(c.sent.slice(before)).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms', fallback: false, text: SLOTS_SMS });

    await c.sms('wed 13:30'); // a title, any case
    c.expectState('confirming');
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms', text: CONFIRM_SMS });

    await c.advance('10m');
    expect(texts(c.latest)).toEqual([['text', 'Reminder: Wed 13:30 is still held for you. Tap "Book it" to confirm.']]);
    expect(c.last!.channel).toBe('sms');

    await c.sms('1');
    c.expectState('booked');
    expect(texts(c.latest)).toEqual([['text', 'Booked: Color, Wed 13:30. See you at Studio Nova!']]);
    expect(c.sent.every((s) => s.channel === 'sms')).toBe(true);
    expect(c.context).toMatchObject({ service: 'color', slot: { id: 'slot2', label: 'Wed 13:30' } });
  });

  it('“Book it” typed by SMS picks the button by its title; an unknown answer re-sends the prompt by SMS', async () => {
    const c = await start(withSlots(async () => TUE));
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    await c.sms('1.');
    await c.sms('2');
    c.expectState('confirming');
    await c.sms('maybe');
    c.expectState('confirming');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms', text: expect.stringContaining('Haircut on Tue 13:30. Shall I book it?') as unknown });
    await c.sms('BOOK IT');
    c.expectState('booked').expectText('Booked: Haircut, Tue 13:30.');
  });
});

describe('appointments: rehydration', () => {
  it('a path run in memory, and through the store with a new runtime at every step, ends the same', async () => {
    const steps: RehydrationStep[] = [
      { event: { type: 'text', text: 'hi', via: 'whatsapp' } },
      { event: { type: 'reply.color', id: 'color', title: 'Color', via: 'list' } }, // the bot's own lookup
      { event: { type: 'text', text: 'afternoon?', via: 'whatsapp' }, reprompts: 1 },
      { event: { type: 'reply.slot2', id: 'slot2', title: 'Wed 13:30', via: 'button' } },
      { advance: '10m' }, // the reminder
      { event: { type: 'reply.change', id: 'change', title: 'Another time', via: 'button' } },
      { event: { type: 'reply.slot1', id: 'slot1', title: 'Wed 10:00', via: 'button' } },
      { event: { type: 'reply.confirm', id: 'confirm', title: 'Book it', via: 'button' } },
    ];
    const { memory, straight, restarted } = await checkRehydration(bot, steps, { busy: ['searching'] });

    expect(memory.states).toEqual(['service', 'slot', 'slot', 'confirming', 'confirming', 'slot', 'confirming', 'booked']);
    for (const run of [straight, restarted]) expect(run.final).toEqual({ state: 'booked', status: 'done', context: memory.context });
    expect(memory.context).toEqual({
      user: DEFAULT_TEST_USER,
      service: 'color',
      slots: [
        { id: 'slot1', label: 'Wed 10:00' },
        { id: 'slot2', label: 'Wed 13:30' },
      ],
      slot: { id: 'slot1', label: 'Wed 10:00' },
    });
    expect(straight.requests).toHaveLength(8); // list, slots, slots again, confirm, reminder, slots, confirm, booked
  });
});

it('appointments: checkBot finds nothing', () => {
  expect(checkBot(bot)).toEqual([]);
});
