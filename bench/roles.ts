/**
 * The bench's child processes (forked by `spawnRole` in bench/ipc.ts): `node roles.ts <role> <json>`.
 *
 * - `sandbox`: the sandbox provider (`startSandbox`), shared by every server of a run; it counts and
 *   timestamps the messages it accepts, per recipient, for the load generator;
 * - `colloquy`: `startServer` with the pizza bot (or the `flows` part's), a real provider config
 *   pointing at the sandbox, and either a SQLite file or `COLLOQUY_DATABASE_URL` (PostgreSQL).
 *   When the store asked for cannot be opened, the child reports `{failed}` instead of `{ready}`
 *   and exits, so the bench can skip it;
 * - `baseline`: the bare Express relay (bench/baseline-server.ts);
 * - `flow-baseline`: the bare Flow endpoint of the `flows` part (bench/flow-baseline.ts). A
 *   `colloquy` child started with `bot: 'flows'` serves the live-flow bot (bench/flow-bot.ts).
 *
 * Each server process watches its own event-loop delay (`monitorEventLoopDelay`) and peak RSS and
 * reports them with its stats; the bench resets the delay histogram before each measured phase.
 */
import { mkdirSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { peakRssMb, SECRET, SENDER, serveCalls, watchEgress, type Failed, type Ready } from './ipc.js';
import type { ServerStats } from './server-stats.js';
import { countPgStatements, countSqliteStatements, statementCounts } from './statements.js';

const epochNow = (): number => performance.timeOrigin + performance.now();

/** What the sandbox child reports about the whole run. */
export interface SandboxStats {
  readonly tokens: number;
  readonly refused: number;
  readonly refusals: string[];
  /** Messages to anyone but the users of a phase armed so far. */
  readonly stray: number;
  /** Messages to a user of an earlier phase, after that phase was collected (an overloaded server's backlog). */
  readonly late: number;
  readonly templates: Record<string, Record<string, unknown>>;
  readonly egress: { hosts: string[]; lookups: string[] };
  readonly peakRssMb: number;
}

/** What the sandbox accepted while armed. */
export interface Collected {
  readonly count: number;
  readonly kinds: Record<string, number>;
  /** Requests answered while armed, by endpoint (`messaging`, `cloud-api`, `sms`, `token`). */
  readonly calls: Record<string, number>;
  /** Read receipts (Cloud API `status: read`) accepted while armed. */
  readonly reads: number;
  /** Accepted at (epoch ms), by recipient. */
  readonly at: Record<string, number>;
  /** Provider message id, by recipient. */
  readonly ids: Record<string, string>;
  /** With `capture`: every message's text (an SMS) or request body (JSON), by recipient, in order. */
  readonly bodies?: Record<string, string[]>;
}

/** Event-loop delay of a server process since the last reset, ms (the sampling resolution taken off). */
export interface LoopDelay {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly samples: number;
}

export type { ServerStats } from './server-stats.js';

/** Sampling interval of the event-loop delay histogram, ms. */
const LOOP_RESOLUTION_MS = 2;

/** Watches this process's event loop; the histogram's values include the resolution, taken off here. */
function watchLoop(): { reset: () => void; read: () => LoopDelay } {
  const h = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  h.enable();
  const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - LOOP_RESOLUTION_MS) * 100) / 100);
  return {
    reset: () => h.reset(),
    read: () => (h.count === 0 ? { p50: 0, p99: 0, max: 0, samples: 0 } : { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), samples: h.count }),
  };
}

const rssMb = () => Math.round(process.memoryUsage.rss() / 1024 / 1024);

// ─────────────────────────────────────── child: sandbox ───────────────────────────────────────

/** A seed-provider body's kind (`list`, `buttons`, `flow`), as the load generator counts replies. */
function kindOf(body: unknown): string {
  const b = (body ?? {}) as Record<string, unknown>;
  if (b['listMessages'] !== undefined) return 'list';
  if (b['replyButtons'] !== undefined) return 'buttons';
  if (b['flow'] !== undefined) return 'flow';
  return 'other';
}

/** The same kinds for a Cloud API message (recorded as `interactive:list`, `interactive:button`, `text`, …). */
const CLOUD_KINDS: Record<string, string> = { 'interactive:list': 'list', 'interactive:button': 'buttons', 'interactive:flow': 'flow' };

async function sandboxRole(): Promise<void> {
  const egress = watchEgress();
  const { startSandbox } = await import('../src/sandbox/index.js');
  // A large record limit: the recorder trims with splice once full, which would cost the provider side.
  // The Cloud API mode serves beside the seed provider; it has no webhook to post statuses to, and
  // is told not to queue them: the bench measures a message's turn, not its statuses' (as on the seed side).
  const running = await startSandbox({ maxRecords: 1_000_000, cloudApi: { statuses: false } });
  const sb = running.sandbox;
  let tokens = 0;
  let refused = 0;
  let stray = 0;
  const refusals: string[] = [];
  const templates: Record<string, Record<string, unknown>> = {};
  sb.onRequest((r) => {
    if (r.endpoint === 'token') tokens++;
    if (r.status >= 300) {
      refused++;
      if (refusals.length < 5) refusals.push(`${r.endpoint} ${r.status} ${JSON.stringify(r.response).slice(0, 300)}`);
    } else if (r.endpoint === 'messaging') {
      const k = kindOf(r.body);
      templates[k] ??= r.body as Record<string, unknown>;
    }
  });
  // A phase arms the sandbox for its users (a contiguous range of numbers). A reply to a user of an
  // earlier phase (a server still working through a backlog) is late, not counted; a reply to
  // anyone else is stray, which the bench reports as a failure.
  interface Armed {
    n: number;
    lo: number;
    hi: number;
    count: number;
    kinds: Record<string, number>;
    calls: Record<string, number>;
    reads: number;
    at: Record<string, number>;
    ids: Record<string, string>;
    bodies: Record<string, string[]> | undefined;
    done: Promise<void>;
    resolve: () => void;
  }
  let armed: Armed | undefined;
  let late = 0;
  // What a phase costs the provider: every request answered while it is armed, and the read receipts among them.
  sb.onRequest((r) => {
    if (armed !== undefined) armed.calls[r.endpoint] = (armed.calls[r.endpoint] ?? 0) + 1;
  });
  sb.onRead(() => {
    if (armed !== undefined) armed.reads++;
  });
  const ranges: [number, number][] = [];
  sb.onMessage((m) => {
    const to = Number(m.to);
    if (armed === undefined || to < armed.lo || to > armed.hi) {
      if (ranges.some(([lo, hi]) => to >= lo && to <= hi)) late++;
      else stray++;
      return;
    }
    armed.count++;
    const k = m.channel === 'interactive' ? kindOf(m.request) : m.channel === 'cloud-api' ? (CLOUD_KINDS[m.type] ?? m.type) : 'sms';
    armed.kinds[k] = (armed.kinds[k] ?? 0) + 1;
    armed.at[m.to] = epochNow();
    armed.ids[m.to] = m.providerId;
    if (armed.bodies !== undefined) (armed.bodies[m.to] ??= []).push(m.channel === 'sms' ? m.text : JSON.stringify(m.request));
    if (armed.count === armed.n) armed.resolve();
  });
  serveCalls({
    /**
     * Starts counting the messages accepted for users `lo`…`hi`; `wait` resolves at the n-th. With
     * `capture`, `collect` also returns what each message said (the `flows` part reads flow tokens
     * and booking texts from them).
     */
    arm: ({ n, lo, hi, capture }: { n: number; lo: number; hi: number; capture?: boolean }) => {
      sb.reset(); // keep the recorder small between phases (tokens stay valid)
      ranges.push([lo, hi]);
      let resolve: () => void = () => undefined;
      const done = new Promise<void>((r) => {
        resolve = r;
      });
      armed = { n, lo, hi, count: 0, kinds: {}, calls: {}, reads: 0, at: {}, ids: {}, bodies: capture === true ? {} : undefined, done, resolve };
    },
    /**
     * The users of a phase wrote these messages (user, message id) to the sandbox's Cloud API number:
     * their 24-hour windows open, as Meta's would before the webhook reaches the server, and a read
     * receipt naming a message id names its user.
     */
    wrote: (messages: [user: string, id: string][]) => {
      for (const [user, id] of messages) sb.userWrote(user, id);
    },
    /** How many messages the armed phase has counted so far. */
    count: () => armed?.count ?? 0,
    /** Resolves when the armed count is reached: the epoch time of the last accept. */
    wait: async () => {
      const a = armed;
      if (a === undefined) throw new Error('not armed');
      await a.done;
      return Math.max(...Object.values(a.at));
    },
    /** What the armed phase saw (call after the server is idle, to catch extra messages). */
    collect: (): Collected => {
      const a = armed;
      if (a === undefined) throw new Error('not armed');
      armed = undefined;
      return { count: a.count, kinds: a.kinds, calls: a.calls, reads: a.reads, at: a.at, ids: a.ids, ...(a.bodies !== undefined && { bodies: a.bodies }) };
    },
    /** CPU time (user + system) of the sandbox's process so far, ms. */
    cpuMs: (): number => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
    stats: (): SandboxStats => ({ tokens, refused, refusals, stray, late, templates, egress: egress(), peakRssMb: peakRssMb() }),
    close: async () => {
      setImmediate(() => void running.close().finally(() => process.exit(0)));
    },
  });
  process.send!({ ready: true, url: running.url } satisfies Ready);
}

// ─────────────────────────────────────── child: Colloquy ───────────────────────────────────────

/** Wraps every method of the store to count its calls, the time they take and the rows they return. */
function traceStore(store: object): () => Record<string, { calls: number; ms: number; rows: number }> {
  const times: Record<string, { calls: number; ms: number; rows: number }> = {};
  const target = store as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(store))) {
    const fn = target[name];
    if (name === 'constructor' || typeof fn !== 'function') continue;
    const t = (times[name] = { calls: 0, ms: 0, rows: 0 });
    target[name] = function (this: unknown, ...args: unknown[]): unknown {
      const started = performance.now();
      const out = (fn as (...a: unknown[]) => unknown).apply(this, args);
      // The SQLite store does its work synchronously; the promise only carries the result.
      t.calls++;
      t.ms += performance.now() - started;
      if (out instanceof Promise)
        void out.then(
          (v) => {
            if (Array.isArray(v)) t.rows += v.length;
          },
          () => undefined,
        );
      return out;
    };
  }
  return () => {
    const all = { ...times, ...groupCommitTimes(store, times) };
    return Object.fromEntries(
      Object.entries(all)
        .filter(([, t]) => t.calls > 0)
        .map(([k, t]) => [k, { calls: t.calls, ms: Math.round(t.ms), rows: t.rows }]),
    );
  };
}

interface GroupCommitStats {
  readonly commits: number;
  readonly ops: number;
  readonly flushMs: number;
  readonly methods: Record<string, { calls: number; ms: number }>;
}

/**
 * A store that commits its writes in groups (SQLite) does their work later, in a flush: each
 * write method gets the time its statements took there, and `(commit)` the rest of the flushes
 * (BEGIN, COMMIT, savepoints; `calls` commits, `rows` writes).
 */
function groupCommitTimes(store: object, times: Record<string, { calls: number; ms: number; rows: number }>): Record<string, { calls: number; ms: number; rows: number }> {
  const stats = (store as { stats?: () => GroupCommitStats }).stats?.();
  if (stats?.methods === undefined) return {};
  let statements = 0;
  const out: Record<string, { calls: number; ms: number; rows: number }> = {};
  for (const [name, m] of Object.entries(stats.methods)) {
    statements += m.ms;
    const t = times[name] ?? { calls: m.calls, ms: 0, rows: 0 };
    out[name] = { ...t, ms: t.ms + m.ms };
  }
  out['(commit)'] = { calls: stats.commits, ms: stats.flushMs - statements, rows: stats.ops };
  return out;
}

/** Settings of `colloquy serve` passed through from the bench's environment when set. */
const TUNABLE = ['COLLOQUY_LANE_CONCURRENCY', 'COLLOQUY_HEAP_GROWTH_PERCENT', 'COLLOQUY_POLL_MS', 'COLLOQUY_LEASE_MS', 'COLLOQUY_HEARTBEAT_MS', 'COLLOQUY_SQLITE_SYNCHRONOUS'] as const;

/** What the `colloquy` role takes. */
export interface ColloquyArg {
  readonly sandboxUrl: string;
  /** A SQLite file, or a `postgres://` URL given to the server as `COLLOQUY_DATABASE_URL`. */
  readonly store: { readonly kind: 'sqlite'; readonly db: string } | { readonly kind: 'postgres'; readonly url: string; readonly scratch: string };
  readonly traceStore?: boolean | undefined;
  /**
   * The provider Colloquy is configured for (default `seed`): the seed provider's relay at the
   * sandbox, or the Cloud API at the sandbox's Cloud API mode (`COLLOQUY_PROVIDER=cloud-api`, its
   * URL and token; the seed's relay stays configured as its SMS channel).
   */
  readonly provider?: 'seed' | 'cloud-api' | undefined;
  /** Count SQLite statements too (PostgreSQL's are always counted); reported by the `statements` call. */
  readonly countStatements?: boolean | undefined;
  /** The bot served (default `pizza`): `flows` is the `flows` part's live-flow bot (bench/flow-bot.ts). */
  readonly bot?: 'pizza' | 'flows' | undefined;
  /** More variables for `loadConfig` (the `flows` part's private key file and its passphrase). */
  readonly env?: Readonly<Record<string, string>> | undefined;
}

/**
 * The Cloud API provider paces each number at Meta's default 80 messages/s; the seed side is
 * unpaced. To compare what a message costs rather than the pace, the Cloud API side runs at the
 * highest rate COLLOQUY_SEND_RATE takes, unless BENCH_CLOUD_API_SEND_RATE says otherwise (80: a
 * number as Meta gives it; 1000: an upgraded one).
 */
export const CLOUD_API_SEND_RATE = '10000';

/** The variables that point Colloquy at the sandbox playing the Cloud API. */
async function cloudApiEnv(sandboxUrl: string): Promise<Record<string, string>> {
  const { SANDBOX_CLOUD_API_TOKEN, SANDBOX_CLOUD_API_VERSION, SANDBOX_PATHS } = await import('../src/sandbox/constants.js');
  return {
    COLLOQUY_PROVIDER: 'cloud-api',
    COLLOQUY_CLOUD_API_URL: `${sandboxUrl}${SANDBOX_PATHS.cloud}/${SANDBOX_CLOUD_API_VERSION}`,
    COLLOQUY_CLOUD_API_TOKEN: SANDBOX_CLOUD_API_TOKEN,
    COLLOQUY_SEND_RATE: process.env['BENCH_CLOUD_API_SEND_RATE'] || CLOUD_API_SEND_RATE,
  };
}

function fail(error: string): void {
  process.send!({ failed: true, error } satisfies Failed);
  setImmediate(() => process.exit(1));
}

async function colloquyRole(arg: ColloquyArg): Promise<void> {
  const loop = watchLoop();
  const egress = watchEgress();
  const { loadConfig } = await import('../src/config.js');
  const { startServer } = await import('../src/server.js');
  const { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET } = await import('../src/sandbox/constants.js');
  const { SqliteStore } = await import('../src/store/sqlite/store.js');
  const bot = arg.bot === 'flows' ? (await import('./flow-bot.js')).default : (await import('../bots/pizza.js')).default;
  const storeEnv: Record<string, string> = {};
  if (arg.store.kind === 'sqlite') {
    storeEnv['COLLOQUY_DB'] = arg.store.db;
    if (arg.countStatements === true) await countSqliteStatements();
  } else {
    // A build that does not know the variable opens its default SQLite file: let that land in scratch.
    mkdirSync(arg.store.scratch, { recursive: true });
    process.chdir(arg.store.scratch);
    storeEnv['COLLOQUY_DATABASE_URL'] = arg.store.url;
    process.env['COLLOQUY_DATABASE_URL'] = arg.store.url;
    await countPgStatements();
  }
  let warnings = 0;
  let errors = 0;
  const logged: string[] = [];
  const keep = (level: string, obj: object, msg?: string) => {
    if (logged.length < 5) logged.push(`${level}: ${msg ?? ''} ${JSON.stringify(obj).slice(0, 300)}`);
  };
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj: object, msg?: string) => {
      warnings++;
      keep('warn', obj, msg);
    },
    error: (obj: object, msg?: string) => {
      errors++;
      keep('error', obj, msg);
    },
  };
  let server: Awaited<ReturnType<typeof startServer>>;
  let sendRate: number | undefined;
  try {
    const config = loadConfig({
      PORT: '0',
      ...storeEnv,
      COLLOQUY_WEBHOOK_SECRET: SECRET,
      COLLOQUY_BASE_URL: arg.sandboxUrl,
      COLLOQUY_AUTH_URL: arg.sandboxUrl,
      COLLOQUY_CLIENT_ID: SANDBOX_CLIENT_ID,
      COLLOQUY_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
      COLLOQUY_SENDER: SENDER,
      ...(arg.provider === 'cloud-api' && (await cloudApiEnv(arg.sandboxUrl))),
      // Tuning knobs a run may set from outside (e.g. COLLOQUY_LANE_CONCURRENCY=32 npm run bench).
      ...Object.fromEntries(TUNABLE.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]]))),
      ...arg.env,
    });
    sendRate = config.sendRate;
    // As `colloquy serve` does for its own process.
    (await import('../src/cli/heap.js')).tuneHeap(config.heapGrowthPercent);
    server = await startServer({ bots: [bot], config, logger });
  } catch (err) {
    fail(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    return;
  }
  const storeClass = server.store.constructor.name;
  if (arg.store.kind === 'postgres' && server.store instanceof SqliteStore) {
    await server.close();
    fail(`COLLOQUY_DATABASE_URL is not supported by this build: startServer opened a SQLite store (${storeClass}) instead of PostgreSQL`);
    return;
  }
  const storeTime = arg.traceStore === true ? traceStore(server.store) : undefined;
  const journalMode = server.store instanceof SqliteStore ? String(server.store.db.pragma('journal_mode', { simple: true })) : arg.store.kind;
  const m = server.metrics;
  serveCalls({
    idle: () => server.runtime.idle(),
    loopReset: () => loop.reset(),
    loop: (): LoopDelay => loop.read(),
    statements: (): number => statementCounts().statements,
    framingStatements: (): number => statementCounts().framing,
    /** Flow endpoint requests so far, by `action:outcome` (the endpoint's own metric). */
    flowRequests: (): Record<string, number> => flowRequests(m),
    cpuMs: (): number => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
    stats: (): ServerStats => ({
      tokenRequests: m.total('colloquy_token_requests_total'),
      turnsOk: m.value('colloquy_turns_total', { bot: bot.id, outcome: 'ok' }),
      turnsError: m.value('colloquy_turns_total', { bot: bot.id, outcome: 'error' }),
      sendsAccepted: m.value('colloquy_sends_total', { channel: 'interactive', outcome: 'accepted' }),
      readReceipts: m.value('colloquy_read_receipts_total', { outcome: 'ok' }),
      readReceiptsFailed: m.value('colloquy_read_receipts_total', { outcome: 'failed' }),
      ...(sendRate !== undefined && { sendRate }),
      webhookRequests: m.total('colloquy_webhook_requests_total'),
      warnings,
      errors,
      logged,
      journalMode,
      storeClass,
      egress: egress(),
      peakRssMb: peakRssMb(),
      rssMb: rssMb(),
      ...(storeTime && { storeTime: storeTime() }),
    }),
    close: async () => {
      await server.close();
      setImmediate(() => process.exit(0)); // after the answer is sent; --cpu-prof writes on exit
    },
  });
  process.send!({ ready: true, url: server.url } satisfies Ready);
}

/** The Flow endpoint's request counts by `action:outcome`, read off `colloquy_flow_requests_total`. */
function flowRequests(m: { value(name: 'colloquy_flow_requests_total', labels: Record<string, string>): number }): Record<string, number> {
  const out: Record<string, number> = {};
  for (const action of ['ping', 'INIT', 'BACK', 'data_exchange', 'error', 'unknown'])
    for (const outcome of ['ok', 'replayed', 'screen_error', 'expired', 'signature', 'decrypt', 'bad_request', 'unavailable']) {
      const n = m.value('colloquy_flow_requests_total', { action, outcome });
      if (n > 0) out[`${action}:${outcome}`] = n;
    }
  return out;
}

// ─────────────────────────────────────── child: baseline ───────────────────────────────────────

/** What the `baseline` role takes: the reply bodies Colloquy sent, to forward the same ones. */
export interface BaselineArg {
  readonly sandboxUrl: string;
  readonly onText: Record<string, unknown>;
  readonly onTap: Record<string, unknown>;
}

async function baselineRole(arg: BaselineArg): Promise<void> {
  const loop = watchLoop();
  const egress = watchEgress();
  const { startBaseline } = await import('./baseline-server.js');
  const { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET } = await import('../src/sandbox/constants.js');
  const server = await startBaseline({
    secret: SECRET,
    baseUrl: arg.sandboxUrl,
    authUrl: arg.sandboxUrl,
    clientId: SANDBOX_CLIENT_ID,
    clientSecret: SANDBOX_CLIENT_SECRET,
    onText: arg.onText,
    onTap: arg.onTap,
  });
  serveCalls({
    idle: () => undefined,
    loopReset: () => loop.reset(),
    loop: (): LoopDelay => loop.read(),
    stats: (): ServerStats => {
      const s = server.stats();
      return {
        tokenRequests: s.tokenRequests,
        turnsOk: s.forwarded,
        turnsError: s.failed + s.refused,
        sendsAccepted: s.forwarded,
        webhookRequests: s.forwarded + s.failed + s.refused,
        warnings: 0,
        errors: s.failed + s.refused,
        logged: s.errors,
        journalMode: 'none',
        storeClass: 'none',
        egress: egress(),
        peakRssMb: peakRssMb(),
        rssMb: rssMb(),
      };
    },
    close: async () => {
      await server.close();
      setImmediate(() => process.exit(0));
    },
  });
  process.send!({ ready: true, url: server.url } satisfies Ready);
}

// ─────────────────────────────────────────── entry point ───────────────────────────────────────────

if (process.send === undefined) throw new Error('bench/roles.ts runs only as a child of the bench (see bench/ipc.ts)');
const [role, json] = process.argv.slice(2);
const arg = JSON.parse(json ?? '{}') as never;
process.on('disconnect', () => process.exit(0)); // the orchestrator went away
if (role === 'sandbox') await sandboxRole();
else if (role === 'colloquy') await colloquyRole(arg);
else if (role === 'baseline') await baselineRole(arg);
else if (role === 'flow-baseline') await (await import('./flow-baseline.js')).flowBaselineRole(arg);
else throw new Error(`unknown role ${String(role)}`);
