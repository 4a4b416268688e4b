/**
 * Opening the conversation store for the operator commands (`check --db`, `conversations`,
 * `transcript`). They read a database a server may be using, maybe one a server of an older
 * Colloquy still uses (a check before the deploy), so nothing is written, migrated or created.
 */
import { loadConfig } from '../config.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import type { Io } from './io.js';

/** Where the operator commands read: `--db`, else the configured database (COLLOQUY_DATABASE_URL, COLLOQUY_DB, default ./data/colloquy.db). */
export function databaseTarget(db: string | undefined, io: Io): string {
  if (db !== undefined) return db;
  return io.env['COLLOQUY_DATABASE_URL'] || loadConfig(io.env).db;
}

/**
 * Opens an existing database without changing it: a SQLite file read-only (a missing file is an
 * error, not a new empty database); a PostgreSQL database without applying migrations.
 */
export async function openExistingStore(target: string): Promise<Store> {
  return openStore({ url: target, readOnly: true });
}
