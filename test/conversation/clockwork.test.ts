/** The timers' clockwork against a real store whose reads can answer late, on both engines. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { Clockwork } from '../../src/conversation/timers.js';
import { Metrics } from '../../src/metrics.js';
import type { ConversationKey, Store } from '../../src/store/types.js';
import { ALICE, DIALECTS, NO_TIMERS, turn } from '../store/helpers.js';
import { eventually } from '../support/eventually.js';

interface SlowReads {
  readonly store: Store;
  /** How many times `nextTimerAt` was called. */
  reads(): number;
  /** How many of those calls the database has answered (whether or not they were passed on yet). */
  answered(): number;
  /** From now on, `nextTimerAt` reads at once but answers only at `release()`. */
  hold(): void;
  release(): void;
}

/** A real store whose `nextTimerAt` can answer late, as a busy database would: what it read may be stale by then. */
function slowTimerReads(store: Store): SlowReads {
  let reads = 0;
  let answered = 0;
  let gate = Promise.resolve();
  let release = () => {};
  const slow = new Proxy(store, {
    get(target, prop) {
      if (prop === 'nextTimerAt') {
        return async () => {
          reads++;
          const at = await target.nextTimerAt();
          answered++;
          await gate;
          return at;
        };
      }
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return {
    store: slow,
    reads: () => reads,
    answered: () => answered,
    hold: () => {
      gate = new Promise((r) => (release = r));
    },
    release: () => release(),
  };
}

function clockwork(store: Store, clock: ManualClock) {
  const kicked: ConversationKey[] = [];
  const work: Promise<unknown>[] = [];
  const cw = new Clockwork(
    {
      store,
      clock,
      metrics: new Metrics(),
      bots: () => [],
      kick: (k) => kicked.push(k),
      track: (p) => work.push(p),
      failed: (err) => {
        throw err;
      },
    },
    3_600_000,
  );
  return { cw, kicked, settle: async () => Promise.all(work) };
}

describe.each(DIALECTS)('the clockwork after a commit, on $name', (dialect) => {
  it('arms for a timer a turn stored, without reading the database', async () => {
    const base = await dialect.open();
    const clock = new ManualClock();
    const slow = slowTimerReads(base);
    const { cw, kicked, settle } = clockwork(slow.store, clock);
    await cw.start();
    const readsAfterStart = slow.reads();
    const fireAt = clock.now() + 1_000;
    await base.commitTurn(turn({ key: ALICE, now: clock.now(), timers: { ...NO_TIMERS, upsert: [{ key: 'remind', stateNode: null, event: { type: 'remind' }, fireAt }] } }));
    cw.noteTimer(fireAt);
    expect(slow.reads()).toBe(readsAfterStart);
    clock.advance(1_000);
    await settle();
    expect(kicked).toEqual([ALICE]);
    cw.stop();
  });

  it('keeps a timer noted while a check that read the database before its commit was in flight', async () => {
    const base = await dialect.open();
    const clock = new ManualClock();
    const slow = slowTimerReads(base);
    const { cw, kicked, settle } = clockwork(slow.store, clock);
    slow.hold();
    const started = cw.start(); // its check reads "no timers", then waits
    await eventually(() => slow.answered() > 0, { what: 'the check reading the database' });
    const fireAt = clock.now() + 1_000;
    await base.commitTurn(turn({ key: ALICE, now: clock.now(), timers: { ...NO_TIMERS, upsert: [{ key: 'remind', stateNode: null, event: { type: 'remind' }, fireAt }] } }));
    cw.noteTimer(fireAt);
    slow.release();
    await started; // the stale "no timers" must not disarm the clock
    clock.advance(1_000);
    await settle();
    expect(kicked).toEqual([ALICE]);
    cw.stop();
  });
});
