/** A runtime on the real sandbox, over real HTTP on 127.0.0.1, with a manual clock. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/conversation/clock.js';
import { Runtime, openSqliteStore, createHttpAdapter, type Bot, type SendAdapter } from '../../src/index.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import type { SqliteStore, SqliteStoreOptions } from '../../src/store/sqlite.js';
import type { DispatcherOptions } from '../../src/conversation/dispatcher.js';

export const USER = '5215512345678';

/** A temporary folder, removed by the returned function. */
export function tempDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-test-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function sandbox(): Promise<RunningSandbox> {
  return startSandbox({ port: 0 });
}

export function adapterFor(sb: RunningSandbox): SendAdapter {
  return createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
}

export interface World {
  readonly sb: RunningSandbox;
  readonly store: SqliteStore;
  readonly runtime: Runtime;
  readonly clock: ManualClock;
  readonly adapter: SendAdapter;
  /** Delivers an inbound from a user and waits for its turn and sends. */
  send(event: { type: string; [k: string]: unknown }, user?: string, bot?: string): Promise<void>;
  /** Stops the runtime and closes the store (the sandbox stays). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

let seq = 0;

export async function world(
  bots: readonly Bot[],
  o: { path?: string; sb?: RunningSandbox; clock?: ManualClock; dispatcher?: DispatcherOptions; store?: Partial<SqliteStoreOptions> } = {},
): Promise<World> {
  const sb = o.sb ?? (await sandbox());
  const adapter = adapterFor(sb);
  const store = openSqliteStore({ ...o.store, path: o.path ?? ':memory:' });
  const clock = o.clock ?? new ManualClock();
  const runtime = new Runtime({ store, adapter, bots, sender: SANDBOX_SENDER, clock, dispatcher: { baseDelayMs: 1000, ...o.dispatcher } });
  await runtime.start();
  await runtime.idle();
  const stop = async () => {
    await runtime.stop();
    await adapter.close();
    await store.close();
  };
  return {
    sb,
    store,
    runtime,
    clock,
    adapter,
    stop,
    async send(event, user = USER, bot = bots[0]!.id) {
      await runtime.receive({ botId: bot, user, providerId: `wamid.test${++seq}`, source: 'whatsapp', event });
      await runtime.idle();
    },
    async close() {
      await stop();
      if (!o.sb) await sb.close();
    },
  };
}

export const reply = (id: string, title = id, via: 'button' | 'list' = 'button') => ({ type: `reply.${id}`, id, title, via });
export const textEvent = (t: string) => ({ type: 'text', text: t, via: 'whatsapp' });
