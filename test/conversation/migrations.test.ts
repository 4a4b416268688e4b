/** migrateSnapshot: state paths renamed in value, history and children; context transformed; steps in order. */
import { describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import { defineBot } from '../../src/index.js';
import { leavesOf, migrateSnapshot, missingStates, renameDelayKey, statePaths, valueFromLeaves } from '../../src/conversation/versions.js';

const v1 = setup({}).createMachine({
  id: 'm',
  initial: 'a',
  states: {
    a: { on: { go: 'p' } },
    p: {
      type: 'parallel',
      states: {
        left: { initial: 'x', states: { x: { on: { next: 'y' } }, y: {} } },
        right: {},
      },
      on: { back: 'order' },
    },
    order: { initial: 'size', states: { size: { on: { next: 'crust' } }, crust: {}, hist: { type: 'history' } }, on: { out: 'a' } },
  },
});

const v2 = setup({}).createMachine({
  id: 'm',
  initial: 'a',
  states: {
    a: { on: { go: 'par' } },
    par: {
      type: 'parallel',
      states: {
        left: { initial: 'ex', states: { ex: { on: { next: 'y' } }, y: {} } },
        right: {},
      },
    },
    ordering: { initial: 'pickSize', states: { pickSize: {}, crust: {}, hist: { type: 'history' } }, on: { back: 'ordering.hist' } },
  },
});

describe('state values as leaves', () => {
  it('round-trips strings, nested states and parallel regions with atomic children', () => {
    for (const value of ['a', { order: 'size' }, { p: { left: 'x', right: {} } }, { p: { left: { deep: 'z' }, right: {} } }]) {
      expect(valueFromLeaves(leavesOf(value))).toEqual(value);
    }
    expect(statePaths({ p: { left: 'x', right: {} } })).toEqual(['p.left.x', 'p.right']);
  });
});

describe('migrateSnapshot', () => {
  const bot = defineBot({
    id: 'm',
    version: 3,
    machine: v2,
    migrations: {
      2: { states: { p: 'par', order: 'ordering' }, context: (c: { n: number }) => ({ ...c, n: c.n + 1 }) },
      3: { states: { 'par.left.x': 'par.left.ex', 'ordering.size': 'ordering.pickSize' }, context: (c: { n: number }) => ({ ...c, n: c.n * 10 }) },
    },
  });

  it('renames a parallel state, then a region child, in order, and the result restores in the new machine', () => {
    const a = createActor(v1).start();
    a.send({ type: 'go' });
    const stored = { ...(a.getPersistedSnapshot() as object), context: { n: 1 } };
    const m = migrateSnapshot(bot, stored, 1, 3);
    expect(m.steps).toEqual([2, 3]);
    expect((m.snapshot as { value: unknown }).value).toEqual({ par: { left: 'ex', right: {} } });
    expect((m.snapshot as { context: unknown }).context).toEqual({ n: 20 });
    expect(missingStates(v2, (m.snapshot as { value: unknown }).value)).toEqual([]);
    const restored = createActor(v2, { snapshot: m.snapshot as never }).start();
    expect(restored.getSnapshot().value).toEqual({ par: { left: 'ex', right: {} } });
    restored.send({ type: 'next' });
    expect(restored.getSnapshot().value).toEqual({ par: { left: 'y', right: {} } });
  });

  it('renames history entries and state node ids (for timers), keeping custom-free ids consistent', () => {
    const a = createActor(v1).start();
    a.send({ type: 'go' });
    a.send({ type: 'back' });
    a.send({ type: 'out' }); // leaves order: its history remembers order.size
    const stored = { ...(a.getPersistedSnapshot() as object), context: { n: 0 } };
    expect((stored as unknown as { historyValue: unknown }).historyValue).toEqual({ 'm.order.hist': [{ id: 'm.order.size' }] });
    const m = migrateSnapshot(bot, stored, 1, 3);
    expect((m.snapshot as { historyValue: unknown }).historyValue).toEqual({ 'm.ordering.hist': [{ id: 'm.ordering.pickSize' }] });
    expect(m.renameId('m.order.size')).toBe('m.ordering.pickSize');
    expect(m.renameId('m.order.crust')).toBe('m.ordering.crust');
    expect(m.renameId('custom')).toBe('custom');
    expect(renameDelayKey('xstate.after.60000.m.order.size', m.renameId)).toBe('xstate.after.60000.m.ordering.pickSize');
    expect(renameDelayKey('my-own-delay', m.renameId)).toBe('my-own-delay');
  });

  it('starts after the stored version: a version-2 snapshot takes only step 3', () => {
    const m = migrateSnapshot(bot, { value: { ordering: 'size' }, context: { n: 2 }, children: {}, historyValue: {} }, 2, 3);
    expect(m.steps).toEqual([3]);
    expect(m.snapshot).toMatchObject({ value: { ordering: 'pickSize' }, context: { n: 20 } });
  });

  it('renames the ids of inline invocations running in a renamed state', () => {
    const m = migrateSnapshot(
      bot,
      {
        value: { order: 'size' },
        context: { n: 0 },
        historyValue: {},
        children: { 'm.order.size:invocation[0]': { src: 'm.order.size:invocation[0]', snapshot: {} }, named: { src: 'lookup', snapshot: {} } },
      },
      1,
      3,
    );
    expect((m.snapshot as { children: unknown }).children).toEqual({
      'm.ordering.pickSize:invocation[0]': { src: 'm.ordering.pickSize:invocation[0]', snapshot: {} },
      named: { src: 'lookup', snapshot: {} },
    });
  });

  it('names what is missing when a state has no counterpart', () => {
    expect(missingStates(v2, { order: 'gone' })).toEqual(['order.gone']);
    expect(missingStates(v2, { par: { left: 'nope', right: {} } })).toEqual(['par.left.nope']);
  });
});
