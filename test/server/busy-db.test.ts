/**
 * Another process holding the database's write lock: the server keeps answering, `/healthz` says
 * the database is busy, webhooks get a 503 to deliver again (never a 500), and all is well after.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import orderBot from '../fixtures/order-bot.js';
import { tempDir } from '../support/temp.js';

const { dir, remove } = tempDir('colloquy-busy-server-');
let server: RunningServer | undefined;
let locker: ChildProcess | undefined;
afterEach(async () => {
  locker?.kill('SIGKILL');
  await server?.close();
  server = undefined;
});
afterAll(remove);

/** A separate process that takes the write lock and holds it until its stdin closes. */
function holdLock(file: string): Promise<ChildProcess> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.on('end', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
    process.stdin.resume();`;
  const proc = spawn(process.execPath, ['-e', script, file], { stdio: ['pipe', 'pipe', 'inherit'], cwd: process.cwd() });
  locker = proc;
  return new Promise((resolve, reject) => {
    proc.stdout!.once('data', () => resolve(proc));
    proc.once('error', reject);
  });
}
const release = (proc: ChildProcess) =>
  new Promise((r) => {
    proc.once('exit', r);
    proc.stdin!.end();
  });

const post = (url: string, id: string) =>
  fetch(`${url}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(webhookPayload({ messages: [textMessage({ from: '5215512345678', text: 'hi', id })] })),
  });

describe('a database locked by another process', () => {
  it('keeps the server answering: /healthz degraded, webhooks 503, then back to normal', async () => {
    const db = join(dir, 'locked.db');
    const store = openSqliteStore({ path: db, busyRetryMs: 300 });
    const config = { ...loadConfig({}), port: 0, db, logLevel: 'silent' as const };
    server = await startServer({ bots: [orderBot], config, store });
    const proc = await holdLock(db);

    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const body = (await health.json()) as { ok: boolean; status: string; store: { busy: boolean; reason: string } };
    expect(body).toMatchObject({ ok: true, status: 'degraded', store: { busy: true } });
    expect(body.store.reason).toMatch(/locked/);

    const refused = await post(server.url, 'wamid.locked1');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('store_unavailable');
    expect(await server.metrics.render()).toMatch(/colloquy_store_busy 1/);

    await release(proc);
    expect(await (await fetch(`${server.url}/healthz`)).json()).toMatchObject({ ok: true, status: 'ok', store: { ok: true } });
    expect((await post(server.url, 'wamid.locked1')).status).toBe(200);
    await server.runtime.idle();
    expect((await server.store.conversations()).length).toBe(1);
  });
});

describe('GET /metrics on a SQLite store', () => {
  it('shows the group commit: fewer commits than writes when webhooks arrive together', async () => {
    const db = join(dir, 'grouped.db');
    const config = { ...loadConfig({}), port: 0, db, logLevel: 'silent' as const };
    server = await startServer({ bots: [orderBot], config });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(server!.url, `wamid.group${i}`)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    await server.runtime.idle();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    expect(gauge('colloquy_store_writes')).toBeGreaterThan(gauge('colloquy_store_commits'));
    expect(gauge('colloquy_store_commits')).toBeGreaterThan(0);
    expect(gauge('colloquy_store_writes_queued')).toBe(0);
    expect(text).toMatch(/^colloquy_store_checkpoints\{kind="passive"\} \d+$/m);
  });
});
