/**
 * `colloquy agents add|list|remove|rotate` on both stores, through the CLI's main() (and once as a
 * real child process): the token printed once and kept only as its hash, clear errors with their
 * exit codes, and a removal that ends sessions and puts claims back in the queue.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { secretHash } from '../src/agent/sessions.js';
import { main } from '../src/cli/main.js';
import type { Io } from '../src/cli/io.js';
import { openStore } from '../src/store/open.js';
import { migrate, readMigrations } from '../src/store/sqlite/migrate.js';
import type { Store } from '../src/store/types.js';
import { PgDb } from '../src/store/postgres/db.js';
import { migratePg, readPgMigrations } from '../src/store/postgres/migrate.js';
import { DIALECTS, T0, tempDir, turn } from './store/helpers.js';
import { emptyDatabaseUrl } from './support/postgres.js';

function capture(json = false): Io & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
    json,
    stdout: () => out,
    stderr: () => err,
  };
}

/** Runs `colloquy agents …` against `db` through main(). */
async function agents(db: string, args: readonly string[], json = false) {
  const io = capture(json);
  const code = await main(['agents', ...args, '--db', db, ...(json ? ['--json'] : [])], io);
  return { code, out: io.stdout(), err: io.stderr() };
}

const tokenIn = (out: string) => /cq_agent_[A-Za-z0-9_-]{43}/.exec(out)?.[0];

/** Reads the database with a store of its own, closed after `read`. */
async function withStore<T>(db: string, read: (s: Store) => Promise<T>): Promise<T> {
  const s = await openStore({ url: db, migrate: false });
  try {
    return await read(s);
  } finally {
    await s.close();
  }
}

describe.each(DIALECTS)('colloquy agents ($name)', ({ name, fresh, open }) => {
  /** A migrated, empty database that outlives the store that made it. */
  async function database(): Promise<string> {
    const db = await fresh();
    await (await open(db)).close();
    return db;
  }

  it('add prints a token once and the database keeps only its hash; list shows agents; a taken name is refused', async () => {
    const db = await database();
    const added = await agents(db, ['add', 'ana']);
    expect(added.code).toBe(0);
    const token = tokenIn(added.out)!;
    expect(token).toBeDefined();
    expect(added.out).toContain('It will not be shown again');
    expect(added.out.split(token)).toHaveLength(2); // printed once
    expect(await withStore(db, (s) => s.agentByTokenHash(secretHash(token)))).toMatchObject({ name: 'ana' });

    const again = await agents(db, ['add', 'ana']);
    expect(again).toMatchObject({ code: 1, out: '' });
    expect(again.err).toBe('colloquy agents: there is already an agent "ana" (`colloquy agents rotate ana` gives it a new token)\n');

    const json = await agents(db, ['add', 'Bob Lee'], true);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out)).toEqual({ agent: 'Bob Lee', token: expect.stringMatching(/^cq_agent_/) });

    const listed = await agents(db, ['list']);
    expect(listed.code).toBe(0);
    expect(listed.out.split('\n')[0]).toMatch(/^NAME\s+CREATED\s+CLAIMS$/);
    expect(listed.out).toMatch(/^Bob Lee\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+0$/m);
    expect(listed.out).toMatch(/^ana\s+\d{4}-.*Z\s+0$/m);
  });

  it('rotate gives a new token (the old one and its sessions stop); remove ends sessions and claims', async () => {
    const db = await database();
    const first = tokenIn((await agents(db, ['add', 'ana'])).out)!;
    const handedOff = await withStore(db, async (s) => {
      await s.createAgentSession('session-hash', 'ana', 'csrf', T0, Date.now() + 3_600_000);
      const c = await s.commitTurn(turn({ handoff: { open: { timeoutMs: 60_000 } } }));
      await s.claimHandoff(c.conversationId, 'ana', { now: T0, notify: false, via: 'token' });
      return c.conversationId;
    });
    expect((await agents(db, ['list'])).out).toMatch(/^ana\s+\S+\s+1$/m);

    const rotated = await agents(db, ['rotate', 'ana']);
    expect(rotated.code).toBe(0);
    const second = tokenIn(rotated.out)!;
    expect(second).not.toBe(first);
    expect(rotated.out).toContain('It will not be shown again');
    await withStore(db, async (s) => {
      expect(await s.agentByTokenHash(secretHash(first))).toBeUndefined();
      expect(await s.agentByTokenHash(secretHash(second))).toMatchObject({ name: 'ana' });
      expect(await s.agentSession('session-hash', Date.now())).toBeUndefined();
      await s.createAgentSession('another', 'ana', 'csrf', Date.now(), Date.now() + 3_600_000);
    });

    const removed = await agents(db, ['remove', 'ana']);
    expect(removed).toMatchObject({ code: 0, err: '' });
    expect(removed.out).toBe('Removed agent "ana": its token no longer works, 1 inbox session ended, 1 claimed conversation back in the queue.\n');
    await withStore(db, async (s) => {
      expect(await s.agents()).toEqual([]);
      expect(await s.openHandoff(handedOff)).toMatchObject({ state: 'waiting' });
      expect((await s.handoffLog(handedOff)).map((e) => [e.action, e.agent, e.text])).toEqual([
        ['claim', 'ana', null],
        ['claim_expired', 'ana', 'agent_removed'],
      ]);
    });
    expect((await agents(db, ['list'])).out).toBe('No agents. Add one with `colloquy agents add NAME`.\n');
  });

  it('refuses a missing agent (exit 1) and bad usage or names (exit 2), naming the problem', async () => {
    const db = await database();
    for (const sub of ['remove', 'rotate']) {
      const r = await agents(db, [sub, 'nobody']);
      expect(r).toMatchObject({ code: 1, out: '' });
      expect(r.err).toBe('colloquy agents: there is no agent "nobody" (`colloquy agents list` shows them)\n');
    }
    const cases: [readonly string[], RegExp][] = [
      [[], /usage: colloquy agents add NAME/],
      [['fire', 'ana'], /unknown subcommand "fire"/],
      [['add'], /agents add takes one agent name/],
      [['add', 'a', 'b'], /agents add takes one agent name/],
      [['list', 'a'], /agents list takes no name/],
      [['add', 'x'.repeat(65)], /the agent's name must be at most 64 characters \(got 65\)/],
      [['add', ' ana'], /the agent's name must not begin or end with a space/],
      [['add', 'a\u0007b'], /the agent's name must not contain control characters/],
      [['add', '   '], /the agent's name must not be empty/],
    ];
    for (const [args, message] of cases) {
      const r = await agents(db, args);
      expect([r.code, r.err], JSON.stringify(args)).toEqual([2, expect.stringMatching(message)]);
    }
    expect(await withStore(db, (s) => s.agents())).toEqual([]);
    if (name === 'sqlite') {
      const missing = join(tempDir(), 'none.db');
      const r = await agents(missing, ['list']);
      expect([r.code, r.err]).toEqual([1, expect.stringContaining(`there is no database at ${missing}`)]);
      expect(existsSync(missing)).toBe(false); // nothing created
    }
  });
});

describe('colloquy agents (before the agents migration)', () => {
  it('PostgreSQL: says to migrate first', async () => {
    const url = await emptyDatabaseUrl();
    const db = new PgDb({ url, max: 1 });
    try {
      await migratePg(
        db,
        readPgMigrations().filter((f) => f.name < '0016'),
      );
    } finally {
      await db.end();
    }
    const r = await agents(url, ['add', 'ana']);
    expect([r.code, r.err]).toEqual([1, expect.stringMatching(/^colloquy agents: the database at postgres.* has no agents table: run `colloquy migrate` first\n$/)]);
  });

  it('SQLite: says to migrate first, naming the migrations', async () => {
    const Database = (await import('better-sqlite3')).default;
    const file = join(tempDir(), 'old.db');
    const d = new Database(file);
    migrate(
      d,
      readMigrations().filter((f) => f.name < '0016'),
    );
    d.close();
    const r = await agents(file, ['add', 'ana']);
    expect([r.code, r.err]).toEqual([1, `colloquy agents: the database at ${file} is missing migrations 0016_agents.sql, 0017_handoff_claims.sql: run \`colloquy migrate\` first\n`]);
  });
});

describe('colloquy agents (a child process)', () => {
  it('prints the token on stdout and exits 0; a second add exits 1 with one line on stderr', async () => {
    const db = join(tempDir(), 'colloquy.db');
    await (await openStore(db)).close();
    const run = (args: readonly string[]) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--conditions=colloquy-source', 'bin/colloquy.js', 'agents', ...args, '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (b: Buffer) => (out += b.toString()));
        child.stderr.on('data', (b: Buffer) => (err += b.toString()));
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, out, err }));
      });
    const added = await run(['add', 'ana']);
    expect([added.code, added.err]).toEqual([0, '']);
    expect(tokenIn(added.out)).toBeDefined();
    const again = await run(['add', 'ana']);
    expect([again.code, again.out, again.err]).toEqual([1, '', 'colloquy agents: there is already an agent "ana" (`colloquy agents rotate ana` gives it a new token)\n']);
  });
});
