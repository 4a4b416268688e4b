/**
 * A read-only view of a SQLite database for the operator commands. They may read a database that
 * a running server of an older Colloquy still uses (a check before the deploy): nothing is
 * written to it. When it lacks migrations this version needs, they are applied to a copy in
 * memory, so the commands read what this version would see.
 */
import { existsSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { StoreError } from '../../errors.js';
import { sqliteDriver } from '../drivers.js';
import { migrate, readMigrations } from './migrate.js';
import { SqliteStore } from './store.js';

/** Opens an existing database read-only (or an in-memory copy with the missing migrations applied). */
export function openSqliteReadOnly(path: string, migrationsDir?: string): SqliteStore {
  if (!existsSync(path)) throw new StoreError('no_database', `no database at ${path}`);
  const Sqlite = sqliteDriver();
  let db: Database.Database;
  try {
    db = new Sqlite(path, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new StoreError('no_database', `cannot open ${path}: ${(err as Error).message}`, { cause: err });
  }
  try {
    if (!hasTable(db, 'conversations')) throw new StoreError('not_colloquy', `${path} is not a Colloquy database (no conversations table)`);
    const files = readMigrations(migrationsDir);
    const applied = new Set(hasTable(db, '_migrations') ? (db.prepare('SELECT name FROM _migrations').all() as { name: string }[]).map((r) => r.name) : []);
    if (files.every((f) => applied.has(f.name))) return new SqliteStore(db);
    const image = db.serialize();
    db.close();
    // Bytes 18-19 say "WAL" (2) for a database in WAL mode; an in-memory copy cannot be WAL, and
    // SQLite refuses to write it until they say "rollback journal" (1).
    image[18] = 1;
    image[19] = 1;
    const copy = new Sqlite(image);
    migrate(copy, files);
    return new SqliteStore(copy);
  } catch (err) {
    if (db.open) db.close();
    throw err;
  }
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined;
}
