/** PostgreSQL-only behaviour of the store: failures that pass, the pool, BIGINT, the snapshot's exact text. */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { StoreError, StoreUnavailableError, VersionConflictError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import { PgStore } from '../../src/store/postgres/store.js';
import { PgDb } from '../../src/store/postgres/db.js';
import { eventually } from '../support/eventually.js';
import { blockedOnLock, freshDatabaseUrl } from '../support/postgres.js';
import { admin } from '../support/postgres-server.js';
import { ALICE, BOB, T0, inbound, postgres, text, turn } from './helpers.js';

const WHO = { owner: 'process-a', leaseMs: 60_000, lapsed: true };

describe('PostgreSQL store', () => {
  it('says the database is unavailable, by name, when nothing listens', async () => {
    const err = await openStore('postgres://colloquy@127.0.0.1:1/nowhere').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).not.toBeInstanceOf(VersionConflictError);
    expect((err as StoreUnavailableError).code).toBe('store_unavailable');
    expect((err as StoreUnavailableError).reason).toBe('ECONNREFUSED');
    expect((err as Error).message).toBe(
      'postgres://colloquy@127.0.0.1:1/nowhere: nothing accepts connections at 127.0.0.1:1 (connection refused): is PostgreSQL running there, and are the host and port right?',
    );
  });

  it('turns a statement cut off by the server into StoreUnavailableError, and carries on with a new connection', async () => {
    const url = await freshDatabaseUrl();
    const store = (await postgres.open(url)) as PgStore;
    await store.commitTurn(turn({ now: T0 }));
    const slow = store.db.query('SELECT pg_sleep(30)').then(
      () => undefined,
      (e: unknown) => e,
    );
    // Wait until the sleep runs, then end that backend the way a failover or an operator would.
    const pid = await eventually(
      async () => {
        const { rows } = await admin(url, `SELECT pid FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'`);
        expect(rows).toHaveLength(1);
        return Number(rows[0]!['pid']);
      },
      { what: 'the slow statement running', intervalMs: 10 },
    );
    await admin(url, `SELECT pg_terminate_backend(${pid})`);
    const err = await slow;
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as StoreUnavailableError).cause).toMatchObject({ code: '57P01' });
    // The pool drops the dead connection; the next call works.
    expect((await store.conversation(1))?.version).toBe(1);
  });

  it('keeps a failed transaction whole: a refused turn leaves the pool usable and nothing written', async () => {
    const store = await postgres.open();
    await store.commitTurn(turn({ now: T0 }));
    const { id } = await store.addInbound(inbound());
    for (let i = 0; i < 15; i++) {
      await expect(store.commitTurn(turn({ inboxId: id, outbox: [text('dup')] }))).rejects.toBeInstanceOf(VersionConflictError);
    }
    expect((await store.inbound(id))?.state).toBe('pending');
    expect(await store.outbound(1)).toBeUndefined();
  });

  it('keeps idle connections open (a lull does not cost reconnecting them all), without holding the process alive', async () => {
    const db = new PgDb({ url: await freshDatabaseUrl() });
    try {
      const options = (db.pool as unknown as { options: { idleTimeoutMillis: number; allowExitOnIdle: boolean } }).options;
      expect(options).toMatchObject({ idleTimeoutMillis: 0, allowExitOnIdle: true });
    } finally {
      await db.end();
    }
  });

  it('reads BIGINT columns as numbers', async () => {
    const store = await postgres.open();
    const far = 8_000_000_000_000; // year 2223: beyond 32 bits, well inside safe integers
    await store.commitTurn(turn({ now: far }));
    const conv = await store.activeConversation(ALICE);
    expect(conv).toMatchObject({ id: 1, version: 1, createdAt: far, lastActivityAt: far });
    expect(typeof conv!.id).toBe('number');
  });

  it('stores the snapshot as the exact JSON text it was given', async () => {
    const url = await freshDatabaseUrl();
    const store = await postgres.open(url);
    const snapshot = { z: 1, a: { y: [3, 2, 1], b: null }, text: 'Grüße 🍕 "quoted" \\ \u0000', n: 1e21, small: 5e-7 };
    await store.commitTurn(turn({ snapshot, now: T0 }));
    const { rows } = await admin(url, 'SELECT snapshot FROM conversations WHERE id = 1');
    expect(rows[0]!['snapshot']).toBe(JSON.stringify(snapshot));
    const back = (await store.conversation(1))!.snapshot;
    expect(JSON.stringify(back)).toBe(JSON.stringify(snapshot));
    expect(Object.keys(back as object)).toEqual(['z', 'a', 'text', 'n', 'small']);
  });

  it('waits for a table another session holds locked, then goes through', async () => {
    const url = await freshDatabaseUrl();
    const store = await postgres.open(url);
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('LOCK TABLE inbox IN ACCESS EXCLUSIVE MODE');
      const adding = store.addInbound(inbound({ providerId: 'wamid.waited' }));
      await blockedOnLock(url); // it waits for the lock (not merely ran before the lock was taken)
      await other.query('COMMIT');
      const r = await adding;
      expect((await store.inbound(r.id))?.providerId).toBe('wamid.waited');
    } finally {
      await other.end();
    }
  });

  it('gives up on a lock held past lock_timeout with StoreUnavailableError (55P03), storing nothing', async () => {
    const url = await freshDatabaseUrl();
    const store = await openStore({ url, lockTimeoutMs: 100 });
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('LOCK TABLE inbox IN ACCESS EXCLUSIVE MODE');
      const err = await store.addInbound(inbound({ providerId: 'wamid.never' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect(err).toMatchObject({ code: 'store_unavailable', reason: '55P03' });
      await other.query('COMMIT');
      expect((await other.query('SELECT COUNT(*)::int AS n FROM inbox')).rows).toEqual([{ n: 0 }]);
      expect(await store.health?.()).toEqual({ ok: true });
    } finally {
      await other.end();
      await store.close();
    }
  });

  it('reports an unreachable server as busy in health(), with the reason', async () => {
    const store = new PgStore(new PgDb({ url: 'postgres://colloquy@127.0.0.1:1/nowhere' }));
    try {
      const health = await store.health();
      expect(health).toMatchObject({ ok: false, busy: true });
      expect(health.reason).toMatch(/ECONNREFUSED/);
    } finally {
      await store.close();
    }
  });

  it('claims past a head row another session holds locked, but never the rows behind it', async () => {
    const url = await freshDatabaseUrl();
    const store = await postgres.open(url);
    await store.commitTurn(turn({ outbox: [text('a1'), text('a2')], now: T0 })); // rows 1, 2
    await store.commitTurn(turn({ key: BOB, outbox: [text('b1')], now: T0 })); // row 3
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM outbox WHERE id = 1 FOR UPDATE');
      // Row 1 is still unsent: ALICE's row 2 must wait behind it; BOB's head goes, without waiting for the lock.
      expect((await store.claim(WHO, { kind: 'send', limit: 10, now: T0 })).map((r) => r.id)).toEqual([3]);
      await other.query('COMMIT');
      expect((await store.claim(WHO, { kind: 'send', limit: 10, now: T0 })).map((r) => r.id)).toEqual([1]);
    } finally {
      await other.end();
    }
  });

  it('fires past a timer another session holds locked, and fires that one once it is free', async () => {
    const url = await freshDatabaseUrl();
    const store = await postgres.open(url);
    const t = (key: string) => ({ key, stateNode: null, event: { type: key }, fireAt: T0 });
    await store.commitTurn(turn({ timers: { upsert: [t('a'), t('b')], remove: [], activeStateNodes: [] }, now: T0 }));
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`SELECT id FROM timers WHERE key = 'a' FOR UPDATE`);
      expect(await store.claim(WHO, { kind: 'timer', limit: 10, now: T0 })).toEqual([ALICE]);
      expect((await store.timers(1)).map((x) => x.key)).toEqual(['a']);
      await other.query('COMMIT');
      expect(await store.claim(WHO, { kind: 'timer', limit: 10, now: T0 })).toEqual([ALICE]);
      expect(await store.timers(1)).toEqual([]);
    } finally {
      await other.end();
    }
  });

  it('refuses a lease that is not a number of milliseconds, and takes a fractional one as whole milliseconds', async () => {
    const store = await postgres.open();
    await store.addInbound(inbound());
    for (const leaseMs of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      await expect(store.claim({ ...WHO, leaseMs }, { kind: 'lane', limit: 1, now: T0, key: ALICE })).rejects.toThrow(/a lease is a number of milliseconds/);
      await expect(store.renew(WHO.owner, leaseMs)).rejects.toThrow(/a lease is a number of milliseconds/);
    }
    expect(await store.claim({ ...WHO, leaseMs: 1_500.4 }, { kind: 'lane', limit: 1, now: T0, key: ALICE })).toHaveLength(1);
    expect((await store.addInbound(inbound(), { ...WHO, leaseMs: 2_000.6 })).claim).toBeDefined();
    expect((await store.renew(WHO.owner, 60_000.5)).lanes).toHaveLength(1);
  });

  it('renews its claims while every connection of the main pool is busy: the heartbeat never queues behind the work', async () => {
    const url = await freshDatabaseUrl();
    const store = (await postgres.open(url)) as PgStore;
    const { claim } = await store.addInbound(inbound({ providerId: 'wamid.held' }), WHO);
    expect(claim).toBeDefined();
    const max = store.db.pool.options.max ?? 10;
    const clients = await Promise.all(Array.from({ length: max }, () => store.db.pool.connect()));
    try {
      for (const c of clients) await c.query('BEGIN');
      // Answered while every main-pool connection is still taken.
      expect((await store.renew(WHO.owner, WHO.leaseMs)).lanes).toEqual([{ key: ALICE, fence: 1, workSeq: 1 }]);
    } finally {
      for (const c of clients) {
        await c.query('ROLLBACK');
        c.release();
      }
    }
  });

  it('stores an inbound while every connection of the main pool is busy: webhook answers have their own', async () => {
    const url = await freshDatabaseUrl();
    const store = (await postgres.open(url)) as PgStore;
    try {
      // Take every connection of the main pool and keep each in an open transaction.
      const max = store.db.pool.options.max ?? 10;
      const clients = await Promise.all(Array.from({ length: max }, () => store.db.pool.connect()));
      for (const c of clients) await c.query('BEGIN');
      let stored = false;
      const ack = store.addInbound(inbound({ providerId: 'wamid.ingress' })).then((r) => {
        stored = true;
        return r;
      });
      await eventually(() => expect(stored).toBe(true), { what: 'the inbound stored', intervalMs: 10 }); // before any main-pool connection came back
      for (const c of clients) {
        await c.query('ROLLBACK');
        c.release();
      }
      expect(await ack).toMatchObject({ duplicate: false });
      expect((await store.inbound((await ack).id))?.providerId).toBe('wamid.ingress');
    } finally {
      await store.close();
    }
  });
});
