/**
 * One `advance()` of the harness behaves as if that much time passed: every due time inside it
 * (XState `after` delays, an idle claim's deadline, the handoff timeout re-armed from it) fires at
 * its own time, in order, and what a fired timer arms fires too when it falls within the advance.
 */
import { assign, setup } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { defineBot, handoff, say, text, type Bot, type ColloquyEvent } from '../../src/index.js';
import { advanceInSteps } from '../../src/simulator/harness-clock.js';
import { createTestBot, ExpectationError, type TestConversation } from '../../src/simulator/testing.js';
import { freshDatabaseUrl } from '../support/postgres.js';

const MIN = 60_000;
const IDLE = 5 * MIN;

const m = setup({ types: { context: {} as { n: number }, events: {} as ColloquyEvent } });

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function open(bot: Bot, options: Parameters<typeof createTestBot>[1] = {}): Promise<TestConversation> {
  const chat = await createTestBot(bot, options);
  cleanup.push(() => chat.close());
  return chat;
}

/** Says the clock's time (minutes since the user wrote) as each state is entered. */
const chain: Bot = defineBot({
  id: 'chain',
  machine: m.createMachine({
    context: { n: 0 },
    initial: 's',
    states: {
      s: { on: { text: 'a' } },
      a: { entry: say(text('a')), after: { [5 * MIN]: 'b' } },
      b: { entry: say(text('b')), after: { [5 * MIN]: 'c' } },
      c: { entry: say(text('c')), after: { [5 * MIN]: 'd' } },
      d: { entry: say(text('d')) },
    },
  }),
});

/** Counts minutes: a delay that re-enters its own state. */
const ticking: Bot = defineBot({
  id: 'ticking',
  machine: m.createMachine({
    context: { n: 0 },
    initial: 's',
    states: {
      s: { on: { text: 'tick' } },
      tick: { after: { [MIN]: { target: 'tick', reenter: true, actions: assign({ n: ({ context }) => context.n + 1 }) } } },
    },
  }),
});

describe('advance() through chained after delays', () => {
  it('fires a delay armed by an earlier one within the same advance, each at its own time', async () => {
    const chat = await open(chain);
    await chat.type('go');
    const start = chat.clock.now();
    await chat.advance(12 * MIN);
    chat.expectState('c');
    expect(chat.latest.map((s) => s.text)).toEqual(['b', 'c']);
    const sent = (await chat.transcript()).filter((e) => e.direction === 'out').map((e) => e.at - start);
    expect(sent).toEqual([0, 5 * MIN, 10 * MIN]);
    expect(chat.clock.now()).toBe(start + 12 * MIN);
  });

  it('fires a delay that falls due exactly at the end of the advance', async () => {
    const chat = await open(chain);
    await chat.type('go');
    await chat.advance('10m');
    chat.expectState('c');
    await chat.advance(5 * MIN - 1);
    chat.expectState('c').expectNothingSent();
    await chat.advance(1);
    chat.expectState('d').expectText('d');
  });

  it('fires a delay that re-arms itself once per period', async () => {
    const chat = await open(ticking);
    await chat.type('go');
    await chat.advance('1h');
    expect(chat.context).toEqual({ n: 60 });
  });

  it('stops an advance that takes more due times than its bound, naming the delay that keeps re-arming', async () => {
    const chat = await open(ticking);
    await chat.type('go');
    const { clock, runtime, store } = chat;
    const start = clock.now();
    await expect(advanceInSteps({ clock, runtime, store, botId: ticking.id }, 3_600_000, { steps: 10 })).rejects.toThrow(
      /it took more than 10 due times .*timer "[^"]*tick[^"]*" armed in state "[^"]*tick"/,
    );
    expect(clock.now()).toBe(start + 10 * MIN); // it stopped where the bound was reached
  });

  it('refuses a delay of 0 that re-arms forever, naming the state and the timer', async () => {
    const spinning: Bot = defineBot({
      id: 'spinning',
      machine: m.createMachine({
        context: { n: 0 },
        initial: 's',
        states: {
          s: { on: { text: 'spin' } },
          spin: { after: { 0: { target: 'spin', reenter: true } } },
        },
      }),
    });
    const chat = await open(spinning);
    await chat.type('go');
    const error = await chat.advance('1m').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(ExpectationError);
    expect((error as Error).message).toMatch(/spin/);
    expect((error as Error).message).toMatch(/re-arm/);
  });
});

describe('advance() through sends put back for later', () => {
  it('retries a send as often as its waits fit within one advance', async () => {
    const echo: Bot = defineBot({ id: 'echo', machine: m.createMachine({ context: { n: 0 }, on: { text: { actions: say(text('Heard you.')) } } }) });
    const chat = await open(echo, { provider: 'cloud-api', sends: { baseDelayMs: 1_000 } });
    // Each 131056 puts the message back for at least 6 s (the pair rate), on the harness's clock.
    chat.sandbox.faults.cloudError(131056, { times: 3 });
    await chat.type('hi');
    chat.expectNothingSent();
    await chat.advance('1m');
    chat.expectText('Heard you.');
    expect(chat.sandbox.requestsTo('cloud-api').filter((r) => r.status === 400).length).toBe(3); // 131056 comes as HTTP 400
  });
});

const desk: Bot = defineBot({
  id: 'desk',
  machine: m.createMachine({
    context: { n: 0 },
    initial: 'start',
    states: {
      start: { on: { text: 'human' } },
      human: {
        entry: [say(text('Connecting you to a person.')), handoff({ queue: 'billing' })],
        on: { 'handoff.ended': 'back', 'handoff.timeout': 'back' },
      },
      back: { entry: say(({ event }) => text(`Back with the bot (${event.type}).`)), on: { text: 'human' } },
    },
  }),
  options: { handoffTimeoutMs: 10 * MIN },
});

describe.each(['sqlite', 'postgres'] as const)('advance() across an idle claim deadline, on %s', (engine) => {
  async function handedOver(): Promise<TestConversation> {
    const chat = await open(desk, { database: engine === 'postgres' ? await freshDatabaseUrl() : ':memory:', handoffClaimIdleMs: IDLE });
    await chat.type('a person please');
    return chat;
  }

  it('returns the claim at its deadline, not at the end of the advance', async () => {
    const chat = await handedOver();
    await chat.agent('ana').claim();
    const deadline = chat.clock.now() + IDLE;
    await chat.advance(IDLE + 3 * MIN);
    const h = chat.expectHandoff({ status: 'waiting', agent: 'ana' });
    expect(h.timeoutAt).toBe(deadline + 10 * MIN);
    const log = await chat.store.handoffLog(chat.conversation!.id);
    expect(log.find((e) => e.action === 'claim_expired')?.at).toBe(deadline);
  });

  it('ends the handoff with handoff.timeout when one advance passes the deadline and the timeout re-armed from it', async () => {
    const chat = await handedOver();
    await chat.agent('ana').claim();
    await chat.advance(IDLE + 10 * MIN);
    chat.expectState('back').expectText('Back with the bot (handoff.timeout).').expectNoHandoff();
  });
});
