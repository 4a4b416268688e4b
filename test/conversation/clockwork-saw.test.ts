/**
 * The clockwork armed from what a commit saw (`CommitResult.nextTimerAt`) instead of asking the
 * store after every turn: armed sooner, never later (commits answer out of order), and a due time
 * checked at once. Real SQLite store, manual clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { Clockwork } from '../../src/conversation/timers.js';
import { Metrics } from '../../src/metrics.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { ConversationKey } from '../../src/store/types.js';
import { NO_TIMERS, turn } from '../store/helpers.js';

let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

function clockwork(s: SqliteStore, clock: ManualClock) {
  const kicked: ConversationKey[] = [];
  const work: Promise<unknown>[] = [];
  const c = new Clockwork({ store: s, clock, metrics: new Metrics(), bots: () => [], kick: (k) => kicked.push(k), track: (p) => work.push(p), failed: () => undefined }, 3_600_000);
  const settle = async () => {
    while (work.length) await work.shift();
  };
  return { c, kicked, settle };
}

const timer = (key: string, fireAt: number) => ({ key, stateNode: null, event: { type: `xstate.after.${key}` }, fireAt });

describe('the clockwork armed from a commit', () => {
  it('arms for a sooner time, keeps its time over a later one, and fires when the clock gets there', async () => {
    store = openSqliteStore(':memory:');
    const clock = new ManualClock();
    const { c, kicked, settle } = clockwork(store, clock);
    await c.start(); // no timers: not armed
    const t0 = clock.now();
    await store.commitTurn(turn({ now: t0, timers: { ...NO_TIMERS, upsert: [timer('soon', t0 + 1_000)] } }));
    c.saw(t0 + 1_000);
    c.saw(t0 + 5_000); // a commit that answered later, from an older snapshot
    c.saw(null);
    clock.advance(999);
    await settle();
    expect(kicked).toEqual([]);
    clock.advance(1);
    await settle();
    expect(kicked).toHaveLength(1);
    c.stop();
  });

  it('a time already due is checked at once', async () => {
    store = openSqliteStore(':memory:');
    const clock = new ManualClock();
    const { c, kicked, settle } = clockwork(store, clock);
    await c.start();
    const t0 = clock.now();
    await store.commitTurn(turn({ now: t0, timers: { ...NO_TIMERS, upsert: [timer('due', t0)] } }));
    c.saw(t0);
    await settle();
    expect(kicked).toHaveLength(1);
    c.stop();
  });
});
