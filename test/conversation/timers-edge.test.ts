/** Durable timers at the edges: a targetless delay while an invocation runs, and a re-entered state. */
import { afterEach, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { defineBot, say, text } from '../../src/index.js';
import type { Store } from '../../src/store/types.js';
import { allInbound } from '../store/helpers.js';
import { ENGINES, USER, manualLookup, world, type World } from './helpers.js';
import { eventually } from '../support/eventually.js';

let w: World<Store> | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const texts = async (w: World<Store>, botId: string) =>
  (await w.runtime.transcript({ botId, user: USER })).flatMap((e) => (e.direction === 'out' ? [(e.record.message as { text?: string }).text] : []));

describe.each(ENGINES)('durable timers at the edges, on %s', (engine) => {
  it('a delay with no target fires once while an invocation keeps its state busy', async () => {
    const { lookup, finish } = manualLookup();
    const machine = setup({ actors: { lookup } }).createMachine({
      id: 'slow',
      initial: 'idle',
      states: {
        idle: { on: { text: 'looking' } },
        looking: {
          entry: say(text('looking up your order')),
          invoke: { src: 'lookup', onDone: 'found' },
          after: { 1000: { actions: say(text('still looking...')) } },
        },
        found: { entry: say(text('found it')) },
      },
    });
    w = await world([defineBot({ id: 'slow', machine, options: { onUnhandled: 'ignore' } })], { engine });
    await w.send({ type: 'text', text: 'hi', via: 'whatsapp' }, USER, 'slow');
    w.clock.advance(1000);
    await w.runtime.idle();
    w.clock.advance(5000);
    await w.runtime.idle();
    finish('ok');
    await eventually(async () => expect(await texts(w!, 'slow')).toEqual(['looking up your order', 'still looking...', 'found it']));
    await w.runtime.idle();
    expect(await texts(w, 'slow')).toEqual(['looking up your order', 'still looking...', 'found it']);
    expect((await allInbound(w.store)).map((i) => ({ source: i.source }))).toEqual([{ source: 'whatsapp' }, { source: 'timer' }]);
  });

  it('a delay that fell due behind a message re-entering its state does not cut the new delay short', async () => {
    const machine = setup({}).createMachine({
      id: 'remind',
      initial: 'ask',
      states: {
        ask: { entry: say(text('question')), after: { 1000: 'reminded' }, on: { 'reply.again': { target: 'ask', reenter: true } } },
        reminded: { entry: say(text('reminder')) },
      },
    });
    w = await world([defineBot({ id: 'remind', machine, options: { onUnhandled: 'ignore' } })], { engine });
    await w.send({ type: 'text', text: 'hi', via: 'whatsapp' }, USER, 'remind');
    w.clock.advance(999);
    // The tap is in the inbox (its turn not yet run) when the first delay falls due behind it.
    await w.store.addInbound({
      providerId: 'wamid.again',
      botId: 'remind',
      user: USER,
      source: 'whatsapp',
      event: { type: 'reply.again', id: 'again', title: 'again', via: 'button' },
      receivedAt: w.clock.now(),
    });
    w.clock.advance(1);
    await w.runtime.idle();
    const conv = (await w.store.activeConversation({ botId: 'remind', user: USER }))!;
    expect(conv.state).toBe('ask');
    expect(await w.store.timers(conv.id)).toEqual([expect.objectContaining({ key: 'xstate.after.1000.remind.ask', fireAt: w.clock.now() + 1000 })]); // the tap's turn ran at t0+1000
    w.clock.advance(999);
    await w.runtime.idle();
    expect((await w.store.activeConversation({ botId: 'remind', user: USER }))?.state).toBe('ask');
    w.clock.advance(1);
    await w.runtime.idle();
    expect((await w.store.activeConversation({ botId: 'remind', user: USER }))?.state).toBe('reminded');
    expect(await texts(w, 'remind')).toEqual(['question', 'question', 'reminder']);
  });
});
