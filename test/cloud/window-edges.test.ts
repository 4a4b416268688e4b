/**
 * The window policy's edges, end to end on the harness's Cloud API mode: what counts as the closed
 * window's a failed status planned again, two statuses at once, a template function that
 * throws, and the codes of failed statuses.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { defineBot, say, text, type BotOptions, type ColloquyEvent } from '../../src/index.js';
import { HOUR, kinds, reopen } from './support.js';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';
import { freshDatabaseUrl } from '../support/postgres.js';

let conv: TestConversation | undefined;
afterEach(async () => {
  await conv?.close();
  conv = undefined;
});

/** Hello, then two reminders after `wait`; a tap on the template's quick reply ends it. */
function twoReminders(options: BotOptions = {}, wait = 2 * HOUR) {
  const machine = setup({ types: { events: {} as ColloquyEvent } }).createMachine({
    id: 'r',
    initial: 'waiting',
    states: {
      waiting: { entry: say(text('Hello')), after: { [wait]: { target: 'reminded', actions: say([text('Reminder one'), text('Reminder two')]) } } },
      reminded: { on: { 'reply.continue': { target: 'done', actions: say(text('Thanks')) } } },
      done: {},
    },
  });
  return defineBot({ id: 'r', machine, options: { expireAfterMs: 72 * HOUR, window: { closed: { template: reopen } }, ...options } });
}

let engine: 'sqlite' | 'postgres' = 'sqlite';

async function start(options?: BotOptions, wait?: number): Promise<TestConversation> {
  conv = await createTestBot(twoReminders(options, wait), { provider: 'cloud-api', ...(engine === 'postgres' && { database: await freshDatabaseUrl() }) });
  return conv;
}

function failedStatus(c: TestConversation, providerId: string, code: number, title: string): Promise<unknown> {
  return c.runtime.receiveStatus({ providerMessageId: providerId, status: 'failed', timestamp: c.clock.now(), recipient: c.user, errors: [{ code, title }] });
}

for (const db of ['sqlite', 'postgres'] as const)
  describe(`the window policy at its edges (${db})`, () => {
    beforeEach(() => {
      engine = db;
    });

    it('a template sent while the window was open does not stand for the closed window’s template', async () => {
      const machine = setup({}).createMachine({
        id: 'a',
        initial: 'waiting',
        states: { waiting: { entry: say([text('Hello'), reopen]), after: { [25 * HOUR]: { target: 'later', actions: say(text('A day later')) } } }, later: {} },
      });
      conv = await createTestBot(defineBot({ id: 'a', machine, options: { expireAfterMs: 72 * HOUR, window: { closed: { template: reopen } } } }), {
        provider: 'cloud-api',
        ...(engine === 'postgres' && { database: await freshDatabaseUrl() }),
      });
      await conv.type('hi');
      await conv.advance('25h');
      expect(kinds(conv)).toEqual(['interactive:text', 'interactive:template', 'interactive:template']);
    });

    it('a failed status planned again after the user answered adds nothing: one follow-up per failed message', async () => {
      const c = await start();
      await c.type('hi');
      await c.advance('2h');
      const [, one, two] = c.sent;
      c.clock.advance(24 * HOUR);
      await failedStatus(c, one!.providerId, 131047, 'Re-engagement message');
      await failedStatus(c, two!.providerId, 131047, 'Re-engagement message');
      await c.settled();
      expect(kinds(c)).toEqual(['interactive:text', 'interactive:text', 'interactive:text', 'interactive:template']);
      await c.tap('continue');
      const before = c.sent.length;
      // Meta delivers the same failed statuses again; a restart would plan them again too.
      await failedStatus(c, two!.providerId, 131047, 'Re-engagement message');
      await failedStatus(c, one!.providerId, 131047, 'Re-engagement message');
      await c.settled();
      expect(c.sent.slice(before)).toEqual([]);
    });

    it('two late 131047 statuses handled at once queue one template; the other message reaches the bot as send.failed', async () => {
      const c = await start();
      await c.type('hi');
      await c.advance('2h');
      const [, one, two] = c.sent;
      c.clock.advance(24 * HOUR);
      await Promise.all([failedStatus(c, one!.providerId, 131047, 'Re-engagement message'), failedStatus(c, two!.providerId, 131047, 'Re-engagement message')]);
      await c.settled();
      expect(kinds(c)).toEqual(['interactive:text', 'interactive:text', 'interactive:text', 'interactive:template']);
      const inbound = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => (e.direction === 'in' ? (e.event as { type: string }).type : ''));
      expect(inbound.filter((t) => t === 'send.failed')).toHaveLength(1);
    });

    it('a window template function that throws: the bot gets send.failed, and later messages still go', async () => {
      const c = await start(
        {
          window: {
            closed: {
              template: () => {
                throw new TypeError('oops in the bot');
              },
            },
          },
        },
        25 * HOUR,
      );
      await c.type('hi');
      await c.advance('25h');
      const out = (await c.transcript()).filter((e) => e.direction === 'out').map((e) => (e.direction === 'out' ? [e.record.kind, e.record.state, e.record.errorCode] : []));
      expect(out).toEqual([
        ['text', 'sent', null],
        ['text', 'failed', 'window'],
        ['text', 'failed', 'window'],
      ]);
      await c.type('sorry, I was away');
      expect(c.conversation?.state).toBe('reminded');
    });
  });

describe('failed statuses by code (Cloud API)', () => {
  beforeEach(() => {
    engine = 'sqlite';
  });

  it('a parameter error (132012) reaches the bot as delivery.failed, with no SMS', async () => {
    const c = await start();
    await c.type('hi');
    await failedStatus(c, c.sent[0]!.providerId, 132012, 'Parameter format does not match format in the created template');
    await c.settled();
    expect(kinds(c)).toEqual(['interactive:text']);
    const events = (await c.transcript()).filter((e) => e.direction === 'in').map((e) => (e.direction === 'in' ? (e.event as { type: string }).type : ''));
    expect(events).toContain('delivery.failed');
  });

  it('a passing failure (131000) sends the message again, once', async () => {
    const c = await start();
    await c.type('hi');
    const first = c.sent[0]!.providerId;
    await failedStatus(c, first, 131000, 'Something went wrong');
    await failedStatus(c, first, 131000, 'Something went wrong');
    await c.settled();
    expect(kinds(c)).toEqual(['interactive:text', 'interactive:text']);
  });

  it('undeliverable (131026) falls back to SMS', async () => {
    const c = await start();
    await c.type('hi');
    await failedStatus(c, c.sent[0]!.providerId, 131026, 'Message undeliverable');
    await c.settled();
    expect(kinds(c)).toEqual(['interactive:text', 'sms:text']);
  });
});

describe('the provider refusing while the window looked open', () => {
  it('messages refused with 131047 in the send’s answer get one template, whenever they go', async () => {
    conv = await createTestBot(twoReminders({}, 2 * HOUR), { provider: 'cloud-api' });
    const c = conv;
    // The user's message reaches the runtime but WhatsApp (the sandbox) never saw it: every free-form message is refused.
    await c.runtime.receive({ botId: 'r', user: c.user, providerId: 'wamid.unseen', source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
    await c.settled();
    await c.advance('2h');
    expect(kinds(c)).toEqual(['interactive:template']);
    const refused = c.sandbox.requestsTo('cloud-api').filter((r) => r.status === 400).length;
    expect(refused).toBe(3);
  });
});
