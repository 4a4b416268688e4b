/** A runtime on the real sandbox, over real HTTP on 127.0.0.1, with a manual clock. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fromPromise } from 'xstate';
import { ManualClock } from '../../src/conversation/clock.js';
import type { Bot } from '../../src/index.js';
import { Runtime, createHttpAdapter, type SendAdapter } from '../../src/entries/server.js';
import { openSqliteStore } from '../../src/entries/sqlite.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/store.js';
import type { PgStore } from '../../src/store/postgres/store.js';
import type { CommitResult, ConversationKey, Store } from '../../src/store/types.js';
import { openStore } from '../../src/store/open.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import type { SendOptions } from '../../src/conversation/sends.js';
import type { WorkOptions } from '../../src/conversation/worker.js';

export const USER = '5215512345678';

export async function sandbox(): Promise<RunningSandbox> {
  return startSandbox({ port: 0 });
}

export function adapterFor(sb: RunningSandbox): SendAdapter {
  return createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
}

/** The database engines the runtime's tests run on (PostgreSQL: the server of the test run's global setup). */
export type Engine = 'sqlite' | 'postgres';
/** Every engine, for `describe.each(ENGINES)`. */
export const ENGINES: readonly Engine[] = ['sqlite', 'postgres'];

/**
 * A new, empty database on `engine` that several worlds can open: a file in `dir` for SQLite, a
 * database of its own (copied from the migrated template) for PostgreSQL.
 */
export async function freshDatabase(engine: Engine, dir: string, name: string): Promise<string> {
  return engine === 'postgres' ? freshDatabaseUrl() : join(dir, name);
}

export interface World<S extends Store = SqliteStore> {
  readonly sb: RunningSandbox;
  readonly store: S;
  readonly runtime: Runtime;
  readonly clock: ManualClock;
  readonly adapter: SendAdapter;
  /** The rows `sql` selects, straight from the store's database on either engine (BIGINT as numbers). */
  rows(sql: string): Promise<Record<string, unknown>[]>;
  /** Delivers an inbound from a user and waits for its turn and sends. */
  send(event: { type: string; [k: string]: unknown }, user?: string, bot?: string): Promise<void>;
  /** Stops the runtime and closes the store (the sandbox stays). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

let seq = 0;

interface WorldOptions {
  /** Where the store is: a SQLite path (default `:memory:`) or, with `engine: 'postgres'`, a database URL (default: a fresh database). */
  path?: string;
  sb?: RunningSandbox;
  clock?: ManualClock;
  sends?: SendOptions;
  work?: Omit<WorkOptions, 'pollMs'>;
  pollMs?: number;
  store?: Partial<SqliteStoreOptions>;
}

/** A started runtime on a SQLite store (`:memory:` unless a path is given). */
export async function world(bots: readonly Bot[], o?: WorldOptions & { engine?: 'sqlite' }): Promise<World>;
/** A started runtime on `engine`'s store: the test reads it through the port only. */
export async function world(bots: readonly Bot[], o: WorldOptions & { engine: Engine }): Promise<World<Store>>;
export async function world(bots: readonly Bot[], o: WorldOptions & { engine?: Engine } = {}): Promise<World<Store>> {
  if (o.engine === 'postgres' && o.store) throw new Error('world: SQLite store options on PostgreSQL');
  const store = o.engine === 'postgres' ? await openStore(o.path ?? (await freshDatabaseUrl())) : openSqliteStore({ ...o.store, path: o.path ?? ':memory:' });
  const sb = o.sb ?? (await sandbox());
  const adapter = adapterFor(sb);
  const clock = o.clock ?? new ManualClock();
  const runtime = new Runtime({ store, adapter, bots, sender: SANDBOX_SENDER, clock, sends: { baseDelayMs: 1000, ...o.sends }, work: o.work, pollMs: o.pollMs });
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
    rows: (sql) => rowsOf(store, sql),
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

async function rowsOf(store: Store, sql: string): Promise<Record<string, unknown>[]> {
  if (store instanceof SqliteStore) return store.db.prepare(sql).all() as Record<string, unknown>[];
  return (await (store as PgStore).db.query(sql)).rows;
}

export const reply = (id: string, title = id, via: 'button' | 'list' = 'button') => ({ type: `reply.${id}`, id, title, via });
export const textEvent = (t: string) => ({ type: 'text', text: t, via: 'whatsapp' });

/**
 * A sandbox whose latency faults sleep until the test lets them go (or their time is up), so a
 * request can be held while a process is killed; `releaseAll` lets every held one go.
 */
export async function holdingSandbox(): Promise<{ sb: RunningSandbox; releaseAll: () => void }> {
  const releases: (() => void)[] = [];
  const sb = await startSandbox({
    port: 0,
    sleep: (ms) =>
      new Promise<void>((r) => {
        const t = setTimeout(r, ms);
        releases.push(() => {
          clearTimeout(t);
          r();
        });
      }),
  });
  return { sb, releaseAll: () => releases.forEach((r) => r()) };
}

/** A `crash-child.ts` process: the lines it printed can be awaited, commands sent to its stdin. */
export interface CrashChild {
  readonly proc: ChildProcess;
  /** Resolves once the child has printed `line` (rejects after 20 s with what it did print). */
  waitFor(line: string): Promise<void>;
  send(m: object): void;
}

const CRASH_CHILD = join(import.meta.dirname, 'crash-child.ts');

/** Starts `crash-child.ts` on the database `db` against the sandbox at `sandboxUrl`, with `env` added. */
export function startCrashChild(db: string, sandboxUrl: string, env: Record<string, string>): CrashChild {
  const proc = spawn(process.execPath, ['--import', 'tsx', CRASH_CHILD, db, sandboxUrl], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const waiters: { line: string; resolve: () => void }[] = [];
  proc.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters])
      if (out.split('\n').includes(w.line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  });
  return {
    proc,
    waitFor: (line) =>
      new Promise<void>((resolve, reject) => {
        if (out.split('\n').includes(line)) return resolve();
        const t = setTimeout(() => reject(new Error(`child never printed "${line}"; it printed: ${out}`)), 20_000);
        waiters.push({
          line,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      }),
    send: (m) => proc.stdin!.write(`${JSON.stringify(m)}\n`),
  };
}

/** Kills a process with SIGKILL and waits until it has exited. */
export async function killHard(proc: ChildProcess): Promise<void> {
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGKILL');
  await exited;
}

/** Commits a first turn for `key` whose only effect is one queued SMS saying `body`, due at `now`. */
export async function queueSms(store: Store, key: ConversationKey, body: string, flowToken: string, now: number): Promise<CommitResult> {
  return store.commitTurn({
    key,
    conversationId: undefined,
    expectedVersion: 0,
    snapshot: {},
    state: 's',
    status: 'active',
    flowToken,
    userActivity: true,
    outbox: [{ kind: 'text', message: { kind: 'text', text: body }, channel: 'sms', request: { msisdns: [key.user], message: body } }],
    timers: { upsert: [], remove: [], activeStateNodes: [] },
    now,
  });
}

/** An invocation the test finishes by hand: `lookup` stays pending until `finish(value)` (the latest run's). */
export function manualLookup() {
  let resolve: (v: string) => void = () => undefined;
  return {
    lookup: fromPromise(
      () =>
        new Promise<string>((r) => {
          resolve = r;
        }),
    ),
    finish: (v: string) => resolve(v),
  };
}
