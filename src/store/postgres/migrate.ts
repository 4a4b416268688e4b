/**
 * The migration runner for PostgreSQL: the same files, checksums and refusals as the SQLite one
 * (`migrate.ts`), each pending file in its own transaction, the whole run under an advisory lock so
 * that several processes starting at once apply each file exactly once.
 */
import { StoreError } from '../../errors.js';
import { checkApplied, readMigrations, PG_MIGRATIONS_DIR, type AppliedMigration } from '../migration-files.js';
import type { MigrationFile, MigrationReport } from '../migration-types.js';
import { mapError, type PgDb } from './db.js';

/** The advisory lock key of migration runs (any constant; this one spells "colloquy"). */
export const MIGRATION_LOCK_KEY = 0x636f6c6c6f717579n;

/** Reads the package's PostgreSQL migrations, or those of `dir`. */
export function readPgMigrations(dir: string = PG_MIGRATIONS_DIR): MigrationFile[] {
  return readMigrations(dir);
}

/** Applies pending migrations; throws when an applied file changed or went missing. */
export async function migratePg(db: PgDb, files: readonly MigrationFile[] = readPgMigrations()): Promise<MigrationReport> {
  let client;
  try {
    client = await db.pool.connect();
  } catch (err) {
    throw mapError(err);
  }
  let locked = false;
  // A connection lost mid-run fails the next statement; without a listener its 'error' event would crash the process.
  client.on('error', () => undefined);
  try {
    // Another process may be migrating: wait for it however long it takes (not the pool's lock_timeout).
    await client.query('SET lock_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    locked = true;
    await client.query(`CREATE TABLE IF NOT EXISTS _migrations (
      name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at BIGINT NOT NULL)`);
    const { rows } = await client.query<{ name: string; checksum: string }>('SELECT name, checksum FROM _migrations ORDER BY name');
    const done = checkApplied(rows as AppliedMigration[], files);
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file.name)) continue;
      await client.query('BEGIN');
      try {
        await client.query(file.sql);
        await client.query('INSERT INTO _migrations (name, checksum, applied_at) VALUES ($1, $2, $3)', [file.name, file.checksum, Date.now()]);
        await client.query('COMMIT');
      } catch (cause) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new StoreError('migration_failed', `Migration ${file.name} failed and was rolled back: ${(cause as Error).message}`, { cause });
      }
      applied.push(file.name);
    }
    return { applied, alreadyApplied: [...done] };
  } catch (err) {
    throw mapError(err);
  } finally {
    if (locked) await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => undefined);
    await client.query('RESET lock_timeout').catch(() => undefined);
    client.release();
  }
}
