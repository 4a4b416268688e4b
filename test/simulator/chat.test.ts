import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatSession, runChat } from '../../src/simulator/chat.js';
import { createTestBot, renderSent, type TestConversation } from '../../src/simulator/testing.js';
import orderBot from '../fixtures/order-bot.js';
import variantsBot from '../fixtures/variants-bot.js';

/** Runs `colloquy chat <bot>` with `script` piped to stdin. */
function chat(bot: string | undefined, script: readonly string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const args = ['--conditions=colloquy-source', 'bin/colloquy.js', 'chat', ...(bot === undefined ? [] : [bot])];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(script.map((l) => `${l}\n`).join(''));
  });
}

const MENU = [
  'bot › Pizza Place',
  '      What would you like?',
  '      Prices include tax',
  '      [ See menu ]',
  '      Pizzas',
  '        1. Margherita',
  '           Tomato, mozzarella',
  '        2. Pepperoni',
  '      Other',
  '        3. Order status',
];
const sizes = (item: string) => ['bot › [image] https://example.com/pizza.jpg', `      Which size of ${item}?`, '      Tap one', '      1. [ Small ]', '      2. [ Large ]'];

describe('colloquy chat (a child process, scripted stdin)', () => {
  it('taps through the order bot by number and by title, waits for a timer, fills the flow', async () => {
    const script = ['hi', 'Pepperoni', '/wait 10m', '1', 'small', '/state', '/flow {"address": "1 Main St"}', 'hello', '/quit', 'never read'];
    const { code, out, err } = await chat('test/fixtures/order-bot.ts', script);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toBe(
      [
        'Chatting with bot "order" as 15551230001 (sandbox provider, in-memory store, simulated clock).',
        "Type a message to start. A number or a choice's title taps it; /help lists the commands.",
        '',
        'you › hi',
        ...MENU,
        '',
        'you › Pepperoni',
        ...sizes('pepperoni'),
        '',
        'you › /wait 10m',
        '(10m later)',
        'SMS › Still there? Starting over.',
        '',
        ...MENU,
        '',
        'you › 1',
        ...sizes('margherita'),
        '',
        'you › small',
        'bot › Where should we deliver?',
        '      [ Enter address ]',
        '      (a form: answer it with /flow {"field": "value"})',
        '',
        'you › /state',
        'state: address (active)',
        'context: {',
        '  "user": "15551230001",',
        '  "item": "margherita",',
        '  "size": "small"',
        '}',
        '',
        'you › /flow {"address": "1 Main St"}',
        'SMS › Thanks! A small margherita to 1 Main St.',
        '',
        'you › hello',
        ...MENU,
        '',
        'you › /quit',
        '',
      ].join('\n'),
    );
  });

  it('shows media headers, the flow button and SMS, and ends with its input', async () => {
    const { code, out } = await chat('test/fixtures/variants-bot.ts', ['hi', '2', 'Next', '1', '1', '/flow {"name": "Ada"}']);
    expect(code).toBe(0);
    expect(out).toContain('bot › Menu\n      Pick one\n      Footer\n      [ Open ]\n      1. One\n         First\n      2. Two\n');
    expect(out).toContain('bot › [image] https://example.com/a.png\n      Image header\n      1. [ Next ]\n');
    expect(out).toContain('bot › [video] https://example.com/a.mp4\n');
    expect(out).toContain('bot › [document menu.pdf] https://example.com/menu.pdf\n      Document header\n');
    expect(out).toContain('bot › Fill this in\n      [ Open form ]\n');
    expect(out).toMatch(/you › \/flow \{"name": "Ada"\}\nSMS › Plain text\n\nSMS › An SMS on purpose\n\n$/);
  });

  it('needs one bot file', async () => {
    const { code, err } = await chat(undefined, []);
    expect(code).toBe(2);
    expect(err).toBe('colloquy chat: chat takes one bot file (got 0): colloquy chat <bot file>\n');
  });
});

describe('the chat in-process', () => {
  let conv: TestConversation | undefined;
  afterEach(async () => {
    await conv?.close();
    conv = undefined;
  });

  it('after a message went by SMS, a typed number goes by SMS and picks that choice', async () => {
    let out = '';
    const session = await ChatSession.start({ bot: orderBot, out: (t) => (out += t) });
    try {
      session.conversation.sandbox.faults.refuseInteractive(session.conversation.user);
      await session.handle('hi');
      expect(out).toContain('SMS › Pizza Place\n      What would you like?\n\n      Pizzas\n      1. Margherita - Tomato, mozzarella\n');
      expect(out).toContain('(by SMS instead of a list that could not be delivered)');
      await session.handle('2');
      expect(session.conversation.state).toBe('size');
      expect(session.conversation.context).toMatchObject({ item: 'pepperoni' });
      await session.handle('/tap Small');
      expect(out).toContain('! Cannot tap "Small": the last buttons message went by SMS, so it has no buttons');
      await session.handle('/frobnicate');
      expect(out).toContain('! unknown command /frobnicate; /help lists the commands');
      await session.handle('/wait soon');
      expect(out).toContain('! Cannot read the duration "soon"');
      await session.handle('/flow [1]');
      expect(out).toContain('! /flow takes a JSON object');
    } finally {
      await session.close();
    }
  });

  it("shows the pizza bot's tracking answer by itself when the lookup settles, without /wait", async () => {
    const pizza = (await import('../../bots/pizza.js')).default;
    let out = '';
    const session = await ChatSession.start({ bot: pizza, out: (t) => (out += t) });
    try {
      for (const line of ['hi', 'Margherita', '3', '/flow {"street": "Calle 5 de Mayo 12", "city": "Puebla"}']) await session.handle(line);
      out = '';
      await session.handle('Track my order'); // the lookup takes 50 ms of real time
      expect(out).toBe('(in tracking, the bot is working on it: the answer shows up here when it arrives)\n\n');
      expect(out).not.toContain('(no answer)');
      await session.quiet();
      expect(out).toMatch(/arrives\)\n\nSMS › Order P\w+ is in the oven and leaves in about 15 minutes\.\n\nSMS › Enjoy your meal!/);
      expect(session.conversation.state).toBe('done');
      out = '';
      await session.handle('/wait 1m'); // nothing printed twice
      expect(out).toBe('(1m later)\n\n');
    } finally {
      await session.close();
    }
  });

  it('taps by number or title as by SMS; an id still taps, saying an SMS reply could not use it', async () => {
    const pizza = (await import('../../bots/pizza.js')).default;
    let out = '';
    const session = await ChatSession.start({ bot: pizza, out: (t) => (out += t) });
    try {
      await session.handle('hi');
      out = '';
      await session.handle('veggie'); // the row's id; its title is "Garden"
      expect(out).toContain('(tapped "Garden" by its id; by SMS an id is not understood: reply 3 or "Garden")\n');
      expect(session.conversation.context).toMatchObject({ item: 'veggie' });
      out = '';
      await session.handle('medium $13.65'); // a title, any case: no note
      expect(out).not.toContain('by its id');
      expect(session.conversation.context).toMatchObject({ size: 'medium' });
    } finally {
      await session.close();
    }
  });

  it("a script piped in gets each answer, an invocation's too, before its next line", async () => {
    const pizza = (await import('../../bots/pizza.js')).default;
    const input = new PassThrough();
    let out = '';
    const done = runChat({ bot: pizza, out: (t) => (out += t), input });
    input.end('hi\n1\n3\n/flow {"street": "Calle 5", "city": "Puebla"}\n1\n/state\n');
    await done;
    const tail = out.slice(out.indexOf('you › 1\n(in tracking'));
    expect(tail).toMatch(
      /^you › 1\n\(in tracking, the bot is working on it: the answer shows up here when it arrives\)\n\nSMS › Order \w+ is in the oven[\s\S]*Enjoy your meal![\s\S]*\nyou › \/state\nstate: done \(done\)/,
    );
  });

  it('/restart starts a new conversation; /help lists the commands; the input ending ends the chat', async () => {
    const input = new PassThrough();
    let out = '';
    const done = runChat({ bot: orderBot, out: (t) => (out += t), input });
    input.end('hi\n1\n/restart\n/state\n/help\n');
    await done;
    expect(out).toContain('you › /restart\n(a new conversation: type a message to start)\n');
    expect(out).toContain('you › /state\n(no conversation yet: type a message to start)\n');
    expect(out).toContain('  /wait 10m       let time pass');
  });

  it('renders a list that went by SMS with its numbered rows', async () => {
    conv = await createTestBot(variantsBot);
    conv.sandbox.faults.refuseInteractive(conv.user);
    await conv.type('hi');
    expect(renderSent(conv.last!)).toBe(
      [
        'SMS › Menu',
        '      Pick one',
        '',
        '      1. One - First',
        '      2. Two',
        '',
        '      Footer',
        '      Reply with a number.',
        '      (by SMS instead of a list that could not be delivered)',
      ].join('\n'),
    );
  });
});
