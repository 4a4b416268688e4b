/**
 * The Flow endpoint as WhatsApp reaches it: real HTTP to `POST /flows` on a running server (the
 * sandbox playing the provider), requests encrypted and signed by `FlowClient`, answered from the
 * conversation that sent the flow.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { defineBot, flow, flowComplete, flowError, flowScreen, say, text, type ColloquyEvent } from '../../src/index.js';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { FlowClient } from '../../src/simulator/testing.js';
import { eventually } from '../support/eventually.js';

const dir = join(import.meta.dirname, '../fixtures/flows');
const { passphrase } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8')) as { passphrase: string };
const publicKey = readFileSync(join(dir, 'test-public-key.pem'), 'utf8');
const SECRET = 'flow-endpoint-test-secret';
const OLD_SECRET = 'flow-endpoint-old-secret';
const MARKER = 'secret-marker-7f3a';

type Ctx = { day?: string; slot?: string; slow?: boolean };
type Ev = ColloquyEvent | { type: 'book'; day: string; slot: string };

const machine = setup({ types: { context: {} as Ctx, events: {} as Ev } }).createMachine({
  id: 'live',
  initial: 'idle',
  context: {},
  states: {
    idle: { on: { text: 'picking' } },
    picking: {
      entry: say(flow({ body: 'Pick a time', flowId: '1234567890', cta: 'See times', action: 'data_exchange' })),
      on: {
        text: { target: 'picking', reenter: true },
        book: { target: 'booked', actions: assign({ day: ({ event }) => event.day, slot: ({ event }) => event.slot }) },
      },
    },
    booked: { type: 'final', entry: say(({ context }) => text(`Booked: ${context.day} ${context.slot}`)) },
  },
});

const lines: string[] = [];
const logger = {
  debug: (o: object, m?: string) => lines.push(JSON.stringify({ ...o, m })),
  info: (o: object, m?: string) => lines.push(JSON.stringify({ ...o, m })),
  warn: (o: object, m?: string) => lines.push(JSON.stringify({ ...o, m })),
  error: (o: object, m?: string) => lines.push(JSON.stringify({ ...o, m })),
};

const bot = defineBot({
  id: 'live',
  machine,
  options: {
    flows: {
      picking: {
        firstScreen: 'DAYS',
        expired: 'This booking form has expired.',
        budgetMs: 500,
        open: () => flowScreen('DAYS', { days: [{ id: 'mon', title: 'Monday' }] }),
        screens: {
          DAYS: ({ data }) => (data['day'] === 'slow' ? new Promise(() => undefined) : flowScreen('SLOTS', { day: data['day'], slots: [{ id: '0900', title: '09:00' }] })),
          SLOTS: ({ data }) => (data['slot'] === 'taken' ? flowError('That time was just taken') : flowScreen('CONFIRM', { day: data['day'], slot: data['slot'] })),
          CONFIRM: {
            event: ({ data }) => ({ type: 'book', day: String(data['day']), slot: String(data['slot']) }),
            answer: ({ context }) => flowComplete({ booking: `B-${(context as Ctx).day}-${(context as Ctx).slot}` }),
          },
        },
      },
    },
  },
});

let server: RunningServer;
let client: FlowClient;
let user = 0;

beforeAll(async () => {
  const env = {
    HOST: '127.0.0.1',
    COLLOQUY_WEBHOOK_SECRET: SECRET,
    COLLOQUY_FLOW_APP_SECRET_PREVIOUS: OLD_SECRET,
    COLLOQUY_FLOW_PRIVATE_KEY: join(dir, 'test-private-key.pem'),
    COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: passphrase,
  };
  server = await startServer({ bots: [bot], config: { ...loadConfig(env), port: 0, db: ':memory:' }, logger });
  client = new FlowClient({ url: `${server.url}/flows`, publicKey, appSecret: SECRET });
});
afterAll(() => server?.close());
afterEach(() => server.sandbox!.clearFaults());

/** Messages the sandbox accepted for `to`, as their request bodies. */
const sentTo = (to: string) => server.sandbox!.messagesTo(to).map((m) => m.request as Record<string, unknown>);
const tokenIn = (r: Record<string, unknown>): string | undefined => JSON.stringify(r).match(/"flow_token":"([^"]+)"/)?.[1];

/** A new user who wrote, and the token of the flow the bot sent them. */
async function openFlow(): Promise<{ user: string; token: string }> {
  const u = `1555000${String(++user).padStart(4, '0')}`;
  await server.sandbox!.deliver.text(u, 'hi');
  const token = await eventually(() => {
    const t = sentTo(u)
      .map(tokenIn)
      .find((x) => x !== undefined);
    expect(t).toBeDefined();
    return t!;
  });
  return { user: u, token };
}

describe('POST /flows', () => {
  it('answers ping, refuses a wrong signature (432) and what it cannot decrypt (421)', async () => {
    expect(await client.ping()).toMatchObject({ status: 200, body: { data: { status: 'active' } } });
    expect((await client.ping({ appSecret: 'wrong' })).status).toBe(432);
    expect((await client.ping({ appSecret: null })).status).toBe(432);
    expect((await client.ping({ appSecret: OLD_SECRET })).status).toBe(200);
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect((await client.ping({ publicKey: other })).status).toBe(421);
    const raw = JSON.stringify({ encrypted_flow_data: 'AAAA', encrypted_aes_key: 'AAAA', initial_vector: 'AAAA' });
    const res = await fetch(`${server.url}/flows`, { method: 'POST', headers: { 'x-hub-signature-256': (await import('../../src/flows/signature.js')).signFlowBody(raw, SECRET) }, body: raw });
    expect(res.status).toBe(421);
  });

  it('answers a token it does not know with 427', async () => {
    const r = await client.init('ft_nobody');
    expect(r.status).toBe(427);
    expect(r.body).toMatchObject({ error_msg: expect.any(String) });
  });

  it('walks a live flow: open, each screen, a completing submit that runs the machine once', async () => {
    const { user: u, token } = await openFlow();
    expect(await client.init(token)).toMatchObject({ status: 200, body: { screen: 'DAYS', data: { days: [{ id: 'mon', title: 'Monday' }] } } });
    expect(await client.submit(token, 'DAYS', { day: 'mon', note: MARKER })).toMatchObject({ status: 200, body: { screen: 'SLOTS', data: { day: 'mon' } } });
    expect(await client.submit(token, 'SLOTS', { day: 'mon', slot: 'taken' })).toMatchObject({ status: 200, body: { screen: 'SLOTS', data: { error_message: 'That time was just taken' } } });
    expect(await client.submit(token, 'SLOTS', { day: 'mon', slot: '0900' })).toMatchObject({ status: 200, body: { screen: 'CONFIRM' } });
    const done = await client.submit(token, 'CONFIRM', { slot: '0900', day: 'mon' });
    expect(done).toMatchObject({ status: 200, body: { screen: 'SUCCESS', data: { extension_message_response: { params: { flow_token: token, booking: 'B-mon-0900' } } } } });
    // WhatsApp retries with a new AES key and IV (and the keys in another order): the same answer, no second turn.
    expect((await client.submit(token, 'CONFIRM', { day: 'mon', slot: '0900' })).body).toEqual(done.body);
    expect((await client.replay()).body).toEqual(done.body);
    await eventually(() => expect(sentTo(u).filter((r) => JSON.stringify(r).includes('Booked: mon 0900'))).toHaveLength(1));
    // The nfm_reply that follows the completion runs nothing either: no second confirmation, no new conversation.
    await server.sandbox!.deliver.flowReply(u, { flowToken: token, data: { booking: 'B-mon-0900' } });
    await server.runtime.idle();
    expect(sentTo(u).filter((r) => JSON.stringify(r).includes('Booked'))).toHaveLength(1);
    expect(await server.store.conversations({ botId: 'live', user: u })).toHaveLength(1);
    // The conversation ended: its token opens nothing any more.
    expect(await client.init(token)).toMatchObject({ status: 427, body: { error_msg: 'This booking form has expired.' } });
    expect(lines.join('\n')).not.toContain(MARKER);
  });

  it("runs a submit once when WhatsApp's retry arrives while the first is still being answered", async () => {
    const { user: u, token } = await openFlow();
    const answers = await Promise.all([1, 2, 3].map(() => client.submit(token, 'CONFIRM', { day: 'tue', slot: '1000' })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
    await server.runtime.idle();
    await eventually(() => expect(sentTo(u).filter((r) => JSON.stringify(r).includes('Booked: tue 1000'))).toHaveLength(1));
    expect(await server.metrics.render()).toMatch(/colloquy_flow_requests_total\{action="data_exchange",outcome="replayed"\} [1-9]/);
  });

  it('a newer flow makes the older token stale (427), and a slow answer becomes an error screen', async () => {
    const { user: u, token: first } = await openFlow();
    await server.sandbox!.deliver.text(u, 'again');
    const second = await eventually(() => {
      const tokens = sentTo(u)
        .map(tokenIn)
        .filter((x) => x !== undefined);
      expect(tokens).toHaveLength(2);
      return tokens[1]!;
    });
    expect(second).not.toBe(first);
    // The older flow's token is no conversation's any more; its 427 still carries the bot's own text.
    expect(await client.init(first)).toMatchObject({ status: 427, body: { error_msg: 'This booking form has expired.' } });
    expect((await client.init(second)).status).toBe(200);
    expect(await client.submit(second, 'DAYS', { day: 'slow' })).toMatchObject({ status: 200, body: { screen: 'DAYS', data: { error_message: expect.any(String) } } });
    expect(await client.submit(second, 'NOPE', {})).toMatchObject({ status: 200, body: { screen: 'NOPE', data: { error_message: expect.any(String) } } });
  });

  it('acknowledges an error notification without touching a conversation', async () => {
    const r = await client.send({ version: '3.0', action: 'data_exchange', screen: 'DAYS', flow_token: 'ft_whatever', data: { error: 'invalid-screen-transition', error_message: MARKER } });
    expect(r).toMatchObject({ status: 200, body: { data: { acknowledged: true } } });
    // As Meta documents it: no screen.
    const bare = await client.send({ version: '3.0', action: 'data_exchange', flow_token: 'ft_whatever', data: { error: 'INVALID_SCREEN_TRANSITION', error_message: MARKER } });
    expect(bare).toMatchObject({ status: 200, body: { data: { acknowledged: true } } });
    expect(lines.join('\n')).not.toContain(MARKER);
  });

  it('counts requests by action and outcome', async () => {
    const text = await server.metrics.render();
    expect(text).toMatch(/colloquy_flow_requests_total\{action="ping",outcome="ok"\} [1-9]/);
    expect(text).toMatch(/colloquy_flow_requests_total\{action="unknown",outcome="signature"\} [1-9]/);
    expect(text).toMatch(/colloquy_flow_seconds_bucket\{le="[0-9.]+",action="INIT"\}/);
  });
});
