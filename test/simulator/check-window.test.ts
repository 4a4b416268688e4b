import { describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { defineBot, say, template, text } from '../../src/index.js';
import { checkBot } from '../../src/simulator/check.js';

const HOUR = 3_600_000;
const reminder = template({ name: 'colloquy_reopen', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'your booking' }] }] });

/** A bot that waits `first`, then `second`, and says something after each. */
function waiting(first: number, second?: number, options = {}) {
  const machine = setup({}).createMachine({
    id: 'w',
    initial: 'asked',
    states: {
      asked: { on: { text: 'asked' }, after: { [first]: second === undefined ? { target: 'done', actions: say(text('Still there?')) } : { target: 'nudged', actions: say(text('Still there?')) } } },
      nudged: { on: { text: 'asked' }, after: { [second ?? 1]: { target: 'done', actions: say(text('Bye')) } } },
      done: { type: 'final' },
    },
  });
  return defineBot({ id: 'w', machine, options });
}

const windowFindings = (bot: ReturnType<typeof waiting>) => checkBot(bot).filter((f) => f.kind === 'window-unhandled');

describe('colloquy check and the 24-hour window', () => {
  it('reports a timer that fires 24 hours or more after the user wrote, when the bot has no window policy', () => {
    const found = windowFindings(waiting(25 * HOUR));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ bot: 'w', state: 'asked' });
    expect(found[0]!.message).toContain('25 h');
    expect(found[0]!.message).toContain('options.window');
  });

  it('adds up a chain of timers with no user message between', () => {
    const found = windowFindings(waiting(20 * HOUR, 6 * HOUR));
    expect(found.map((f) => f.state)).toEqual(['nudged']);
    expect(found[0]!.message).toContain('26 h');
    expect(found[0]!.message).toContain('20 h in asked, then 6 h in nudged');
  });

  it('says nothing of timers inside the window, or of a bot that declares a policy', () => {
    expect(windowFindings(waiting(10 * HOUR, 10 * HOUR))).toEqual([]);
    expect(windowFindings(waiting(30 * HOUR, undefined, { window: { closed: { template: reminder } } }))).toEqual([]);
    expect(windowFindings(waiting(30 * HOUR, undefined, { window: { closed: 'event' } }))).toEqual([]);
  });

  it('reads named delays, numbers or functions of the sample context', () => {
    const machine = setup({ delays: { later: ({ context }: { context: { hours: number } }) => context.hours * HOUR } }).createMachine({
      id: 'n',
      context: { hours: 1 },
      initial: 'a',
      states: { a: { after: { later: { target: 'b', actions: say(text('Hello again')) } } }, b: { type: 'final' } },
    });
    expect(checkBot(defineBot({ id: 'n', machine, options: { sampleContext: { hours: 48 } } })).filter((f) => f.kind === 'window-unhandled')).toHaveLength(1);
    expect(checkBot(defineBot({ id: 'n', machine, options: { sampleContext: { hours: 2 } } })).filter((f) => f.kind === 'window-unhandled')).toHaveLength(0);
  });

  it('reports timers that loop with no user message between', () => {
    const machine = setup({}).createMachine({
      id: 'loop',
      initial: 'a',
      states: { a: { after: { [6 * HOUR]: { target: 'a', reenter: true, actions: say(text('Ping')) } }, on: { 'reply.stop': 'b' } }, b: { type: 'final' } },
    });
    const found = checkBot(defineBot({ id: 'loop', machine })).filter((f) => f.kind === 'window-unhandled');
    expect(found.map((f) => f.state)).toEqual(['a']);
    expect(found[0]!.message).toContain('loop');
  });

  it('checks a template message the bot says like any other message', () => {
    const machine = setup({}).createMachine({
      id: 't',
      initial: 'a',
      states: { a: { entry: say({ kind: 'template', template: { name: 'Bad Name', language: { code: 'en_US' } } } as never), on: { text: 'a' } } },
    });
    const found = checkBot(defineBot({ id: 't', machine })).filter((f) => f.kind === 'invalid-message');
    expect(found.map((f) => f.message)).toEqual([expect.stringContaining('template.name')]);
  });
});
