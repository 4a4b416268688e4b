/** `colloquy db copy --from <sqlite file> --to <postgres url>`: moves an existing SQLite database to PostgreSQL. */
import { ColloquyError } from '../errors.js';
import { copySqliteToPostgres } from '../store/copy.js';
import { describeStoreLocation, storeDialect } from '../store/open.js';
import type { Io } from './io.js';

const USAGE = 'usage: colloquy db copy --from <sqlite file> --to <postgres://… URL>';

/** Runs a `colloquy db` subcommand. */
export async function dbCommand(args: readonly string[], from: string | undefined, to: string | undefined, io: Io): Promise<number> {
  if (args[0] !== 'copy' || args.length !== 1) throw new ColloquyError('usage', USAGE);
  if (!from || !to) throw new ColloquyError('usage', `--from and --to are both required\n${USAGE}`);
  if (storeDialect(from) !== 'sqlite') throw new ColloquyError('usage', `--from must be a SQLite file, got a URL\n${USAGE}`);
  if (storeDialect(to) !== 'postgres') throw new ColloquyError('usage', `--to must be a postgres:// or postgresql:// URL\n${USAGE}`);
  const report = await copySqliteToPostgres(from, to);
  const where = describeStoreLocation(to);
  if (io.json) io.out(`${JSON.stringify({ from, to: where, tables: report.tables })}\n`);
  else {
    const total = report.tables.reduce((n, t) => n + t.rows, 0);
    io.out(`Copied ${total} rows from ${from} to ${where}: ${report.tables.map((t) => `${t.name} ${t.rows}`).join(', ')}\n`);
    io.out(`Set COLLOQUY_DATABASE_URL to that URL to serve from it.\n`);
  }
  return 0;
}
