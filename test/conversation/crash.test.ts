/** A process killed (SIGKILL) mid-way loses nothing: the next process finishes what it left. */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/conversation/clock.js';
import { Runtime, createHttpAdapter } from '../../src/entries/server.js';
import { openStore } from '../../src/store/open.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, type RunningSandbox } from '../../src/sandbox/index.js';
import counterBot from '../fixtures/counter-bot.js';
import { ENGINES, freshDatabase, holdingSandbox, killHard, startCrashChild, type CrashChild } from './helpers.js';
import { rowsAt as rows } from '../support/rows.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';

const tmp = tempDir();
let sb: RunningSandbox;
let releaseAll: () => void = () => {};
let child: ChildProcess | undefined;

beforeAll(async () => {
  // Latency faults sleep until released, so the test can let a held request go when it is done.
  ({ sb, releaseAll } = await holdingSandbox());
});
const recovered: Runtime[] = [];
afterEach(async () => {
  child?.kill('SIGKILL');
  // A test that failed half-way leaves its runtime sending; the next test's faults are not for it.
  await Promise.all(recovered.splice(0).map((r) => r.stop()));
});
afterAll(async () => {
  releaseAll();
  await sb.close();
  tmp.remove();
});

function startChild(db: string, env: Record<string, string>): CrashChild {
  const c = startCrashChild(db, sb.url, env);
  child = c.proc;
  return c;
}

async function recover(db: string, until: () => boolean): Promise<Runtime> {
  const store = await openStore(db);
  const adapter = createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET });
  const runtime = new Runtime({ store, adapter, bots: [counterBot], sender: SANDBOX_SENDER, clock: systemClock });
  await runtime.start();
  await eventually(until, { timeoutMs: 15_000, intervalMs: 25, what: 'the restarted process finished the work' });
  await runtime.idle();
  recovered.push(runtime);
  return runtime;
}

const texts = (user: string) => sb.sandbox.messagesTo(user).map((m) => (m.channel === 'sms' ? m.text : '?'));

describe.each(ENGINES)('crash safety on %s', (engine) => {
  it('killed between the inbox commit and the turn: the turn runs after restart, once', async () => {
    const db = await freshDatabase(engine, tmp.dir, `crash-1-${engine}.db`);
    const user = engine === 'sqlite' ? '5215500001001' : '5215500091001'; // one sandbox for both engines
    // The child's lease is short so the next process may resend its in-flight message soon (the hang blocks it).
    const c = startChild(db, { COLLOQUY_TEST_HANG: '1', LEASE_MS: '300' });
    await c.waitFor('ready');
    c.send({ id: 'wamid.c1', user, text: 'first' });
    await c.waitFor('committed wamid.c1');
    // The first reply is out before the turn that hangs: a send still in flight at the kill would go again.
    await eventually(() => expect(texts(user)).toEqual(['#1']));
    c.send({ id: 'wamid.c2', user, text: 'hang' });
    await c.waitFor('hanging');
    await killHard(c.proc);
    expect(await rows(db, `SELECT provider_id, state FROM inbox ORDER BY id`)).toEqual([
      { provider_id: 'wamid.c1', state: 'done' },
      { provider_id: 'wamid.c2', state: 'pending' },
    ]);
    const runtime = await recover(db, () => texts(user).length >= 2);
    const conv = (await runtime.store.conversations())[0]!;
    expect((conv.snapshot as { context: { seen: string[] } }).context.seen).toEqual(['first', 'hang']);
    expect(conv.version).toBe(2);
    expect(texts(user)).toEqual(['#1', '#2']);
  });

  it('killed between the turn commit and the send: the message is sent after restart', async () => {
    const db = await freshDatabase(engine, tmp.dir, `crash-2-${engine}.db`);
    const user = engine === 'sqlite' ? '5215500001002' : '5215500091002';
    sb.sandbox.faults.latency(60_000, { endpoint: 'sms', times: 1 });
    const c = startChild(db, { LEASE_MS: '300' });
    await c.waitFor('ready');
    c.send({ id: 'wamid.d1', user, text: 'hello' });
    await c.waitFor('committed wamid.d1');
    await eventually(async () => expect((await rows(db, `SELECT state FROM outbox`))[0]?.['state']).toBe('sending'), { timeoutMs: 10_000 });
    await killHard(c.proc);
    expect(await rows(db, `SELECT state, attempts FROM outbox`)).toEqual([{ state: 'sending', attempts: 1 }]);
    expect(texts(user)).toEqual([]); // the held request never got its answer
    await recover(db, () => texts(user).length >= 1);
    expect(texts(user)).toEqual(['#1']);
    expect(await rows(db, `SELECT state, attempts FROM outbox`)).toEqual([{ state: 'sent', attempts: 2 }]);
    expect(await rows(db, `SELECT version FROM conversations`)).toEqual([{ version: 1 }]);
  });
});
