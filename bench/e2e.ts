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
 *
 * A third side, `cloud_api`, is Colloquy again (its own SQLite file) configured for the Cloud API
 * (`COLLOQUY_PROVIDER=cloud-api`, URL and token pointing at the sandbox's Cloud API mode), under the
 * same load, in the same alternation. Before each of its phases the sandbox is told the phase's
 * users wrote (as Meta knows before it delivers the webhook), so the 24-hour window is open and the
 * load generator's work stays out of Colloquy's process. Per message, for both Colloquy sides: CPU
 * time of the process, statements sent to SQLite, and requests the provider answered (messages,
 * and on the Cloud API the read receipt each accepted message costs).
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { r0, r1, r2, r3, summarize } from './figures.js';
import { client, round, type RoundResult, type Target } from './load.js';
import type { ServerStats } from './roles.js';
import type { BenchContext } from './servers.js';
import type { Child } from './ipc.js';

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

type Side = 'colloquy' | 'cloud_api' | 'baseline';

/** What a Colloquy side cost over its measured rounds: CPU, statements and provider calls. */
interface Cost {
  messages: number;
  cpuMs: number;
  /** CPU time of the sandbox's process (the provider, on the same cores) meanwhile. */
  providerCpuMs: number;
  statements: number;
  /** Of those, BEGIN, COMMIT, SAVEPOINT and RELEASE (the group commit's framing). */
  framing: number;
  /** Requests to the provider (token requests aside): messages sent and read receipts. */
  calls: number;
  reads: number;
  tokens: number;
}

const noCost = (): Cost => ({ messages: 0, cpuMs: 0, providerCpuMs: 0, statements: 0, framing: 0, calls: 0, reads: 0, tokens: 0 });

/** The sum of one figure over a target's processes. */
async function sumOf(target: Target, call: 'cpuMs' | 'statements' | 'framingStatements'): Promise<number> {
  return (await Promise.all(target.servers.map((s) => s.call<number>(call)))).reduce((a, b) => a + b, 0);
}

/** Runs one measured round of a Colloquy side, adding what it cost to `cost`. */
async function measured(run: () => Promise<RoundResult>, target: Target, sandbox: Child, cost: Cost): Promise<RoundResult> {
  const cpu = await sumOf(target, 'cpuMs');
  const providerCpu = await sandbox.call<number>('cpuMs');
  const statements = await sumOf(target, 'statements');
  const framing = await sumOf(target, 'framingStatements');
  const r = await run();
  cost.cpuMs += (await sumOf(target, 'cpuMs')) - cpu;
  cost.providerCpuMs += (await sandbox.call<number>('cpuMs')) - providerCpu;
  cost.statements += (await sumOf(target, 'statements')) - statements;
  cost.framing += (await sumOf(target, 'framingStatements')) - framing;
  for (const p of [r.fresh, r.existing]) {
    cost.messages += p.users;
    cost.reads += p.reads;
    cost.tokens += p.calls['token'] ?? 0;
    cost.calls += Object.entries(p.calls).reduce((n, [endpoint, c]) => n + (endpoint === 'token' ? 0 : c), 0);
  }
  return r;
}

/** Per-message figures of a cost. */
function perMessage(c: Cost) {
  const per = (x: number) => r2(x / Math.max(1, c.messages));
  return {
    cpu_ms_per_message: per(c.cpuMs),
    provider_cpu_ms_per_message: per(c.providerCpuMs),
    statements_per_message: per(c.statements),
    framing_statements_per_message: per(c.framing),
    provider_calls_per_message: per(c.calls),
    provider_messages_per_message: per(c.calls - c.reads),
    read_receipts_per_message: per(c.reads),
  };
}

/**
 * Runs the closed-loop end-to-end benchmark; returns flat figures for the JSON line:
 * `colloquy_turns_per_s`, `baseline_req_per_s`, `ratio`, webhook and turn p50/p99 of both,
 * Colloquy's token requests, peak RSS of each server process, the checks (SQLite journal mode),
 * Colloquy's CPU, statements and provider calls per message, and `cloud_api`: the same load through
 * Colloquy configured for the Cloud API (the sandbox playing it), measured in the same alternation.
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
    const colloquy = await ctx.colloquy('colloquy', { kind: 'sqlite', db: join(ctx.dir, 'e2e.db') }, 1, opts.traceStore === true, { countStatements: true });
    targets.push(colloquy);
    // Warm-up: JIT, connections, the token; its first replies become the baseline's reply bodies.
    await round(agent, colloquy, sandbox, ctx.users.take(warmupUsers), concurrency);
    await ctx.learnReplies();
    const baseline = await ctx.baseline();
    targets.push(baseline);
    await round(agent, baseline, sandbox, ctx.users.take(warmupUsers), concurrency);
    const cloud = await ctx.colloquy('colloquy-cloud-api', { kind: 'sqlite', db: join(ctx.dir, 'e2e-cloud-api.db') }, 1, opts.traceStore === true, { provider: 'cloud-api', countStatements: true });
    targets.push(cloud);
    await round(agent, cloud, sandbox, ctx.users.take(warmupUsers), concurrency);

    const results: Record<Side, RoundResult[]> = { colloquy: [], cloud_api: [], baseline: [] };
    const costs: Record<Exclude<Side, 'baseline'>, Cost> = { colloquy: noCost(), cloud_api: noCost() };
    for (let r = 0; r < rounds; r++) {
      const order: Side[] = r % 2 === 0 ? ['baseline', 'colloquy', 'cloud_api'] : ['cloud_api', 'colloquy', 'baseline'];
      for (const side of order) {
        const target = side === 'colloquy' ? colloquy : side === 'cloud_api' ? cloud : baseline;
        const run = () => round(agent, target, sandbox, ctx.users.take(users), concurrency);
        results[side].push(side === 'baseline' ? await run() : await measured(run, target, sandbox, costs[side]));
      }
    }

    const turns = 2 * (warmupUsers + rounds * users);
    const [cs] = await ctx.check(colloquy, turns);
    const [bs] = await ctx.check(baseline);
    const [ks] = await ctx.check(cloud, turns);
    for (const s of [cs!, ks!]) if (s.journalMode !== 'wal') throw new Error(`Colloquy's SQLite file is in ${s.journalMode} mode, not WAL`);
    checkReadReceipts(ks!, costs.cloud_api, turns);
    const c = summarize(results.colloquy);
    const k = summarize(results.cloud_api);
    const b = summarize(results.baseline);
    const seedCost = perMessage(costs.colloquy);
    const cloudCost = perMessage(costs.cloud_api);
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
      colloquy_cpu_ms_per_message: seedCost.cpu_ms_per_message,
      colloquy_provider_cpu_ms_per_message: seedCost.provider_cpu_ms_per_message,
      colloquy_statements_per_message: seedCost.statements_per_message,
      colloquy_framing_statements_per_message: seedCost.framing_statements_per_message,
      colloquy_provider_calls_per_message: seedCost.provider_calls_per_message,
      colloquy_token_requests: cs!.tokenRequests,
      colloquy_turns: cs!.turnsOk,
      colloquy_redeliveries: c.redeliveries,
      colloquy_warnings: cs!.warnings,
      colloquy_peak_rss_mb: cs!.peakRssMb,
      baseline_peak_rss_mb: bs!.peakRssMb,
      sqlite_journal_mode: cs!.journalMode,
      cloud_api: {
        turns_per_s: r0(k.turnsPerS),
        ratio: r3(k.turnsPerS / b.turnsPerS),
        ratio_to_seed: r3(k.turnsPerS / c.turnsPerS),
        new_turns_per_s: r0(k.freshPerS),
        existing_turns_per_s: r0(k.existingPerS),
        ratio_new: r3(k.freshPerS / b.freshPerS),
        ratio_existing: r3(k.existingPerS / b.existingPerS),
        webhook_p50_ms: r2(k.webhook.p50),
        webhook_p99_ms: r2(k.webhook.p99),
        turn_p50_ms: r2(k.turn.p50),
        turn_p99_ms: r2(k.turn.p99),
        turns_per_s_rounds: k.perRound,
        ...cloudCost,
        extra_statements_per_message: r2(cloudCost.statements_per_message - seedCost.statements_per_message),
        extra_framing_statements_per_message: r2(cloudCost.framing_statements_per_message - seedCost.framing_statements_per_message),
        extra_cpu_ms_per_message: r2(cloudCost.cpu_ms_per_message - seedCost.cpu_ms_per_message),
        send_rate: ks!.sendRate ?? null,
        token_requests: ks!.tokenRequests,
        turns: ks!.turnsOk,
        read_receipts: ks!.readReceipts ?? null,
        redeliveries: k.redeliveries,
        warnings: ks!.warnings,
        peak_rss_mb: ks!.peakRssMb,
        ...(ks!.storeTime && { store_ms: ks!.storeTime }),
      },
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

/**
 * On the Cloud API every accepted user message is marked read, once: Colloquy's own count and the
 * provider's must both say one per message, or the variant is not measuring what it says.
 */
function checkReadReceipts(s: ServerStats, cost: Cost, turns: number): void {
  if ((s.readReceiptsFailed ?? 0) !== 0 || s.readReceipts !== turns) {
    throw new Error(`Colloquy on the Cloud API sent ${String(s.readReceipts)} read receipts (${String(s.readReceiptsFailed)} failed) for ${turns} messages`);
  }
  if (cost.reads !== cost.messages) throw new Error(`the sandbox accepted ${cost.reads} read receipts for the ${cost.messages} measured messages`);
}
