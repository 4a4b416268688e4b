/**
 * The support bot, through the public test harness (`colloquy/testing`): triage end to end (solved,
 * the handoff to a person and back, the handoff nobody claims with its SMS), the edge paths (stale taps, stray text, idle expiry,
 * the SMS fallback, `delivery.failed` → unreachable), rehydration, and `checkBot`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buttons, defineBot, type Bot } from 'colloquy';
import { checkRehydration, createTestBot, DEFAULT_TEST_USER, type RehydrationStep, type TestBotOptions, type TestConversation } from 'colloquy/testing';
import { checkBot } from '../../src/simulator/check.js';
import bot from '../../bots/support.js';

/** The harness clock's default start; the bot's ticket number reads the wall clock, so it is pinned here. */
const T0 = Date.UTC(2026, 0, 1, 12);
const TICKET = 'T-0001-68800'; // T- + the user's last 4 digits (15551230001) + (T0 / 1000) % 100 000

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

const texts = (sent: readonly { kind: string; text?: string }[]) => sent.map((s) => [s.kind, s.text]);

const TOPIC_LIST = {
  headerText: 'Help desk',
  body: 'What can we help you with?',
  footer: 'Mon-Sat, 8:00-20:00',
  buttonText: 'Topics',
  sections: [
    {
      title: 'Service',
      messages: [
        { id: 'wifi', title: 'Wi-Fi problems', description: 'No signal, slow, dropping' },
        { id: 'setup', title: 'Setting up a device' },
      ],
    },
    { title: 'Account', messages: [{ id: 'billing', title: 'A billing question', description: 'Charges, invoices, payments' }] },
  ],
};
const TOPICS = ['Wi-Fi problems', 'Setting up a device', 'A billing question'];
const howto = (video: string, topic: string) => ({
  headerVideo: { link: `https://videos.example.com/howto/${video}.mp4` },
  body: `This two-minute video solves most ${topic}. Did it help?`,
  buttons: [
    { id: 'solved', title: 'Yes, solved' },
    { id: 'agent', title: 'No, talk to a person' },
  ],
});
const DESCRIBE = 'Please describe what is happening, in one message.';
const HANDED = `Thanks. Ticket ${TICKET} is open; a person will take over this chat in a moment.`;
const BACK = 'You are back with the assistant. Is there anything else we can help with?';
const BUSY = `Sorry, all our agents are busy. Ticket ${TICKET} stays open.`;
const RESOLVED = 'Great! Write any time if you need us again.';

describe('support: triage end to end', () => {
  it('topic list → the how-to video as buttons → “Yes, solved” → resolved', async () => {
    const c = await start();
    await c.type('hi');
    c.expectState('topic').expectSent({ kind: 'list', channel: 'interactive', text: 'What can we help you with?', choices: TOPICS });
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', fallback: false, listMessages: TOPIC_LIST });
    expect(c.last!.request).toMatchObject({ from: '15550000003', to: c.user, type: 'contacts' });

    await c.tap('Wi-Fi problems');
    c.expectState('howto').expectChoices(['Yes, solved', 'No, talk to a person']);
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'interactive', replyButtons: howto('restart-router', 'wi-fi problems') });
    expect(c.context).toEqual({ user: c.user, topic: 'wifi' });

    await c.tap('Yes, solved');
    c.expectState('resolved');
    expect(texts(c.latest)).toEqual([['text', RESOLVED]]);
    expect(c.conversation).toMatchObject({ status: 'done' });
    expect(c.conversation!.endedAt).not.toBeNull();
    expect(c.sent.map((s) => s.kind)).toEqual(['list', 'buttons', 'text']);
  });

  it('“No, talk to a person” → the description → a person takes over, the bot is silent, and resumes after the release', async () => {
    const c = await start();
    await c.type('hello');
    await c.tap('billing');
    expect(c.last).toMatchObject({ replyButtons: howto('read-your-bill', 'a billing question') });
    await c.tap('No, talk to a person');
    c.expectState('describe');
    expect(texts(c.latest)).toEqual([['text', DESCRIBE]]);
    expect(c.last!.channel).toBe('sms'); // text has no interactive body

    await c.type('I was charged twice for December.');
    c.expectState('handoff');
    expect(texts(c.latest)).toEqual([['text', HANDED]]);
    c.expectHandoff({ status: 'waiting', queue: 'billing', reason: 'A billing question: I was charged twice for December.' });
    expect(c.context).toEqual({ user: c.user, topic: 'billing', description: 'I was charged twice for December.', ticket: TICKET });
    expect(c.conversation).toMatchObject({ status: 'active' });

    await c.type('Hello? Anyone?');
    c.expectNothingSent().expectState('handoff');
    await c.tap('Yes, solved'); // an older message's button: for the agent too, no re-prompt
    c.expectNothingSent();

    const ana = c.agent('ana');
    await ana.claim();
    c.expectHandoff({ status: 'claimed', agent: 'ana' });
    await expect(c.agent('bob').reply('Bob here')).rejects.toThrow(/agent "ana" holds it/);
    await ana.reply('Hi, this is Ana. I have refunded the second charge.');
    expect(c.latest).toMatchObject([{ kind: 'text', text: 'Hi, this is Ana. I have refunded the second charge.', agent: 'ana', channel: 'sms' }]);
    await c.type('Thank you!');
    c.expectNothingSent();

    await ana.release('refunded');
    c.expectNoHandoff().expectState('anythingElse').expectChoices(['Yes, something else', 'No, thank you']);
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'interactive', replyButtons: { body: BACK } });
    await c.tap('No, thank you');
    c.expectState('resolved');
    expect(texts(c.latest)).toEqual([['text', RESOLVED]]);
    expect(c.conversation).toMatchObject({ status: 'done' });
    const inbound = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => (e.event as { type: string }).type);
    expect(inbound).toEqual(['text', 'reply.billing', 'reply.agent', 'text', 'text', 'reply.solved', 'text', 'handoff.ended', 'reply.done']);
  });

  it('after the release the customer can start over with another topic', async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('Wi-Fi problems');
    await c.tap('agent');
    await c.type('No signal upstairs.');
    await c.agent().claim();
    await c.agent().release();
    await c.tap('Yes, something else');
    c.expectState('topic').expectSent({ kind: 'list', choices: TOPICS });
  });

  it('nobody claims the handoff within 10 minutes: an apology and the call-back SMS, and the conversation ends', async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('Setting up a device');
    expect(c.last).toMatchObject({ replyButtons: howto('first-setup', 'setting up a device') });
    await c.tap('agent');
    const long = 'x'.repeat(480) + ' the router blinks red and orange';
    await c.type(long);
    c.expectState('handoff');
    expect((c.context as { description: string }).description).toBe(long.slice(0, 500));
    expect(c.expectHandoff().reason).toHaveLength(500);
    await c.advance('9m59s');
    c.expectNothingSent().expectHandoff({ status: 'waiting' });
    await c.advance('1s');
    c.expectState('callback').expectNoHandoff();
    expect(texts(c.latest)).toEqual([
      ['text', BUSY],
      ['sms', `Help desk: ticket ${TICKET} (Setting up a device). An agent will call this number within 2 hours.`],
    ]);
    expect(c.latest[1]!.request).toMatchObject({ msisdns: [c.user], tag: 'support' });
    const ended = c.conversation!;
    expect(ended.status).toBe('done');
    await expect(c.agent('ana').claim()).rejects.toThrow(/no open handoff/);

    await c.type('hi again');
    c.expectState('topic').expectSent({ kind: 'list', choices: TOPICS });
    expect(c.conversation!.id).not.toBe(ended.id);
    expect(c.context).toEqual({ user: c.user });
  });
});

describe('support: unhandled input', () => {
  it('a stale tap (a topic row) on the video re-sends the video buttons and changes nothing', async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('Wi-Fi problems');
    await c.send({ type: 'reply.billing', id: 'billing', title: 'A billing question', via: 'list' });
    c.expectState('howto');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'buttons', replyButtons: howto('restart-router', 'wi-fi problems') });
    expect(c.context).toEqual({ user: c.user, topic: 'wifi' });
  });

  it('unexpected text re-sends the current prompt (the topics, then the video)', async () => {
    const c = await start();
    await c.type('hi');
    await c.type('my internet is down');
    c.expectState('topic');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', listMessages: TOPIC_LIST });
    await c.tap('Wi-Fi problems');
    await c.type('I do not have time for a video');
    c.expectState('howto').expectSent({ kind: 'buttons', choices: ['Yes, solved', 'No, talk to a person'] });
    expect(c.latest).toHaveLength(1);
  });

  it('a tap on the video’s buttons while describing re-sends the request for a description', async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('Wi-Fi problems');
    await c.tap('No, talk to a person');
    await c.tap('Yes, solved'); // the older message's button
    c.expectState('describe');
    expect(texts(c.latest)).toEqual([['text', DESCRIBE]]);
    expect(c.context).not.toHaveProperty('description');
  });

  it('an idle conversation expires after 24 hours (the default): the next message starts over', async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('Wi-Fi problems');
    const first = c.conversation!;
    await c.advance('23h59m');
    c.expectNothingSent();
    await c.type('hm');
    c.expectState('howto');
    expect(c.conversation!.id).toBe(first.id);
    await c.advance('24h');
    await c.type('hi');
    c.expectState('topic').expectSent({ kind: 'list', choices: TOPICS });
    const all = await c.store.conversations({ botId: 'support', user: c.user });
    expect(all.map((x) => [x.id, x.status])).toEqual([
      [first.id, 'expired'],
      [c.conversation!.id, 'active'],
    ]);
  });
});

describe('support: SMS fallback and the hand-off', () => {
  // Within the bot's 2 segments: GSM-7 text keeps the descriptions and the footer.
  const LIST_SMS =
    'Help desk\nWhat can we help you with?\n\nService\n1. Wi-Fi problems - No signal, slow, dropping\n2. Setting up a device\n\nAccount\n3. A billing question - Charges, invoices, payments\n\nMon-Sat, 8:00-20:00\nReply with a number.';
  const HOWTO_SMS =
    'This two-minute video solves most wi-fi problems. Did it help?\nhttps://videos.example.com/howto/restart-router.mp4\n\n1. Yes, solved\n2. No, talk to a person\n\nReply with a number.';

  it('with WhatsApp refused, triage goes on by SMS to the hand-off SMS', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    c.expectState('topic');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', channel: 'sms', fallback: true, text: LIST_SMS });
    expect(c.sandbox.messagesTo(c.user).map((m) => m.channel)).toEqual(['sms']);

    await c.sms('1');
    c.expectState('howto');
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms', fallback: false, text: HOWTO_SMS });

    await c.sms('no, talk to a person'); // a title, any case and punctuation
    c.expectState('describe');
    expect(texts(c.latest)).toEqual([['text', DESCRIBE]]);

    await c.sms('Router restarted twice, still no signal upstairs.');
    c.expectState('handoff').expectHandoff({ queue: 'wifi' });
    expect(texts(c.latest)).toEqual([['text', HANDED]]);
    expect(c.context).toMatchObject({ topic: 'wifi', description: 'Router restarted twice, still no signal upstairs.' });

    // During the handoff, the agent's messages take the same SMS way; the user's SMS go to the agent.
    await c.agent('ana').claim();
    await c.agent('ana').reply(
      buttons({
        body: 'Is the light on the router green?',
        buttons: [
          { id: 'green', title: 'Green' },
          { id: 'red', title: 'Red' },
        ],
      }),
    );
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms', agent: 'ana', text: 'Is the light on the router green?\n\n1. Green\n2. Red\n\nReply with a number.' });
    await c.sms('2');
    c.expectNothingSent();
    await c.agent('ana').release();
    c.expectState('anythingElse');
    expect(c.last).toMatchObject({ kind: 'buttons', channel: 'sms' });
    expect(c.sent.every((s) => s.channel === 'sms')).toBe(true);
  });

  it('an SMS answer that names no choice re-sends the prompt by SMS', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    await c.sms('4');
    c.expectState('topic');
    expect(c.latest).toHaveLength(1);
    expect(c.last).toMatchObject({ kind: 'list', channel: 'sms', text: LIST_SMS });
  });
});

describe('support: delivery.failed → unreachable', () => {
  it('with the fallback disabled, a refused message ends the conversation as unreachable, silently', async () => {
    const noFallback = defineBot({ ...bot, options: { ...bot.options, fallback: { enabled: false } } });
    const c = await start(noFallback);
    c.sandbox.faults.refuseInteractive(c.user);
    await c.type('hi');
    c.expectState('unreachable').expectNothingSent();
    expect(c.conversation).toMatchObject({ status: 'done' });
    expect(c.sandbox.messagesTo(c.user)).toEqual([]);
    const inbound = (await c.transcript()).filter((e) => e.direction === 'in');
    expect(inbound.map((e) => e.source)).toEqual(['whatsapp', 'delivery']);
    expect(inbound[1]!.event).toMatchObject({ type: 'delivery.failed', channel: 'interactive', code: 131047 });

    c.sandbox.faults.allowInteractive(c.user); // reachable again: the next message starts over
    await c.type('hi');
    c.expectState('topic').expectSent({ kind: 'list', channel: 'interactive', choices: TOPICS });
  });

  it('an SMS the provider refuses with code 15 (no credit) ends the conversation as unreachable', async () => {
    const c = await start();
    await c.type('hi');
    await c.tap('A billing question');
    c.sandbox.faults.smsError(15);
    await c.tap('No, talk to a person'); // the request for a description is a text: it goes by SMS
    c.expectState('unreachable').expectNothingSent();
    expect(c.conversation).toMatchObject({ status: 'done' });
    const inbound = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => e.event);
    expect(inbound.at(-1)).toMatchObject({ type: 'delivery.failed', channel: 'sms', code: 15 });
    expect(c.context).toEqual({ user: c.user, topic: 'billing' });
  });

  it('WhatsApp refused and the fallback SMS refused (code 15): unreachable', async () => {
    const c = await start();
    c.sandbox.faults.refuseInteractive(c.user);
    c.sandbox.faults.smsError(15);
    await c.type('hi');
    c.expectState('unreachable').expectNothingSent();
    expect(c.conversation).toMatchObject({ status: 'done' });
    const inbound = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => e.event);
    expect(inbound).toHaveLength(2);
    expect(inbound[1]).toMatchObject({ type: 'delivery.failed', channel: 'sms', code: 15 });
  });
});

describe('support: rehydration', () => {
  it('a path run in memory, and through the store with a new runtime at every step, ends the same', async () => {
    const steps: RehydrationStep[] = [
      { event: { type: 'text', text: 'hi', via: 'whatsapp' } },
      { event: { type: 'reply.setup', id: 'setup', title: 'Setting up a device', via: 'list' } },
      { event: { type: 'reply.wifi', id: 'wifi', title: 'Wi-Fi problems', via: 'list' }, reprompts: 1 }, // stale tap
      { advance: '1h' },
      { event: { type: 'reply.agent', id: 'agent', title: 'No, talk to a person', via: 'button' } },
      { event: { type: 'reply.solved', id: 'solved', title: 'Yes, solved', via: 'button' }, reprompts: 4 }, // stale tap
      { event: { type: 'text', text: 'The new router will not pair with my phone.', via: 'whatsapp' } },
    ];
    // Date.now is pinned to T0 by this file's beforeEach, so the run's own pinning is off.
    const { memory, straight, restarted } = await checkRehydration(bot, steps, { now: T0, pinDateNow: false });

    expect(memory.states).toEqual(['topic', 'howto', 'howto', 'howto', 'describe', 'describe', 'handoff']);
    for (const run of [straight, restarted]) expect(run.final).toEqual({ state: 'handoff', status: 'active', context: memory.context });
    expect(memory.context).toEqual({ user: DEFAULT_TEST_USER, topic: 'setup', description: 'The new router will not pair with my phone.', ticket: TICKET });
    expect(straight.requests).toHaveLength(6); // list, video, video again, describe, describe again, text
  });
});

it('support: checkBot finds nothing', () => {
  expect(checkBot(bot)).toEqual([]);
});
