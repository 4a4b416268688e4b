/**
 * The migration runner: ordered `NNNN_description.sql` files, each recorded with its checksum.
 * Refuses to run when an applied file has changed; applies each pending file in a transaction.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';
import { StoreError } from '../../errors.js';
import { sqliteDriver } from '../drivers.js';
import { changed, checkApplied, readMigrations, type AppliedMigration } from '../migration-files.js';
import type { MigrationFile, MigrationReport } from '../migration-types.js';

export type { MigrationFile, MigrationReport } from '../migration-types.js';
export { changed, checkApplied, MIGRATIONS_DIR, PG_MIGRATIONS_DIR, readMigrations, type AppliedMigration } from '../migration-files.js';

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
