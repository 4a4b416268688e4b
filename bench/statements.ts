/**
 * Counting the statements a Colloquy process sends to its database (bench/roles.ts installs these
 * in its `colloquy` children, before the store opens): the figures behind `statements_per_message`.
 */

/**
 * Statements this process sent to its database: to PostgreSQL every query of every connection, to
 * SQLite (when asked for) every execution of a prepared statement on the main thread; BEGIN,
 * COMMIT and, on SQLite, each write's SAVEPOINT and RELEASE included.
 */
let statements = 0;
/** Of {@link statements} on SQLite, those that only frame the group commit: BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE. */
let framing = 0;

/** Counts every query a node-postgres client sends from now on. */
export async function countPgStatements(): Promise<void> {
  const pg = (await import('pg')).default;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    statements++;
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

/** The group commit's framing statements. */
const FRAMING = /^\s*(BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE)\b/i;

/**
 * Counts every statement better-sqlite3 runs in this thread from now on (its `run`, `get`, `all`,
 * `iterate` and `exec`): the SQLite store prepares every statement it runs, the group commit's
 * BEGIN, COMMIT, SAVEPOINT and RELEASE too. The WAL checkpoints run in a worker thread on a
 * connection of their own and are not counted.
 */
export async function countSqliteStatements(): Promise<void> {
  const Database = (await import('better-sqlite3')).default;
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, unknown>;
  probe.close();
  const framed = new WeakMap<object, boolean>();
  const isFraming = (stmt: object): boolean => {
    let f = framed.get(stmt);
    if (f === undefined) framed.set(stmt, (f = FRAMING.test((stmt as { source: string }).source)));
    return f;
  };
  const run = (fn: (...args: unknown[]) => unknown) =>
    function (this: object, ...args: unknown[]) {
      statements++;
      if (isFraming(this)) framing++;
      return fn.apply(this, args);
    };
  for (const name of ['run', 'get', 'all', 'iterate']) statement[name] = run(statement[name] as (...args: unknown[]) => unknown);
  const db = Database.prototype as unknown as Record<string, unknown>;
  const exec = db['exec'] as (...args: unknown[]) => unknown;
  db['exec'] = function (this: object, ...args: unknown[]) {
    statements++;
    return exec.apply(this, args);
  };
}

/** Statements counted so far, and of those the group commit's framing (SQLite only). */
export function statementCounts(): { statements: number; framing: number } {
  return { statements, framing };
}
