import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { MIGRATIONS_DIR, migrate, readMigrations, type MigrationFile } from '../../src/store/sqlite/migrate.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import { ALICE, WORKER, claimSends, inbound, nextPending, openSqlite as open, sent, T0, tempDir, text, turn } from './helpers.js';

const dbs: Database.Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
});

function db(path = ':memory:'): Database.Database {
  const d = new Database(path);
  dbs.push(d);
  return d;
}

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

function tables(d: Database.Database): string[] {
  return (d.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);
}

/** Raw rows of a table of a SQLite store. */
function rows(store: { db: Database.Database }, table: string): Record<string, unknown>[] {
  return store.db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<string, unknown>[];
}

function applied(d: Database.Database): { name: string; checksum: string; applied_at: number }[] {
  return d.prepare('SELECT name, checksum, applied_at FROM _migrations ORDER BY name').all() as { name: string; checksum: string; applied_at: number }[];
}

const A = 'CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT);\n';
// B and C only work after A: the order matters.
const B = "CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a (id));\nINSERT INTO a (x) VALUES ('from b');\n";
const C = "ALTER TABLE a ADD COLUMN y TEXT;\nUPDATE a SET y = 'from c';\n";

/** A migrations folder with the given files. */
function folder(files: Record<string, string>): string {
  const dir = tempDir();
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

/** Runs `fn` and returns what it threw. */
function thrown(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    return err as StoreError;
  }
  throw new Error('expected a StoreError, nothing was thrown');
}

describe('readMigrations', () => {
  it('reads NNNN_description.sql files in numeric order with their sha256, ignoring other files', () => {
    // Written out of order; 0010 must come after 0002.
    const dir = folder({ '0010_c.sql': C, '0002_b.sql': B, '0001_a.sql': A, 'README.md': '# not a migration', 'notes.txt': 'x' });
    const files = readMigrations(dir);
    expect(files).toEqual([
      { name: '0001_a.sql', sql: A, checksum: sha256(A) },
      { name: '0002_b.sql', sql: B, checksum: sha256(B) },
      { name: '0010_c.sql', sql: C, checksum: sha256(C) },
    ]);
  });

  it.each(['001_short.sql', '0001-dash.sql', '0001_Upper.sql', 'abcd_letters.sql', '0001.sql', '0001_.sql', '00001_five.sql'])('refuses a file named %s', (name) => {
    const dir = folder({ '0001_a.sql': A, [name]: 'SELECT 1;' });
    const err = thrown(() => readMigrations(dir));
    expect(err.code).toBe('migration_name');
    expect(err.message).toContain(name);
    expect(err.message).toContain('NNNN_description.sql');
  });

  it('defaults to the package migrations folder', () => {
    const files = readMigrations();
    expect(files.map((f) => f.name)).toContain('0001_initial.sql');
    expect(readMigrations(MIGRATIONS_DIR)).toEqual(files);
  });
});

describe('migrate', () => {
  it('applies pending files in order and records each name and checksum', () => {
    const d = db();
    const before = Date.now();
    const report = migrate(d, readMigrations(folder({ '0010_c.sql': C, '0001_a.sql': A, '0002_b.sql': B })));
    expect(report).toEqual({ applied: ['0001_a.sql', '0002_b.sql', '0010_c.sql'], alreadyApplied: [] });
    expect(tables(d)).toEqual(['_migrations', 'a', 'b']);
    expect(d.prepare('SELECT id, x, y FROM a').all()).toEqual([{ id: 1, x: 'from b', y: 'from c' }]);
    const recorded = applied(d);
    expect(recorded.map(({ name, checksum }) => ({ name, checksum }))).toEqual([
      { name: '0001_a.sql', checksum: sha256(A) },
      { name: '0002_b.sql', checksum: sha256(B) },
      { name: '0010_c.sql', checksum: sha256(C) },
    ]);
    for (const r of recorded) expect(r.applied_at).toBeGreaterThanOrEqual(before);
  });

  it('applies nothing on a second run', () => {
    const d = db();
    const dir = folder({ '0001_a.sql': A, '0002_b.sql': B });
    migrate(d, readMigrations(dir));
    const first = applied(d);
    d.prepare(`INSERT INTO a (x) VALUES ('kept')`).run();

    expect(migrate(d, readMigrations(dir))).toEqual({ applied: [], alreadyApplied: ['0001_a.sql', '0002_b.sql'] });
    expect(applied(d)).toEqual(first);
    // B's INSERT did not run again and the data is untouched.
    expect(d.prepare('SELECT x FROM a ORDER BY id').all()).toEqual([{ x: 'from b' }, { x: 'kept' }]);
  });

  it('applies only the new file when one is added later', () => {
    const d = db();
    const dir = folder({ '0001_a.sql': A, '0002_b.sql': B });
    migrate(d, readMigrations(dir));
    writeFileSync(join(dir, '0003_c.sql'), C);
    expect(migrate(d, readMigrations(dir))).toEqual({ applied: ['0003_c.sql'], alreadyApplied: ['0001_a.sql', '0002_b.sql'] });
    expect(applied(d).map((r) => r.name)).toEqual(['0001_a.sql', '0002_b.sql', '0003_c.sql']);
  });

  it('refuses to start when an applied file changed, naming it, and applies nothing', () => {
    const d = db();
    const dir = folder({ '0001_a.sql': A, '0002_b.sql': B });
    migrate(d, readMigrations(dir));
    const before = applied(d);
    writeFileSync(join(dir, '0002_b.sql'), `${B}-- an innocent comment\n`);
    writeFileSync(join(dir, '0003_c.sql'), C);

    const err = thrown(() => migrate(d, readMigrations(dir)));
    expect(err.code).toBe('migration_changed');
    expect(err.message).toContain('0002_b.sql');
    expect(err.message).toContain(sha256(B).slice(0, 12));
    expect(applied(d)).toEqual(before);
    expect(d.prepare(`SELECT name FROM pragma_table_info('a')`).all()).toEqual([{ name: 'id' }, { name: 'x' }]);
  });

  it('refuses to start when an applied file is missing, naming it', () => {
    const d = db();
    const dir = folder({ '0001_a.sql': A, '0002_b.sql': B });
    migrate(d, readMigrations(dir));
    rmSync(join(dir, '0001_a.sql'));
    writeFileSync(join(dir, '0003_c.sql'), C);

    const err = thrown(() => migrate(d, readMigrations(dir)));
    expect(err.code).toBe('migration_missing');
    expect(err.message).toContain('0001_a.sql');
    expect(applied(d).map((r) => r.name)).toEqual(['0001_a.sql', '0002_b.sql']);
  });

  it('rolls a failing migration back entirely, does not record it, and reports it', () => {
    const d = db();
    const bad = "CREATE TABLE p (x);\nCREATE TABLE q (y);\nINSERT INTO a (x) VALUES ('partial');\nINSERT INTO nope VALUES (1);\n";
    const dir = folder({ '0001_a.sql': A, '0002_bad.sql': bad, '0003_c.sql': C });

    const err = thrown(() => migrate(d, readMigrations(dir)));
    expect(err.code).toBe('migration_failed');
    expect(err.message).toContain('0002_bad.sql');
    expect(err.message).toContain('no such table: nope');
    expect((err.cause as Error).message).toContain('no such table: nope');
    // 0001 stays applied; nothing of 0002 is left; 0003 never ran.
    expect(tables(d)).toEqual(['_migrations', 'a']);
    expect(d.prepare('SELECT COUNT(*) AS n FROM a').get()).toEqual({ n: 0 });
    expect(applied(d).map((r) => r.name)).toEqual(['0001_a.sql']);

    // Fixed, it applies on the next start.
    writeFileSync(join(dir, '0002_bad.sql'), 'CREATE TABLE p (x);\n');
    expect(migrate(d, readMigrations(dir))).toEqual({ applied: ['0002_bad.sql', '0003_c.sql'], alreadyApplied: ['0001_a.sql'] });
  });

  it('rolls back a migration with a syntax error', () => {
    const d = db();
    const err = thrown(() => migrate(d, readMigrations(folder({ '0001_oops.sql': 'CREATE TABLE ok (x);\nCREATE TABEL broken (y);\n' }))));
    expect(err.code).toBe('migration_failed');
    expect(err.message).toContain('0001_oops.sql');
    expect(tables(d)).toEqual(['_migrations']);
    expect(applied(d)).toEqual([]);
  });

  it('skips a file another process applied after this one looked (two processes starting together)', () => {
    const dir = tempDir();
    const path = join(dir, 'race.db');
    const mine = db(path);
    const theirs = db(path);
    const files = readMigrations();
    let raced = false;
    // The other process migrates between our read of _migrations and our first write.
    const racing: MigrationFile[] = files.map((f) => ({
      get name() {
        if (!raced) {
          raced = true;
          migrate(theirs, files);
        }
        return f.name;
      },
      sql: f.sql,
      checksum: f.checksum,
    }));
    const names = files.map((f) => f.name);
    expect(migrate(mine, racing)).toEqual({ applied: [], alreadyApplied: names });
    expect(raced).toBe(true);
    expect(applied(mine).map((r) => r.name)).toEqual(names);
  });
});

describe('openSqliteStore', () => {
  it('applies the package migrations in order and records each checksum', () => {
    const store = open();
    const names = [
      '0001_initial.sql',
      '0002_outbox_claim_indexes.sql',
      '0003_outbox_claim_token.sql',
      '0004_user_number.sql',
      '0006_handoffs.sql',
      '0007_bot_versions.sql',
      '0008_lanes.sql',
      '0009_pg_commit_turn.sql',
      '0010_pg_commit_turn_slices.sql',
      '0011_lean_outbox_indexes.sql',
      '0012_idempotency_fingerprint.sql',
      '0013_work_kernel.sql',
      '0014_user_window.sql',
      '0015_flow_submits.sql',
      '0016_agents.sql',
      '0017_handoff_claims.sql',
    ];
    const sums = names.map((n) => sha256(readFileSync(join(MIGRATIONS_DIR, n), 'utf8')));
    expect(rows(store, '_migrations').map((r) => [r['name'], r['checksum']])).toEqual(names.map((n, i) => [n, sums[i]]));
    expect(tables(store.db)).toEqual([
      '_migrations',
      'agent_sessions',
      'agents',
      'conversations',
      'flow_submits',
      'handoff_events',
      'handoff_log',
      'handoffs',
      'inbox',
      'lanes',
      'outbox',
      'statuses',
      'timers',
    ]);
  });

  it('uses WAL mode on a file database, creating its folder', () => {
    const dir = tempDir();
    const store = open(join(dir, 'nested', 'deeper', 'colloquy.db'));
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(store.db.pragma('busy_timeout', { simple: true })).toBe(50); // short: a locked database is retried asynchronously
  });

  it('keeps an in-memory database in memory', () => {
    expect(open().db.pragma('journal_mode', { simple: true })).toBe('memory');
  });

  it('opens an existing file again without applying anything', async () => {
    const path = join(tempDir(), 'twice.db');
    const first = open(path);
    const recorded = rows(first, '_migrations');
    await first.close();
    const again = open(path);
    expect(rows(again, '_migrations')).toEqual(recorded);
  });
});

describe('0011_lean_outbox_indexes', () => {
  it('keeps what a database written before it answers, through the narrower indexes', async () => {
    const older = join(tempDir(), 'older');
    mkdirSync(older);
    // Every migration but 0011: today's statements need the columns later files add (0012…).
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => !f.startsWith('0011'))) copyFileSync(join(MIGRATIONS_DIR, f), join(older, f));
    const path = join(tempDir(), 'upgraded.db');
    const before = openSqliteStore({ path, migrationsDir: older, checkpoint: false });
    const { id: inboxId } = await before.addInbound(inbound());
    const { conversationId, outboxIds } = await before.commitTurn(turn({ inboxId, outbox: [text('one'), text('two')] }));
    await before.addInbound(inbound()); // pending: no conversation yet
    const [first] = await claimSends(before);
    await sent(before, first!, { state: 'sent', providerId: 'wamid.out1', httpStatus: 200 });
    const byProvider = await before.outboundByProviderId('wamid.out1');
    const transcript = await before.transcript(conversationId);
    await before.close();

    const after = openSqliteStore({ path, checkpoint: false });
    try {
      expect(applied(after.db).map((r) => r.name)).toContain('0011_lean_outbox_indexes.sql');
      expect(await after.outboundByProviderId('wamid.out1')).toEqual(byProvider);
      expect(byProvider?.id).toBe(outboxIds[0]);
      expect(await after.outboundByProviderId('wamid.none')).toBeUndefined();
      expect(await after.transcript(conversationId)).toEqual(transcript);
      expect(transcript.filter((e) => e.direction === 'in')).toHaveLength(1);
      expect(await nextPending(after, ALICE)).toMatchObject({ conversationId: null });
      const plan = (sql: string, ...args: unknown[]) => (after.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail).join('; ');
      expect(plan('SELECT * FROM outbox WHERE provider_id = ? ORDER BY id DESC LIMIT 1', 'x')).toContain('USING INDEX outbox_provider_id (provider_id=?)');
      expect(plan('SELECT * FROM inbox WHERE conversation_id = ? ORDER BY id', 1)).toContain('USING INDEX inbox_conversation (conversation_id=?)');
    } finally {
      await after.close();
    }
  });
});

describe('0013_work_kernel', () => {
  it('takes a send left `sending` by a version before owners as a lapsed claim, and looks up an owner by index', async () => {
    const older = join(tempDir(), 'older');
    mkdirSync(older);
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0013')) copyFileSync(join(MIGRATIONS_DIR, f), join(older, f));
    // Today's store cannot open that database (its statements name the new columns): the rows are
    // written as that version's dispatcher left them, claimed with its lease on the process clock.
    const path = join(tempDir(), 'upgraded.db');
    const db = new Database(path);
    migrate(db, readMigrations(older));
    db.prepare(`INSERT INTO conversations (bot_id, user_number, status, version, flow_token, channel, created_at, updated_at, last_activity_at)
      VALUES ('pizza', '+4915100000001', 'active', 1, 'ft', 'interactive', ?, ?, ?)`).run(T0, T0, T0);
    const row = db.prepare(`INSERT INTO outbox (conversation_id, bot_id, user_number, kind, message, channel, request, next_attempt_at, created_at, state, claim, attempts, lease_until)
      VALUES (1, 'pizza', '+4915100000001', 'text', '{}', 'interactive', '{}', ?, ?, ?, ?, ?, ?)`);
    const outboxIds = [row.run(T0, T0, 'sending', 'old-1', 1, T0 * 2).lastInsertRowid, row.run(T0, T0, 'pending', null, 0, null).lastInsertRowid].map(Number);
    db.close();

    const after = openSqliteStore({ path, checkpoint: false });
    try {
      expect(await after.claim({ ...WORKER, lapsed: false }, { kind: 'send', limit: 10, now: T0 })).toEqual([]);
      const [taken, ...rest] = await after.claim(WORKER, { kind: 'send', limit: 10, now: T0 });
      expect(rest).toEqual([]);
      expect(taken).toMatchObject({ id: outboxIds[0], state: 'sending', attempts: 2, resends: 1 });
      expect(await after.settleSend(taken!.id, 'old-1', { kind: 'sent', record: { state: 'sent' } }, T0)).toBe(false);
      const plan = (table: string) =>
        (after.db.prepare(`EXPLAIN QUERY PLAN UPDATE ${table} SET lease_until = 1 WHERE owner = ? AND state = 'sending'`).all('w') as { detail: string }[]).map((r) => r.detail).join('; ');
      expect(plan('outbox')).toContain('USING INDEX outbox_sending_owner (owner=?)');
      expect(plan('handoff_events')).toContain('USING INDEX handoff_events_sending_owner (owner=?)');
    } finally {
      await after.close();
    }
  });
});

describe('0016_agents and 0017_handoff_claims', () => {
  it('gives handoffs opened before them their own timeout (what their timer had, else 10 minutes) and claims that never expire', async () => {
    const older = join(tempDir(), 'older');
    mkdirSync(older);
    for (const f of readdirSync(MIGRATIONS_DIR).filter((f) => f < '0016')) copyFileSync(join(MIGRATIONS_DIR, f), join(older, f));
    const path = join(tempDir(), 'upgraded.db');
    const db = new Database(path);
    migrate(db, readMigrations(older));
    const conv = db.prepare(`INSERT INTO conversations (bot_id, user_number, status, version, flow_token, channel, created_at, updated_at, last_activity_at)
      VALUES ('pizza', ?, 'active', 1, ?, 'interactive', ?, ?, ?)`);
    const handoff = db.prepare(`INSERT INTO handoffs (conversation_id, bot_id, user_number, state, agent, timeout_at, started_at, claimed_at) VALUES (?, 'pizza', ?, ?, ?, ?, ?, ?)`);
    for (const [i, user] of ['+4915100000001', '+4915100000002'].entries()) conv.run(user, `ft${i}`, T0, T0, T0);
    handoff.run(1, '+4915100000001', 'waiting', null, T0 + 120_000, T0, null);
    handoff.run(2, '+4915100000002', 'claimed', 'ana', null, T0, T0 + 5);
    db.close();

    const after = openSqliteStore({ path, checkpoint: false });
    try {
      expect(rows(after, 'handoffs').map((r) => [r['id'], r['timeout_ms'], r['claim_idle_until']])).toEqual([
        [1, 120_000, null],
        [2, 600_000, null],
      ]);
      expect(await after.claim(WORKER, { kind: 'idle', limit: 10, now: T0 + 365 * 86_400_000 })).toEqual([]); // claimed before: never expires
      await after.claimHandoff(1, 'bob', { now: T0 + 10, notify: false, claimIdleMs: 1_000 });
      expect(await after.claim(WORKER, { kind: 'idle', limit: 10, now: T0 + 1_010 })).toMatchObject([{ id: 1, state: 'waiting', timeoutAt: T0 + 1_010 + 120_000 }]);
    } finally {
      await after.close();
    }
  });
});

describe('0016_agents on a database in use', () => {
  it("handoffs opened before it keep their timeout: a waiting one its timer's, a claimed one the default, given again when its claim goes back to the queue", async () => {
    const path = join(tempDir(), 'colloquy.db');
    const d = db(path);
    migrate(
      d,
      readMigrations().filter((f) => f.name < '0016'),
    );
    d.exec(`INSERT INTO conversations (bot_id, user_number, status, snapshot, state, version, flow_token, created_at, updated_at, last_activity_at)
      VALUES ('pizza', '+4915100000001', 'active', NULL, 'menu', 1, 'ft1', 0, 0, 0), ('pizza', '+4915100000002', 'active', NULL, 'menu', 1, 'ft2', 0, 0, 0)`);
    d.exec(`INSERT INTO handoffs (conversation_id, bot_id, user_number, state, timeout_at, started_at) VALUES (1, 'pizza', '+4915100000001', 'waiting', 90000, 1000)`);
    d.exec(`INSERT INTO handoffs (conversation_id, bot_id, user_number, state, agent, claimed_at, started_at) VALUES (2, 'pizza', '+4915100000002', 'claimed', 'ana', 5, 0)`);
    d.close();

    const after = openSqliteStore({ path, checkpoint: false });
    try {
      expect(after.db.prepare('SELECT id, timeout_ms FROM handoffs ORDER BY id').all()).toEqual([
        { id: 1, timeout_ms: 89_000 },
        { id: 2, timeout_ms: 600_000 },
      ]);
      await after.addAgent('ana', 'h', 0);
      expect(await after.removeAgent('ana', { now: 10_000, notify: false })).toEqual({ removed: true, sessions: 0, claims: 1 });
      expect(await after.openHandoff(2)).toMatchObject({ state: 'waiting', agent: 'ana', timeoutAt: 610_000 });
      expect((await after.timers(2))[0]).toMatchObject({ event: { type: 'handoff.timeout', waitedMs: 600_000 }, fireAt: 610_000 });
    } finally {
      await after.close();
    }
  });
});
