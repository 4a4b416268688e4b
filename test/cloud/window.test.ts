/**
 * The 24-hour window, end to end on the real runtime, the Cloud API provider and the sandbox's
 * Cloud API mode (on the harness's clock): decided when a message goes, by the bot's window
 * policy, for a closed window found before sending and for a 131047 from the provider.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { defineBot, say, text, type BotOptions, type ColloquyEvent } from '../../src/index.js';
import { HOUR, kinds, reopen } from './support.js';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';

let conv: TestConversation | undefined;
afterEach(async () => {
  await conv?.close();
  conv = undefined;
});

/** Says hello, then after `wait` a reminder (and a second message); records a send.failed it gets. */
function reminderBot(options: BotOptions, wait = 25 * HOUR) {
  const machine = setup({ types: { context: {} as { failed?: string }, events: {} as ColloquyEvent } }).createMachine({
    id: 'reminder',
    context: {},
    initial: 'waiting',
    states: {
      waiting: {
        entry: say(text('Hello! We will remind you.')),
        after: { [wait]: { target: 'reminded', actions: say([text('Your appointment is tomorrow.'), text('Reply to confirm.')]) } },
      },
      reminded: {
        on: {
          'reply.continue': { target: 'confirmed', actions: say(text('Thanks, see you tomorrow.')) },
          'send.failed': { actions: assign({ failed: ({ event }) => `${event.reason}:${event.kind}` }) },
          text: { target: 'confirmed', actions: say(text('Thanks, see you tomorrow.')) },
        },
      },
      confirmed: { type: 'final' },
    },
  });
  // Conversations live past the day the reminder waits (the default expiry is 24 hours of silence).
  return defineBot({ id: 'reminder', machine, options: { expireAfterMs: 72 * HOUR, ...options } });
}

async function start(options: BotOptions, wait?: number): Promise<TestConversation> {
  conv = await createTestBot(reminderBot(options, wait), { provider: 'cloud-api' });
  return conv;
}

describe('the 24-hour window on the Cloud API', () => {
  it('sends text as WhatsApp text inside the window, and marks each user message read once, with typing', async () => {
    const c = await start({ window: { closed: { template: reopen } } }, 2 * HOUR);
    await c.type('hi');
    expect(kinds(c)).toEqual(['interactive:text']);
    await c.advance('2h');
    expect(kinds(c)).toEqual(['interactive:text', 'interactive:text', 'interactive:text']);
    expect(c.sandbox.reads(c.user).map((r) => r.typing)).toEqual([true]);
    await c.type('yes');
    expect(c.sandbox.reads(c.user)).toHaveLength(2);
  });

  it('a timer a day later gets the template the bot names, once for both messages; its quick reply routes', async () => {
    const c = await start({ window: { closed: { template: reopen } } });
    await c.type('hi');
    await c.advance('25h');
    expect(kinds(c)).toEqual(['interactive:text', 'interactive:template']);
    expect(c.last).toMatchObject({ kind: 'template', name: 'colloquy_reopen' });
    const rows = await c.store.transcript(c.conversation!.id);
    const out = rows.filter((r) => r.direction === 'out').map((r) => (r.direction === 'out' ? [r.record.kind, r.record.state, r.record.errorCode] : []));
    // In id order: the template stands in for the first message the window stopped; the second waits for no second template.
    expect(out).toEqual([
      ['text', 'sent', null],
      ['text', 'failed', 'window'],
      ['text', 'failed', 'window'],
      ['template', 'sent', null],
    ]);
    await c.tap('continue');
    c.expectState('confirmed');
    expect(c.last).toMatchObject({ kind: 'text', text: 'Thanks, see you tomorrow.' });
  });

  it("'event' tells the machine: send.failed with reason window, and nothing is sent", async () => {
    const c = await start({ window: { closed: 'event' } });
    await c.type('hi');
    await c.advance('25h');
    expect(kinds(c)).toEqual(['interactive:text']);
    expect(c.context).toMatchObject({ failed: 'window:text' });
  });

  it("'sms' sends the message by SMS", async () => {
    const c = await start({ window: { closed: 'sms' } });
    await c.type('hi');
    await c.advance('25h');
    expect(kinds(c)).toEqual(['interactive:text', 'sms:text', 'sms:text']);
  });

  it('per state: the state the conversation is in picks the action', async () => {
    const c = await start({ window: { closed: { template: reopen }, states: { reminded: 'event' } } });
    await c.type('hi');
    await c.advance('25h');
    expect(kinds(c)).toEqual(['interactive:text']);
    expect(c.context).toMatchObject({ failed: 'window:text' });
  });

  it('the provider refusing with 131047 while the window looked open applies the policy too', async () => {
    const c = await start({ window: { closed: { template: reopen } } }, 2 * HOUR);
    await c.type('hi');
    c.sandbox.faults.cloudError(131047, { times: 1 });
    await c.advance('2h');
    expect(kinds(c)).toEqual(['interactive:text', 'interactive:template', 'interactive:text']);
  });

  it('a failed status with 131047 after the send was accepted queues the template', async () => {
    const c = await start({ window: { closed: { template: reopen } } }, 2 * HOUR);
    await c.type('hi');
    await c.advance('1h');
    const first = c.sent[0]!;
    // The user has not written for 25 hours by now.
    c.clock.advance(24 * HOUR);
    await c.runtime.receiveStatus({ providerMessageId: first.providerId, status: 'failed', timestamp: c.clock.now(), recipient: c.user, errors: [{ code: 131047, title: 'Re-engagement message' }] });
    await c.settled();
    expect(kinds(c)).toEqual(['interactive:text', 'interactive:template']);
    expect(c.last).toMatchObject({ kind: 'template', name: 'colloquy_reopen' });
  });
});
