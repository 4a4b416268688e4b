/**
 * `colloquy/store`: the store port the runtime talks to, the records it holds, the SQLite and
 * PostgreSQL stores behind it, and the migrations runners. A store of your own implements {@link Store}.
 */
export type * from './types.js';
export { openStore, storeDialect, migrateDatabase, describeStoreLocation, type OpenStoreOptions } from './open.js';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions, type SqliteStoreStats } from './sqlite.js';
export type { GroupCommitOptions, WriteStats } from './sqlite-batch.js';
export type { CheckpointOptions, CheckpointStats } from './sqlite-checkpoint.js';
export { openPgStore, PgStore, type PgStoreOptions } from './pg.js';
export { copySqliteToPostgres, type CopyReport, type CopyOptions } from './copy.js';
export { migrate, readMigrations, MIGRATIONS_DIR, PG_MIGRATIONS_DIR, type MigrationFile, type MigrationReport } from './migrate.js';
export { migratePg, readPgMigrations } from './migrate-pg.js';
