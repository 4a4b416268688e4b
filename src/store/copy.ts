/**
 * Moves an existing SQLite database to PostgreSQL: every table, every row, ids kept, in one
 * transaction on the target, which must be empty; the identity sequences then continue after the
 * highest copied id. The source is opened read-only and must be at the package's migration level.
 */
import { existsSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { StoreError } from '../errors.js';
import { sqliteDriver } from './drivers.js';
import { readMigrations } from './migration-files.js';
import { migratePg } from './postgres/migrate.js';
import { PgDb, redactUrl, type Queryable } from './postgres/db.js';
import { openFailure } from './postgres/failure.js';

/** What a copy moved, table by table, in the order it copied them. */
export interface CopyReport {
  readonly tables: readonly { readonly name: string; readonly rows: number }[];
}

/** Options of {@link copySqliteToPostgres}. */
export interface CopyOptions {
  /** Rows per INSERT statement (default 500). */
  readonly batchSize?: number;
}

/** Copies the SQLite file `from` into the empty PostgreSQL database `to` (migrating it first). */
export async function copySqliteToPostgres(from: string, to: string, o: CopyOptions = {}): Promise<CopyReport> {
  if (from === ':memory:' || !existsSync(from)) throw new StoreError('copy_source', `There is no SQLite database at ${from}`);
  const source = new (sqliteDriver())(from, { readonly: true, fileMustExist: true });
  try {
    checkSourceLevel(source, from);
    const tables = copyOrder(source);
    const db = new PgDb({ url: to, max: 1 });
    try {
      await migratePg(db).catch((err: unknown) => {
        throw openFailure(err, to);
      });
      const copied = db.tx(async (q) => {
        await prepareTarget(q, tables, to);
        // One read transaction on the source: every table as of the same moment, even if a server still writes to it.
        source.exec('BEGIN');
        try {
          const report = [];
          for (const t of tables) report.push({ name: t, rows: await copyTable(source, q, t, o.batchSize ?? 500) });
          return { tables: report };
        } finally {
          source.exec('COMMIT');
        }
      });
      // A value PostgreSQL cannot hold (a NUL in a text column…) is a sentence too, not a pg stack.
      return await copied.catch((err: unknown) => {
        throw openFailure(err, to);
      });
    } finally {
      await db.end();
    }
  } finally {
    source.close();
  }
}

/** The source must have exactly the package's migrations applied: then both schemas are the same. */
function checkSourceLevel(source: Database.Database, from: string): void {
  const known = readMigrations().map((f) => f.name);
  const hasTable = source.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'`).get();
  const applied = hasTable ? (source.prepare('SELECT name FROM _migrations ORDER BY name').all() as { name: string }[]).map((r) => r.name) : [];
  const missing = known.filter((n) => !applied.includes(n));
  const unknown = applied.filter((n) => !known.includes(n));
  if (unknown.length) throw new StoreError('copy_source', `${from} has migrations this version of Colloquy does not know (${unknown.join(', ')}): copy it with the version that wrote it`);
  if (missing.length) throw new StoreError('copy_source', `${from} is missing migrations ${missing.join(', ')}: run \`colloquy migrate\` on it first (COLLOQUY_DATABASE_URL=${from})`);
}

/** The source's tables, each after the tables it references. */
function copyOrder(source: Database.Database): string[] {
  const names = (source.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_migrations' ORDER BY name`).all() as { name: string }[]).map(
    (r) => r.name,
  );
  const refs = new Map(names.map((n) => [n, (source.prepare('SELECT DISTINCT "table" AS t FROM pragma_foreign_key_list(?)').all(n) as { t: string }[]).map((r) => r.t).filter((t) => t !== n)]));
  const order: string[] = [];
  const visit = (n: string, path: readonly string[]) => {
    if (order.includes(n)) return;
    if (path.includes(n)) throw new StoreError('copy_source', `Tables reference each other in a cycle (${[...path, n].join(' → ')})`);
    for (const r of refs.get(n) ?? []) visit(r, [...path, n]);
    order.push(n);
  };
  for (const n of names) visit(n, []);
  return order;
}

/** Locks the target's tables and refuses unless every one of them is empty. */
async function prepareTarget(q: Queryable, tables: readonly string[], to: string): Promise<void> {
  const { rows } = await q.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_migrations'`,
  );
  const target = rows.map((r) => r.table_name);
  const absent = tables.filter((t) => !target.includes(t));
  if (absent.length) throw new StoreError('copy_target', `${redactUrl(to)} has no table ${absent.join(', ')}`);
  await q.query(`LOCK TABLE ${target.map(ident).join(', ')} IN ACCESS EXCLUSIVE MODE`);
  const filled: string[] = [];
  for (const t of target) if ((await q.query(`SELECT 1 FROM ${ident(t)} LIMIT 1`)).rows.length) filled.push(t);
  if (filled.length) throw new StoreError('copy_target_not_empty', `${redactUrl(to)} is not empty (rows in ${filled.join(', ')}): copy only into a new database`);
}

/** Copies one table's rows in id order, then moves its identity sequence past the highest id. */
async function copyTable(source: Database.Database, q: Queryable, table: string, batchSize: number): Promise<number> {
  const columns = (source.prepare('SELECT name FROM pragma_table_info(?) ORDER BY cid').all(table) as { name: string }[]).map((r) => r.name);
  const targetColumns = (await q.query<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, [table])).rows.map(
    (r) => r.column_name,
  );
  const extra = columns.filter((c) => !targetColumns.includes(c));
  if (extra.length) throw new StoreError('copy_target', `Table ${table} of the target has no column ${extra.join(', ')}`);
  const insert = (n: number) =>
    `INSERT INTO ${ident(table)} (${columns.map(ident).join(', ')}) VALUES ${Array.from({ length: n }, (_, r) => `(${columns.map((_c, i) => `$${r * columns.length + i + 1}`).join(', ')})`).join(', ')}`;
  let count = 0;
  let batch: unknown[][] = [];
  const flush = async () => {
    if (!batch.length) return;
    await q.query(insert(batch.length), batch.flat());
    count += batch.length;
    batch = [];
  };
  for (const row of source
    .prepare(`SELECT ${columns.map(ident).join(', ')} FROM ${ident(table)} ORDER BY rowid`)
    .raw()
    .iterate() as IterableIterator<unknown[]>) {
    batch.push(row);
    if (batch.length >= batchSize) await flush();
  }
  await flush();
  if (targetColumns.includes('id')) {
    await q.query(
      `SELECT setval(pg_get_serial_sequence($1, 'id'), COALESCE((SELECT MAX(id) FROM ${ident(table)}), 0) + 1, false)
      WHERE pg_get_serial_sequence($1, 'id') IS NOT NULL`,
      [table],
    );
  }
  return count;
}

/** A quoted SQL identifier. */
function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
