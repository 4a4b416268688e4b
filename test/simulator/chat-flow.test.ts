/**
 * Live flows in the terminal chat: `/open` walks the appointments bot's booking flow through a real
 * Flow endpoint on 127.0.0.1 (encrypted, signed, answered from the conversation), screen by screen,
 * with numbered choices, `/back`, errors on the screen, the 427 of a stale form, and the
 * `nfm_reply` after the completion; in-process and as a child process.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { defineBot, flow, flowComplete, flowError, flowScreen, say, type Bot, type ColloquyEvent } from '../../src/index.js';
import { ChatSession } from '../../src/simulator/chat.js';
import { createAppointmentsBot, freeTimes } from '../../bots/appointments.js';

/** Thursday 26 November 2026. */
const TODAY = new Date('2026-11-26T10:15:00Z');

async function session(bot: Bot = createAppointmentsBot({ today: () => TODAY })): Promise<{ s: ChatSession; out: () => string; since: () => string }> {
  let all = '';
  let mark = 0;
  const s = await ChatSession.start({ bot, out: (t) => (all += t) });
  return {
    s,
    out: () => all,
    since: () => {
      const fresh = all.slice(mark);
      mark = all.length;
      return fresh;
    },
  };
}

describe('the chat walks a live flow through the Flow endpoint', () => {
  it('books through the appointments flow: days, a day’s times, /back, the confirmation, one booking, then 427', async () => {
    const { s, out, since } = await session();
    try {
      await s.handle('hi');
      await s.handle('Haircut');
      await s.quiet();
      await s.handle('3');
      expect(since()).toContain('bot › Haircut: pick a day, then a time.\n      [ See times ]\n      (a live form: /open opens it, as tapping its button does)\n');
      await s.handle('/back');
      expect(since()).toContain('! no form is open');

      await s.handle('/open');
      expect(since()).toBe(
        [
          'form › Pick a day (DAYS)',
          '       Day *',
          '         1. Fri 27 Nov  [2026-11-27]',
          '         2. Mon 30 Nov  [2026-11-30]',
          '         3. Tue 1 Dec  [2026-12-01]',
          '         4. Wed 2 Dec  [2026-12-02]',
          '         5. Thu 3 Dec  [2026-12-03]',
          '       (/close closes the form)',
          '',
          '',
        ].join('\n'),
      );
      await s.handle('7');
      expect(since()).toBe('! Day: "7" is not one of the choices: type its number (1 to 5), id or title\n\n');
      await s.handle('mon 30 nov');
      const times = freeTimes('2026-11-30');
      expect(since()).toBe(
        [
          'form › Pick a time (SLOTS)',
          '       day: 2026-11-30',
          '       day_title: Mon 30 Nov',
          '       Time *',
          ...times.map((t, i) => `         ${i + 1}. ${t}`),
          '       (/back goes back, /close closes the form)',
          '',
          '',
        ].join('\n'),
      );
      await s.handle('1');
      expect(since()).toContain(`summary: Haircut (30 min) on Mon 30 Nov at ${times[0]}\n       [ Continue ]  (type ok; /back goes back, /close closes the form)\n`);
      await s.handle('/back');
      expect(since()).toContain('form › Pick a time (SLOTS)\n');
      await s.handle(times[1]!);
      expect(since()).toContain(`summary: Haircut (30 min) on Mon 30 Nov at ${times[1]}\n`);
      expect(s.conversation.state).toBe('picking');

      await s.handle('ok');
      const booked = `Booked: Haircut, Mon 30 Nov ${times[1]}. See you at Studio Nova!`;
      expect(since()).toBe(`form › (the form closed: done, {"booking":"SN-20261130-${times[1]!.replace(':', '')}"}; WhatsApp now sends its answer to the bot)\nSMS › ${booked}\n\n`);
      expect(s.conversation.conversation).toMatchObject({ state: 'booked', status: 'done' });
      // The phone sent the nfm_reply with the flow's token: it ran no second turn and started no new conversation.
      const token = s.conversation.conversation!.flowToken;
      expect(s.conversation.steps.at(-1)).toMatchObject({ action: { send: { type: 'flow', token, data: { booking: `SN-20261130-${times[1]!.replace(':', '')}` } } } });
      expect(await s.conversation.store.conversations({ botId: 'appointments', user: s.conversation.user })).toHaveLength(1);
      expect(out().split(booked)).toHaveLength(2);

      await s.handle('/open');
      expect(since()).toBe("form › These times are out of date. Send us a message to see the free times again.\n       (the form's button is disabled: it cannot be opened again)\n\n");
    } finally {
      await s.close();
    }
  });

  it('shows an error the endpoint answers on the screen, asks again, and /close leaves the form for /open', async () => {
    type Ev = ColloquyEvent | { type: 'done' };
    let failOpen = false;
    const machine = setup({ types: { events: {} as Ev } }).createMachine({
      initial: 'ask',
      states: {
        ask: { entry: say(flow({ body: 'Your size?', flowId: '42', cta: 'Pick', action: 'data_exchange' })), on: { done: 'end' } },
        end: { type: 'final' },
      },
    });
    const bot = defineBot({
      id: 'sizes',
      machine,
      options: {
        flows: {
          ask: {
            open: () =>
              failOpen
                ? Promise.reject(new Error('the bot failed'))
                : flowScreen('SIZE', {
                    sizes: [
                      { id: 's', title: 'Small' },
                      { id: 'xl', title: 'Huge' },
                    ],
                    note: 'Pick one',
                  }),
            screens: {
              SIZE: ({ data }) => (data['size'] === 'xl' ? flowError('Out of stock', { sizes: [{ id: 's', title: 'Small' }] }) : flowScreen('NOTE', { size: data['size'] })),
              NOTE: ({ data }) => (data['note'] === 'boom' ? Promise.reject(new Error('the bot failed')) : flowComplete({ size: data['size'], note: data['note'] })),
            },
          },
        },
        flowForms: { '42': { screens: { SIZE: { title: 'Size', fields: [{ name: 'size', optionsFrom: 'sizes', required: true }] } } } },
      },
    });
    const { s, since } = await session(bot);
    try {
      await s.handle('hi');
      // Opening fails (no firstScreen to show the error on): the endpoint's 500 is said, and nothing is open.
      failOpen = true;
      await s.handle('/open');
      expect(since()).toContain('form › ! the Flow endpoint answered 500: Something went wrong on our side. Please try again.\n');
      await s.handle('/back');
      expect(since()).toContain('! no form is open');
      failOpen = false;
      await s.handle('/open');
      expect(since()).toContain('form › Size (SIZE)\n       note: Pick one\n       size *\n         1. Small  [s]\n         2. Huge  [xl]\n');
      await s.handle('Huge');
      expect(since()).toBe('form › Size (SIZE)\n       note: Pick one\n       ! Out of stock\n       size *\n         1. Small  [s]\n       (/close closes the form)\n\n');
      await s.handle('/close');
      expect(since()).toBe('(form closed without sending: /open opens it again)\n\n');
      await s.handle('/back');
      expect(since()).toContain('! no form is open');
      await s.handle('/open');
      await s.handle('1');
      // A screen the bot declares no form for: its answers are typed as JSON, sent with the screen's values.
      expect(since()).toContain('form › NOTE\n       size: s\n       (no form is declared for this screen: type its answers as JSON, e.g. {"field": "value"}; /back goes back, /close closes it)\n');
      await s.handle('a note');
      expect(since()).toContain("! type this screen's answers as a JSON object");
      await s.handle('{"note": "boom"}');
      expect(since()).toContain('form › NOTE\n       size: s\n       ! Something went wrong on our side. Please try again.\n');
      await s.handle('{"note": "ring twice"}');
      expect(since()).toContain('form › (the form closed: done, {"size":"s","note":"ring twice"}; WhatsApp now sends its answer to the bot)\n');
    } finally {
      await s.close();
    }
  });
});

describe('colloquy chat with a live flow (a child process)', () => {
  it('opens the appointments flow and books through it', async () => {
    const script = ['hi', '1', '3', '/open', '1', '1', 'ok', '/quit'];
    const { code, out, err } = await new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--conditions=colloquy-source', 'bin/colloquy.js', 'chat', 'bots/appointments.ts'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let o = '';
      let e = '';
      child.stdout.on('data', (d: Buffer) => (o += d.toString()));
      child.stderr.on('data', (d: Buffer) => (e += d.toString()));
      child.on('error', reject);
      child.on('close', (c) => resolve({ code: c, out: o, err: e }));
      child.stdin.end(script.map((l) => `${l}\n`).join(''));
    });
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toMatch(/you › \/open\nform › Pick a day \(DAYS\)\n {7}Day \*\n {9}1\. \w{3} \d+ \w{3} {2}\[\d{4}-\d{2}-\d{2}\]\n/);
    expect(out).toMatch(/you › 1\nform › Pick a time \(SLOTS\)\n/);
    expect(out).toMatch(
      /you › ok\nform › \(the form closed: done, \{"booking":"SN-\d{8}-\d{4}"\}; WhatsApp now sends its answer to the bot\)\nSMS › Booked: Haircut, \w{3} \d+ \w{3} \d\d:\d\d\. See you at Studio Nova!\n/,
    );
    expect(out.match(/Booked:/g)).toHaveLength(1);
  });
});
