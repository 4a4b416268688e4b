/** `colloquy check` and handoffs: a state that hands off must wait for handoff.ended or handoff.timeout. */
import { setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { defineBot, handoff, say, text, type ColloquyEvent } from '../../src/index.js';
import { checkBot } from '../../src/simulator/check.js';
import support from '../../bots/support.js';

const m = setup({ types: { events: {} as ColloquyEvent } });

describe('checkBot and handoff()', () => {
  it('reports a state that hands off and handles neither handoff.ended nor handoff.timeout', () => {
    const machine = m.createMachine({
      initial: 'start',
      states: {
        start: { on: { text: 'human' } },
        human: { entry: [say(text('A person will answer.')), handoff({ queue: 'sales' })], on: { text: 'start' } },
      },
    });
    expect(checkBot(defineBot({ id: 'lost', machine }))).toEqual([
      { bot: 'lost', state: 'human', kind: 'handoff-unhandled', message: 'hands the conversation to a person but handles neither handoff.ended nor handoff.timeout: the bot would never take it back' },
    ]);
  });

  it('reports a state that handles only one of the two ends, naming the other', () => {
    const onlyEnded = m.createMachine({
      initial: 'start',
      states: {
        start: { on: { text: 'human' } },
        human: { entry: handoff(), on: { 'handoff.ended': 'start' } },
      },
    });
    const onlyTimeout = m.createMachine({
      initial: 'start',
      states: {
        start: { on: { text: 'human' } },
        human: { entry: handoff(), on: { 'handoff.timeout': 'start' } },
      },
    });
    expect(checkBot(defineBot({ id: 'half', machine: onlyEnded }))).toEqual([
      {
        bot: 'half',
        state: 'human',
        kind: 'handoff-unhandled',
        message:
          'hands the conversation to a person but does not handle handoff.timeout: when no agent claims it in time, the handoff closes quietly and the user is left waiting, answered as if someone were coming, until the conversation expires',
      },
    ]);
    expect(checkBot(defineBot({ id: 'other-half', machine: onlyTimeout }))).toEqual([
      {
        bot: 'other-half',
        state: 'human',
        kind: 'handoff-unhandled',
        message: 'hands the conversation to a person but does not handle handoff.ended: when an agent hands the conversation back, the bot would not take it',
      },
    ]);
  });

  it('accepts a state that handles both events (on itself or an ancestor), a handoff from a transition, and one into a final state', () => {
    const machine = m.createMachine({
      initial: 'start',
      on: { 'handoff.timeout': '.start' },
      states: {
        start: { on: { text: { target: 'human', actions: handoff() }, 'reply.bye': 'bye' } },
        human: { entry: handoff(), on: { 'handoff.ended': 'start' } },
        bye: { type: 'final', entry: handoff({ reason: 'wants a call' }) },
      },
    });
    expect(checkBot(defineBot({ id: 'fine', machine }))).toEqual([]);
  });

  it('finds nothing in the support bot (it waits for both)', () => {
    expect(checkBot(support)).toEqual([]);
  });
});
