/**
 * Claims that end, in the runtime, on both engines: an idle claim goes back to the queue on the
 * harness's clock (no machine turn; a log line, a metric, the desk's listeners told), an agent's
 * message postpones it, a release just before it wins, a handoff nobody claims again still times
 * out as before; the connector gets `handoff.claim_expired`; a new runtime on the same database
 * still expires it, and two runtimes on one database expire it once.
 */
import { setup } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { defineBot, handoff, say, text, type Bot, type ColloquyEvent } from '../../src/index.js';
import type { Logger } from '../../src/log.js';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';
import { api, receiver, serve, walkToHandoff } from '../agent/helpers.js';
import { eventually } from '../support/eventually.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';
import { ENGINES, freshDatabase, sandbox, textEvent, world, type World } from './helpers.js';

const MIN = 60_000;
const IDLE = 5 * MIN;

const m = setup({ types: { context: {} as { n: number }, events: {} as ColloquyEvent } });
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

/** A logger that keeps what it is given at info. */
function infoLines(): Logger & { lines: { obj: object; msg: string | undefined }[] } {
  const lines: { obj: object; msg: string | undefined }[] = [];
  const noop = () => undefined;
  return { lines, debug: noop, warn: noop, error: noop, info: (obj, msg) => lines.push({ obj, msg }) };
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe.each(ENGINES)('claims that end in the runtime, on %s', (engine) => {
  async function on(o: { logger?: Logger } = {}): Promise<TestConversation> {
    const chat = await createTestBot(desk, { database: engine === 'postgres' ? await freshDatabaseUrl() : ':memory:', handoffClaimIdleMs: IDLE, ...o });
    cleanup.push(() => chat.close());
    await chat.type('a person please');
    return chat;
  }
  const expired = (chat: TestConversation) => chat.runtime.metrics.value('colloquy_handoff_claims_expired_total', { bot: 'desk', reason: 'idle' });

  it('an idle claim goes back to the queue without a machine turn: waiting, its agent kept, its timeout from now, a log line, a metric, the queue told', async () => {
    const logger = infoLines();
    const chat = await on({ logger });
    let told = 0;
    chat.runtime.handoffs.onChange(() => told++);
    await chat.agent('ana').claim();
    const claimedAt = chat.clock.now();
    expect(chat.expectHandoff({ status: 'claimed' }).claimIdleUntil).toBe(claimedAt + IDLE);
    expect(await chat.runtime.handoffs.queue()).toMatchObject([{ status: 'claimed', agent: 'ana', claimIdleUntil: claimedAt + IDLE }]);
    const version = chat.conversation!.version;
    await chat.advance(IDLE - 1);
    chat.expectHandoff({ status: 'claimed', agent: 'ana' });
    told = 0;
    await chat.advance(1);
    const h = chat.expectHandoff({ status: 'waiting', agent: 'ana' });
    expect(h).toMatchObject({ timeoutAt: claimedAt + IDLE + 10 * MIN, claimIdleUntil: null });
    chat.expectNothingSent().expectState('human');
    expect(chat.conversation!.version).toBe(version);
    expect(expired(chat)).toBe(1);
    expect(told).toBeGreaterThan(0);
    expect(logger.lines.filter((l) => l.msg?.startsWith('a claim went back to the queue'))).toEqual([
      { obj: expect.objectContaining({ bot: 'desk', conversation: chat.conversation!.id, agent: 'ana', timeoutAt: h.timeoutAt }), msg: expect.any(String) },
    ]);
    expect(await chat.runtime.handoffs.queue()).toMatchObject([{ status: 'waiting', agent: null, timeoutAt: h.timeoutAt, claimIdleUntil: null }]);
    // Its agent writing now is told the claim went back; claiming again works.
    await expect(chat.agent('ana').reply('Sorry, I was away.')).rejects.toThrow(`nobody holds it now (agent "ana"'s claim went back to the queue)`);
    await chat.agent('ana').claim();
    chat.expectHandoff({ status: 'claimed', agent: 'ana' });
  });

  it("the agent's message before the deadline postpones it", async () => {
    const chat = await on();
    await chat.agent('ana').claim();
    await chat.advance(IDLE - MIN);
    await chat.agent('ana').reply('Looking into it.');
    await chat.advance(IDLE - MIN);
    chat.expectHandoff({ status: 'claimed' });
    expect(expired(chat)).toBe(0);
    await chat.advance(MIN);
    chat.expectHandoff({ status: 'waiting', agent: 'ana' });
    expect(expired(chat)).toBe(1);
  });

  it('a release just before the deadline wins: the machine gets handoff.ended and nothing expires', async () => {
    const chat = await on();
    await chat.agent('ana').claim();
    await chat.advance(IDLE - 1);
    await chat.agent('ana').release('sorted');
    chat.expectState('back').expectText('Back with the bot (handoff.ended).');
    await chat.advance(IDLE);
    chat.expectNoHandoff().expectNothingSent();
    expect(expired(chat)).toBe(0);
    expect(await chat.store.handoffs(chat.conversation!.id)).toMatchObject([{ state: 'ended', endedBy: 'ana' }]);
  });

  it('a claim that went back and that nobody claims again times out as before: handoff.timeout reaches the machine', async () => {
    const chat = await on();
    await chat.agent('ana').claim();
    await chat.advance(IDLE);
    chat.expectHandoff({ status: 'waiting' });
    await chat.advance(10 * MIN - 1);
    chat.expectHandoff({ status: 'waiting' });
    await chat.advance(1);
    chat.expectState('back').expectText('Back with the bot (handoff.timeout).').expectNoHandoff();
    expect(await chat.store.handoffs(chat.conversation!.id)).toMatchObject([{ state: 'timeout', endedBy: 'timeout', agent: 'ana' }]);
  });

  it('claims never expire with handoffClaimIdleMs 0', async () => {
    const chat = await createTestBot(desk, { database: engine === 'postgres' ? await freshDatabaseUrl() : ':memory:', handoffClaimIdleMs: 0 });
    cleanup.push(() => chat.close());
    await chat.type('a person please');
    await chat.agent('ana').claim();
    await chat.advance('30d');
    expect(chat.expectHandoff({ status: 'claimed', agent: 'ana' }).claimIdleUntil).toBeNull();
  });

  it('refuses a handoffClaimIdleMs that is not a whole number of milliseconds, naming it', async () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      await expect(createTestBot(desk, { handoffClaimIdleMs: bad })).rejects.toThrow(/handoffClaimIdleMs: must be a whole number of milliseconds/);
    }
  });

  it('the connector gets handoff.claim_expired, with the reason, after COLLOQUY_HANDOFF_CLAIM_IDLE_MS (30 minutes by default)', async () => {
    const hook = await receiver();
    cleanup.push(() => hook.close());
    const { server, clock } = await serve({ hook: hook.url, ...(engine === 'postgres' && { db: await freshDatabaseUrl() }) });
    cleanup.push(() => server.close());
    const id = await walkToHandoff(server);
    expect((await api(server, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' })).status).toBe(200);
    clock.advance(30 * MIN);
    await eventually(() => expect(hook.got.map((g) => g.body.type)).toEqual(['handoff.started', 'handoff.claimed', 'handoff.claim_expired']), { what: 'the expiry delivered' });
    const body = hook.got[2]!.body;
    expect(body).toMatchObject({ reason: 'idle', handoff: { conversationId: id, state: 'waiting', agent: 'ana', queue: 'billing', claimIdleUntil: null } });
    expect(hook.got[1]!.body.handoff.claimIdleUntil).toBe(body.createdAt);
  });
});

describe.each(ENGINES)('claims that end across runtimes, on %s', (engine) => {
  const tmp = tempDir();
  cleanup.push(async () => tmp.remove());
  let n = 0;
  async function handedOver(): Promise<{ path: string; clock: ManualClock; a: World<import('../../src/store/types.js').Store>; id: number }> {
    const sb = await sandbox();
    cleanup.push(() => sb.close());
    const path = await freshDatabase(engine, tmp.dir, `claims-${++n}.db`);
    const clock = new ManualClock();
    const a = await world([desk], { engine, path, sb, clock });
    cleanup.push(() => a.stop().catch(() => undefined));
    await a.send(textEvent('a person please'));
    const id = (await a.store.conversations())[0]!.id;
    await a.runtime.handoffs.claim(id, 'ana');
    return { path, clock, a, id };
  }

  it('a new runtime on the same database expires a claim the stopped one made', async () => {
    const { path, clock, a, id } = await handedOver();
    await a.stop();
    clock.advance(31 * MIN); // the default idle time (30 minutes) passed while nothing ran
    const b = await world([desk], { engine, path, sb: await sandbox(), clock });
    cleanup.push(() => b.close());
    await b.runtime.idle();
    expect(await b.store.handoffs(id)).toMatchObject([{ state: 'waiting', agent: 'ana', timeoutAt: clock.now() + 10 * MIN }]);
    expect(b.runtime.metrics.total('colloquy_handoff_claims_expired_total')).toBe(1);
  });

  it('two runtimes on one database expire it once', async () => {
    const { path, clock, a, id } = await handedOver();
    const b = await world([desk], { engine, path, sb: await sandbox(), clock });
    cleanup.push(() => b.close());
    clock.advance(30 * MIN);
    await Promise.all([a.runtime.poke(), b.runtime.poke()]);
    await Promise.all([a.runtime.idle(), b.runtime.idle()]);
    const total = a.runtime.metrics.total('colloquy_handoff_claims_expired_total') + b.runtime.metrics.total('colloquy_handoff_claims_expired_total');
    expect(total).toBe(1);
    expect(await a.store.handoffs(id)).toMatchObject([{ state: 'waiting', agent: 'ana' }]);
    expect((await a.store.timers(id)).map((t) => t.key)).toEqual(['colloquy.handoff.timeout']);
  });
});
