/**
 * One call opens either store: a `postgres://` or `postgresql://` URL gives PostgreSQL, anything
 * else is a SQLite file path (or `:memory:`). The wiring (server, CLI, test harness) opens stores
 * only through here, so nothing outside `src/store/` names a concrete store. Each engine's module
 * is imported when a store of its kind opens, so a PostgreSQL deployment never loads the SQLite
 * store (nor better-sqlite3) and a SQLite one never loads pg.
 */
import type { BusyOptions } from './sqlite/busy.js';
import { isPostgresUrl, redactUrl } from './location.js';
import type { MigrationReport } from './migration-types.js';
import { openFailure } from './postgres/failure.js';
import type { SqliteSynchronous } from './sqlite/synchronous.js';
import type { Store } from './types.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions extends BusyOptions {
  /** A PostgreSQL URL, a SQLite file path, or `:memory:`. */
  readonly url: string;
  /** Apply pending migrations on open (default true). */
  readonly migrate?: boolean;
  /**
   * Open an existing database without changing it (the operator commands): a SQLite file
   * read-only (a missing file is an error, and migrations this version lacks are applied to a
   * copy in memory), a PostgreSQL database without applying migrations. Default false.
   */
  readonly readOnly?: boolean;
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
  const migrate = (o.migrate ?? true) && o.readOnly !== true;
  if (storeDialect(o.url) === 'postgres') {
    const { openPgStore } = await import('./postgres/store.js');
    return openPgStore({ url: o.url, migrate, ...(o.poolSize !== undefined && { max: o.poolSize }), ...(o.lockTimeoutMs !== undefined && { lockTimeoutMs: o.lockTimeoutMs }) });
  }
  if (o.readOnly === true) {
    const { openSqliteReadOnly } = await import('./sqlite/readonly.js');
    return openSqliteReadOnly(o.url);
  }
  const { openSqliteStore } = await import('./sqlite/store.js');
  const { url, poolSize: _p, lockTimeoutMs: _l, readOnly: _r, ...sqlite } = o;
  return openSqliteStore({ ...sqlite, path: url, migrate });
}

/** A location fit for logs and messages: a PostgreSQL URL's password is hidden. */
export function describeStoreLocation(location: string): string {
  return redactUrl(location);
}

/** Applies pending migrations to the database a URL or path names, without opening a store. */
export async function migrateDatabase(location: string): Promise<MigrationReport> {
  if (storeDialect(location) === 'postgres') {
    const [{ PgDb }, { migratePg }] = await Promise.all([import('./postgres/db.js'), import('./postgres/migrate.js')]);
    const db = new PgDb({ url: location, max: 1 });
    try {
      return await migratePg(db);
    } catch (err) {
      throw openFailure(err, location);
    } finally {
      await db.end();
    }
  }
  const { migrateSqliteFile } = await import('./sqlite/migrate.js');
  return migrateSqliteFile(location);
}
