/** The migration runner on PostgreSQL, and the two dialects' schemas side by side. */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { MIGRATIONS_DIR, PG_MIGRATIONS_DIR, migrate, readMigrations } from '../../src/store/sqlite/migrate.js';
import { migratePg, readPgMigrations } from '../../src/store/postgres/migrate.js';
import { PgDb } from '../../src/store/postgres/db.js';
import { openPgStore } from '../../src/store/postgres/store.js';
import { emptyDatabaseUrl } from '../support/postgres.js';
import { tempDir } from './helpers.js';

const pools: PgDb[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

function pool(url: string): PgDb {
  const p = new PgDb({ url, max: 2 });
  pools.push(p);
  return p;
}

function folder(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

async function tables(db: PgDb): Promise<string[]> {
  return (await db.query<{ t: string }>(`SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`)).rows.map((r) => r.t);
}

const A = 'CREATE TABLE a (id BIGINT PRIMARY KEY, x TEXT);\n';
const B = "CREATE TABLE b (id BIGINT PRIMARY KEY, a_id BIGINT REFERENCES a (id));\nINSERT INTO a (id, x) VALUES (1, 'from b');\n";

describe('migratePg', () => {
  it('applies the package migrations in order, records each checksum, and then has nothing to do', async () => {
    const db = pool(await emptyDatabaseUrl());
    const files = readPgMigrations();
    expect(await migratePg(db)).toEqual({ applied: files.map((f) => f.name), alreadyApplied: [] });
    const recorded = (await db.query('SELECT name, checksum, applied_at FROM _migrations ORDER BY name')).rows;
    expect(recorded.map((r) => [r['name'], r['checksum']])).toEqual(files.map((f) => [f.name, f.checksum]));
    expect(typeof recorded[0]!['applied_at']).toBe('number');
    expect(await tables(db)).toEqual([
      '_migrations',
      'agent_sessions',
      'agents',
      'conversations',
      'flow_submits',
      'handoff_events',
      'handoff_log',
      'handoffs',
      'inbox',
      'lanes',
      'outbox',
      'statuses',
      'timers',
    ]);
    expect(await migratePg(db)).toEqual({ applied: [], alreadyApplied: files.map((f) => f.name) });
  });

  it('refuses to run when an applied file changed, or is gone', async () => {
    const db = pool(await emptyDatabaseUrl());
    await migratePg(db, readMigrations(folder({ '0001_a.sql': A })));
    const changed = await migratePg(db, readMigrations(folder({ '0001_a.sql': `${A}-- edited\n` }))).catch((e: unknown) => e);
    expect(changed).toBeInstanceOf(StoreError);
    expect(changed).toMatchObject({ code: 'migration_changed' });
    expect((changed as Error).message).toContain('0001_a.sql changed after it was applied');
    const gone = await migratePg(db, readMigrations(folder({ '0002_b.sql': B }))).catch((e: unknown) => e);
    expect(gone).toMatchObject({ code: 'migration_missing' });
    expect(await tables(db)).toEqual(['_migrations', 'a']);
  });

  it('rolls a failing file back whole, keeps the files before it, and records nothing of it', async () => {
    const db = pool(await emptyDatabaseUrl());
    const dir = folder({ '0001_a.sql': A, '0002_b.sql': `${B}SELECT * FROM no_such_table;\n` });
    const err = await migratePg(db, readMigrations(dir)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'migration_failed' });
    expect((err as Error).message).toContain('Migration 0002_b.sql failed and was rolled back');
    expect(await tables(db)).toEqual(['_migrations', 'a']);
    expect((await db.query('SELECT COUNT(*) AS n FROM a')).rows[0]!['n']).toBe(0);
    expect((await db.query('SELECT name FROM _migrations')).rows).toEqual([{ name: '0001_a.sql' }]);
  });

  it('applies each file once when five processes start at once (advisory lock)', async () => {
    const url = await emptyDatabaseUrl();
    const runs = await Promise.all(Array.from({ length: 5 }, () => migratePg(pool(url))));
    const names = readPgMigrations().map((f) => f.name);
    expect(runs.flatMap((r) => r.applied).sort()).toEqual(names);
    expect(runs.filter((r) => r.applied.length > 0)).toHaveLength(1);
    expect((await pool(url).query('SELECT COUNT(*) AS n FROM _migrations')).rows[0]!['n']).toBe(names.length);
  });
});

describe('both dialects', () => {
  it('have migrations of the same names', () => {
    const sql = (d: string) =>
      readdirSync(d)
        .filter((f) => f.endsWith('.sql'))
        .sort();
    expect(sql(PG_MIGRATIONS_DIR)).toEqual(sql(MIGRATIONS_DIR));
  });

  it('produce the same tables, columns, nullability and indexes; types map INTEGER to bigint and TEXT to text', async () => {
    const lite = new Database(':memory:');
    migrate(lite);
    const liteTables = (lite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    const liteColumns = liteTables.flatMap((t) =>
      (lite.prepare('SELECT name, type, "notnull" AS nn, pk FROM pragma_table_info(?) ORDER BY name').all(t) as { name: string; type: string; nn: number; pk: number }[]).map((c) => ({
        table: t,
        column: c.name,
        type: c.type === 'INTEGER' ? 'bigint' : c.type.toLowerCase(),
        notNull: c.nn === 1 || c.pk === 1,
      })),
    );
    const liteIndexes = (lite.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
    lite.close();

    const db = pool(await emptyDatabaseUrl());
    await migratePg(db);
    const pgColumns = (
      await db.query<{ table: string; column: string; type: string; nn: string }>(`SELECT table_name AS table, column_name AS column, data_type AS type, is_nullable AS nn
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, column_name`)
    ).rows.map((c) => ({ table: c.table, column: c.column, type: c.type, notNull: c.nn === 'NO' }));
    const pgIndexes = (
      await db.query<{ name: string }>(`SELECT indexname AS name FROM pg_indexes WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key' ORDER BY 1`)
    ).rows.map((r) => r.name);

    expect(await tables(db)).toEqual(liteTables);
    const sort = (cs: { table: string; column: string }[]) => [...cs].sort((a, b) => a.table.localeCompare(b.table) || a.column.localeCompare(b.column));
    expect(sort(pgColumns)).toEqual(sort(liteColumns));
    expect(pgIndexes).toEqual(liteIndexes);
  });
});

describe('0013_work_kernel on a database in use (postgres)', () => {
  it('a send and an event left `sending` by a version before owners are lapsed claims: taken only with `lapsed`, as a resend', async () => {
    const url = await emptyDatabaseUrl();
    const db = pool(url);
    const files = readPgMigrations();
    await migratePg(
      db,
      files.filter((f) => f.name < '0013'),
    );
    // Claimed by a process of the old version: a lease on its own clock, far ahead, and no owner.
    const ahead = Date.now() + 3_600_000;
    await db.query(`INSERT INTO conversations (bot_id, user_number, status, snapshot, state, version, flow_token, created_at, updated_at, last_activity_at)
      VALUES ('pizza', '+4915100000001', 'active', NULL, 'menu', 1, 'ft', 0, 0, 0)`);
    await db.query(
      `INSERT INTO outbox (conversation_id, bot_id, user_number, kind, message, channel, request, state, attempts, lease_until, claim, next_attempt_at, created_at)
      VALUES (1, 'pizza', '+4915100000001', 'text', '{}', 'interactive', '{}', 'sending', 1, $1, 'old-1', 0, 0)`,
      [ahead],
    );
    await db.query(`INSERT INTO handoffs (conversation_id, bot_id, user_number, state, started_at) VALUES (1, 'pizza', '+4915100000001', 'waiting', 0)`);
    await db.query(
      `INSERT INTO handoff_events (event_id, handoff_id, type, payload, state, attempts, lease_until, claim, next_attempt_at, created_at)
      VALUES ('ev-1', 1, 'handoff.started', '{}', 'sending', 1, $1, 'old-1', 0, 0)`,
      [ahead],
    );
    await migratePg(db, files);

    const store = await openPgStore({ url, migrate: false });
    try {
      const cautious = { owner: 'new-a', leaseMs: 60_000, lapsed: false };
      expect(await store.claim(cautious, { kind: 'send', limit: 10, now: 0 })).toEqual([]);
      expect(await store.claim(cautious, { kind: 'event', limit: 10, now: 0 })).toEqual([]);
      const taker = { ...cautious, lapsed: true };
      expect(await store.claim(taker, { kind: 'send', limit: 10, now: 0 })).toMatchObject([{ id: 1, resends: 1, attempts: 2, state: 'sending' }]);
      expect(await store.claim(taker, { kind: 'event', limit: 10, now: 0 })).toMatchObject([{ id: 1, attempts: 2 }]);
    } finally {
      await store.close();
    }
  });
});

describe('0016_agents on a database in use (postgres)', () => {
  it("handoffs opened before it keep their timeout: a waiting one its timer's, a claimed one the default, given again when its claim goes back to the queue", async () => {
    const url = await emptyDatabaseUrl();
    const db = pool(url);
    const files = readPgMigrations();
    await migratePg(
      db,
      files.filter((f) => f.name < '0016'),
    );
    await db.query(`INSERT INTO conversations (bot_id, user_number, status, snapshot, state, version, flow_token, created_at, updated_at, last_activity_at)
      VALUES ('pizza', '+4915100000001', 'active', NULL, 'menu', 1, 'ft1', 0, 0, 0), ('pizza', '+4915100000002', 'active', NULL, 'menu', 1, 'ft2', 0, 0, 0)`);
    await db.query(`INSERT INTO handoffs (conversation_id, bot_id, user_number, state, timeout_at, started_at) VALUES (1, 'pizza', '+4915100000001', 'waiting', 90000, 1000)`);
    await db.query(`INSERT INTO handoffs (conversation_id, bot_id, user_number, state, agent, claimed_at, started_at) VALUES (2, 'pizza', '+4915100000002', 'claimed', 'ana', 5, 0)`);
    await migratePg(db, files);
    expect((await db.query('SELECT id, timeout_ms FROM handoffs ORDER BY id')).rows).toEqual([
      { id: 1, timeout_ms: 89_000 },
      { id: 2, timeout_ms: 600_000 },
    ]);

    const store = await openPgStore({ url, migrate: false });
    try {
      await store.addAgent('ana', 'h', 0);
      expect(await store.removeAgent('ana', { now: 10_000, notify: false })).toEqual({ removed: true, sessions: 0, claims: 1 });
      expect(await store.openHandoff(2)).toMatchObject({ state: 'waiting', agent: 'ana', timeoutAt: 610_000 });
      expect((await store.timers(2))[0]).toMatchObject({ event: { type: 'handoff.timeout', waitedMs: 600_000 }, fireAt: 610_000 });
    } finally {
      await store.close();
    }
  });
});
