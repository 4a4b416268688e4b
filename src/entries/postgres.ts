/**
 * `colloquy/postgres`: the PostgreSQL store, for several processes on several machines, its
 * migrations runner, and the copy of an existing SQLite database into it. pg is an optional peer
 * dependency (`npm install pg`); it loads when a store opens, and a missing one is a
 * {@link DriverMissingError} saying so. (The copy also needs better-sqlite3, to read the source.)
 */
export type { DriverMissingError } from '../errors.js';
export { openPgStore, PgStore, type PgStoreOptions } from '../store/postgres/store.js';
export { migratePg, readPgMigrations } from '../store/postgres/migrate.js';
export { PG_MIGRATIONS_DIR } from '../store/migration-files.js';
export type { MigrationFile, MigrationReport } from '../store/migration-types.js';
export { copySqliteToPostgres, type CopyReport, type CopyOptions } from '../store/copy.js';
