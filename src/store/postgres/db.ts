/**
 * A node-postgres pool as the PostgreSQL store uses it: BIGINT read as numbers, one call for a
 * statement and one for a transaction, and every failure that passes (a refused or dropped
 * connection, a failover, a serialization failure) turned into a {@link StoreUnavailableError}.
 */
import type pg from 'pg';
import { StoreError, StoreUnavailableError } from '../../errors.js';
import { pgDriver } from '../drivers.js';

export { isPostgresUrl, redactUrl } from '../location.js';

/**
 * A statement the server parses and plans once per connection and then only binds and runs: a hot
 * statement's text with a name (node-postgres' named prepared statements). The name must be unique
 * to the text.
 */
export interface PgStatement {
  readonly name: string;
  readonly text: string;
}

/** A named prepared statement; see {@link PgStatement}. */
export const prepared = (name: string, text: string): PgStatement => ({ name: `colloquy_${name}`, text });

/** Something that runs a statement: the pool, or a transaction's client. */
export interface Queryable {
  query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string | PgStatement, params?: readonly unknown[]): Promise<{ rows: R[]; rowCount: number | null }>;
}

/** Options of {@link PgDb}. */
export interface PgPoolOptions {
  /** A `postgres://` or `postgresql://` URL. */
  readonly url: string;
  /** Connections in the pool (default 10). */
  readonly max?: number;
  /** Application name shown in `pg_stat_activity` (default `colloquy`). */
  readonly applicationName?: string;
  /**
   * How long a statement waits for a lock another session holds before it fails with
   * StoreUnavailableError (`lock_timeout`, default 3 s, like the SQLite store's busy budget; 0 waits
   * forever). Claims never wait: they skip locked rows.
   */
  readonly lockTimeoutMs?: number;
}

const INT8 = 20;

/** BIGINT as a number: ids and epoch milliseconds fit easily; a value that does not is an error, not a silent rounding. */
function parseBigint(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new StoreError('bigint_range', `A BIGINT value ${text} is beyond JavaScript's safe integers`);
  return n;
}

// Per pool, not pg.types.setTypeParser: other users of pg in the same process keep their parsers.
const types = {
  getTypeParser: ((oid: number, format?: string) => (oid === INT8 && format !== 'binary' ? parseBigint : pgDriver().types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser,
};

/** SQLSTATE classes and codes that mean "try again later", not "this statement is wrong". */
const TRANSIENT_STATES = new Set(['40001', '40P01', '55P03', '57P01', '57P02', '57P03', '53300', '53400', '25006']);
const TRANSIENT_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Whether a pg error is one that passes. */
export function isTransient(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (code.startsWith('08') || TRANSIENT_STATES.has(code) || TRANSIENT_ERRNOS.has(code)) return true;
  const msg = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|Cannot use a pool after calling end/i.test(msg);
}

/** Turns a transient pg error into a StoreUnavailableError; other errors pass through. */
export function mapError(err: unknown): unknown {
  if (err instanceof StoreError || !isTransient(err)) return err;
  const code = (err as { code?: unknown }).code;
  return new StoreUnavailableError(typeof code === 'string' ? code : 'connection', `PostgreSQL is unavailable: ${(err as Error).message}`, { cause: err });
}

/** The pool and its two ways of running SQL. */
export class PgDb implements Queryable {
  readonly pool: pg.Pool;
  /** The database's URL, for a dedicated connection beside the pool (LISTEN needs one that stays open). */
  readonly url: string;

  constructor(o: PgPoolOptions) {
    this.url = o.url;
    this.pool = new (pgDriver().Pool)({
      connectionString: o.url,
      max: o.max ?? 10,
      // Connections stay open while idle (pg's default closes them after 10 s): after a lull,
      // reopening them all at once (a server process each, its statements prepared and its
      // functions compiled again) stalled the first acks by a quarter of a second.
      idleTimeoutMillis: 0,
      // ... without keeping a process alive that has nothing else to do.
      allowExitOnIdle: true,
      application_name: o.applicationName ?? 'colloquy',
      types,
      options: `-c lock_timeout=${Math.max(0, Math.round(o.lockTimeoutMs ?? 3_000))}`,
    });
    // An idle client losing its connection (a server restart) must not crash the process: the pool
    // drops it and the next query opens a new one.
    this.pool.on('error', () => undefined);
    this.pool.on('connect', (c) => {
      const pid = (c as unknown as { processID?: number }).processID;
      if (pid !== undefined) this.backends.add(pid);
    });
    this.pool.on('remove', (c) => this.backends.delete((c as unknown as { processID?: number }).processID ?? -1));
  }

  /** The server process ids of the pool's connections: a notification one of them sent is this process's own. */
  private readonly backends = new Set<number>();

  /** Whether a server process (a notification's sender) is one of this pool's connections. */
  ownsBackend(pid: number): boolean {
    return this.backends.has(pid);
  }

  /** Runs one statement (autocommit). */
  async query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string | PgStatement, params: readonly unknown[] = []): Promise<{ rows: R[]; rowCount: number | null }> {
    try {
      return await this.pool.query<R>(typeof sql === 'string' ? sql : { name: sql.name, text: sql.text }, params as unknown[]);
    } catch (err) {
      throw mapError(err);
    }
  }

  /** Runs `fn` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw mapError(err);
    }
    let broken: unknown;
    // A connection lost while checked out (a server restart between two statements) emits 'error'
    // on the client, which the pool only listens for while the client is idle: without a listener
    // here it would crash the process. The next statement fails, and the client is not reused.
    const lost = (err: Error) => {
      broken = err;
    };
    client.on('error', lost);
    try {
      await client.query('BEGIN');
      const result = await fn(client as unknown as Queryable);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: unknown) => {
        broken = e;
      });
      throw mapError(err);
    } finally {
      // A connection that failed to roll back, or was lost, is not returned to the pool for reuse.
      client.off('error', lost);
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  /** Ends the pool (idempotent). */
  async end(): Promise<void> {
    if (!this.pool.ended && !this.pool.ending) await this.pool.end();
  }
}

/** Whether an error is a unique-constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown })?.code === '23505';
}
