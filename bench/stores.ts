/**
 * Several processes and stores, closed loop: Colloquy end-to-end turns/s with 1, 2 and 3 processes
 * on one SQLite file and on one PostgreSQL database, the load generator routing each webhook to a
 * process picked at random (as a load balancer would; a user's two turns usually land on different
 * processes). All configurations, and the bare relay as the yardstick, are started first, then
 * measured in alternating order, round by round, so that a change in the machine's load touches
 * them alike; each configuration's `ratio_to_baseline` is its turns/s ÷ the relay's.
 *
 * PostgreSQL is the run's throwaway server (bench/postgres.ts), one fresh database per configuration,
 * given to the server as `COLLOQUY_DATABASE_URL`. When PostgreSQL cannot be started, or this build
 * of Colloquy cannot open a PostgreSQL store, its configurations are reported as skipped with the
 * reason; any other configuration that fails is reported with its error and the rest go on.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { r0, r1, r2, r3, summarize } from './figures.js';
import { StartFailed } from './ipc.js';
import { client, round, type RoundResult, type Target } from './load.js';
import type { ThrowawayPostgres } from './postgres.js';
import type { BenchContext, StoreSpec } from './servers.js';

/** Settings of {@link benchStores}. */
export interface BenchStoresOptions {
  /** Users per measured round of each configuration (default 500; two turns each). */
  readonly users?: number | undefined;
  /** Measured rounds of each configuration, alternated (default 2); the best is reported. */
  readonly rounds?: number | undefined;
  /** Webhooks in flight at once, over all processes of a configuration (default 32). */
  readonly concurrency?: number | undefined;
  /** Users of each configuration's warm-up round (default 100). */
  readonly warmupUsers?: number | undefined;
  /** Process counts to run on each store (default 1, 2, 3). */
  readonly processes?: readonly number[] | undefined;
  /** The PostgreSQL server to use, or why there is none. */
  readonly postgres: ThrowawayPostgres | { readonly skipped: string };
}

interface Config {
  readonly key: string;
  readonly store: 'sqlite' | 'postgres' | 'relay';
  readonly processes: number;
}
type Outcome = { target: Target; rounds: RoundResult[] } | { skipped: string } | { error: string };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 400);

/** Runs every configuration; returns the `stores` object of the JSON line. */
export async function benchStores(ctx: BenchContext, opts: BenchStoresOptions): Promise<Record<string, unknown>> {
  const users = opts.users ?? 500;
  const rounds = opts.rounds ?? 2;
  const concurrency = opts.concurrency ?? 32;
  const warmupUsers = opts.warmupUsers ?? 100;
  const counts = opts.processes ?? [1, 2, 3];
  const started = performance.now();
  const configs: Config[] = (['sqlite', 'postgres'] as const).flatMap((store) => counts.map((processes) => ({ key: `${store}_${processes}`, store, processes })));
  const outcomes = new Map<string, Outcome>();
  const agent = client(concurrency);
  const { child: sandbox } = await ctx.sandbox();
  const pg = 'skipped' in opts.postgres ? undefined : opts.postgres;
  let pgSkipped = 'skipped' in opts.postgres ? opts.postgres.skipped : undefined;
  try {
    for (const c of configs) {
      if (c.store === 'postgres' && pgSkipped !== undefined) {
        outcomes.set(c.key, { skipped: pgSkipped });
        continue;
      }
      const store: StoreSpec =
        c.store === 'sqlite' ? { kind: 'sqlite', db: join(ctx.dir, `${c.key}.db`) } : { kind: 'postgres', url: pg!.createDatabase(`bench_${c.key}`), scratch: join(ctx.dir, `scratch-${c.key}`) };
      try {
        const target = await ctx.colloquy(c.key, store, c.processes);
        outcomes.set(c.key, { target, rounds: [] });
        await round(agent, target, sandbox, ctx.users.take(warmupUsers), concurrency);
      } catch (err) {
        const skip = c.store === 'postgres' && err instanceof StartFailed;
        if (skip) pgSkipped = `the PostgreSQL store could not be opened: ${message(err)}`;
        await stopOutcome(ctx, outcomes.get(c.key));
        outcomes.set(c.key, skip ? { skipped: pgSkipped! } : { error: message(err) });
      }
    }
    // The relay joins the alternation, so that each configuration's ratio to it is measured alike.
    const relay: Config = { key: 'baseline', store: 'relay', processes: 1 };
    try {
      await ctx.learnReplies();
      const target = await ctx.baseline();
      outcomes.set(relay.key, { target, rounds: [] });
      await round(agent, target, sandbox, ctx.users.take(warmupUsers), concurrency);
    } catch (err) {
      await stopOutcome(ctx, outcomes.get(relay.key));
      outcomes.set(relay.key, { error: message(err) });
    }
    const measured = [relay, ...configs];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? measured : [...measured].reverse();
      for (const c of order) {
        const o = outcomes.get(c.key);
        if (o === undefined || !('target' in o)) continue;
        try {
          o.rounds.push(await round(agent, o.target, sandbox, ctx.users.take(users), concurrency));
        } catch (err) {
          await stopOutcome(ctx, o);
          outcomes.set(c.key, { error: message(err) });
        }
      }
    }
    const turns = 2 * (warmupUsers + rounds * users);
    const base = await figures(ctx, relay, outcomes.get(relay.key)!, turns);
    const baseRate = typeof base['turns_per_s'] === 'number' ? base['turns_per_s'] : undefined;
    const out: Record<string, unknown> = {};
    const perS: Record<string, number | null> = {};
    for (const c of configs) {
      const f = await figures(ctx, c, outcomes.get(c.key)!, turns);
      const rate = typeof f['turns_per_s'] === 'number' ? f['turns_per_s'] : undefined;
      out[c.key] = rate === undefined ? f : { ...f, ratio_to_baseline: baseRate === undefined ? null : r3(rate / baseRate) };
      perS[c.key] = rate ?? null;
    }
    return {
      turns_per_s: perS,
      baseline_req_per_s: baseRate ?? null,
      ...(base['error'] !== undefined && { baseline_error: base['error'] }),
      ...out,
      postgres_version: pg?.version ?? null,
      postgres_skipped: pgSkipped ?? null,
      users,
      rounds,
      concurrency,
      warmup_users: warmupUsers,
      seconds: r1((performance.now() - started) / 1000),
    };
  } finally {
    await agent.close();
    for (const o of outcomes.values()) await stopOutcome(ctx, o);
  }
}

async function stopOutcome(ctx: BenchContext, o: Outcome | undefined): Promise<void> {
  if (o !== undefined && 'target' in o) await ctx.stop(o.target);
}

/** One configuration's figures (or why it has none), after checking its processes' stats. */
async function figures(ctx: BenchContext, c: Config, o: Outcome, turns: number): Promise<Record<string, unknown>> {
  if (!('target' in o)) return { processes: c.processes, ...o };
  if (o.rounds.length === 0) return { processes: c.processes, error: 'no round was measured' };
  let stats;
  try {
    stats = await ctx.check(o.target, turns);
  } catch (err) {
    return { processes: c.processes, error: message(err) };
  }
  const s = summarize(o.rounds);
  return {
    processes: c.processes,
    turns_per_s: r0(s.turnsPerS),
    turns_per_s_rounds: s.perRound,
    turn_p50_ms: r2(s.turn.p50),
    turn_p99_ms: r2(s.turn.p99),
    webhook_p50_ms: r2(s.webhook.p50),
    webhook_p99_ms: r2(s.webhook.p99),
    peak_rss_mb: stats.map((x) => x.peakRssMb),
    turns_by_process: stats.map((x) => x.turnsOk),
    redeliveries: s.redeliveries,
    warnings: stats.reduce((n, x) => n + x.warnings, 0),
    store_class: stats[0]?.storeClass ?? null,
  };
}
