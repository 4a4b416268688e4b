/**
 * The migration files and the checks on what was applied, shared by both runners. Apart from the
 * SQLite runner so that the PostgreSQL one (and its declarations) never reach better-sqlite3.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { StoreError } from '../errors.js';
import type { MigrationFile } from './migration-types.js';

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
