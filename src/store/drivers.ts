/**
 * The database drivers, loaded the first time a store of their kind opens. They are optional peer
 * dependencies: a PostgreSQL deployment never installs better-sqlite3 and a SQLite one never
 * installs pg, so importing a store's module must not load its driver, and a missing driver is
 * a {@link DriverMissingError} naming the package to install, not a module-resolution trace.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type Pg from 'pg';
import { DriverMissingError } from '../errors.js';

// Both drivers are CommonJS packages: require() loads them synchronously, where they are needed.
const require = createRequire(import.meta.url);

let sqlite: typeof BetterSqlite3 | undefined;
let pg: typeof Pg | undefined;

/** better-sqlite3's `Database` constructor. */
export function sqliteDriver(): typeof BetterSqlite3 {
  sqlite ??= load<typeof BetterSqlite3>('better-sqlite3', 'The SQLite store');
  return sqlite;
}

/** node-postgres. */
export function pgDriver(): typeof Pg {
  pg ??= load<typeof Pg>('pg', 'The PostgreSQL store');
  return pg;
}

function load<T>(name: string, who: string): T {
  try {
    return require(name) as T;
  } catch (err) {
    const e = err as { code?: unknown; message?: unknown };
    // Only the driver itself missing; a broken install of it (a dependency of its own missing) keeps its own error.
    const missing = e?.code === 'MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.startsWith(`Cannot find module '${name}'`);
    if (missing) throw new DriverMissingError(name, who, { cause: err });
    throw err;
  }
}
