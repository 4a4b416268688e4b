/**
 * The end-to-end turn, closed loop: signed webhook → inbox commit → turn → outbox → send adapter →
 * outbound accepted by the sandbox, for many distinct users, beside the bare Express relay
 * (bench/baseline-server.ts) measured in the same run against the same sandbox, alternating sides.
 *
 * Processes (every socket on 127.0.0.1): this process is the load generator (undici, `concurrency`
 * webhooks in flight); the sandbox provider, Colloquy (`startServer` with the pizza bot on a SQLite
 * WAL file) and the relay each run in a child of their own (bench/roles.ts), so no side shares its
 * event loop with the provider or the client, and each server's peak RSS is its own.
 *
 * Each round has two phases over fresh users: "new" (each user sends a text → a new conversation,
 * the bot answers with a list) and "existing" (each user taps the list row `margherita` → a second
 * turn on the stored conversation, answered with reply buttons). A phase's rate is users ÷ the time
 * from the first webhook sent to the last outbound accepted by the sandbox; for Colloquy the
 * webhook answers after the commit and the send is asynchronous, for the relay the webhook
 * answers after the forward, so both measure the same thing: user message in → reply accepted.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { r0, r1, r2, r3, summarize } from './figures.js';
import { client, round, type RoundResult, type Target } from './load.js';
import type { BenchContext } from './servers.js';

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
  /** Time every store method in Colloquy's process and report it as `colloquy_store_ms` (a diagnostic). */
  readonly traceStore?: boolean | undefined;
}

type Side = 'colloquy' | 'baseline';

/**
 * Runs the closed-loop end-to-end benchmark; returns flat figures for the JSON line:
 * `colloquy_turns_per_s`, `baseline_req_per_s`, `ratio`, webhook and turn p50/p99 of both,
 * Colloquy's token requests, peak RSS of each server process, and the checks (SQLite journal mode).
 */
export async function benchE2e(ctx: BenchContext, opts: BenchE2eOptions = {}): Promise<Record<string, unknown>> {
  const users = opts.users ?? 2_000;
  const concurrency = opts.concurrency ?? 32;
  const rounds = opts.rounds ?? 2;
  const warmupUsers = opts.warmupUsers ?? 200;
  const started = performance.now();
  const agent = client(concurrency);
  const { child: sandbox } = await ctx.sandbox();
  const targets: Target[] = [];
  try {
    const colloquy = await ctx.colloquy('colloquy', { kind: 'sqlite', db: join(ctx.dir, 'e2e.db') }, 1, opts.traceStore === true);
    targets.push(colloquy);
    // Warm-up: JIT, connections, the token; its first replies become the baseline's reply bodies.
    await round(agent, colloquy, sandbox, ctx.users.take(warmupUsers), concurrency);
    await ctx.learnReplies();
    const baseline = await ctx.baseline();
    targets.push(baseline);
    await round(agent, baseline, sandbox, ctx.users.take(warmupUsers), concurrency);

    const results: Record<Side, RoundResult[]> = { colloquy: [], baseline: [] };
    for (let r = 0; r < rounds; r++) {
      const order: Side[] = r % 2 === 0 ? ['baseline', 'colloquy'] : ['colloquy', 'baseline'];
      for (const side of order) results[side].push(await round(agent, side === 'colloquy' ? colloquy : baseline, sandbox, ctx.users.take(users), concurrency));
    }

    const [cs] = await ctx.check(colloquy, 2 * (warmupUsers + rounds * users));
    const [bs] = await ctx.check(baseline);
    if (cs!.journalMode !== 'wal') throw new Error(`Colloquy's SQLite file is in ${cs!.journalMode} mode, not WAL`);
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
      colloquy_token_requests: cs!.tokenRequests,
      colloquy_turns: cs!.turnsOk,
      colloquy_redeliveries: c.redeliveries,
      colloquy_warnings: cs!.warnings,
      colloquy_peak_rss_mb: cs!.peakRssMb,
      baseline_peak_rss_mb: bs!.peakRssMb,
      sqlite_journal_mode: cs!.journalMode,
      users,
      concurrency,
      rounds,
      warmup_users: warmupUsers,
      seconds: r1((performance.now() - started) / 1000),
      ...(cs!.storeTime && { colloquy_store_ms: cs!.storeTime }),
    };
  } finally {
    await agent.close();
    for (const t of targets.reverse()) await ctx.stop(t);
  }
}
