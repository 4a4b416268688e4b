/**
 * At most `concurrency` lanes run at once in a process; the others wait in arrival order, their
 * work in the store, not in memory. Lanes run on a real store, on both engines; the work they run
 * is a gate the test opens.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { Lanes, type LaneDeps, type LaneWork } from '../../src/conversation/lanes.js';
import { ConfigError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import type { ConversationKey, InboxRecord, Store } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { ENGINES, type Engine } from './helpers.js';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Work that holds each turn until the test lets it go, and records what ran when. */
class GatedWork implements LaneWork {
  running = 0;
  most = 0;
  readonly started: string[] = [];
  private readonly gates: (() => void)[] = [];

  constructor(private readonly store: Store) {}

  async resume(): Promise<void> {}
  async sync(): Promise<void> {}
  async process(row: InboxRecord): Promise<void> {
    this.running++;
    this.most = Math.max(this.most, this.running);
    this.started.push(row.user);
    await new Promise<void>((resolve) => this.gates.push(resolve));
    await this.store.skipInbound(row.id, 'done by the test', Date.now());
    this.running--;
  }
  keep(): boolean {
    return false;
  }
  lost(): void {}

  /** Lets every turn waiting now go on; returns how many. */
  open(): number {
    const n = this.gates.length;
    for (const g of this.gates.splice(0)) g();
    return n;
  }

  /** Waits until some turn waits at its gate or `done()` holds. */
  async waitForGate(done: () => boolean): Promise<void> {
    await eventually(() => this.gates.length > 0 || done(), { what: 'a turn at its gate' });
  }
}

/** An empty store on `engine`: SQLite in memory, or a PostgreSQL database of its own. */
const emptyStore = async (engine: Engine): Promise<Store> => openStore(engine === 'postgres' ? await freshDatabaseUrl() : ':memory:');

const OWNER = { owner: 'test', leaseMs: 10_000, lapsed: true };

/** What lanes need from the worker, on `store`. */
function deps(store: LaneDeps['store'], owner = OWNER, logger: LaneDeps['logger'] = silent): LaneDeps {
  return { store, logger, clock: new ManualClock(), claimant: () => owner, freed: () => undefined };
}

/** The oldest pending inbound of a conversation, read as rows. */
async function pending(store: Store, user: string): Promise<number> {
  const rows = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((id) => store.inbound(id)));
  return rows.filter((r) => r?.user === user && r.state === 'pending').length;
}

describe.each(ENGINES)('lane concurrency, on %s', (engine) => {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  async function receive(user: string): Promise<ConversationKey> {
    const key = { botId: 'bot', user };
    await store!.addInbound({ providerId: `wamid.${user}`, botId: 'bot', user, source: 'whatsapp', event: { type: 'text', text: 'hi' }, raw: null, receivedAt: Date.now() });
    return key;
  }

  it('runs at most `concurrency` lanes at once, the waiting ones in arrival order, and loses none', async () => {
    store = await emptyStore(engine);
    const work = new GatedWork(store);
    const lanes = new Lanes(work, deps(store), { concurrency: 2 });
    const users = ['1001', '1002', '1003', '1004', '1005'];
    for (const u of users) lanes.kick(await receive(u));
    expect(lanes.load).toEqual({ running: 2, queued: 3 });
    const idle = () => lanes.load.running === 0 && lanes.load.queued === 0;
    let released = 0;
    for (let round = 0; round < 20 && !idle(); round++) {
      await work.waitForGate(idle);
      expect(work.running).toBeLessThanOrEqual(2);
      released += work.open();
    }
    await Promise.all(lanes.running());
    expect(released).toBe(users.length);
    expect(work.most).toBe(2);
    // Every lane ran once. On SQLite the handlers also start in arrival order; on PostgreSQL a lane's
    // claim is a round trip of its own, so a lane granted a slot can start its handler after the
    // next one granted: the order of starts is the database's, not the queue's.
    if (engine === 'sqlite') expect(work.started).toEqual(users);
    else expect([...work.started].sort()).toEqual(users);
    expect(lanes.load).toEqual({ running: 0, queued: 0 });
    for (const u of users) expect(await pending(store, u)).toBe(0);
  });

  it('stop() never starts the waiting lanes: their work stays in the store, unclaimed, for a poll to take', async () => {
    store = await emptyStore(engine);
    const work = new GatedWork(store);
    const lanes = new Lanes(work, deps(store), { concurrency: 1 });
    lanes.kick(await receive('2001'));
    lanes.kick(await receive('2002'));
    await work.waitForGate(() => false);
    lanes.stop();
    work.open();
    await Promise.all(lanes.running());
    expect(work.started).toEqual(['2001']);
    expect(await pending(store, '2002')).toBe(1);
    const next = new Lanes(work, deps(store, { ...OWNER, owner: 'next' }), { concurrency: 1 });
    const claims = await store.claim({ ...OWNER, owner: 'next' }, { kind: 'lane', limit: next.free(), now: Date.now() });
    expect(claims.map((c) => c.key.user)).toEqual(['2002']);
    next.adopt(claims);
    await work.waitForGate(() => false);
    work.open();
    await Promise.all(next.running());
    expect(work.started).toEqual(['2001', '2002']);
  });

  it('refuses a concurrency that is not a positive whole number, naming the option', async () => {
    store = await emptyStore(engine);
    for (const concurrency of [0, -1, 1.5]) {
      expect(() => new Lanes(new GatedWork(store!), deps(store!), { concurrency })).toThrow(ConfigError);
      expect(() => new Lanes(new GatedWork(store!), deps(store!), { concurrency })).toThrow(/lanes\.concurrency/);
    }
  });
});

describe.each(ENGINES)('the heartbeat and a release in flight, on %s', (engine) => {
  it('a lane whose release committed but has not answered yet is not taken for lost', async () => {
    const store = await emptyStore(engine);
    try {
      const lost: string[] = [];
      const warnings: string[] = [];
      const logger = { ...silent, warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
      const work: LaneWork = {
        resume: async () => undefined,
        sync: async () => undefined,
        process: (row) => store.skipInbound(row.id, 'done by the test', Date.now()),
        keep: () => false,
        lost: (key) => void lost.push(key.user),
      };
      // The release reaches the database at once; its answer waits until the test lets it through,
      // as when releases and renewals travel on different connections (PostgreSQL's batches).
      let answer!: () => void;
      const held = new Promise<void>((resolve) => (answer = resolve));
      let released = false;
      const lanes = new Lanes(
        work,
        deps(
          {
            claim: (who, request) => store.claim(who, request),
            settleLane: async (...args) => {
              const r = await store.settleLane(...args);
              if (r.outcome === 'released') {
                released = true;
                await held;
              }
              return r;
            },
          },
          OWNER,
          logger,
        ),
      );
      await store.addInbound({ providerId: 'wamid.r1', botId: 'bot', user: '3001', source: 'whatsapp', event: { type: 'text', text: 'hi' }, raw: null, receivedAt: Date.now() });
      lanes.kick({ botId: 'bot', user: '3001' });
      await eventually(() => released, { what: 'the release reaching the database' });
      const mark = lanes.mark();
      lanes.renewed((await store.renew(OWNER.owner, OWNER.leaseMs)).lanes, mark); // the renewal no longer lists the lane: it was released, not taken
      expect(lost).toEqual([]);
      expect(warnings).toEqual([]);
      answer();
      await Promise.all(lanes.running());
      expect(lanes.load).toEqual({ running: 0, queued: 0 });
    } finally {
      await store.close();
    }
  });
});
