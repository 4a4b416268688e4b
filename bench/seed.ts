/**
 * Seeds a SQLite store with many stored conversations, fast: the rows of one real conversation
 * (made by Colloquy itself, so every column of every migration is filled as the hot path fills it)
 * are copied `n` times with SQL alone (`INSERT … SELECT` over a recursive counter), in one
 * transaction, with the tables' indexes dropped during the insert and rebuilt after it.
 *
 * Each copy is its own user: the user number is replaced inside every text column (snapshots,
 * events, raw payloads, requests), unique keys (inbound provider ids, flow tokens, provider message
 * ids) get a suffix, and timestamps are moved. One conversation in `activeEvery` stays active (last
 * activity in the past hour, its timers due in over an hour, so none fires during the bench); the
 * others are expired between 2 and 180 days ago, their timers gone, as a store that has run for
 * months looks.
 */
import Database from 'better-sqlite3';

/** The tables copied per conversation, in insertion order (parents first). */
const TABLES = ['conversations', 'inbox', 'outbox', 'timers'] as const;
type Table = (typeof TABLES)[number];
type Row = Record<string, unknown>;

/** Timestamp columns (epoch ms), moved with the copy's age; any other column is copied as it is. */
const TIMES: Record<Table, readonly string[]> = {
  conversations: ['created_at', 'updated_at', 'last_activity_at', 'ended_at'],
  inbox: ['received_at', 'processed_at'],
  outbox: ['next_attempt_at', 'lease_until', 'created_at', 'sent_at'],
  timers: [],
};
/** Text columns that must stay unique (or should, for realistic index lookups): suffixed with the copy's number. */
const UNIQUE: Record<Table, readonly string[]> = {
  conversations: ['flow_token'],
  inbox: ['provider_id'],
  outbox: ['provider_id', 'claim'],
  timers: [],
};

/** What {@link seedConversations} did. */
export interface SeedReport {
  readonly conversations: number;
  readonly active: number;
  readonly rows: Record<string, number>;
  readonly ms: number;
}

/**
 * Replaces the conversations of the store at `file` (closed by every server) with `n` copies of
 * its conversation `templateId` and that conversation's inbox, outbox and timer rows.
 */
export function seedConversations(file: string, templateId: number, n: number, opts: { activeEvery?: number; userPrefix?: number; now?: number } = {}): SeedReport {
  const started = Date.now();
  const every = opts.activeEvery ?? 100;
  const prefix = opts.userPrefix ?? 4_915_700_000_000;
  const now = opts.now ?? Date.now();
  const db = new Database(file);
  try {
    db.pragma('journal_mode = DELETE'); // one big transaction: a rollback journal is cheaper than a WAL of it
    db.pragma('synchronous = OFF');
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -262144'); // 256 MiB
    const conv = db.prepare('SELECT * FROM conversations WHERE id = ?').get(templateId) as Row | undefined;
    if (conv === undefined) throw new Error(`seed: no conversation ${templateId} in ${file}`);
    const rows: Record<Table, Row[]> = {
      conversations: [conv],
      inbox: db.prepare('SELECT * FROM inbox WHERE conversation_id = ? ORDER BY id').all(templateId) as Row[],
      outbox: db.prepare('SELECT * FROM outbox WHERE conversation_id = ? ORDER BY id').all(templateId) as Row[],
      timers: db.prepare('SELECT * FROM timers WHERE conversation_id = ? ORDER BY id').all(templateId) as Row[],
    };
    const user = String(conv['user_number']);
    const created = Number(conv['created_at']);
    const indexes = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${TABLES.map(() => '?').join(', ')})`).all(...TABLES) as {
      name: string;
      sql: string;
    }[];
    const counts: Record<string, number> = {};
    db.transaction(() => {
      for (const t of [...TABLES].reverse()) db.prepare(`DELETE FROM ${t}`).run();
      db.prepare(`DELETE FROM sqlite_sequence WHERE name IN (${TABLES.map(() => '?').join(', ')})`).run(...TABLES);
      for (const ix of indexes) db.prepare(`DROP INDEX ${quote(ix.name)}`).run();
      for (const table of TABLES) {
        counts[table] = 0;
        for (const [j, row] of rows[table].entries()) {
          const { sql, params } = copySql(table, row, j, rows, { user, created, every, prefix, now, n });
          counts[table] += db.prepare(sql).run(params).changes;
        }
      }
      for (const ix of indexes) db.prepare(ix.sql).run();
    })();
    db.pragma('journal_mode = WAL');
    db.prepare('ANALYZE').run();
    return { conversations: n, active: Math.floor(n / every), rows: counts, ms: Date.now() - started };
  } finally {
    db.close();
  }
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

interface Ctx {
  user: string;
  created: number;
  every: number;
  prefix: number;
  now: number;
  n: number;
}

/** `INSERT INTO table (…) WITH RECURSIVE seq(i) … SELECT …` making the j-th row of each copy. */
function copySql(table: Table, row: Row, j: number, rows: Record<Table, Row[]>, c: Ctx): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { n: c.n, every: c.every, prefix: c.prefix, user: c.user, created: c.created, now: c.now };
  const active = '(i % $every = 0)';
  // The copy's age: active ones were last busy 1–60 min ago, the others ended 2–180 days ago.
  const base = `(CASE WHEN ${active} THEN $now - 60000 - (i * 7919) % 3540000 ELSE $now - 172800000 - (i * 7919) % 15379200000 END)`;
  const userOf = 'CAST($prefix + i AS TEXT)';
  const idOf = (t: Table, k: number) => `((i - 1) * ${rows[t].length} + ${k + 1})`;
  const exprs = Object.keys(row).map((col) => {
    const v = row[col];
    const p = `c_${col}`;
    params[p] = v;
    const ref = `$${p}`;
    if (col === 'id') return table === 'conversations' ? 'i' : idOf(table, j);
    if (col === 'conversation_id') return 'i';
    if (col === 'inbox_id' && v !== null) {
      const k = rows.inbox.findIndex((r) => r['id'] === v);
      return k < 0 ? 'NULL' : idOf('inbox', k);
    }
    if (col === 'fallback_of' && v !== null) {
      const k = rows.outbox.findIndex((r) => r['id'] === v);
      return k < 0 ? 'NULL' : idOf('outbox', k);
    }
    if (col === 'user_number') return userOf;
    if (table === 'conversations' && col === 'status') return `CASE WHEN ${active} THEN 'active' ELSE 'expired' END`;
    if (table === 'conversations' && col === 'ended_at') return `CASE WHEN ${active} THEN NULL ELSE ${base} + 1800000 END`;
    if (table === 'timers' && col === 'fire_at') return `$now + 3600000 + (i * 7919) % 600000`;
    if (v === null) return 'NULL';
    if (TIMES[table].includes(col)) return `${base} + (${ref} - $created)`;
    if (UNIQUE[table].includes(col)) return `${ref} || '.' || i`;
    if (typeof v === 'string' && v.includes(c.user)) return `replace(${ref}, $user, ${userOf})`;
    return ref;
  });
  // Expired conversations have no timers left.
  const where = table === 'timers' ? `WHERE ${active}` : '';
  const sql = `INSERT INTO ${table} (${Object.keys(row).map(quote).join(', ')})
    WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < $n)
    SELECT ${exprs.join(', ')} FROM seq ${where}`;
  return { sql, params: Object.fromEntries(Object.entries(params).filter(([k]) => sql.includes(`$${k}`))) };
}
