/**
 * `npm run bench [-- --quick] [-- --million]`: runs the benchmarks, prints a summary of each part as
 * it ends, and ends with one JSON line of all figures (the last line of output):
 * `{"transport":{…},"e2e":{…},"flows":{…},"open_loop":{…},"stores":{…},"million":{…},"load_avg":{…},…}`.
 * The README's "Benchmarks" section says what every key means.
 *
 * Flags: `--quick` (every part with small counts, well under a minute: the harness test runs it),
 * `--million` (also the 1,000,000-conversation comparison; a few minutes more), `--only=a,b` (only
 * these parts: transport, e2e, flows, open_loop, stores, million).
 *
 * Environment (all optional): BENCH_E2E_USERS (default 2000), BENCH_E2E_ROUNDS (2),
 * BENCH_E2E_CONCURRENCY (32), BENCH_E2E_WARMUP (200), BENCH_FLOWS_USERS (500 per round),
 * BENCH_FLOWS_ROUNDS (2), BENCH_FLOWS_CONCURRENCY (8), BENCH_FLOWS_WARMUP (50), BENCH_OPEN_SECONDS (5 s per rate),
 * BENCH_CPU_PROF=<folder> (every child process writes V8 CPU profiles to <folder>/<role>/),
 * BENCH_E2E_TRACE_STORE=1 (time every store method in Colloquy's process; reported as
 * `colloquy_store_ms`), COLLOQUY_BENCH_PG_BIN (the folder of PostgreSQL's initdb and pg_ctl),
 * BENCH_OPEN_PG_RATES (the open-loop rates Colloquy on PostgreSQL runs at, of 200,500,1000; default 500),
 * BENCH_PG_OPTIONS (`-c name=value` settings added to PostgreSQL's defaults), BENCH_PG_SOCKET=1
 * (Colloquy connects to PostgreSQL through its Unix socket, not TCP on 127.0.0.1).
 *
 * Every child process and the PostgreSQL server are stopped at the end, on error and on Ctrl-C. A
 * part that fails is reported as `{"error": …}` in its key, the others still run, and the exit
 * code is 1.
 */
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchE2e } from './e2e.js';
import { benchFlows } from './flows.js';
import { r1, r2 } from './figures.js';
import { goals } from './goals.js';
import { installCleanup, peakRssMb, startedPids } from './ipc.js';
import { benchMillion } from './million.js';
import { benchOpenLoop } from './open-loop.js';
import { extraOptions, postgresUnavailable, startPostgres, type ThrowawayPostgres } from './postgres.js';
import { BenchContext } from './servers.js';
import { benchStores } from './stores.js';
import { benchTransport } from './transport.js';
import { printSummary } from './summary.js';

const PARTS = ['transport', 'e2e', 'flows', 'open_loop', 'stores', 'million'] as const;
type Part = (typeof PARTS)[number];

function parseArgs(argv: readonly string[]): { quick: boolean; million: boolean; only: Set<Part> | undefined } {
  let quick = false;
  let million = false;
  let only: Set<Part> | undefined;
  for (const a of argv) {
    if (a === '--quick') quick = true;
    else if (a === '--million') million = true;
    else if (a.startsWith('--only=')) {
      const parts = a
        .slice('--only='.length)
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      const bad = parts.filter((p) => !(PARTS as readonly string[]).includes(p));
      if (bad.length > 0) throw new Error(`--only: unknown part ${bad.join(', ')} (parts: ${PARTS.join(', ')})`);
      only = new Set(parts as Part[]);
    } else throw new Error(`unknown argument "${a}" (flags: --quick, --million, --only=${PARTS.join(',')})`);
  }
  return { quick, million, only };
}

const num = (name: string): number | undefined => {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name} must be a positive whole number, got "${v}"`);
  return Number(v);
};

/** A comma-separated list of positive whole numbers, or undefined when unset. */
const rates = (name: string): number[] | undefined => {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+(,\d+)*$/.test(v) || v.split(',').some((r) => Number(r) < 1)) throw new Error(`${name} must be rates per second separated by commas, e.g. 200,500; got "${v}"`);
  return v.split(',').map(Number);
};

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 1000);
const load = () => loadavg().map(r2);

/** Every setting from the command line and the environment, read before anything starts. */
function settings() {
  const args = parseArgs(process.argv.slice(2));
  const q = args.quick;
  extraOptions();
  return {
    args,
    q,
    e2e: {
      users: num('BENCH_E2E_USERS') ?? (q ? 200 : undefined),
      rounds: num('BENCH_E2E_ROUNDS') ?? (q ? 1 : undefined),
      concurrency: num('BENCH_E2E_CONCURRENCY') ?? (q ? 16 : undefined),
      warmupUsers: num('BENCH_E2E_WARMUP') ?? (q ? 50 : undefined),
      traceStore: process.env['BENCH_E2E_TRACE_STORE'] === '1',
    },
    flows: {
      users: num('BENCH_FLOWS_USERS') ?? (q ? 40 : undefined),
      rounds: num('BENCH_FLOWS_ROUNDS') ?? (q ? 1 : undefined),
      concurrency: num('BENCH_FLOWS_CONCURRENCY') ?? (q ? 4 : undefined),
      warmupUsers: num('BENCH_FLOWS_WARMUP') ?? (q ? 10 : undefined),
    },
    openSeconds: num('BENCH_OPEN_SECONDS') ?? (q ? 0.5 : undefined),
    openPgRates: rates('BENCH_OPEN_PG_RATES'),
  };
}

let config: ReturnType<typeof settings>;
try {
  config = settings();
} catch (err) {
  // A bad flag or variable stops the run before anything starts, with its name, not a stack trace.
  console.error(`bench: ${message(err)}`);
  process.exit(2);
}
const { args, q } = config;
installCleanup();
const started = performance.now();
const loadStart = load();
const wants = (p: Part) => args.only === undefined || args.only.has(p);
const result: Record<string, unknown> = {};
let failed = false;
const ctx = new BenchContext(process.env['BENCH_CPU_PROF'] || undefined);
let pg: ThrowawayPostgres | { skipped: string } = { skipped: 'not started' };

/** Runs one part: its figures, or `{error}` (the other parts still run). */
async function part(name: Part, run: () => Promise<Record<string, unknown>>, skipped?: string): Promise<void> {
  if (!wants(name)) {
    result[name] = { skipped: 'not selected by --only' };
    return;
  }
  if (skipped !== undefined) {
    result[name] = { skipped };
    return;
  }
  const t0 = performance.now();
  try {
    result[name] = await run();
  } catch (err) {
    failed = true;
    result[name] = { error: message(err) };
    console.error(`bench: ${name} failed: ${err instanceof Error ? err.stack : String(err)}`);
  }
  printSummary(name, result[name] as Record<string, unknown>, (performance.now() - t0) / 1000);
}

try {
  await part('transport', () => benchTransport(q ? { messages: 2_000, rounds: 1 } : {}));
  await part('e2e', () => benchE2e(ctx, config.e2e));
  await part('flows', () => benchFlows(ctx, config.flows));
  if (wants('open_loop') || wants('stores')) {
    const why = postgresUnavailable();
    if (why !== undefined) pg = { skipped: why };
    else {
      try {
        pg = await startPostgres();
      } catch (err) {
        pg = { skipped: message(err) };
      }
    }
  }
  await part('open_loop', () =>
    benchOpenLoop(ctx, {
      seconds: config.openSeconds,
      drainMs: q ? 10_000 : undefined,
      warmupUsers: q ? 30 : undefined,
      warmupSeconds: q ? 0.2 : undefined,
      postgres: pg,
      postgresRates: config.openPgRates,
    }),
  );
  await part('stores', () => benchStores(ctx, q ? { users: 100, rounds: 1, warmupUsers: 20, processes: [1, 2], postgres: pg } : { postgres: pg }));
  if ('stop' in pg) pg.stop();
  await part(
    'million',
    () => benchMillion(ctx, q ? { large: 5_000, small: 500, users: 50, rounds: 1, warmupUsers: 20, concurrency: 4 } : {}),
    q || args.million ? undefined : 'run `npm run bench -- --million` (seeds 1,000,000 conversations; a few minutes more)',
  );
  try {
    const { sandbox, hosts } = await ctx.finalCheck();
    result['sandbox'] = { token_requests: sandbox.tokens, late_replies: sandbox.late, stray_messages: sandbox.stray, peak_rss_mb: sandbox.peakRssMb };
    if (result['e2e'] !== undefined && 'colloquy_turns_per_s' in (result['e2e'] as object))
      Object.assign(result['e2e'] as object, { sandbox_token_requests: sandbox.tokens, sandbox_peak_rss_mb: sandbox.peakRssMb, outbound_hosts: hosts });
  } catch (err) {
    failed = true;
    result['check'] = { error: message(err) };
    console.error(`bench: ${message(err)}`);
  }
} finally {
  if ('stop' in pg) pg.stop();
  await ctx.close();
}

const loadEnd = load();
if (result['e2e'] !== undefined && 'colloquy_turns_per_s' in (result['e2e'] as object)) Object.assign(result['e2e'] as object, { bench_peak_rss_mb: peakRssMb(), load_avg_1m: loadStart[0] });
result['goals'] = goals(result);
Object.assign(result, {
  mode: q ? 'quick' : args.million ? 'million' : 'default',
  postgres: 'stop' in pg ? { version: pg.version, port: pg.port, options: pg.options, socket: process.env['BENCH_PG_SOCKET'] === '1' } : pg,
  load_avg: { start: loadStart, end: loadEnd },
  machine: { cpus: cpus().length, cpu_model: cpus()[0]?.model ?? 'unknown', node: process.version, platform: `${process.platform}-${process.arch}` },
  seconds: r1((performance.now() - started) / 1000),
  ok: !failed,
  child_pids: startedPids,
});
console.log('');
console.log("Issue 12's goals (null: not measured in this run)");
for (const [name, g] of Object.entries(result['goals'] as ReturnType<typeof goals>))
  console.log(`  ${name.padEnd(30)} ${String(g.value).padStart(9)}  (${g.target})  ${g.met === null ? '–' : g.met ? 'met' : 'not met'}`);
console.log(`total ${String(result['seconds'])} s · load average at start ${loadStart.join(' ')}, at end ${loadEnd.join(' ')}`);
console.log(JSON.stringify(result));
process.exitCode = failed ? 1 : 0;
