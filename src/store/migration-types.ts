/**
 * The migration runners' records, apart from the runners so that a declaration naming them
 * (`migrateDatabase()`'s result) does not reach the SQLite driver's types.
 */

/** One migration file. */
export interface MigrationFile {
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

/** What a run did. */
export interface MigrationReport {
  readonly applied: readonly string[];
  readonly alreadyApplied: readonly string[];
}
