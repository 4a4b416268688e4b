/**
 * `colloquy/store`: the store port the runtime talks to, the records it holds, the SQLite store
 * behind it, and the migrations runner. A store of your own implements {@link Store}.
 */
export type * from './types.js';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './sqlite.js';
export { migrate, readMigrations, MIGRATIONS_DIR, type MigrationFile, type MigrationReport } from './migrate.js';
