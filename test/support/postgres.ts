/**
 * Fresh PostgreSQL databases for tests, copied from the run's migrated template (see
 * `postgres-server.ts`, the global setup that starts the server).
 */
import pg from 'pg';
import { expect, inject } from 'vitest';
import { eventually } from './eventually.js';
import { withDatabase } from './postgres-server.js';

let n = 0;

/**
 * A new, migrated, empty database on the test server; resolves to its URL. Each call gives
 * another database (they are dropped with the server at the end of the run).
 */
export async function freshDatabaseUrl(): Promise<string> {
  return createDatabase(true);
}

/** A new database with no tables at all (for migration tests). */
export async function emptyDatabaseUrl(): Promise<string> {
  return createDatabase(false);
}

async function createDatabase(migrated: boolean): Promise<string> {
  const { adminUrl, template, prefix } = inject('postgres');
  const name = `${prefix}_${process.pid}_${++n}`;
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  const create = `CREATE DATABASE ${name} TEMPLATE ${migrated ? template : 'template0'}`;
  try {
    // FILE_COPY (PostgreSQL 15+) copies a small template several times faster than the default.
    await c.query(`${create} STRATEGY FILE_COPY`).catch(async (err: { code?: string }) => {
      if (err.code !== '42601' && err.code !== '42704') throw err;
      await c.query(create);
    });
  } finally {
    await c.end();
  }
  return withDatabase(adminUrl, name);
}

/**
 * Resolves once a statement on the database at `url` waits for a lock another session holds: the
 * positive sign that a racing statement is blocked, instead of a sleep that hopes it is.
 */
export async function blockedOnLock(url: string): Promise<void> {
  // A session of its own: pg_stat_activity is read once per transaction, so a session in one would not see the wait begin.
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await eventually(
      async () => {
        const { rows } = await c.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        expect(rows[0]!.n).toBeGreaterThan(0);
      },
      { what: 'a statement waiting for a lock' },
    );
  } finally {
    await c.end();
  }
}
