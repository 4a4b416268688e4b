/**
 * Opening the conversation store for the operator commands (`check --db`, `conversations`,
 * `transcript`). They read a database a server may be using, maybe one not yet migrated to this
 * version of Colloquy (a check before the deploy), so nothing is migrated or created here.
 */
import { existsSync } from 'node:fs';
import { loadConfig } from '../config.js';
import { ConfigError } from '../errors.js';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/types.js';
import type { Io } from './io.js';

const POSTGRES = /^postgres(ql)?:\/\//;

/** Where the operator commands read: `--db`, else the configured database (COLLOQUY_DB, default ./data/colloquy.db). */
export function databaseTarget(db: string | undefined, io: Io): string {
  if (db !== undefined) return db;
  return io.env['COLLOQUY_DATABASE_URL'] || loadConfig(io.env).db;
}

/** Opens an existing database without migrating it; a missing file is an error, not a new empty database. */
export function openExistingStore(target: string): Store {
  if (POSTGRES.test(target)) {
    throw new ConfigError('db', 'a PostgreSQL URL needs the PostgreSQL store, which this build does not include; pass a SQLite file');
  }
  if (target !== ':memory:' && !existsSync(target)) throw new ConfigError('db', `no database at ${target}`);
  const store = openSqliteStore({ path: target, migrate: false });
  try {
    const tables = store.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'conversations'`).all();
    if (tables.length === 0) throw new ConfigError('db', `${target} is not a Colloquy database (no conversations table); run colloquy migrate first`);
  } catch (err) {
    store.db.close();
    throw err;
  }
  return store;
}
