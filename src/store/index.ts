/**
 * `colloquy/store`: the store port the runtime talks to and the records it holds, and
 * `openStore()`, which opens either engine from a URL or path and loads only that engine. A store
 * of your own implements {@link Store}. The engines themselves are `colloquy/sqlite` and
 * `colloquy/postgres`.
 */
export type * from './types.js';
export { openStore, storeDialect, migrateDatabase, describeStoreLocation, type OpenStoreOptions } from './open.js';
export type { MigrationFile, MigrationReport } from './migration-types.js';
export type { BusyEvent, BusyOptions } from './sqlite/busy.js';
