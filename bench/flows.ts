/**
 * Live flows (`flows` part): the Flow endpoint (`POST /flows`) answering from the conversation,
 * beside a bare endpoint that only checks, decrypts and encrypts (bench/flow-baseline.ts), both in
 * processes of their own, measured in the same run, rounds alternated.
 *
 * Colloquy runs `startServer` with the live-flow bot (bench/flow-bot.ts) on a SQLite file, a real
 * 2048-bit key pair written to the run's folder (the private half encrypted with a passphrase) and
 * the bench's webhook secret, which also signs the Flow requests. Per round, over new users:
 * 1. each user writes (a signed webhook); the bot sends its live flow, and the flow token is read
 *    from what the sandbox provider accepted;
 * 2. every user's INIT, then every user's read-only `DAYS` submit, then the durable `CONFIRM` submit
 *    (the bot books and sends one text), then that submit replayed with a fresh AES key and IV,
 *    each action `concurrency` requests at a time (bench/flow-walk.ts), the process idle between
 *    actions so that each action's CPU and SQLite statements are its own;
 * 3. each user's `nfm_reply` webhook, which must run nothing.
 * The baseline gets the same four actions with tokens of its own. The part fails when an answer is
 * not a 200 that decrypts, an answer is wrong, a replay answers differently, a user gets the booking
 * text other than exactly once, or Colloquy's own count of Flow requests by outcome disagrees.
 */
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { percentile, r1, r2 } from './figures.js';
import { bookingText } from './flow-shape.js';
import { FLOW_ACTIONS, walkAction, type ActionResult, type FlowAction, type FlowUser, type WalkTarget } from './flow-walk.js';
import { counters, writeAndRead, type FlowCost } from './flow-webhooks.js';
import { SECRET, type Child } from './ipc.js';
import { client, type Target } from './load.js';
import type { SandboxStats } from './roles.js';
import type { BenchContext } from './servers.js';

/** Settings of {@link benchFlows}. */
export interface BenchFlowsOptions {
  /** New users per measured round (default 500); each walks one flow (4 Flow requests, 2 webhooks). */
  readonly users?: number | undefined;
  /** Measured rounds per side, alternated (default 2). */
  readonly rounds?: number | undefined;
  /** Flow requests (and webhooks) in flight at once (default 8). */
  readonly concurrency?: number | undefined;
  /** Users of each side's warm-up round, not counted (default 50). */
  readonly warmupUsers?: number | undefined;
}

const zero = (): FlowCost => ({ n: 0, cpuMs: 0, statements: 0, framing: 0 });

/** Latencies and costs of one side over its measured rounds. */
interface SideRecord {
  readonly ms: Record<FlowAction, number[]>;
  readonly cost: Record<FlowAction, FlowCost>;
}

const record = (): SideRecord => ({
  ms: { init: [], read: [], submit: [], replay: [] },
  cost: { init: zero(), read: zero(), submit: zero(), replay: zero() },
});

/** What a round needs. */
interface Sides {
  readonly agent: Agent;
  readonly sandbox: Child;
  readonly colloquy: Target;
  readonly baseline: Target;
  readonly publicKey: ReturnType<typeof createPublicKey>;
  readonly concurrency: number;
}

const add = (into: FlowCost, n: number, d: Omit<FlowCost, 'n'>): void => {
  into.n += n;
  into.cpuMs += d.cpuMs;
  into.statements += d.statements;
  into.framing += d.framing;
};

function throwIfFailed(side: string, action: FlowAction, r: ActionResult, users: number): void {
  if (r.failed > 0) throw new Error(`${side}: ${r.failed} of ${users} ${action} requests failed, e.g. ${r.failures.join(' | ')}`);
}

/** One Colloquy round: write, walk every action, the nfm_replies; checks the bookings; adds to `into` when measured. */
async function colloquyRound(s: Sides, numbers: readonly string[], into: SideRecord | undefined, webhooks: Record<'write' | 'nfm_reply', FlowCost>): Promise<void> {
  const server = s.colloquy.servers[0]!;
  const target: WalkTarget = { agent: s.agent, origin: new URL(s.colloquy.urls[0]!).origin, publicKey: s.publicKey, checkContent: true };
  const flows = await writeAndRead(s, numbers, 'write', into === undefined ? undefined : webhooks.write);
  const lo = Number(numbers[0]);
  await s.sandbox.call('arm', { n: numbers.length, lo, hi: lo + numbers.length - 1, capture: true });
  const booked = s.sandbox.call<number>('wait', undefined, 120_000);
  booked.catch(() => undefined); // awaited after the submits, unless they failed first
  for (const action of FLOW_ACTIONS) {
    const since = await counters(server, true);
    const r = await walkAction(target, flows, action, s.concurrency);
    throwIfFailed('Colloquy', action, r, flows.length);
    if (action === 'submit') await bookedWithin(s.sandbox, booked, flows.length); // the submit's send counts as the submit's
    await server.call('idle');
    if (into !== undefined) {
      into.ms[action].push(...r.ms);
      add(into.cost[action], flows.length, await since());
    }
  }
  checkBookings(await s.sandbox.call<{ bodies?: Record<string, string[]> }>('collect'), flows);
  await writeAndRead(s, numbers, 'nfm_reply', into === undefined ? undefined : webhooks.nfm_reply, flows);
}

/** How long the booking texts may take to arrive once every submit was answered. */
const BOOKED_MS = 30_000;

/** Waits for every booking text (`booked`: the sandbox's armed count reached); fails after {@link BOOKED_MS}. */
async function bookedWithin(sandbox: Child, booked: Promise<number>, n: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), BOOKED_MS);
  });
  try {
    if ((await Promise.race([booked, late])) !== 'late') return;
  } finally {
    clearTimeout(timer);
  }
  const got = await sandbox.call<number>('count');
  throw new Error(`${BOOKED_MS / 1000} s after every submit was answered, the sandbox had accepted ${got} of the ${n} booking texts`);
}

/** Each user got exactly one message after the flow opened: the booking text, once. */
function checkBookings(seen: { bodies?: Record<string, string[]> }, flows: readonly FlowUser[]): void {
  const wrong: string[] = [];
  for (const f of flows) {
    const got = seen.bodies?.[f.user] ?? [];
    const want = bookingText(`R${f.user}`, 'tue', '10:30');
    if (got.length !== 1 || !(got[0] === want || got[0]!.includes(JSON.stringify(want)))) wrong.push(`${f.user}: ${got.length} messages`);
  }
  if (wrong.length > 0) throw new Error(`${wrong.length} of ${flows.length} users did not get their booking text exactly once, e.g. ${wrong.slice(0, 3).join(', ')}`);
}

/** One baseline round: the same four actions with tokens of its own. */
async function baselineRound(s: Sides, numbers: readonly string[], into: SideRecord | undefined): Promise<void> {
  const server = s.baseline.servers[0]!;
  const target: WalkTarget = { agent: s.agent, origin: new URL(s.baseline.urls[0]!).origin, publicKey: s.publicKey, checkContent: false };
  const flows: FlowUser[] = numbers.map((user) => ({ user, token: `ft_baseline_${user}`, answers: {} }));
  for (const action of FLOW_ACTIONS) {
    const since = await counters(server, false);
    const r = await walkAction(target, flows, action, s.concurrency);
    throwIfFailed('the baseline', action, r, flows.length);
    if (into !== undefined) {
      into.ms[action].push(...r.ms);
      add(into.cost[action], flows.length, await since());
    }
  }
}

/** Writes a 2048-bit key pair, the private half encrypted with a new passphrase, to `dir`. */
function keyPair(dir: string): { path: string; passphrase: string; publicKey: ReturnType<typeof createPublicKey> } {
  mkdirSync(dir, { recursive: true });
  const passphrase = randomBytes(16).toString('hex');
  const pair = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
  });
  const path = join(dir, 'flow-private.pem');
  writeFileSync(path, pair.privateKey, { mode: 0o600 });
  return { path, passphrase, publicKey: createPublicKey(pair.publicKey) };
}

/** Runs the part; returns its figures for the JSON line (`flows`). */
export async function benchFlows(ctx: BenchContext, opts: BenchFlowsOptions = {}): Promise<Record<string, unknown>> {
  const users = opts.users ?? 500;
  const rounds = opts.rounds ?? 2;
  const concurrency = opts.concurrency ?? 8;
  const warmupUsers = opts.warmupUsers ?? 50;
  const started = performance.now();
  const key = keyPair(join(ctx.dir, 'flows'));
  const { child: sandbox } = await ctx.sandbox();
  const lateBefore = (await sandbox.call<SandboxStats>('stats')).late;
  const agent = client(concurrency);
  const targets: Target[] = [];
  try {
    const env = { COLLOQUY_FLOW_PRIVATE_KEY: key.path, COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: key.passphrase };
    const colloquy = await ctx.colloquy('flows', { kind: 'sqlite', db: join(ctx.dir, 'flows.db') }, 1, false, { countStatements: true, bot: 'flows', env });
    targets.push(colloquy);
    const baseline = await ctx.flowBaseline({ secret: SECRET, privateKeyPath: key.path, passphrase: key.passphrase });
    targets.push(baseline);
    const s: Sides = { agent, sandbox, colloquy, baseline, publicKey: key.publicKey, concurrency };
    const webhooks = { write: zero(), nfm_reply: zero() };
    await colloquyRound(s, ctx.users.take(warmupUsers), undefined, webhooks);
    await baselineRound(s, ctx.users.take(warmupUsers), undefined);
    const c = record();
    const b = record();
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? (['baseline', 'colloquy'] as const) : (['colloquy', 'baseline'] as const);
      for (const side of order) {
        if (side === 'colloquy') await colloquyRound(s, ctx.users.take(users), c, webhooks);
        else await baselineRound(s, ctx.users.take(users), b);
      }
    }
    const walked = warmupUsers + rounds * users;
    const [cs] = await ctx.check(colloquy);
    const [bs] = await ctx.check(baseline);
    const seen = await colloquy.servers[0]!.call<Record<string, number>>('flowRequests');
    const expected = { INIT: walked, data_exchange_ok: 2 * walked, data_exchange_replayed: walked };
    const counted = { INIT: seen['INIT:ok'] ?? 0, data_exchange_ok: seen['data_exchange:ok'] ?? 0, data_exchange_replayed: seen['data_exchange:replayed'] ?? 0 };
    const total = Object.values(seen).reduce((a, x) => a + x, 0);
    if (JSON.stringify(counted) !== JSON.stringify(expected) || total !== 4 * walked)
      throw new Error(`Colloquy counted Flow requests ${JSON.stringify(seen)}, expected ${JSON.stringify(expected)} and nothing else`);
    const late = (await sandbox.call<SandboxStats>('stats')).late - lateBefore;
    if (late !== 0) throw new Error(`${late} messages reached users of an earlier phase late (a second booking text?)`);
    return {
      ...figures(c, b),
      webhooks: { write: perMessage(webhooks.write), nfm_reply: perMessage(webhooks.nfm_reply) },
      checks: { flows_walked: walked, flow_requests: seen, bookings_once: walked, replays_identical: walked },
      colloquy_warnings: cs!.warnings,
      colloquy_peak_rss_mb: cs!.peakRssMb,
      baseline_peak_rss_mb: bs!.peakRssMb,
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

const perMessage = (x: FlowCost) => ({ cpu_ms_per_message: r2(x.cpuMs / Math.max(1, x.n)), statements_per_message: r2(x.statements / Math.max(1, x.n)), messages: x.n });

/** Per action and in all: latencies of both sides, their ratio, Colloquy's CPU and statements per request. */
function figures(c: SideRecord, b: SideRecord): Record<string, unknown> {
  const actions: Record<string, unknown> = {};
  for (const a of FLOW_ACTIONS) {
    const [cp50, bp50] = [percentile(c.ms[a], 50), percentile(b.ms[a], 50)];
    const per = (x: FlowCost, k: 'cpuMs' | 'statements' | 'framing') => r2(x[k] / Math.max(1, x.n));
    actions[a] = {
      colloquy_p50_ms: r2(cp50),
      colloquy_p90_ms: r2(percentile(c.ms[a], 90)),
      colloquy_p99_ms: r2(percentile(c.ms[a], 99)),
      baseline_p50_ms: r2(bp50),
      baseline_p90_ms: r2(percentile(b.ms[a], 90)),
      p50_ratio: r2(cp50 / bp50),
      cpu_ms_per_request: per(c.cost[a], 'cpuMs'),
      baseline_cpu_ms_per_request: per(b.cost[a], 'cpuMs'),
      statements_per_request: per(c.cost[a], 'statements'),
      framing_statements_per_request: per(c.cost[a], 'framing'),
      requests: c.cost[a].n,
    };
  }
  const sum = (r: SideRecord, k: 'n' | 'cpuMs' | 'statements') => FLOW_ACTIONS.reduce((x, a) => x + r.cost[a][k], 0);
  const cpu = sum(c, 'cpuMs') / Math.max(1, sum(c, 'n'));
  const baseCpu = sum(b, 'cpuMs') / Math.max(1, sum(b, 'n'));
  return {
    actions,
    colloquy_cpu_ms_per_request: r2(cpu),
    baseline_cpu_ms_per_request: r2(baseCpu),
    cpu_ratio: r2(cpu / baseCpu),
    statements_per_request: r2(sum(c, 'statements') / Math.max(1, sum(c, 'n'))),
    colloquy_requests: sum(c, 'n'),
    baseline_requests: sum(b, 'n'),
  };
}
