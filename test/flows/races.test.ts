/**
 * Durable flow submits racing other work of the conversation (found by review; each failed before
 * its fix): a lane turn that loses to a submit whose invocation runs, two processes on PostgreSQL,
 * a copy of a retry that stalled while the user moved on, and the simulators signing with a
 * number's app secret.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { assign, fromPromise, setup } from 'xstate';
import { defineBot, flow, flowComplete, flowScreen, say, text, type ColloquyEvent } from '../../src/index.js';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import type { Store } from '../../src/store/types.js';
import { createAppointmentsBot } from '../../bots/appointments.js';
import { freshDatabaseUrl } from '../support/postgres.js';

const open: TestConversation[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});
const texts = (c: TestConversation): string[] => c.sent.map((s) => s.text).filter((x): x is string => typeof x === 'string' && x !== '');

let calls = 0;
let finish: (() => void) | undefined;
/** The booking API: counts its calls, and answers when the test lets it. */
const bookApi = fromPromise(async ({ input }: { input: { slot: string } }) => {
  calls++;
  await new Promise<void>((resolve) => (finish = resolve));
  return `ref-${input.slot}`;
});
const machine = setup({ types: { context: {} as { slot?: string; ref?: string; notes: number }, events: {} as ColloquyEvent | { type: 'book'; slot: string } }, actors: { bookApi } }).createMachine({
  initial: 'picking',
  context: { notes: 0 },
  on: { text: { actions: assign({ notes: ({ context }) => context.notes + 1 }) } },
  states: {
    picking: { entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })), on: { book: { target: 'booking', actions: assign({ slot: ({ event }) => event.slot }) } } },
    booking: { invoke: { src: 'bookApi', input: ({ context }) => ({ slot: context.slot! }), onDone: { target: 'booked', actions: assign({ ref: ({ event }) => event.output }) } } },
    booked: { entry: say(({ context }) => text(`Booked ${context.slot}, ref ${context.ref}`)) },
  },
});
const bot = defineBot({
  id: 'inv',
  machine,
  options: { flows: { picking: { open: () => flowScreen('PICK'), screens: { PICK: { event: ({ data }) => ({ type: 'book', slot: String(data['slot']) }), answer: () => flowComplete({}) } } } } },
});
const pick = (flow_token: string) => ({ version: '3.0', action: 'data_exchange' as const, screen: 'PICK', data: { slot: '9' }, flow_token });

it('a user’s message arriving while a submit books waits for it, and the booking runs once', async () => {
  calls = 0;
  const t = await createTestBot(bot);
  open.push(t);
  await t.type('hi');
  const token = t.conversation!.flowToken;
  // The user's next message reaches its commit while the submit is being answered.
  const store = t.store as Store & { commitTurn: Store['commitTurn'] };
  const original = store.commitTurn.bind(store);
  let gate!: () => void;
  const held = new Promise<void>((r) => (gate = r));
  let reachedCommit!: () => void;
  const reached = new Promise<void>((r) => (reachedCommit = r));
  let once = true;
  store.commitTurn = async (c) => {
    if (c.inboxId !== undefined && once) {
      once = false;
      reachedCommit();
      await held;
    }
    return original(c);
  };
  const typed = t.type('are you there?');
  await reached;
  const answer = t.runtime.flows.handle(pick(token));
  gate();
  expect((await answer).status).toBe(200);
  await typed;
  finish!();
  await t.untilInvocationsSettle();
  await t.settled();
  expect(calls).toBe(1);
  expect(texts(t).filter((x) => x.startsWith('Booked'))).toHaveLength(1);
  expect((t.context as { notes: number }).notes).toBe(2); // "hi" and the message that raced the submit: neither lost
});

it('two processes on PostgreSQL: the process that answered the submit keeps the conversation while its booking runs; the booking runs once', async () => {
  calls = 0;
  const url = await freshDatabaseUrl();
  const a = await createTestBot(bot, { database: url });
  const b = await createTestBot(bot, { database: url });
  open.push(a, b);
  await a.type('hi');
  await a.refresh();
  const token = a.conversation!.flowToken;
  // WhatsApp's request lands on process b; the user's next message on process a.
  expect((await b.runtime.flows.handle(pick(token))).status).toBe(200);
  await a.type('are you there?');
  finish!();
  await b.untilInvocationsSettle();
  await b.settled();
  await a.settled();
  await a.refresh();
  expect(calls).toBe(1);
  expect((a.context as { ref?: string }).ref).toBe('ref-9');
});

let t: TestConversation | undefined;
const dayMachine = setup({ types: { context: {} as { day?: string; runs: string[] }, events: {} as ColloquyEvent | { type: 'day'; day: string } } }).createMachine({
  initial: 'picking',
  context: { runs: [] },
  states: {
    picking: {
      entry: say(flow({ body: 'Pick', flowId: '42', cta: 'Pick', action: 'data_exchange' })),
      on: { day: { actions: assign({ day: ({ event }) => event.day, runs: ({ context, event }) => [...context.runs, event.day] }) } },
    },
  },
});
const dayBot = defineBot({
  id: 'il',
  machine: dayMachine,
  options: {
    flows: {
      picking: {
        open: () => flowScreen('DAYS'),
        screens: {
          DAYS: { event: ({ data }) => ({ type: 'day', day: String(data['day']) }), answer: ({ context }) => flowScreen('SLOTS', { day: context.day }) },
        },
      },
    },
  },
});

it('a copy of submit A that read the latest submit before A committed, and the conversation after B, is not run a second time', async () => {
  t = await createTestBot(dayBot);
  open.push(t);
  await t.type('hi');
  const flow_token = t.conversation!.flowToken;
  const req = (day: string) => ({ version: '3.0', action: 'data_exchange' as const, screen: 'DAYS', data: { day }, flow_token });
  const store = t.store as Store & { latestFlowSubmit: Store['latestFlowSubmit'] };
  const latest = store.latestFlowSubmit.bind(store);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let stalled!: () => void;
  const copyRead = new Promise<void>((r) => (stalled = r));
  let first = true;
  store.latestFlowSubmit = async (tok: string) => {
    const r = await latest(tok);
    if (first) {
      // WhatsApp's copy of A read "no submit yet", then stalls.
      first = false;
      stalled();
      await gate;
    }
    return r;
  };
  const copy = t.runtime.flows.handle(req('mon'));
  await copyRead;
  expect((await t.runtime.flows.handle(req('mon'))).outcome).toBe('ok'); // A
  expect((await t.runtime.flows.handle(req('tue'))).outcome).toBe('ok'); // B: the user's next choice, answered
  release();
  expect(await copy).toMatchObject({ outcome: 'replayed' });
  await t.refresh();
  const ctx = t.context as { runs: string[]; day?: string };
  expect(ctx.runs).toEqual(['mon', 'tue']);
  expect(ctx.day).toBe('tue');
});

it('an error notification’s screen is checked like any other before it is logged', async () => {
  t = await createTestBot(dayBot);
  open.push(t);
  const r = await t.runtime.flows.handle({ version: '3.0', action: 'data_exchange', flow_token: 'x', screen: `${'A'.repeat(5000)} <img src=x> 555-0100`, data: { error: 'boom' } });
  expect(r.status).toBe(400);
});

it("with only the numbers file's app secrets, the simulator's live flow still reaches the endpoint (427 for an unknown token, not 432)", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'r25b-'));
  const file = join(dir, 'numbers.json');
  writeFileSync(file, JSON.stringify({ numbers: [{ phoneNumberId: '700000000000002', displayNumber: '+1 555 000 0002', bot: 'appointments', appSecret: 'per-number-secret' }] }));
  const config = { ...loadConfig({ HOST: '127.0.0.1', COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_NUMBERS_FILE: file }), port: 0, db: ':memory:', logLevel: 'silent' as const };
  const server = await startServer({ bots: [createAppointmentsBot()], config, extensions: [simulatorExtension] });
  try {
    const res = await fetch(`${server.url}/simulator/api/flow/open`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ bot: 'appointments', user: '5215533330009', token: 'ft_nosuch.appointments.1', flowId: '1029384756' }),
    });
    const body = await res.json();
    expect(body.step.kind).toBe('closed');
  } finally {
    await server.close();
  }
});
