/**
 * The SQLite store's group commit, on real files watched from a second connection: the writes
 * issued in one turn of the event loop commit in one transaction, all or nothing and in the order
 * they were issued; one that throws fails alone; a locked database holds them all, then commits
 * them together (or gives up on each once its budget is spent).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError, VersionConflictError } from '../../src/errors.js';
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/store.js';
import { ALICE, BOB, inbound, tempDir, text, turn } from './helpers.js';
import { eventually } from '../support/eventually.js';

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

function store(o: Partial<SqliteStoreOptions> = {}): { store: SqliteStore; file: string; other: Database.Database } {
  const file = join(tempDir(), 'group.db');
  const s = openSqliteStore({ path: file, ...o });
  const other = new Database(file);
  open.push(s, other);
  return { store: s, file, other };
}

const count = (db: Database.Database, table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

/** Another connection holding the write lock, as another process would. */
function lock(db: Database.Database): () => void {
  db.exec('BEGIN IMMEDIATE');
  return () => db.exec('COMMIT');
}

describe('the SQLite group commit', () => {
  it('commits the writes issued in one tick in one transaction, in the order they were issued', async () => {
    // No time bound: on a loaded machine 30 writes can outlast the default 2 ms and split the group.
    const { store: s, other } = store({ groupCommit: { maxFlushMs: 60_000 } });
    const before = s.stats().commits;
    const pending = Array.from({ length: 30 }, (_, k) => s.addInbound(inbound({ providerId: `wamid.g${k}` })));
    expect(count(other, 'inbox')).toBe(0); // nothing is written until the flush
    const results = await Promise.all(pending);
    expect(count(other, 'inbox')).toBe(30);
    expect(results.map((r) => r.id)).toEqual(Array.from({ length: 30 }, (_, k) => k + 1));
    const stats = s.stats();
    expect(stats.commits - before).toBe(1);
    expect(stats.maxOpsPerCommit).toBe(30);
    expect(stats.methods['addInbound']?.calls).toBe(30);
  });

  it('resolves a write only once its commit is visible to another connection', async () => {
    const { store: s, other } = store();
    const seen: number[] = [];
    const writes = [s.addInbound(inbound()), s.commitTurn(turn({ outbox: [text('hi')] }))];
    for (const w of writes) void w.then(() => seen.push(count(other, 'inbox') + count(other, 'outbox')));
    await Promise.all(writes);
    expect(seen).toEqual([2, 2]);
  });

  it('a write that throws rolls back alone and rejects alone; the others in its transaction commit', async () => {
    const { store: s, other } = store();
    const consumed = await s.addInbound(inbound({ providerId: 'wamid.consumed' }));
    await s.commitTurn(turn({ inboxId: consumed.id }));
    const before = s.stats();
    const first = s.addInbound(inbound({ providerId: 'wamid.first' }));
    // Inserts Bob's conversation and its outbox row, then finds the inbound consumed: all undone.
    const conflict = s.commitTurn(turn({ key: BOB, inboxId: consumed.id, outbox: [text('never')] }));
    const stale = s.commitTurn(turn({ conversationId: 1, expectedVersion: 7 }));
    const last = s.commitTurn(turn({ conversationId: 1, expectedVersion: 1, outbox: [text('kept')] }));
    const outcomes = await Promise.allSettled([first, conflict, stale, last]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
    expect((outcomes[2] as PromiseRejectedResult).reason).toBeInstanceOf(VersionConflictError);
    expect(other.prepare('SELECT user_number, version FROM conversations').all()).toEqual([{ user_number: ALICE.user, version: 2 }]);
    expect(other.prepare('SELECT message FROM outbox').all()).toEqual([{ message: JSON.stringify(text('kept').message) }]);
    const after = s.stats();
    expect(after.commits - before.commits).toBe(1);
    expect(after.failedOps - before.failedOps).toBe(2);
  });

  it('a write issued while a commit settles goes into the next transaction', async () => {
    const { store: s } = store();
    const before = s.stats().commits;
    const second = s.addInbound(inbound()).then(() => s.addInbound(inbound()));
    await second;
    expect(s.stats().commits - before).toBe(2);
  });

  it('bounds a flush: past its cap the rest commits in the next one', async () => {
    const { store: s, other } = store({ groupCommit: { maxOps: 4 } });
    const before = s.stats().commits;
    await Promise.all(Array.from({ length: 10 }, () => s.addInbound(inbound())));
    expect(count(other, 'inbox')).toBe(10);
    // At least ceil(10 / 4) flushes; a loaded machine may split them further (a flush can start before the last write is queued).
    expect(s.stats().commits - before).toBeGreaterThanOrEqual(3);
    expect(s.stats().maxOpsPerCommit).toBe(4);
  });

  it('holds every queued write while another connection has the write lock, then commits them together', async () => {
    const { store: s, other } = store({ busyRetryMs: 10_000 });
    const release = lock(other);
    const before = s.stats();
    const pending = Promise.all(Array.from({ length: 10 }, () => s.addInbound(inbound())));
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    // The flush met the lock and was tried again, with the event loop free between tries.
    await eventually(() => expect(s.stats().busyRetries).toBeGreaterThanOrEqual(before.busyRetries + 3), { what: 'a flush held by the lock' });
    expect(s.stats().queued).toBe(10);
    expect(count(other, 'inbox')).toBe(0);
    release();
    const results = await pending;
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(0); // the event loop ran while the writes waited
    expect(results.map((r) => r.duplicate)).toEqual(Array(10).fill(false));
    expect(count(other, 'inbox')).toBe(10);
    const after = s.stats();
    expect(after.commits - before.commits).toBe(1);
    expect(after.busyRetries).toBeGreaterThan(before.busyRetries);
  });

  it('gives up on each queued write with StoreUnavailableError once its budget is spent, storing none', async () => {
    const { store: s, other } = store({ busyRetryMs: 60 });
    const release = lock(other);
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => s.addInbound(inbound())));
    release();
    for (const o of outcomes) expect((o as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    expect(count(other, 'inbox')).toBe(0);
    expect(s.stats()).toMatchObject({ unavailable: 5, queued: 0 });
    expect((await s.addInbound(inbound())).id).toBe(1); // and the store goes on once it is free
  });

  it('close() commits what is still queued', async () => {
    const file = join(tempDir(), 'drain.db');
    const s = openSqliteStore(file);
    const pending = s.addInbound(inbound({ providerId: 'wamid.last' }));
    await s.close();
    expect((await pending).id).toBe(1);
    const db = new Database(file, { readonly: true });
    expect(count(db, 'inbox')).toBe(1);
    db.close();
  });

  it('a process killed mid-flush keeps every write whose promise resolved', async () => {
    const file = join(tempDir(), 'killed.db');
    openSqliteStore(file).db.close(); // migrated before the child starts
    const script = `
      import { openSqliteStore } from './src/store/sqlite/store.ts';
      const s = openSqliteStore(${JSON.stringify(file)});
      for (let k = 0; ; k++) {
        const batch = Array.from({ length: 50 }, (_, i) => s.addInbound({ providerId: 'wamid.k' + k + '.' + i, botId: 'b', user: '1', source: 'whatsapp', event: { type: 'text', text: 'hi' }, receivedAt: 1 })
          .then((r) => process.stdout.write(r.id + '\\n')));
        if (k % 4 === 3) await Promise.all(batch);
      }
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    const acknowledged: number[] = [];
    let buffer = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        acknowledged.push(...lines.map(Number));
        if (acknowledged.length >= 2_000 && child.exitCode === null) child.kill('SIGKILL');
      });
      child.on('exit', () => resolve());
    });
    const db = new Database(file, { readonly: true });
    const stored = new Set((db.prepare('SELECT id FROM inbox').all() as { id: number }[]).map((r) => r.id));
    db.close();
    expect(acknowledged.length).toBeGreaterThanOrEqual(2_000);
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
  });
});
