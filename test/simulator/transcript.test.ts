import { existsSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setup } from 'xstate';
import { buttons, defineBot, say, text, type ReplyEvent } from '../../src/index.js';
import { createTestBot, expectTranscript, recordTranscript, replayTranscript, TranscriptMismatchError, type TestConversation } from '../../src/simulator/testing.js';
import { diffLines, formatDiff } from '../../src/simulator/transcript-diff.js';
import orderBot from '../fixtures/order-bot.js';
import { eventually } from '../support/eventually.js';
import { type TempDir, tempDir } from '../support/temp.js';

const open: TestConversation[] = [];
const temp: TempDir[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  for (const dir of temp.splice(0)) dir.remove();
  delete process.env['COLLOQUY_UPDATE_TRANSCRIPTS'];
});

/** A two-state bot whose question and second button can be changed, to stand for a new version. */
function sizeBot(question = 'Which size?', big = 'Large') {
  const bigId = big.toLowerCase();
  const machine = setup({ types: { events: {} as ReplyEvent } }).createMachine({
    id: 'sizes',
    initial: 'ask',
    states: {
      ask: {
        entry: say(
          buttons({
            body: question,
            buttons: [
              { id: 'small', title: 'Small' },
              { id: bigId, title: big },
            ],
          }),
        ),
        on: { 'reply.small': 'done', [`reply.${bigId}`]: 'done' },
      },
      done: { type: 'final', entry: say(({ event }) => text(`You chose ${(event as ReplyEvent).title}.`)) },
    },
  });
  return defineBot({ id: 'sizes', machine });
}

async function talk(bot = sizeBot(), choice = 'Large'): Promise<TestConversation> {
  const c = await createTestBot(bot);
  open.push(c);
  await c.type('hi');
  await c.tap(choice);
  return c;
}

async function orderConversation(): Promise<TestConversation> {
  const c = await createTestBot(orderBot);
  open.push(c);
  await c.type('hi');
  await c.tap('Margherita');
  await c.advance('10m');
  await c.tap('Pepperoni');
  await c.tap('Large');
  await c.submitFlow({ address: '1 Main St' });
  return c;
}

describe('recordTranscript and replayTranscript', () => {
  it('record each action with what the bot sent and the state, as JSON', async () => {
    const recorded = recordTranscript(await talk());
    expect(JSON.parse(JSON.stringify(recorded))).toEqual(recorded);
    expect(recorded).toEqual([
      { action: { type: 'hi' }, sent: ['buttons "Which size?" buttons=[small="Small", large="Large"]'], state: 'ask' },
      { action: { tap: 'Large' }, sent: ['text "You chose Large."'], state: 'done' },
    ]);
  });

  it('replay the user actions on a fresh harness: the same bot matches', async () => {
    const recorded = recordTranscript(await orderConversation());
    expect(recorded).toHaveLength(6);
    expect(await replayTranscript(orderBot, recorded)).toEqual(recorded);
  });

  it('a changed message fails the replay with a line diff', async () => {
    const recorded = recordTranscript(await talk());
    const err = (await replayTranscript(sizeBot('What size would you like?'), recorded).catch((e: unknown) => e)) as TranscriptMismatchError;
    expect(err).toBeInstanceOf(TranscriptMismatchError);
    expect(err.diff).toBe(
      [
        '  > type "hi"',
        '- < buttons "Which size?" buttons=[small="Small", large="Large"]',
        '+ < buttons "What size would you like?" buttons=[small="Small", large="Large"]',
        '  = ask',
        '  > tap "Large"',
        '  < text "You chose Large."',
        '  = done',
      ].join('\n'),
    );
    expect(err.message).toMatch(/^The conversation no longer matches its transcript \(bot "sizes"\)\.\n\(- recorded, \+ now\)\n/);
    expect(err.message).toMatch(/run with COLLOQUY_UPDATE_TRANSCRIPTS=1 to record it again\.$/);
  });

  it('a choice that is gone shows as the step that could not be done', async () => {
    const recorded = recordTranscript(await talk());
    const err = (await replayTranscript(sizeBot('Which size?', 'Big'), recorded).catch((e: unknown) => e)) as TranscriptMismatchError;
    expect(err.diff).toContain('- < buttons "Which size?" buttons=[small="Small", large="Large"]\n+ < buttons "Which size?" buttons=[small="Small", big="Big"]');
    expect(err.diff).toContain(
      '- < text "You chose Large."\n- = done\n+ < (nothing)\n+ = ask\n+ ! Cannot tap "Large": no such choice on the last interactive message (buttons). Choices shown: 1. "Small" (id "small"), 2. "Big" (id "big").',
    );
  });
});

describe('expectTranscript', () => {
  it('writes the file the first time, then compares, and rewrites on COLLOQUY_UPDATE_TRANSCRIPTS=1', async () => {
    const dir = tempDir('colloquy-transcripts-');
    temp.push(dir);
    const file = dir.path('nested/sizes.json');
    expectTranscript(await talk(), file);
    expect(existsSync(file)).toBe(true);
    const written = JSON.parse(readFileSync(file, 'utf8')) as { bot: string; user: string; steps: unknown[] };
    expect(written).toMatchObject({ bot: 'sizes', user: '15551230001' });
    expect(written.steps).toHaveLength(2);

    expectTranscript(await talk(), file);
    const changed = await talk(sizeBot(), 'Small');
    expect(() => expectTranscript(changed, file)).toThrow(/- > tap "Large"\n- < text "You chose Large\."\n\+ > tap "Small"\n\+ < text "You chose Small\."/);

    process.env['COLLOQUY_UPDATE_TRANSCRIPTS'] = '1';
    expectTranscript(changed, file);
    delete process.env['COLLOQUY_UPDATE_TRANSCRIPTS'];
    expectTranscript(changed, file);
    expect(readFileSync(file, 'utf8')).toContain('"tap": "Small"');
  });

  it('the order bot still matches its recorded transcript', async () => {
    expectTranscript(await orderConversation(), 'test/fixtures/transcripts/order-bot.json');
  });
});

describe('the line diff', () => {
  it('aligns on common lines, removals before additions, and folds long unchanged runs', () => {
    const a = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
    const b = ['a', 'B', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'];
    expect(formatDiff(diffLines(a, b), 1)).toBe(['  a', '- b', '+ B', '  c', '  … (5 unchanged lines)', '  i', '+ j'].join('\n'));
    expect(diffLines(['x'], ['x'])).toEqual([{ op: ' ', text: 'x' }]);
  });
});

describe('replaying a conversation with an async lookup that takes real time', () => {
  // The pizza bot numbers orders from Date.now()'s second: pinned, so that a recording and its
  // replay on either side of a second's boundary name the same order. Timers stay real.
  beforeEach(() => {
    vi.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Pizza up to the receipt, then "Track my order": its own lookup takes 50 ms of real time. */
  async function toTracking(): Promise<TestConversation> {
    const pizza = (await import('../../bots/pizza.js')).default;
    const c = await createTestBot(pizza);
    open.push(c);
    await c.type('hi');
    await c.tap('Margherita');
    await c.tap('large');
    await c.submitFlow({ street: 'Calle 5 de Mayo 12', city: 'Puebla' });
    await c.tap('Track my order');
    return c;
  }

  it('recorded by waiting in real time, then advance(0): the unchanged bot replays without a mismatch', async () => {
    const c = await toTracking();
    c.expectState('tracking').expectNothingSent();
    await eventually(() => !c.invoking, { what: "the lookup's own 50 ms timer to fire" }); // real time, as a user waits
    await c.advance(0);
    c.expectText(/is in the oven/).expectState('done');
    const recorded = recordTranscript(c);
    expect(recorded.at(-1)).toMatchObject({ action: { advance: 0 }, state: 'done', waited: true });
    const pizza = (await import('../../bots/pizza.js')).default;
    const replayed = await replayTranscript(pizza, recorded);
    expect(replayed.at(-1)?.sent.join('\n')).toMatch(/is in the oven/);
  });

  it("recorded with settled(): a step of its own, with the lookup's answer, replayed at the same place", async () => {
    const c = await toTracking();
    await c.settled();
    c.expectText(/is in the oven/).expectState('done');
    const recorded = recordTranscript(c);
    expect(recorded.at(-1)).toMatchObject({ action: { settle: true }, state: 'done' });
    expect(recorded.at(-1)?.sent.join('\n')).toMatch(/is in the oven/);
    const pizza = (await import('../../bots/pizza.js')).default;
    await expect(replayTranscript(pizza, recorded)).resolves.toHaveLength(recorded.length);
  });
});
