/** The worker against a real store, on both engines: due times noted without a read, and no takeover right after an outage of its own. */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { Worker, type WorkHandlers } from '../../src/conversation/worker.js';
import { StoreUnavailableError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import type { ConversationKey, Store } from '../../src/store/types.js';
import { ALICE, DIALECTS, NO_TIMERS, text, turn } from '../store/helpers.js';
import { eventually } from '../support/eventually.js';

interface Gated {
  readonly store: Store;
  /** How many times `nextDue` was called. */
  reads(): number;
  /** How many of those calls the database has answered (whether or not they were passed on yet). */
  answered(): number;
  /** From now on, `nextDue` reads at once but answers only at `release()`. */
  hold(): void;
  release(): void;
  /** While down, `renew` fails as an unreachable database does. */
  down: boolean;
}

/** A real store whose `nextDue` can answer late (as a busy database would) and whose `renew` can fail. */
function gated(store: Store): Gated {
  let reads = 0;
  let answered = 0;
  let gate = Promise.resolve();
  let release = () => {};
  const g: Gated = {
    store: undefined as unknown as Store,
    reads: () => reads,
    answered: () => answered,
    hold: () => {
      gate = new Promise((r) => (release = r));
    },
    release: () => release(),
    down: false,
  };
  const proxy = new Proxy(store, {
    get(target, prop) {
      if (prop === 'nextDue') {
        return async () => {
          reads++;
          const at = await target.nextDue();
          answered++;
          await gate;
          return at;
        };
      }
      if (prop === 'renew') {
        return async (owner: string, leaseMs: number) => {
          if (g.down) throw new StoreUnavailableError('ECONNREFUSED', 'the database is down');
          return target.renew(owner, leaseMs);
        };
      }
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return Object.assign(g, { store: proxy });
}

function worker(store: Store, clock: ManualClock, owner = 'w1') {
  const fired: ConversationKey[] = [];
  const sent: number[] = [];
  const handlers: WorkHandlers = {
    lanes: { free: () => 0, adopt: () => undefined, mark: () => 0, renewed: () => undefined },
    send: async (row, held) => {
      sent.push(row.id);
      await store.settleSend(row.id, held.claim, { kind: 'sent', record: { state: 'sent', providerId: `p${row.id}` } }, clock.now());
    },
    fired: (keys) => fired.push(...keys),
  };
  const w = new Worker(
    { store, clock, logger: silentLogger, handlers, slots: { send: 8, event: 8, timer: 100 }, storeUnavailable: () => undefined },
    { owner, leaseMs: 10_000, heartbeatMs: 3_000, pollMs: 3_600_000 },
  );
  return { w, fired, sent };
}

describe.each(DIALECTS)('the worker, on $name', (dialect) => {
  it('arms for a timer a turn stored, without reading the database', async () => {
    const base = await dialect.open();
    const clock = new ManualClock();
    const g = gated(base);
    const { w, fired } = worker(g.store, clock);
    w.start();
    await w.settle();
    const readsAfterStart = g.reads();
    const fireAt = clock.now() + 1_000;
    await base.commitTurn(turn({ key: ALICE, now: clock.now(), timers: { ...NO_TIMERS, upsert: [{ key: 'remind', stateNode: null, event: { type: 'remind' }, fireAt }] } }));
    w.noteDue(fireAt);
    expect(g.reads()).toBe(readsAfterStart);
    clock.advance(1_000);
    await eventually(() => expect(fired).toEqual([ALICE]), { what: 'the timer fired' });
    await w.stop();
    await base.close();
  });

  it('keeps a due time noted while a read that started before its commit was in flight', async () => {
    const base = await dialect.open();
    const clock = new ManualClock();
    const g = gated(base);
    const { w, fired } = worker(g.store, clock);
    g.hold();
    w.start(); // its first look reads "nothing due", then waits
    await eventually(() => g.answered() > 0, { what: 'the read of the due times' });
    const fireAt = clock.now() + 1_000;
    await base.commitTurn(turn({ key: ALICE, now: clock.now(), timers: { ...NO_TIMERS, upsert: [{ key: 'remind', stateNode: null, event: { type: 'remind' }, fireAt }] } }));
    w.noteDue(fireAt);
    g.release();
    await w.settle(); // the stale "nothing due" must not disarm the clock
    clock.advance(1_000);
    await eventually(() => expect(fired).toEqual([ALICE]), { what: 'the timer fired' });
    await w.stop();
    await base.close();
  });

  it('gives back a send it holds in the database without knowing (a claim whose answer was lost), and then sends it once', async () => {
    const base = await dialect.open();
    const clock = new ManualClock();
    await base.commitTurn(turn({ key: ALICE, now: clock.now(), outbox: [text('hello')] }));
    // A claim by this very owner that committed, but whose answer never came back.
    const [lost] = await base.claim({ owner: 'w1', leaseMs: 60_000, lapsed: true }, { kind: 'send', limit: 1, now: clock.now() });
    const { w, sent } = worker(base, clock, 'w1');
    w.start();
    await w.settle();
    expect(sent).toEqual([]); // held (live), so not claimable: without the give-back it would wait forever
    await w.heartbeat();
    await eventually(() => expect(sent).toEqual([lost!.id]), { what: 'the send given back and sent' });
    await w.settle();
    expect(await base.outbound(lost!.id)).toMatchObject({ state: 'sent', resends: 0 });
    await w.stop();
    await base.close();
  });

  it('takes a dead owner’s lapsed send, but not while its own renewals fail, nor for a lease after they come back', async () => {
    const base = await dialect.open();
    const clock = new ManualClock();
    await base.commitTurn(turn({ key: ALICE, now: clock.now(), outbox: [text('hello')] }));
    // Another process claimed the row, then stopped renewing: its claim has lapsed.
    const [row] = await base.claim({ owner: 'dead', leaseMs: 60_000, lapsed: true }, { kind: 'send', limit: 1, now: clock.now() });
    await base.renew('dead', 0);
    const g = gated(base);
    g.down = true;
    const { w, sent } = worker(g.store, clock);
    // A renewal that worked, then a lease's worth of renewals that could not reach the database.
    g.down = false;
    await w.heartbeat();
    g.down = true;
    for (let i = 0; i < 4; i++) {
      clock.advance(3_000);
      await w.heartbeat();
    }
    expect(w.claimant.lapsed).toBe(false); // its renewals fail: the database may be out for everyone
    g.down = false;
    await w.heartbeat(); // back: lapsed claims may be their owners', who renew now
    expect(w.claimant.lapsed).toBe(false);
    w.start();
    await w.settle();
    expect(sent).toEqual([]);
    expect(await base.outbound(row!.id)).toMatchObject({ state: 'sending', claim: row!.claim });
    clock.advance(10_000); // a lease later, the owner has not come back: it is dead
    await w.heartbeat();
    expect(w.claimant.lapsed).toBe(true);
    w.wake('send');
    await eventually(() => expect(sent).toEqual([row!.id]), { what: 'the lapsed send taken over' });
    await w.settle();
    expect(await base.outbound(row!.id)).toMatchObject({ state: 'sent', attempts: 2, resends: 1 });
    await w.stop();
    await base.close();
  });
});
