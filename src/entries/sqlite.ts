/**
 * `colloquy/sqlite`: the SQLite store, one file in WAL mode (or `:memory:`), and its migrations
 * runner. better-sqlite3 is an optional peer dependency (`npm install better-sqlite3`); it loads
 * when a store opens, and a missing one is a {@link DriverMissingError} saying so.
 */
export type { DriverMissingError } from '../errors.js';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions, type SqliteStoreStats } from '../store/sqlite/store.js';
export type { GroupCommitOptions, WriteStats } from '../store/sqlite/batch.js';
export type { CheckpointOptions, CheckpointStats } from '../store/sqlite/checkpoint.js';
export { migrate, migrateSqliteFile, readMigrations, MIGRATIONS_DIR, type MigrationFile, type MigrationReport } from '../store/sqlite/migrate.js';
