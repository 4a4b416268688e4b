/**
 * One call opens either store: a `postgres://` or `postgresql://` URL gives PostgreSQL, anything
 * else is a SQLite file path (or `:memory:`). The wiring (server, CLI, test harness) opens stores
 * only through here, so nothing outside `src/store/` names a concrete store.
 */
import { openPgStore } from './pg.js';
import { isPostgresUrl } from './pg-db.js';
import { openSqliteStore } from './sqlite.js';
import type { Store } from './types.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** A PostgreSQL URL, a SQLite file path, or `:memory:`. */
  readonly url: string;
  /** Apply pending migrations on open (default true). */
  readonly migrate?: boolean;
  /** PostgreSQL only: connections in the pool (default 10). */
  readonly poolSize?: number;
}

/** Which kind of database a location names. */
export function storeDialect(location: string): 'postgres' | 'sqlite' {
  return isPostgresUrl(location) ? 'postgres' : 'sqlite';
}

/** Opens (and migrates) the store a URL or path names. */
export async function openStore(options: OpenStoreOptions | string): Promise<Store> {
  const o = typeof options === 'string' ? { url: options } : options;
  const migrate = o.migrate ?? true;
  if (storeDialect(o.url) === 'postgres') return openPgStore({ url: o.url, migrate, ...(o.poolSize !== undefined && { max: o.poolSize }) });
  return openSqliteStore({ path: o.url, migrate });
}
