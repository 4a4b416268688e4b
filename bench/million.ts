/**
 * Turn latency with many stored conversations: one store seeded with 1,000,000 conversations (the
 * `--million` mode; fewer with `--quick`) and one with 1,000, both copies of a real conversation
 * (bench/seed.ts), each served by its own Colloquy process. Closed-loop rounds of new users (a text
 * → a new conversation, then a tap on it) alternate between the two; the figures are each store's
 * turn latency p50/p99, turns/s, and the ratio large ÷ small. Start-up time (the runtime resumes the
 * active conversations it finds) and peak RSS are reported too.
 */
import { copyFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { r0, r1, r2, r3, summarize } from './figures.js';
import type { Child } from './ipc.js';
import { client, round, type RoundResult, type Target } from './load.js';
import { seedConversations, type SeedReport } from './seed.js';
import type { BenchContext } from './servers.js';

/** Settings of {@link benchMillion}. */
export interface BenchMillionOptions {
  /** Conversations in the large store (default 1,000,000). */
  readonly large?: number | undefined;
  /** Conversations in the small store (default 1,000). */
  readonly small?: number | undefined;
  /** Users per measured round on each store (default 500; two turns each). */
  readonly users?: number | undefined;
  /** Measured rounds on each store, alternated (default 2). */
  readonly rounds?: number | undefined;
  /** Webhooks in flight (default 8: latency at a moderate load, not saturation). */
  readonly concurrency?: number | undefined;
  /** Users of each store's warm-up round (default 200). */
  readonly warmupUsers?: number | undefined;
}

/** Runs the comparison; returns the `million` object of the JSON line. */
export async function benchMillion(ctx: BenchContext, opts: BenchMillionOptions = {}): Promise<Record<string, unknown>> {
  const large = opts.large ?? 1_000_000;
  const small = opts.small ?? 1_000;
  const users = opts.users ?? 500;
  const rounds = opts.rounds ?? 2;
  const concurrency = opts.concurrency ?? 8;
  const warmupUsers = opts.warmupUsers ?? 200;
  const started = performance.now();
  const agent = client(concurrency);
  const { child: sandbox } = await ctx.sandbox();
  const targets: Target[] = [];
  try {
    const template = await makeTemplate(ctx, agent, sandbox);
    const seeded: Record<'small' | 'large', { file: string; seed: SeedReport }> = {
      small: seedCopy(ctx, template, 'small', small),
      large: seedCopy(ctx, template, 'large', large),
    };
    const sides = {} as Record<'small' | 'large', { target: Target; readyMs: number; rounds: RoundResult[] }>;
    for (const name of ['small', 'large'] as const) {
      const t0 = performance.now();
      const target = await ctx.colloquy(`million-${name}`, { kind: 'sqlite', db: seeded[name].file });
      targets.push(target);
      sides[name] = { target, readyMs: performance.now() - t0, rounds: [] };
      await round(agent, target, sandbox, ctx.users.take(warmupUsers), concurrency);
    }
    for (let r = 0; r < rounds; r++) {
      for (const name of r % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const)) {
        sides[name].rounds.push(await round(agent, sides[name].target, sandbox, ctx.users.take(users), concurrency));
      }
    }
    const out: Record<string, unknown> = {};
    const sum = {} as Record<'small' | 'large', ReturnType<typeof summarize>>;
    for (const name of ['small', 'large'] as const) {
      const [stats] = await ctx.check(sides[name].target, 2 * (warmupUsers + rounds * users));
      const s = (sum[name] = summarize(sides[name].rounds));
      out[name] = {
        conversations: seeded[name].seed.conversations,
        active: seeded[name].seed.active,
        rows: seeded[name].seed.rows,
        seed_s: r1(seeded[name].seed.ms / 1000),
        db_mb: r0(statSync(seeded[name].file).size / 1024 / 1024),
        ready_ms: r0(sides[name].readyMs),
        turns_per_s: r0(s.turnsPerS),
        turn_p50_ms: r2(s.turn.p50),
        turn_p99_ms: r2(s.turn.p99),
        new_turn_p50_ms: r2(s.turnFresh.p50),
        new_turn_p99_ms: r2(s.turnFresh.p99),
        existing_turn_p50_ms: r2(s.turnExisting.p50),
        existing_turn_p99_ms: r2(s.turnExisting.p99),
        webhook_p99_ms: r2(s.webhook.p99),
        peak_rss_mb: stats!.peakRssMb,
        redeliveries: s.redeliveries,
        warnings: stats!.warnings,
      };
    }
    return {
      ratio_turn_p50: r3(sum.large.turn.p50 / sum.small.turn.p50),
      ratio_turn_p99: r3(sum.large.turn.p99 / sum.small.turn.p99),
      ratio_turns_per_s: r3(sum.large.turnsPerS / sum.small.turnsPerS),
      ...out,
      users,
      rounds,
      concurrency,
      warmup_users: warmupUsers,
      seconds: r1((performance.now() - started) / 1000),
    };
  } finally {
    await agent.close();
    for (const t of targets.reverse()) await ctx.stop(t);
  }
}

/** Runs one real conversation (a text, a tap) on a fresh store and closes it: the rows to copy. */
async function makeTemplate(ctx: BenchContext, agent: ReturnType<typeof client>, sandbox: Child): Promise<{ file: string; conversationId: number }> {
  const file = join(ctx.dir, 'million-template.db');
  const target = await ctx.colloquy('million-template', { kind: 'sqlite', db: file });
  try {
    const [user] = ctx.users.take(1);
    await round(agent, target, sandbox, [user!], 1);
    await ctx.check(target, 2);
  } finally {
    await ctx.stop(target);
  }
  const db = new Database(file, { readonly: true });
  try {
    const row = db.prepare("SELECT id FROM conversations WHERE status = 'active' ORDER BY id DESC LIMIT 1").get() as { id: number } | undefined;
    if (row === undefined) throw new Error('the template conversation is not in the store');
    return { file, conversationId: row.id };
  } finally {
    db.close();
  }
}

function seedCopy(ctx: BenchContext, template: { file: string; conversationId: number }, name: string, n: number): { file: string; seed: SeedReport } {
  const file = join(ctx.dir, `million-${name}.db`);
  copyFileSync(template.file, file);
  for (const ext of ['-wal', '-shm']) if (existsSync(template.file + ext)) copyFileSync(template.file + ext, file + ext);
  return { file, seed: seedConversations(file, template.conversationId, n) };
}
