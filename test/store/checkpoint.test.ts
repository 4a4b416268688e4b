/**
 * WAL checkpoints run in a worker thread, not in the COMMIT on the event loop: the store's
 * connection has SQLite's automatic checkpoint off, the worker keeps the WAL bounded under
 * sustained writes, and close() stops it and leaves the WAL empty.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { eventually, sleep } from '../support/eventually.js';
import { inbound, tempDir } from './helpers.js';

const open: SqliteStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

const walSize = (file: string) => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);

/** Waits until the store's checkpoint worker has opened its connection. */
async function started(s: SqliteStore): Promise<void> {
  await eventually(() => expect(s.stats().checkpoints.mode).not.toBe('starting'), { what: 'the checkpoint worker started', intervalMs: 5 });
}

describe('WAL checkpoints in a worker thread', () => {
  it('turns SQLite’s checkpoint on commit off for a file, and leaves :memory: as it was', async () => {
    const s = openSqliteStore(join(tempDir(), 'pragma.db'));
    const memory = openSqliteStore(':memory:');
    open.push(s, memory);
    expect(s.db.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    await started(s);
    expect(s.stats().checkpoints.mode).toBe('worker');
    expect(memory.stats().checkpoints.mode).toBe('off');
  });

  it('keeps the WAL bounded under sustained writes', async () => {
    const file = join(tempDir(), 'sustained.db');
    const walPages = 50;
    const s = openSqliteStore({ path: file, checkpoint: { walPages, intervalMs: 5 } });
    open.push(s);
    await started(s);
    const raw = { padding: 'x'.repeat(2_000) };
    let largest = 0;
    for (let round = 0; round < 300; round++) {
      await Promise.all(Array.from({ length: 20 }, () => s.addInbound(inbound({ raw }))));
      largest = Math.max(largest, walSize(file));
      await sleep(2);
    }
    // About 15 MB went through the WAL; without checkpoints it would hold all of it. The worker
    // runs beside the writes, not in them, so how far the WAL gets ahead of it depends on how much
    // CPU the machine gives its thread: 0.7-0.8 MB with both cores busy, 3.3 MB once during the
    // full suite with a bench beside it. The bound is twice that, still far below what would pile up.
    expect(statSync(file).size).toBeGreaterThan(10_000_000);
    expect(largest).toBeLessThan(6_000_000);
    const { checkpoints } = s.stats();
    expect(checkpoints.passive).toBeGreaterThan(0);
    expect(checkpoints.truncate).toBeGreaterThan(0);
    // Once the writes stop, the worker brings the WAL back under its limit, whatever size it reached.
    const limit = walPages * (s.db.pragma('page_size', { simple: true }) as number);
    await eventually(() => expect(walSize(file)).toBeLessThan(limit), { what: 'the WAL back under its limit', intervalMs: 5 });
  });

  it('close() stops the worker and leaves the WAL empty, even while another connection stays open', async () => {
    const file = join(tempDir(), 'close.db');
    const s = openSqliteStore(file);
    const other = new Database(file, { readonly: true });
    await Promise.all(Array.from({ length: 50 }, () => s.addInbound(inbound())));
    expect(walSize(file)).toBeGreaterThan(0);
    await s.close();
    expect(s.stats().checkpoints.mode).toBe('off');
    expect(walSize(file)).toBe(0);
    expect((other.prepare('SELECT COUNT(*) AS n FROM inbox').get() as { n: number }).n).toBe(50);
    other.close();
  });

  it('falls back to SQLite’s checkpoint on commit when the worker cannot open the file', async () => {
    const file = join(tempDir(), 'gone.db');
    const s = openSqliteStore(file);
    open.push(s);
    rmSync(file); // the store keeps its open file; the worker, starting, finds none
    await started(s);
    expect(s.stats().checkpoints.mode).toBe('fallback');
    expect(s.db.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    expect((await s.addInbound(inbound())).duplicate).toBe(false); // writes go on
  });

  it('never keeps the process alive: a process that leaves its store open exits', () => {
    const file = join(tempDir(), 'alive.db');
    const script = `
      import { openSqliteStore } from './src/store/sqlite/store.ts';
      const s = openSqliteStore(${JSON.stringify(file)});
      await s.addInbound({ providerId: 'wamid.alive', botId: 'b', user: '1', source: 'whatsapp', event: { type: 'text', text: 'hi' }, receivedAt: 1 });
      while (s.stats().checkpoints.mode === 'starting') await new Promise((resolve) => setTimeout(resolve, 5));
      console.log(s.stats().checkpoints.mode);
    `;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8', timeout: 20_000 });
    expect(child.status).toBe(0);
    expect(child.stdout.trim()).toBe('worker');
  });
});
