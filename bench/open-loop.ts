/**
 * Open loop at fixed rates: webhooks from new users sent evenly spaced at 200, 500 and 1,000 per
 * second for a bounded time each, whatever the server answers, to Colloquy (SQLite, one process)
 * and to the bare relay, alternating sides rate by rate; optionally to Colloquy on PostgreSQL too.
 * For each: webhook ack p50/p99 and webhook → reply accepted by the provider p50/p99 (both from each
 * webhook's scheduled time), and the event-loop delay p99 inside the server process
 * (`monitorEventLoopDelay`, reset before each rate, read over IPC after it).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { percentile, r0, r1, r2 } from './figures.js';
import { StartFailed } from './ipc.js';
import { client, openLoop, round, type OpenLoopResult, type Target } from './load.js';
import type { ThrowawayPostgres } from './postgres.js';
import type { LoopDelay } from './roles.js';
import type { BenchContext } from './servers.js';

/** Settings of {@link benchOpenLoop}. */
export interface BenchOpenLoopOptions {
  /** Webhooks per second (default 200, 500, 1,000). */
  readonly rates?: readonly number[] | undefined;
  /** Seconds of sending at each rate (default 5). */
  readonly seconds?: number | undefined;
  /** The longest wait for the last replies after the last webhook, ms (default 15,000). */
  readonly drainMs?: number | undefined;
  /** Users of each side's closed-loop warm-up (default 200). */
  readonly warmupUsers?: number | undefined;
  /** PostgreSQL for the `colloquy_postgres` side, or why there is none. */
  readonly postgres?: ThrowawayPostgres | { readonly skipped: string } | undefined;
  /** Rates run on PostgreSQL (default 500 only). */
  readonly postgresRates?: readonly number[] | undefined;
  /**
   * Seconds of open-loop sending at {@link WARMUP_RATE} before a side's first measured rate, not
   * counted (default 1; 0: none). Reported as `<side>.warmup`.
   */
  readonly warmupSeconds?: number | undefined;
}

/**
 * The open-loop warm-up's rate. The closed-loop warm-up alone left a process cold for an open loop:
 * on PostgreSQL, the first 0.5–1 s at 500/s answered acks up to 0.5–1.8 s late (every request's
 * handling inside the server stayed under 0.1 s, and no statement took over 60 ms at the database),
 * which made the side's p99 a measure of its first second. SQLite and the relay were measured at
 * 200/s first, and so were warm at 500/s; now every side is, before whatever rate comes first.
 */
const WARMUP_RATE = 200;

/** Keep-alive connections per server process. */
const CONNECTIONS = 256;

type SideName = 'colloquy' | 'baseline' | 'colloquy_postgres';
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 400);

/** Runs the open-loop rates; returns the `open_loop` object of the JSON line. */
export async function benchOpenLoop(ctx: BenchContext, opts: BenchOpenLoopOptions = {}): Promise<Record<string, unknown>> {
  const rates = opts.rates ?? [200, 500, 1_000];
  const seconds = opts.seconds ?? 5;
  const drainMs = opts.drainMs ?? 15_000;
  const warmupUsers = opts.warmupUsers ?? 200;
  const pgRates = opts.postgresRates ?? [500];
  const warmupSeconds = opts.warmupSeconds ?? 1;
  const started = performance.now();
  // A keep-alive pool per server, as a load balancer's upstream: beyond it requests wait in the
  // client, and their latency still counts from their scheduled time. (Opening a connection per
  // late request instead turns an overloaded server into connect timeouts.)
  const agent = client(CONNECTIONS);
  const { child: sandbox } = await ctx.sandbox();
  const sides = new Map<SideName, Target>();
  const out: Record<string, unknown> = {};
  try {
    sides.set('colloquy', await ctx.colloquy('open-colloquy', { kind: 'sqlite', db: join(ctx.dir, 'open-loop.db') }));
    await round(agent, sides.get('colloquy')!, sandbox, ctx.users.take(warmupUsers), 32);
    await ctx.learnReplies();
    sides.set('baseline', await ctx.baseline());
    await round(agent, sides.get('baseline')!, sandbox, ctx.users.take(warmupUsers), 32);
    const pg = opts.postgres;
    if (pg === undefined || 'skipped' in pg) out['colloquy_postgres'] = { skipped: pg?.skipped ?? 'not asked for' };
    else {
      try {
        const target = await ctx.colloquy('open-colloquy-postgres', { kind: 'postgres', url: pg.createDatabase('bench_open_loop'), scratch: join(ctx.dir, 'scratch-open-loop') });
        sides.set('colloquy_postgres', target);
        await round(agent, target, sandbox, ctx.users.take(warmupUsers), 32);
      } catch (err) {
        await stopSide(ctx, sides, 'colloquy_postgres');
        out['colloquy_postgres'] = { skipped: `${err instanceof StartFailed ? 'the PostgreSQL store could not be opened' : 'failed'}: ${message(err)}` };
      }
    }
    const results: Partial<Record<SideName, Record<string, unknown>>> = {};
    for (const [i, rate] of rates.entries()) {
      const order: SideName[] = i % 2 === 0 ? ['baseline', 'colloquy', 'colloquy_postgres'] : ['colloquy_postgres', 'colloquy', 'baseline'];
      for (const side of order) {
        const target = sides.get(side);
        if (target === undefined || (side === 'colloquy_postgres' && !pgRates.includes(rate))) continue;
        /** One phase at `at`/s: the open loop, and the server's event-loop delay over it. */
        const phase = async (at: number, secs: number) => {
          await Promise.all(target.servers.map((s) => s.call('loopReset')));
          const r = await openLoop(agent, target, sandbox, ctx.users, at, secs, drainMs);
          return { sent: r.sent, figures: figures(r, await Promise.all(target.servers.map((s) => s.call<LoopDelay>('loop')))) };
        };
        if (warmupSeconds > 0 && results[side]?.['warmup'] === undefined) {
          const warm = Math.min(WARMUP_RATE, rate);
          (results[side] ??= {})['warmup'] = { rate: warm, seconds: warmupSeconds, ...(await phase(warm, warmupSeconds)).figures };
        }
        const pgSide = side === 'colloquy_postgres';
        const colloquySide = side !== 'baseline';
        const before = pgSide ? await statementsOf(target) : 0;
        const cpuBefore = colloquySide ? await cpuMsOf(target) : 0;
        const measured = await phase(rate, seconds);
        const statements = pgSide ? (await statementsOf(target)) - before : 0;
        const cpu = colloquySide ? (await cpuMsOf(target)) - cpuBefore : 0;
        const { sent } = measured;
        (results[side] ??= {})[String(rate)] = {
          ...measured.figures,
          ...(colloquySide && { cpu_ms_per_message: r2(cpu / Math.max(1, sent)) }),
          ...(pgSide && { statements_per_message: r2(statements / Math.max(1, sent)) }),
        };
      }
    }
    for (const [side, target] of sides) {
      try {
        const stats = await ctx.check(target);
        out[side] = { ...results[side], peak_rss_mb: Math.max(...stats.map((s) => s.peakRssMb)), warnings: stats.reduce((n, s) => n + s.warnings, 0) };
      } catch (err) {
        out[side] = { ...results[side], error: message(err) };
      }
    }
    return { ...out, rates, seconds_per_rate: seconds, warmup_seconds: warmupSeconds, drain_ms: drainMs, connections: CONNECTIONS, seconds: r1((performance.now() - started) / 1000) };
  } finally {
    await agent.destroy(); // answers still awaited after the drain time are not waited for
    for (const side of [...sides.keys()].reverse()) await stopSide(ctx, sides, side);
  }
}

/** Statements the target's processes sent to PostgreSQL so far. */
async function statementsOf(target: Target): Promise<number> {
  return (await Promise.all(target.servers.map((s) => s.call<number>('statements')))).reduce((a, b) => a + b, 0);
}

/** CPU time (user and system) the target's processes used so far, in ms. */
async function cpuMsOf(target: Target): Promise<number> {
  return (await Promise.all(target.servers.map((s) => s.call<number>('cpuMs')))).reduce((a, b) => a + b, 0);
}

async function stopSide(ctx: BenchContext, sides: Map<SideName, Target>, side: SideName): Promise<void> {
  const t = sides.get(side);
  sides.delete(side);
  if (t !== undefined) await ctx.stop(t);
}

function figures(r: OpenLoopResult, loop: readonly LoopDelay[]): Record<string, unknown> {
  return {
    sent: r.sent,
    achieved_per_s: r0(r.achievedRate),
    ack_p50_ms: r2(percentile(r.ackMs, 50)),
    ack_p99_ms: r2(percentile(r.ackMs, 99)),
    reply_p50_ms: r2(percentile(r.replyMs, 50)),
    reply_p99_ms: r2(percentile(r.replyMs, 99)),
    failed: r.failed,
    unanswered: r.unanswered,
    redeliveries: r.redeliveries,
    missing_replies: r.missing,
    event_loop_delay_p99_ms: r2(Math.max(...loop.map((l) => l.p99))),
    event_loop_delay_max_ms: r1(Math.max(...loop.map((l) => l.max))),
    generator_max_lag_ms: r1(r.maxSendLagMs),
    ...(r.failures.length > 0 && { failures: r.failures }),
  };
}
