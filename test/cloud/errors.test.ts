/**
 * The Cloud API's errors by class, end to end on the real runtime, the Cloud API provider and the
 * sandbox's Cloud API mode: what is retried, what falls back to SMS, what reaches the bot.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { defineBot, say, template, text, type BotOptions, type ColloquyEvent } from '../../src/index.js';
import { BotTurnError, createTestBot, type TestConversation } from '../../src/simulator/testing.js';
import { kinds } from './support.js';

let conv: TestConversation | undefined;
afterEach(async () => {
  await conv?.close();
  conv = undefined;
});

/** Answers every text with a list; records what it is told of failures. */
function echoBot(options: BotOptions = {}) {
  const machine = setup({ types: { context: {} as { failure?: string }, events: {} as ColloquyEvent } }).createMachine({
    id: 'echo',
    context: {},
    initial: 'idle',
    states: {
      idle: {
        on: {
          text: { actions: say(({ event }) => text(`You said: ${(event as { text: string }).text}`)) },
          'delivery.failed': { actions: assign({ failure: ({ event }) => `${String(event.code)}: ${event.reason}` }) },
        },
      },
    },
  });
  return defineBot({ id: 'echo', machine, options });
}

async function start(options?: BotOptions): Promise<TestConversation> {
  conv = await createTestBot(echoBot(options), { provider: 'cloud-api', sends: { baseDelayMs: 1_000 } });
  return conv;
}

describe('Cloud API errors by class', () => {
  it('130429 pauses and retries until the message goes', async () => {
    const c = await start();
    c.sandbox.faults.cloudError(130429, { times: 4, retryAfter: 0 });
    await c.type('one');
    await c.advance('1m');
    expect(kinds(c)).toEqual(['interactive:text']);
    expect(c.sandbox.requestsTo('cloud-api').filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(4);
  });

  it('131056 paces that user and retries', async () => {
    const c = await start();
    c.sandbox.faults.cloudError(131056, { times: 2 });
    await c.type('one');
    expect(kinds(c)).toEqual([]);
    // Each retry waits at least 6 s for the pair rate, on the harness's clock.
    for (let i = 0; i < 2; i++) await c.advance('10s');
    expect(kinds(c)).toEqual(['interactive:text']);
  });

  it('131026 falls back to SMS', async () => {
    const c = await start();
    c.sandbox.faults.cloudError(131026, { times: 10 });
    await c.type('one');
    expect(kinds(c)).toEqual(['sms:text']);
    expect(c.conversation?.channel).toBe('sms');
  });

  it('a parameter error fails the message with the provider’s explanation, and no SMS', async () => {
    const c = await start();
    c.sandbox.faults.cloudError(131009, { times: 10, details: 'Parameter value is not valid' });
    await c.type('one');
    expect(kinds(c)).toEqual([]);
    expect(c.context).toMatchObject({ failure: expect.stringMatching(/^131009: .*Parameter value is not valid/) });
  });

  it('a refused token is not retried and names the variable, never the token', async () => {
    const c = await start();
    c.sandbox.faults.cloudError(190, { times: 100 });
    await c.type('one');
    await c.advance('10m');
    expect(c.sandbox.requestsTo('cloud-api').filter((r) => r.status === 401)).toHaveLength(1);
    expect(c.context).toMatchObject({ failure: expect.stringContaining('COLLOQUY_CLOUD_API_TOKEN') });
    expect(JSON.stringify(c.context)).not.toContain('sandbox-cloud-api-token');
  });

  it('readReceipts off sends none; on-handled marks after the turn', async () => {
    let c = await start({ readReceipts: 'off' });
    await c.type('one');
    expect(c.sandbox.reads()).toEqual([]);
    await c.close();
    c = await start({ readReceipts: 'on-handled' });
    await c.type('one');
    expect(c.sandbox.reads()).toHaveLength(1);
  });
});

describe('templates on a provider without them', () => {
  it('a state that says a template on the seed provider fails naming the bot and the state', async () => {
    const machine = setup({}).createMachine({
      id: 't',
      initial: 'idle',
      states: { idle: { on: { text: 'asked' } }, asked: { entry: say(template({ name: 'colloquy_hello', language: 'en_US' })) } },
    });
    conv = await createTestBot(defineBot({ id: 'tpl', machine }));
    const err = await conv.type('hi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BotTurnError);
    expect((err as Error).message).toMatch(/Invalid message from bot "tpl", state "asked"/);
    expect((err as Error).message).toContain('no templates');
  });
});

describe('the Cloud API without an SMS channel', () => {
  it('131026 reaches the bot as delivery.failed: no SMS to fall back to', async () => {
    const { createCloudApiProvider } = await import('../../src/transport/index.js');
    const { startSandbox, SANDBOX_CLOUD_API_TOKEN, SANDBOX_PHONE_NUMBER_ID } = await import('../../src/sandbox/index.js');
    const { openStore } = await import('../../src/store/open.js');
    const { Runtime } = await import('../../src/conversation/runtime.js');
    const sb = await startSandbox({ cloudApi: { statuses: false } });
    const provider = createCloudApiProvider({ baseUrl: `${sb.url}/cloud/v23.0`, token: SANDBOX_CLOUD_API_TOKEN, defaultNumberId: SANDBOX_PHONE_NUMBER_ID, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const store = await openStore(':memory:');
    const runtime = new Runtime({ store, adapter: provider, bots: [echoBot()], sender: sb.sandbox.sender });
    try {
      await runtime.start();
      const user = '15550007777';
      sb.sandbox.userWrote(user, 'wamid.in1');
      sb.sandbox.faults.cloudError(131026, { times: 10 });
      await runtime.receive({ botId: 'echo', user, providerId: 'wamid.in1', source: 'whatsapp', event: { type: 'text', text: 'one', via: 'whatsapp' } });
      await runtime.idle();
      await runtime.idle();
      const conv = (await store.conversations({ botId: 'echo', user }))[0]!;
      const out = (await store.transcript(conv.id)).filter((e) => e.direction === 'out');
      expect(out.map((e) => (e.direction === 'out' ? [e.record.channel, e.record.state] : []))).toEqual([['interactive', 'failed']]);
      expect(conv.channel).toBe('interactive');
      expect(sb.sandbox.requestsTo('sms')).toEqual([]);
    } finally {
      await runtime.stop();
      await provider.close();
      await store.close();
      await sb.close();
    }
  });
});
