/**
 * SQLite's `synchronous` setting for the store's write connection, in a module of its own that
 * names no driver, so the options of `openStore` can carry it without their types pulling in
 * better-sqlite3's.
 */
import { ConfigError } from '../../errors.js';

/** `full`: every COMMIT fsyncs the WAL (an acknowledged write survives a power cut); `normal`: only checkpoints do. */
export type SqliteSynchronous = 'full' | 'normal';

/** The pragma's value for a setting (default `full`); anything else is a {@link ConfigError}. */
export function synchronousPragma(value: SqliteSynchronous | undefined): 'FULL' | 'NORMAL' {
  if (value === undefined || value === 'full') return 'FULL';
  if (value === 'normal') return 'NORMAL';
  throw new ConfigError('synchronous', `must be "full" or "normal", got ${JSON.stringify(value)}`);
}
