/**
 * The migration runner: ordered `NNNN_description.sql` files, each recorded with its checksum.
 * Refuses to run when an applied file has changed; applies each pending file in a transaction.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { StoreError } from '../errors.js';
import { sqliteDriver } from './drivers.js';
import type { MigrationFile, MigrationReport } from './migration-types.js';

export type { MigrationFile, MigrationReport } from './migration-types.js';

/** The package's own SQLite migrations folder. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/sqlite/', import.meta.url));
/** The package's own PostgreSQL migrations folder: the same file names as {@link MIGRATIONS_DIR}. */
export const PG_MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/postgres/', import.meta.url));

const NAME = /^(\d{4})_[a-z0-9_]+\.sql$/;

/** Reads the migration files of a folder, in order. */
export function readMigrations(dir: string = MIGRATIONS_DIR): MigrationFile[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((name) => {
      if (!NAME.test(name)) throw new StoreError('migration_name', `Migration ${name} is not named NNNN_description.sql`);
      const sql = readFileSync(`${dir}/${name}`, 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Applies pending migrations; throws when an applied file changed or went missing. */
export function migrate(db: Database.Database, files: readonly MigrationFile[] = readMigrations()): MigrationReport {
  db.exec(`CREATE TABLE IF NOT EXISTS _migrations (
    name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const rows = db.prepare('SELECT name, checksum FROM _migrations ORDER BY name').all() as AppliedMigration[];
  const done = checkApplied(rows, files);
  const applied: string[] = [];
  const recorded = db.prepare('SELECT checksum FROM _migrations WHERE name = ?');
  const record = db.prepare('INSERT INTO _migrations (name, checksum, applied_at) VALUES (?, ?, ?)');
  for (const file of files) {
    if (done.has(file.name)) continue;
    let ran: boolean;
    try {
      ran = db
        .transaction((): boolean => {
          // Another process starting at the same time may have applied it since we looked; under
          // the write lock this check is final.
          const row = recorded.get(file.name) as { checksum: string } | undefined;
          if (row) {
            if (row.checksum !== file.checksum) throw changed(file.name, row.checksum, file.checksum);
            return false;
          }
          db.exec(file.sql);
          record.run(file.name, file.checksum, Date.now());
          return true;
        })
        .immediate();
    } catch (cause) {
      if (cause instanceof StoreError) throw cause;
      throw new StoreError('migration_failed', `Migration ${file.name} failed and was rolled back: ${(cause as Error).message}`, { cause });
    }
    if (ran) applied.push(file.name);
    else done.add(file.name);
  }
  return { applied, alreadyApplied: [...done] };
}

/** A migration recorded as applied. */
export interface AppliedMigration {
  readonly name: string;
  readonly checksum: string;
}

/** Checks that every applied migration's file is there unchanged; returns the applied names. */
export function checkApplied(rows: readonly AppliedMigration[], files: readonly MigrationFile[]): Set<string> {
  const byName = new Map(files.map((f) => [f.name, f]));
  for (const row of rows) {
    const file = byName.get(row.name);
    if (!file) throw new StoreError('migration_missing', `Migration ${row.name} was applied but its file is gone`);
    if (file.checksum !== row.checksum) throw changed(row.name, row.checksum, file.checksum);
  }
  return new Set(rows.map((r) => r.name));
}

/** The error for an applied migration whose file changed since. */
export function changed(name: string, was: string, now: string): StoreError {
  return new StoreError('migration_changed', `Migration ${name} changed after it was applied (checksum ${was.slice(0, 12)}… is now ${now.slice(0, 12)}…); add a new migration instead`);
}

/** Applies pending migrations to the SQLite file at `path` (created when missing), without opening a store. */
export function migrateSqliteFile(path: string): MigrationReport {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new (sqliteDriver())(path);
  try {
    db.pragma('journal_mode = WAL');
    return migrate(db);
  } finally {
    db.close();
  }
}
