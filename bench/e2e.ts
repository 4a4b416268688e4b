/**
 * The end-to-end turn: signed webhook → inbox commit → turn → outbox → send adapter → outbound
 * accepted by the sandbox provider, for many distinct users, beside a bare Express baseline
 * (bench/baseline-server.ts) measured in the same run against the same sandbox.
 *
 * Processes (every socket on 127.0.0.1):
 * - this process (the orchestrator) is the load generator: undici, `concurrency` webhooks in flight;
 * - the sandbox provider (`startSandbox`) in a child process, shared by both sides;
 * - Colloquy (`startServer` with the pizza bot, a SQLite WAL file in a temp folder, a real provider
 *   config pointing at the sandbox) in a child process of its own;
 * - the baseline in a child process of its own.
 * So no side shares its event loop with the provider or the client, and each server's peak RSS is
 * its own. Children run with `--conditions=source --import tsx` so that the bot's `import … from
 * 'colloquy'` resolves to src/ (like `npm start`), not to a possibly stale dist/.
 *
 * Each round has two phases over fresh users: "new" (each user sends a text → a new conversation,
 * the bot answers with a list) and "existing" (each user taps the list row `margherita` → a second
 * turn on the stored conversation, answered with reply buttons). A phase's rate is users ÷ the time
 * from the first webhook sent to the last outbound accepted by the sandbox; for Colloquy the
 * webhook answers after the commit and the send is asynchronous, for the baseline the webhook
 * answers after the forward, so both measure the same thing: user message in → reply accepted.
 */
import { fork, type ChildProcess } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { listReplyMessage, signBody, textMessage, webhookPayload } from '../src/sandbox/inbound.js';

/** Settings of {@link benchE2e}. */
export interface BenchE2eOptions {
  /** Distinct users per measured round (default 2,000); each has two turns (new, existing). */
  readonly users?: number | undefined;
  /** Webhooks in flight at once (default 32). */
  readonly concurrency?: number | undefined;
  /** Measured rounds per side, alternated (default 2); the best is reported. */
  readonly rounds?: number | undefined;
  /** Users of the warm-up round of each side (default 200). */
  readonly warmupUsers?: number | undefined;
  /** A folder: each child process runs with `--cpu-prof` and writes its profiles to `<folder>/<role>/`. */
  readonly cpuProfDir?: string | undefined;
  /** Time every store method in Colloquy's process and report it as `colloquy_store_ms` (a diagnostic). */
  readonly traceStore?: boolean | undefined;
}

/** One phase of one side. */
interface PhaseResult {
  readonly users: number;
  /** First webhook sent → last webhook answered, ms. */
  readonly answersMs: number;
  /** First webhook sent → last outbound accepted by the sandbox, ms. */
  readonly acceptedMs: number;
  /** Per request: webhook sent → answer read, ms. */
  readonly webhookMs: number[];
  /** Per user: webhook sent → the reply accepted by the sandbox, ms. */
  readonly turnMs: number[];
}

interface RoundResult { readonly fresh: PhaseResult; readonly existing: PhaseResult }

type Side = 'colloquy' | 'baseline';

const SELF = fileURLToPath(import.meta.url);
const ROOT = dirname(dirname(SELF));
const ROLE_FLAG = '--bench-e2e-role';
const SECRET = 'bench-webhook-secret';
const SENDER = '15550000001';
const epochNow = (): number => performance.timeOrigin + performance.now();

// ───────────────────────────── outbound connections, in every process ─────────────────────────────

/** Records where every client socket of this thread connects; returns a reader. */
export function watchEgress(): () => { hosts: string[]; lookups: string[] } {
  const hosts = new Set<string>();
  const lookups = new Set<string>();
  dc.subscribe('net.client.socket', (message) => {
    const socket = (message as { socket: Socket }).socket;
    socket.once('lookup', (_err: Error | null, address: string, _family: unknown, host: string) => { lookups.add(`${host}→${address}`); });
    socket.once('connect', () => { hosts.add(socket.remoteAddress ?? '?'); });
  });
  return () => ({ hosts: [...hosts].sort(), lookups: [...lookups].sort() });
}

// ─────────────────────────────────────────── IPC ───────────────────────────────────────────

interface Call { readonly id: number; readonly cmd: string; readonly arg?: unknown }
interface Answer { readonly id: number; readonly ok: boolean; readonly result?: unknown; readonly error?: string }
interface Ready { readonly ready: true; readonly url: string }

class Child {
  #next = 1;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #exited: Promise<number | null>;
  readonly ready: Promise<string>;

  constructor(readonly name: string, readonly proc: ChildProcess) {
    let onReady: (url: string) => void = () => undefined;
    let failReady: (e: Error) => void = () => undefined;
    this.ready = new Promise((resolve, reject) => { onReady = resolve; failReady = reject; });
    proc.on('message', (m: Answer | Ready) => {
      if ('ready' in m) { onReady(m.url); return; }
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(`${name}: ${m.error ?? 'failed'}`));
    });
    this.#exited = new Promise((resolve) => proc.once('exit', (code, signal) => {
      const e = new Error(`${name} exited (${signal ?? code})`);
      failReady(e);
      for (const p of this.#pending.values()) p.reject(e);
      this.#pending.clear();
      resolve(code);
    }));
  }

  call<T>(cmd: string, arg?: unknown, timeoutMs = 120_000): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => { this.#pending.delete(id); reject(new Error(`${this.name}: ${cmd} timed out after ${timeoutMs} ms`)); }, timeoutMs);
      this.#pending.set(id, {
        resolve: (v) => { clearTimeout(timer); resolve(v as T); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.proc.send({ id, cmd, arg } satisfies Call);
    });
  }

  /** Asks the child to close and waits for it to exit (kills it after 10 s). */
  async close(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    await this.call('close', undefined, 10_000).catch(() => undefined);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await this.#exited;
    clearTimeout(timer);
  }
}

function spawnRole(role: string, arg: unknown, extraExecArgv: readonly string[] = []): Child {
  const proc = fork(SELF, [ROLE_FLAG, role, JSON.stringify(arg)], {
    cwd: ROOT,
    execArgv: ['--conditions=source', '--import', 'tsx', ...extraExecArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Child(role, proc);
}

type Handlers = Record<string, (arg: never) => unknown>;

function serveCalls(handlers: Handlers): void {
  process.on('message', (m: Call) => {
    void (async () => {
      try {
        const h = handlers[m.cmd];
        if (h === undefined) throw new Error(`unknown command "${m.cmd}"`);
        const result = await h(m.arg as never);
        process.send!({ id: m.id, ok: true, result } satisfies Answer);
      } catch (err) {
        process.send!({ id: m.id, ok: false, error: err instanceof Error ? err.stack ?? err.message : String(err) } satisfies Answer);
      }
    })();
  });
}

function peakRssMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

// ─────────────────────────────────────── child: sandbox ───────────────────────────────────────

interface SandboxStats {
  readonly tokens: number;
  readonly refused: number;
  readonly refusals: string[];
  readonly stray: number;
  readonly templates: Record<string, Record<string, unknown>>;
  readonly egress: { hosts: string[]; lookups: string[] };
  readonly peakRssMb: number;
}

interface Collected {
  readonly count: number;
  readonly kinds: Record<string, number>;
  /** Accepted at (epoch ms), by recipient. */
  readonly at: Record<string, number>;
  /** Provider message id, by recipient. */
  readonly ids: Record<string, string>;
}

function kindOf(body: unknown): string {
  const b = (body ?? {}) as Record<string, unknown>;
  if (b['listMessages'] !== undefined) return 'list';
  if (b['replyButtons'] !== undefined) return 'buttons';
  if (b['flow'] !== undefined) return 'flow';
  return 'other';
}

async function sandboxRole(): Promise<void> {
  const egress = watchEgress();
  const { startSandbox } = await import('../src/sandbox/index.js');
  // A large record limit: the recorder trims with splice once full, which would cost the provider side.
  const running = await startSandbox({ maxRecords: 1_000_000 });
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
  interface Armed { n: number; count: number; kinds: Record<string, number>; at: Record<string, number>; ids: Record<string, string>; done: Promise<void>; resolve: () => void }
  let armed: Armed | undefined;
  sb.onMessage((m) => {
    if (armed === undefined) { stray++; return; }
    armed.count++;
    const k = m.channel === 'interactive' ? kindOf(m.request) : 'sms';
    armed.kinds[k] = (armed.kinds[k] ?? 0) + 1;
    armed.at[m.to] = epochNow();
    armed.ids[m.to] = m.providerId;
    if (armed.count === armed.n) armed.resolve();
  });
  serveCalls({
    /** Starts counting accepted messages; `wait` resolves at the n-th. */
    arm: ({ n }: { n: number }) => {
      sb.reset(); // keep the recorder small between phases (tokens stay valid)
      let resolve: () => void = () => undefined;
      const done = new Promise<void>((r) => { resolve = r; });
      armed = { n, count: 0, kinds: {}, at: {}, ids: {}, done, resolve };
    },
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
      return { count: a.count, kinds: a.kinds, at: a.at, ids: a.ids };
    },
    stats: (): SandboxStats => ({ tokens, refused, refusals, stray, templates, egress: egress(), peakRssMb: peakRssMb() }),
    close: async () => {
      setImmediate(() => void running.close().finally(() => process.exit(0)));
    },
  });
  process.send!({ ready: true, url: running.url } satisfies Ready);
}

// ─────────────────────────────────────── child: Colloquy ───────────────────────────────────────

interface ServerStats {
  readonly tokenRequests: number;
  readonly turnsOk: number;
  readonly turnsError: number;
  readonly sendsAccepted: number;
  readonly webhookRequests: number;
  readonly warnings: number;
  readonly errors: number;
  readonly logged: string[];
  readonly journalMode: string;
  readonly egress: { hosts: string[]; lookups: string[] };
  readonly peakRssMb: number;
  /** With `traceStore`: calls and milliseconds per store method. */
  readonly storeTime?: Record<string, { calls: number; ms: number; rows: number }>;
}

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
      if (out instanceof Promise) void out.then((v) => { if (Array.isArray(v)) t.rows += v.length; }, () => undefined);
      return out;
    };
  }
  return () => Object.fromEntries(Object.entries(times).filter(([, t]) => t.calls > 0).map(([k, t]) => [k, { calls: t.calls, ms: Math.round(t.ms), rows: t.rows }]));
}

async function colloquyRole(arg: { sandboxUrl: string; db: string; traceStore: boolean }): Promise<void> {
  const egress = watchEgress();
  const { loadConfig } = await import('../src/config.js');
  const { startServer } = await import('../src/server.js');
  const { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET } = await import('../src/sandbox/constants.js');
  const { SqliteStore } = await import('../src/store/sqlite.js');
  const pizza = (await import('../bots/pizza.js')).default;
  const config = loadConfig({
    PORT: '0',
    COLLOQUY_DB: arg.db,
    COLLOQUY_WEBHOOK_SECRET: SECRET,
    COLLOQUY_BASE_URL: arg.sandboxUrl,
    COLLOQUY_AUTH_URL: arg.sandboxUrl,
    COLLOQUY_CLIENT_ID: SANDBOX_CLIENT_ID,
    COLLOQUY_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
    COLLOQUY_SENDER: SENDER,
  });
  let warnings = 0;
  let errors = 0;
  const logged: string[] = [];
  const keep = (level: string, obj: object, msg?: string) => { if (logged.length < 5) logged.push(`${level}: ${msg ?? ''} ${JSON.stringify(obj).slice(0, 300)}`); };
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (obj: object, msg?: string) => { warnings++; keep('warn', obj, msg); },
    error: (obj: object, msg?: string) => { errors++; keep('error', obj, msg); },
  };
  const server = await startServer({ bots: [pizza], config, logger });
  const storeTime = arg.traceStore ? traceStore(server.store) : undefined;
  const journalMode = server.store instanceof SqliteStore ? String(server.store.db.pragma('journal_mode', { simple: true })) : 'not sqlite';
  const m = server.metrics;
  serveCalls({
    idle: () => server.runtime.idle(),
    stats: (): ServerStats => ({
      tokenRequests: m.total('colloquy_token_requests_total'),
      turnsOk: m.value('colloquy_turns_total', { bot: pizza.id, outcome: 'ok' }),
      turnsError: m.value('colloquy_turns_total', { bot: pizza.id, outcome: 'error' }),
      sendsAccepted: m.value('colloquy_sends_total', { channel: 'interactive', outcome: 'accepted' }),
      webhookRequests: m.total('colloquy_webhook_requests_total'),
      warnings, errors, logged, journalMode, egress: egress(), peakRssMb: peakRssMb(),
      ...(storeTime && { storeTime: storeTime() }),
    }),
    close: async () => {
      await server.close();
      setImmediate(() => process.exit(0)); // after the answer is sent; --cpu-prof writes on exit
    },
  });
  process.send!({ ready: true, url: server.url } satisfies Ready);
}

// ─────────────────────────────────────── child: baseline ───────────────────────────────────────

async function baselineRole(arg: { sandboxUrl: string; onText: Record<string, unknown>; onTap: Record<string, unknown> }): Promise<void> {
  const egress = watchEgress();
  const { startBaseline } = await import('./baseline-server.js');
  const { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET } = await import('../src/sandbox/constants.js');
  const server = await startBaseline({
    secret: SECRET, baseUrl: arg.sandboxUrl, authUrl: arg.sandboxUrl, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET,
    onText: arg.onText, onTap: arg.onTap,
  });
  serveCalls({
    idle: () => undefined,
    stats: (): ServerStats => {
      const s = server.stats();
      return {
        tokenRequests: s.tokenRequests, turnsOk: s.forwarded, turnsError: s.failed + s.refused, sendsAccepted: s.forwarded,
        webhookRequests: s.forwarded + s.failed + s.refused, warnings: 0, errors: s.failed + s.refused, logged: s.errors,
        journalMode: 'none', egress: egress(), peakRssMb: peakRssMb(),
      };
    },
    close: async () => {
      await server.close();
      setImmediate(() => process.exit(0));
    },
  });
  process.send!({ ready: true, url: server.url } satisfies Ready);
}

// ─────────────────────────────────────── the load generator ───────────────────────────────────────

interface Signed { readonly user: string; readonly body: string; readonly signature: string }

function signed(user: string, message: ReturnType<typeof textMessage>): Signed {
  const body = JSON.stringify(webhookPayload({ messages: [message] }));
  return { user, body, signature: signBody(SECRET, body) };
}

function usersOf(first: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => String(5215600000000 + first + i));
}

/** Posts every body, `concurrency` at a time; returns per-request latencies and send times. */
async function fire(agent: Agent, url: string, bodies: readonly Signed[], concurrency: number): Promise<{ webhookMs: number[]; sentAt: number[]; failures: string[] }> {
  const origin = new URL(url).origin;
  const webhookMs = new Array<number>(bodies.length).fill(0);
  const sentAt = new Array<number>(bodies.length).fill(0);
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      const b = bodies[i]!;
      const started = performance.now();
      sentAt[i] = performance.timeOrigin + started;
      try {
        const res = await agent.request({
          origin, path: '/webhook', method: 'POST', body: b.body,
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': b.signature },
        });
        const text = await res.body.text();
        if (res.statusCode !== 200) failures.push(`${res.statusCode} ${text.slice(0, 200)}`);
      } catch (err) {
        failures.push(err instanceof Error ? err.message : String(err));
      }
      webhookMs[i] = performance.now() - started;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { webhookMs, sentAt, failures };
}

/** One phase: arm the sandbox, fire the webhooks, wait for every reply to be accepted, check. */
async function phase(agent: Agent, server: Child, url: string, sandbox: Child, bodies: readonly Signed[], kind: 'list' | 'buttons', concurrency: number): Promise<{ result: PhaseResult; ids: Record<string, string> }> {
  await sandbox.call('arm', { n: bodies.length });
  const accepted = sandbox.call<number>('wait', undefined, 60_000);
  accepted.catch(() => undefined); // awaited below unless the webhooks failed first
  const t0 = epochNow();
  const { webhookMs, sentAt, failures } = await fire(agent, url, bodies, concurrency);
  const answered = epochNow();
  if (failures.length > 0) throw new Error(`${server.name}: ${failures.length} of ${bodies.length} webhooks failed, e.g. ${failures.slice(0, 3).join(' | ')}`);
  const lastAccepted = await accepted;
  await server.call('idle');
  const seen = await sandbox.call<Collected>('collect');
  if (seen.count !== bodies.length || seen.kinds[kind] !== bodies.length || Object.keys(seen.at).length !== bodies.length) {
    throw new Error(`${server.name}: expected ${bodies.length} ${kind} messages to ${bodies.length} users, the sandbox accepted ${seen.count} (${JSON.stringify(seen.kinds)}) to ${Object.keys(seen.at).length} users`);
  }
  const turnMs = bodies.map((b, i) => {
    const at = seen.at[b.user];
    if (at === undefined) throw new Error(`${server.name}: no reply accepted for ${b.user}`);
    return at - sentAt[i]!;
  });
  return {
    result: { users: bodies.length, answersMs: answered - t0, acceptedMs: Math.max(lastAccepted, answered) - t0, webhookMs, turnMs },
    ids: seen.ids,
  };
}

/** A round: `n` fresh users each send a text, then each taps the list row they were sent. */
async function round(agent: Agent, server: Child, url: string, sandbox: Child, users: readonly string[], concurrency: number): Promise<RoundResult> {
  const texts = users.map((u) => signed(u, textMessage({ from: u, text: 'hi' })));
  const fresh = await phase(agent, server, url, sandbox, texts, 'list', concurrency);
  const taps = users.map((u) => signed(u, listReplyMessage({ from: u, rowId: 'margherita', title: 'Margherita', context: { from: SENDER, id: fresh.ids[u] ?? 'wamid.unknown' } })));
  const existing = await phase(agent, server, url, sandbox, taps, 'buttons', concurrency);
  return { fresh: fresh.result, existing: existing.result };
}

// ─────────────────────────────────────────── figures ───────────────────────────────────────────

function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const r0 = (x: number) => Math.round(x);
const r1 = (x: number) => Math.round(x * 10) / 10;
const r2 = (x: number) => Math.round(x * 100) / 100;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const rate = (p: PhaseResult) => p.users / (p.acceptedMs / 1000);
const roundRate = (r: RoundResult) => (r.fresh.users + r.existing.users) / ((r.fresh.acceptedMs + r.existing.acceptedMs) / 1000);

function summarize(rounds: readonly RoundResult[]) {
  const best = rounds.reduce((a, b) => (roundRate(b) > roundRate(a) ? b : a));
  const all = (f: (p: PhaseResult) => number[], which?: 'fresh' | 'existing') => rounds.flatMap((r) => (which ? f(r[which]) : [...f(r.fresh), ...f(r.existing)]));
  return {
    turnsPerS: roundRate(best),
    freshPerS: Math.max(...rounds.map((r) => rate(r.fresh))),
    existingPerS: Math.max(...rounds.map((r) => rate(r.existing))),
    answersPerS: Math.max(...rounds.map((r) => (r.fresh.users + r.existing.users) / ((r.fresh.answersMs + r.existing.answersMs) / 1000))),
    perRound: rounds.map((r) => r0(roundRate(r))),
    webhook: { p50: percentile(all((p) => p.webhookMs), 50), p99: percentile(all((p) => p.webhookMs), 99), max: percentile(all((p) => p.webhookMs), 100) },
    webhookFresh: { p50: percentile(all((p) => p.webhookMs, 'fresh'), 50), p99: percentile(all((p) => p.webhookMs, 'fresh'), 99) },
    webhookExisting: { p50: percentile(all((p) => p.webhookMs, 'existing'), 50), p99: percentile(all((p) => p.webhookMs, 'existing'), 99) },
    turn: { p50: percentile(all((p) => p.turnMs), 50), p99: percentile(all((p) => p.turnMs), 99) },
    /** The best round's lag: last webhook answered → last outbound accepted, ms (new + existing). */
    drainMs: best.fresh.acceptedMs - best.fresh.answersMs + best.existing.acceptedMs - best.existing.answersMs,
  };
}

// ─────────────────────────────────────────── the bench ───────────────────────────────────────────

/**
 * Runs the end-to-end benchmark; returns flat figures for the JSON line: `colloquy_turns_per_s`,
 * `baseline_req_per_s`, `ratio`, webhook p50/p99 of both, Colloquy's token requests, peak RSS of
 * each server process, and the checks (outbound hosts, SQLite journal mode).
 */
export async function benchE2e(opts: BenchE2eOptions = {}): Promise<Record<string, unknown>> {
  const users = opts.users ?? 2_000;
  const concurrency = opts.concurrency ?? 32;
  const rounds = opts.rounds ?? 2;
  const warmupUsers = opts.warmupUsers ?? 200;
  const egress = watchEgress();
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-bench-'));
  const db = join(dir, 'colloquy.db');
  const children: Child[] = [];
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 30_000, pipelining: 1 });
  const started = performance.now();
  try {
    const cpuProf = (role: string) => (opts.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(opts.cpuProfDir, role)}`]);
    const sandbox = spawnRole('sandbox', {}, cpuProf('sandbox'));
    children.push(sandbox);
    const sandboxUrl = await sandbox.ready;
    const colloquy = spawnRole('colloquy', { sandboxUrl, db, traceStore: opts.traceStore === true }, cpuProf('colloquy'));
    children.push(colloquy);
    const colloquyUrl = await colloquy.ready;

    let nextUser = 0;
    const take = (n: number) => { const u = usersOf(nextUser, n); nextUser += n; return u; };
    // Warm-up: JIT, connections, the token; its first replies become the baseline's reply bodies.
    await round(agent, colloquy, colloquyUrl, sandbox, take(warmupUsers), concurrency);
    const { templates } = await sandbox.call<SandboxStats>('stats');
    const onText = templates['list'];
    const onTap = templates['buttons'];
    if (onText === undefined || onTap === undefined) throw new Error(`the warm-up did not produce a list and a buttons message: ${Object.keys(templates).join(', ')}`);
    const baseline = spawnRole('baseline', { sandboxUrl, onText, onTap }, cpuProf('baseline'));
    children.push(baseline);
    const baselineUrl = await baseline.ready;
    await round(agent, baseline, baselineUrl, sandbox, take(warmupUsers), concurrency);

    const results: Record<Side, RoundResult[]> = { colloquy: [], baseline: [] };
    for (let r = 0; r < rounds; r++) {
      const order: Side[] = r % 2 === 0 ? ['baseline', 'colloquy'] : ['colloquy', 'baseline'];
      for (const side of order) {
        const [child, url] = side === 'colloquy' ? [colloquy, colloquyUrl] : [baseline, baselineUrl];
        results[side].push(await round(agent, child, url, sandbox, take(users), concurrency));
      }
    }

    const cs = await colloquy.call<ServerStats>('stats');
    const bs = await baseline.call<ServerStats>('stats');
    const ss = await sandbox.call<SandboxStats>('stats');
    const expectedTurns = 2 * (warmupUsers + rounds * users);
    if (cs.turnsOk !== expectedTurns || cs.turnsError !== 0) throw new Error(`Colloquy ran ${cs.turnsOk} turns (${cs.turnsError} failed), expected ${expectedTurns}`);
    if (cs.errors !== 0 || cs.warnings !== 0) throw new Error(`Colloquy logged ${cs.errors} errors and ${cs.warnings} warnings: ${cs.logged.join(' | ')}`);
    if (bs.turnsError !== 0) throw new Error(`the baseline failed ${bs.turnsError} requests: ${bs.logged.join(' | ')}`);
    if (ss.refused !== 0 || ss.stray !== 0) throw new Error(`the sandbox refused ${ss.refused} requests and saw ${ss.stray} unexpected messages: ${ss.refusals.join(' | ')}`);
    if (cs.journalMode !== 'wal') throw new Error(`Colloquy's SQLite file is in ${cs.journalMode} mode, not WAL`);
    const mine = egress();
    const hosts = [...new Set([...mine.hosts, ...cs.egress.hosts, ...bs.egress.hosts, ...ss.egress.hosts])].sort();
    const lookups = [...new Set([...mine.lookups, ...cs.egress.lookups, ...bs.egress.lookups, ...ss.egress.lookups])].sort();
    if (hosts.some((h) => h !== '127.0.0.1') || lookups.length > 0) throw new Error(`a connection went elsewhere than 127.0.0.1: ${hosts.join(', ')} ${lookups.join(', ')}`);

    const c = summarize(results.colloquy);
    const b = summarize(results.baseline);
    return {
      colloquy_turns_per_s: r0(c.turnsPerS),
      baseline_req_per_s: r0(b.turnsPerS),
      ratio: r3(c.turnsPerS / b.turnsPerS),
      colloquy_new_turns_per_s: r0(c.freshPerS),
      colloquy_existing_turns_per_s: r0(c.existingPerS),
      baseline_new_req_per_s: r0(b.freshPerS),
      baseline_existing_req_per_s: r0(b.existingPerS),
      ratio_new: r3(c.freshPerS / b.freshPerS),
      ratio_existing: r3(c.existingPerS / b.existingPerS),
      colloquy_webhook_answers_per_s: r0(c.answersPerS),
      colloquy_send_drain_ms: r0(c.drainMs),
      colloquy_webhook_p50_ms: r2(c.webhook.p50),
      colloquy_webhook_p99_ms: r2(c.webhook.p99),
      colloquy_webhook_max_ms: r1(c.webhook.max),
      baseline_webhook_p50_ms: r2(b.webhook.p50),
      baseline_webhook_p99_ms: r2(b.webhook.p99),
      baseline_webhook_max_ms: r1(b.webhook.max),
      colloquy_webhook_new_p50_ms: r2(c.webhookFresh.p50),
      colloquy_webhook_new_p99_ms: r2(c.webhookFresh.p99),
      colloquy_webhook_existing_p50_ms: r2(c.webhookExisting.p50),
      colloquy_webhook_existing_p99_ms: r2(c.webhookExisting.p99),
      colloquy_turn_p50_ms: r2(c.turn.p50),
      colloquy_turn_p99_ms: r2(c.turn.p99),
      baseline_turn_p50_ms: r2(b.turn.p50),
      baseline_turn_p99_ms: r2(b.turn.p99),
      colloquy_turns_per_s_rounds: c.perRound,
      baseline_req_per_s_rounds: b.perRound,
      colloquy_token_requests: cs.tokenRequests,
      sandbox_token_requests: ss.tokens,
      colloquy_turns: cs.turnsOk,
      colloquy_peak_rss_mb: cs.peakRssMb,
      baseline_peak_rss_mb: bs.peakRssMb,
      sandbox_peak_rss_mb: ss.peakRssMb,
      bench_peak_rss_mb: peakRssMb(),
      sqlite_journal_mode: cs.journalMode,
      outbound_hosts: hosts,
      users, concurrency, rounds, warmup_users: warmupUsers,
      seconds: r1((performance.now() - started) / 1000),
      load_avg_1m: r2(loadavg()[0] ?? 0),
      ...(cs.storeTime && { colloquy_store_ms: cs.storeTime }),
    };
  } finally {
    await agent.close();
    for (const child of children.reverse()) await child.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ─────────────────────────────────────────── entry points ───────────────────────────────────────────

const roleAt = process.argv.indexOf(ROLE_FLAG);
if (roleAt >= 0 && process.send !== undefined) {
  const role = process.argv[roleAt + 1];
  const arg = JSON.parse(process.argv[roleAt + 2] ?? '{}') as never;
  process.on('disconnect', () => process.exit(0)); // the orchestrator went away
  if (role === 'sandbox') await sandboxRole();
  else if (role === 'colloquy') await colloquyRole(arg);
  else if (role === 'baseline') await baselineRole(arg);
  else throw new Error(`unknown role ${String(role)}`);
} else if (process.argv[1] !== undefined && resolvePath(process.argv[1]) === SELF) {
  // `tsx bench/e2e.ts`: this benchmark alone.
  console.log(JSON.stringify(await benchE2e({ cpuProfDir: process.env['BENCH_CPU_PROF'] })));
}
