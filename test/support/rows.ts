/** Reading a test database's tables directly, on either engine, for what the store's port does not show. */
import Database from 'better-sqlite3';
import pg from 'pg';
import { storeDialect } from '../../src/store/open.js';

const INT8 = 20;

/**
 * The rows `sql` selects from the database at `location` (a SQLite path or a PostgreSQL URL), read
 * on a connection of its own. BIGINT columns come back as numbers on both engines.
 */
export async function rowsAt(location: string, sql: string): Promise<Record<string, unknown>[]> {
  if (storeDialect(location) === 'sqlite') {
    const d = new Database(location, { readonly: true });
    try {
      return d.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      d.close();
    }
  }
  const types = { getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === INT8 ? Number : pg.types.getTypeParser(oid, format as 'text')) };
  const c = new pg.Client({ connectionString: location, types: types as pg.CustomTypesConfig });
  await c.connect();
  try {
    return (await c.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

/** Runs a statement that returns no rows (an UPDATE that stages a test) on the database at `location`. */
export async function execAt(location: string, sql: string): Promise<void> {
  if (storeDialect(location) === 'sqlite') {
    const d = new Database(location);
    try {
      d.exec(sql);
    } finally {
      d.close();
    }
    return;
  }
  const c = new pg.Client({ connectionString: location });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}
