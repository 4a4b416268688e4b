/**
 * One call opens either store: a `postgres://` or `postgresql://` URL gives PostgreSQL, anything
 * else is a SQLite file path (or `:memory:`). The wiring (server, CLI, test harness) opens stores
 * only through here, so nothing outside `src/store/` names a concrete store.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { BusyOptions } from './busy.js';
import { migrate, type MigrationReport } from './migrate.js';
import { migratePg } from './migrate-pg.js';
import { openPgStore } from './pg.js';
import { isPostgresUrl, PgDb, redactUrl } from './pg-db.js';
import { openSqliteStore, type SqliteSynchronous } from './sqlite.js';
import type { Store } from './types.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions extends BusyOptions {
  /** A PostgreSQL URL, a SQLite file path, or `:memory:`. */
  readonly url: string;
  /** Apply pending migrations on open (default true). */
  readonly migrate?: boolean;
  /** PostgreSQL only: connections in the pool (default 10). */
  readonly poolSize?: number;
  /** PostgreSQL only: how long a statement waits for a row lock before StoreUnavailableError (default 3 s). */
  readonly lockTimeoutMs?: number;
  /** SQLite only: `full` (default) fsyncs every commit; `normal` may lose the last commits to a dead machine. */
  readonly synchronous?: SqliteSynchronous | undefined;
}

/** Which kind of database a location names. */
export function storeDialect(location: string): 'postgres' | 'sqlite' {
  return isPostgresUrl(location) ? 'postgres' : 'sqlite';
}

/** Opens (and migrates) the store a URL or path names. */
export async function openStore(options: OpenStoreOptions | string): Promise<Store> {
  const o = typeof options === 'string' ? { url: options } : options;
  const migrate = o.migrate ?? true;
  if (storeDialect(o.url) === 'postgres') {
    return openPgStore({ url: o.url, migrate, ...(o.poolSize !== undefined && { max: o.poolSize }), ...(o.lockTimeoutMs !== undefined && { lockTimeoutMs: o.lockTimeoutMs }) });
  }
  const { url, poolSize: _p, lockTimeoutMs: _l, ...sqlite } = o;
  return openSqliteStore({ ...sqlite, path: url, migrate });
}

/** A location fit for logs and messages: a PostgreSQL URL's password is hidden. */
export function describeStoreLocation(location: string): string {
  return redactUrl(location);
}

/** Applies pending migrations to the database a URL or path names, without opening a store. */
export async function migrateDatabase(location: string): Promise<MigrationReport> {
  if (storeDialect(location) === 'postgres') {
    const db = new PgDb({ url: location, max: 1 });
    try {
      return await migratePg(db);
    } finally {
      await db.end();
    }
  }
  if (location !== ':memory:') mkdirSync(dirname(location), { recursive: true });
  const db = new Database(location);
  try {
    db.pragma('journal_mode = WAL');
    return migrate(db);
  } finally {
    db.close();
  }
}
