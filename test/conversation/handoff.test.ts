/**
 * handoff() in the runtime: bad options, timers and expiry during a handoff, a second handoff, on
 * both engines (the harness runs on the database it is given).
 */
import { assign, setup } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { buttons, defineBot, handoff, say, text, type Bot, type ColloquyEvent } from '../../src/index.js';
import { createTestBot, recordTranscript, replayTranscript, transcriptLines, type TestConversation } from '../../src/simulator/testing.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { ENGINES } from './helpers.js';

const m = setup({ types: { context: {} as { n: number }, events: {} as ColloquyEvent } });

function desk(opts: { reason?: unknown; timeoutMs?: number } = {}, expireAfterMs?: number): Bot {
  const machine = m.createMachine({
    context: { n: 0 },
    initial: 'start',
    states: {
      start: { on: { text: 'human' } },
      human: {
        entry: [say(text('Connecting you to a person.')), handoff(opts as never)],
        after: { 120000: { actions: [assign({ n: ({ context }) => context.n + 1 }), say(({ context }) => text(`Still looking for someone (${context.n}).`))], reenter: false } },
        on: { 'handoff.ended': 'back', 'handoff.timeout': 'back' },
      },
      back: { entry: say(({ event }) => text(`Back with the bot (${event.type}).`)), on: { text: 'human' } },
    },
  });
  return defineBot({ id: 'desk', machine, options: { ...(expireAfterMs !== undefined && { expireAfterMs }), handoffTimeoutMs: 30 * 60_000 } });
}

let chat: TestConversation | undefined;
afterEach(async () => {
  await chat?.close();
  chat = undefined;
});

describe.each(ENGINES)('handoff() in the runtime, on %s', (engine) => {
  /** A harness for `bot` on this engine's database: SQLite in memory, or a PostgreSQL database of its own. */
  const on = async (bot: Bot) => createTestBot(bot, { database: engine === 'postgres' ? await freshDatabaseUrl() : ':memory:' });

  it('bad options fail the turn with an error naming bot, state and field; nothing is opened', async () => {
    chat = await on(desk({ reason: 'x'.repeat(501) }));
    await expect(chat.type('a person please')).rejects.toThrow('Bot "desk", state "human": handoff(): reason must be a string of at most 500 characters');
    chat.expectNoHandoff();
    expect(() => defineBot({ id: 'bad', machine: desk().machine, options: { handoffTimeoutMs: -1 } })).toThrow('Bot "bad": handoffTimeoutMs must be a positive whole number');
  });

  it("the machine's own timers keep firing during a handoff; the bot option sets the timeout", async () => {
    chat = await on(desk());
    await chat.type('a person please');
    expect(chat.expectHandoff().timeoutAt).toBe(chat.clock.now() + 30 * 60_000);
    await chat.advance('2m');
    chat.expectText('Still looking for someone (1).').expectHandoff({ status: 'waiting' });
    await chat.type('hello?');
    chat.expectNothingSent();
    await chat.advance('28m');
    chat.expectState('back').expectText('Back with the bot (handoff.timeout).').expectNoHandoff();
    await chat.type('try again');
    chat.expectHandoff({ status: 'waiting' });
    await chat.agent('zoe').release();
    chat.expectText('Back with the bot (handoff.ended).');
  });

  it('an idle conversation expires during a handoff and closes it; the next message starts over', async () => {
    // The handoff outlasts the conversation (the idle claim goes back to the queue at 30 minutes, and waits on).
    chat = await on(desk({ timeoutMs: 10 * 3_600_000 }, 60 * 60_000));
    await chat.type('a person please');
    const first = chat.conversation!.id;
    await chat.agent('ana').claim();
    await chat.advance('61m');
    expect(await chat.runtime.sweep()).toBe(1);
    expect(await chat.runtime.handoffs.queue()).toEqual([]);
    expect(await chat.store.handoffs(first)).toMatchObject([{ state: 'closed', endedBy: 'system' }]);
    await chat.type('hi again');
    expect(chat.conversation!.id).not.toBe(first);
    chat.expectState('human').expectHandoff({ status: 'waiting' }); // a new conversation, a new handoff
  });

  it('a user message after the conversation expired (not yet swept) starts a new one and closes the old handoff', async () => {
    chat = await on(desk({ timeoutMs: 10 * 3_600_000 }, 60 * 60_000));
    await chat.type('a person please');
    const first = chat.conversation!.id;
    chat.clock.advance(2 * 3_600_000);
    await chat.type('anyone?');
    expect(chat.conversation!.id).not.toBe(first);
    expect(await chat.store.handoffs(first)).toMatchObject([{ state: 'closed' }]);
  });

  it("agents' actions are steps of a transcript, and replay", async () => {
    chat = await on(desk());
    await chat.type('a person please');
    await chat.type('hello?');
    await chat.agent('ana').claim();
    await chat.agent('ana').reply('Ana here.');
    await chat.agent('ana').release('sorted');
    const steps = recordTranscript(chat);
    expect(transcriptLines(steps).filter((l) => l.startsWith('> '))).toEqual([
      '> type "a person please"',
      '> type "hello?"',
      '> agent "ana" claims the handoff',
      '> agent "ana" replies "Ana here."',
      '> agent "ana" releases the handoff ("sorted")',
    ]);
    expect(steps.at(-1)).toMatchObject({ state: 'back', sent: [expect.stringContaining('Back with the bot (handoff.ended).')] });
    await expect(replayTranscript(desk(), steps)).resolves.toHaveLength(5);
    const tampered = steps.map((st, i) => (i === 3 ? { ...st, sent: ['text "Bob here."'] } : st));
    await expect(replayTranscript(desk(), tampered)).rejects.toThrow(/Bob here/);
  });

  it("an agent's message that WhatsApp refuses falls back to SMS, still the agent's", async () => {
    chat = await on(desk());
    await chat.type('a person please');
    await chat.agent('ana').claim();
    chat.sandbox.faults.refuseInteractive(chat.user);
    await chat.agent('ana').reply(
      buttons({
        body: 'Did that help?',
        buttons: [
          { id: 'y', title: 'Yes' },
          { id: 'n', title: 'No' },
        ],
      }),
    );
    expect(chat.latest).toMatchObject([{ kind: 'buttons', channel: 'sms', fallback: true, agent: 'ana', text: expect.stringContaining('Did that help?') }]);
    const lines = (await chat.runtime.handoffs.conversation(chat.conversation!.id)).transcript.filter((l) => l.direction === 'out');
    expect(lines.slice(-2).map((l) => [l.from, l.agent, l.delivery?.channel, l.delivery?.fallback])).toEqual([
      ['agent', 'ana', 'interactive', false],
      ['agent', 'ana', 'sms', true],
    ]);
    chat.expectState('human');
  });

  it("a message the user wrote before the release, but processed after it, is still the agent's", async () => {
    chat = await on(desk());
    await chat.type('a person please');
    await chat.agent('ana').claim();
    // Stored, not yet processed (no kick): then the agent releases.
    const raced = await chat.store.addInbound({
      botId: 'desk',
      user: chat.user,
      providerId: 'wamid.raced',
      source: 'whatsapp',
      event: { type: 'text', text: 'one more thing' },
      receivedAt: chat.clock.now(),
    });
    await chat.agent('ana').release();
    const inbound = (await chat.transcript()).filter((e) => e.direction === 'in').map((e) => (e.event as { type: string }).type);
    expect(inbound).toEqual(['text', 'text', 'handoff.ended']);
    expect(chat.latest.map((m) => (m as { text?: string }).text)).toEqual(['Back with the bot (handoff.ended).']); // no re-prompt for it
    expect(await chat.store.inbound(raced.id)).toMatchObject({ state: 'done', error: null, conversationId: chat.conversation!.id });
  });
});
