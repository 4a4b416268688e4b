/**
 * The load generator (runs in the orchestrator): signed webhooks from distinct users, sent either
 * closed-loop (`concurrency` in flight, the next one sent when one is answered) or open-loop (at a
 * fixed rate, evenly spaced, whatever the answers do), to one server or at random to several (as a
 * load balancer would). The sandbox child counts and timestamps the replies it accepts, per user.
 */
import { performance } from 'node:perf_hooks';
import { Agent } from 'undici';
import { listReplyMessage, signBody, textMessage, webhookPayload } from '../src/sandbox/inbound.js';
import { SECRET, SENDER, type Child } from './ipc.js';
import type { Collected } from './roles.js';

/** A signed webhook body from one user. */
export interface Signed {
  readonly user: string;
  /** The message's id (`wamid.…`). */
  readonly id: string;
  readonly body: string;
  readonly signature: string;
}

/** The servers webhooks go to: one, or several picked at random per webhook. */
export interface Target {
  readonly name: string;
  readonly servers: readonly Child[];
  readonly urls: readonly string[];
  /**
   * The provider the servers send through (default `seed`). For `cloud-api`, the sandbox is told
   * each phase's users wrote before their webhooks go, as Meta knows before it delivers a webhook:
   * the 24-hour window is open when the reply goes.
   */
  readonly provider?: 'seed' | 'cloud-api' | undefined;
}

/** One phase of one side. */
export interface PhaseResult {
  readonly users: number;
  /** First webhook sent → last webhook answered, ms. */
  readonly answersMs: number;
  /** First webhook sent → last outbound accepted by the sandbox, ms. */
  readonly acceptedMs: number;
  /** Per request: webhook sent → answer read, ms. */
  readonly webhookMs: number[];
  /** Per user: webhook sent → the reply accepted by the sandbox, ms. */
  readonly turnMs: number[];
  /** Webhooks delivered again after a 5xx or a failed request. */
  readonly redeliveries: number;
  /** Requests the provider answered during the phase, by endpoint (`messaging`, `cloud-api`, `sms`, `token`). */
  readonly calls: Record<string, number>;
  /** Read receipts the provider accepted during the phase. */
  readonly reads: number;
}

/** A closed-loop round: new conversations, then a second turn on each. */
export interface RoundResult {
  readonly fresh: PhaseResult;
  readonly existing: PhaseResult;
}

const epochNow = (): number => performance.timeOrigin + performance.now();

/** Hands out user numbers nobody has used in this run. */
export class Users {
  #next = 0;
  constructor(private readonly prefix = 5215600000000) {}
  /** `n` new user numbers. */
  take(n: number): string[] {
    const first = this.#next;
    this.#next += n;
    return Array.from({ length: n }, (_, i) => String(this.prefix + first + i));
  }
}

/** A user's first message: a text, which starts a new conversation. */
export function textFrom(user: string): Signed {
  return signed(user, textMessage({ from: user, text: 'hi' }));
}

/** A webhook carrying `message` from `user`, signed with the bench's secret. */
export function signed(user: string, message: ReturnType<typeof textMessage>): Signed {
  const body = JSON.stringify(webhookPayload({ messages: [message] }));
  return { user, id: message.id, body, signature: signBody(SECRET, body) };
}

/** Creates the client of a run: `connections` sockets per server; no request waits more than a minute. */
export function client(connections: number): Agent {
  return new Agent({ connections, keepAliveTimeout: 30_000, pipelining: 1, headersTimeout: 60_000, bodyTimeout: 60_000 });
}

/** The origin of one of the target's processes, picked at random (as a load balancer would). */
const pick = (t: Target): string => new URL(t.urls[t.urls.length === 1 ? 0 : Math.floor(Math.random() * t.urls.length)]!).origin;

/** Redeliveries of one webhook at most, and the first pause between them (doubled each time). */
const REDELIVERIES = 5;
const REDELIVERY_PAUSE_MS = 100;

/**
 * Posts one webhook to a process of `target`; like the provider, delivers it again (to a process
 * picked again) when it is answered 5xx or the request fails, at most {@link REDELIVERIES} times,
 * 100 ms × 2ⁿ apart (sooner than the provider would, to keep the bench short). A 4xx is final.
 */
export async function post(agent: Agent, target: Target, b: Signed): Promise<{ failure: string | undefined; redeliveries: number }> {
  let failure: string | undefined;
  for (let attempt = 0; attempt <= REDELIVERIES; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, REDELIVERY_PAUSE_MS * 2 ** (attempt - 1)));
    try {
      const res = await agent.request({
        origin: pick(target),
        path: '/webhook',
        method: 'POST',
        body: b.body,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': b.signature },
      });
      const text = await res.body.text();
      if (res.statusCode === 200) return { failure: undefined, redeliveries: attempt };
      failure = `${res.statusCode} ${text.slice(0, 200)}`;
      if (res.statusCode < 500) return { failure, redeliveries: attempt };
    } catch (err) {
      failure = err instanceof Error ? err.message : String(err);
    }
  }
  return { failure, redeliveries: REDELIVERIES };
}

/** Posts every body, `concurrency` at a time; returns per-request latencies and send times. */
async function fire(agent: Agent, target: Target, bodies: readonly Signed[], concurrency: number): Promise<{ webhookMs: number[]; sentAt: number[]; failures: string[]; redeliveries: number }> {
  const webhookMs = new Array<number>(bodies.length).fill(0);
  const sentAt = new Array<number>(bodies.length).fill(0);
  const failures: string[] = [];
  let redeliveries = 0;
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < bodies.length; i = next++) {
      const started = performance.now();
      sentAt[i] = performance.timeOrigin + started;
      const r = await post(agent, target, bodies[i]!);
      redeliveries += r.redeliveries;
      if (r.failure !== undefined) failures.push(r.failure);
      webhookMs[i] = performance.now() - started;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { webhookMs, sentAt, failures, redeliveries };
}

async function idle(target: Target): Promise<void> {
  await Promise.all(target.servers.map((s) => s.call('idle')));
}

/** Checks that the sandbox accepted exactly one `kind` message per user of `bodies`. */
function checkCollected(target: Target, bodies: readonly Signed[], seen: Collected, kind: string): void {
  if (seen.count !== bodies.length || seen.kinds[kind] !== bodies.length || Object.keys(seen.at).length !== bodies.length) {
    throw new Error(
      `${target.name}: expected ${bodies.length} ${kind} messages to ${bodies.length} users, the sandbox accepted ${seen.count} (${JSON.stringify(seen.kinds)}) to ${Object.keys(seen.at).length} users`,
    );
  }
}

/** Arms the sandbox for the replies to `bodies`' users (a contiguous range of numbers). */
async function arm(sandbox: Child, bodies: readonly Signed[]): Promise<void> {
  const numbers = bodies.map((b) => Number(b.user));
  await sandbox.call('arm', { n: bodies.length, lo: Math.min(...numbers), hi: Math.max(...numbers) });
}

/**
 * Waits until the sandbox's count of the armed phase has not moved for 1.5 s and the servers are
 * idle (at most `maxMs`): an overloaded server works through its backlog before the next phase.
 */
async function settle(target: Target, sandbox: Child, maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  let last = -1;
  let since = performance.now();
  while (performance.now() < until) {
    const n = await sandbox.call<number>('count');
    if (n !== last) {
      last = n;
      since = performance.now();
    } else if (performance.now() - since >= 1_500) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  await Promise.race([idle(target), new Promise((r) => setTimeout(r, Math.max(0, until - performance.now())).unref())]).catch(() => undefined);
}

/** One closed-loop phase: arm the sandbox, fire the webhooks, wait for every reply to be accepted, check. */
async function phase(
  agent: Agent,
  target: Target,
  sandbox: Child,
  bodies: readonly Signed[],
  kind: 'list' | 'buttons',
  concurrency: number,
): Promise<{ result: PhaseResult; ids: Record<string, string> }> {
  await arm(sandbox, bodies);
  if (target.provider === 'cloud-api')
    await sandbox.call(
      'wrote',
      bodies.map((b) => [b.user, b.id]),
    );
  const accepted = sandbox.call<number>('wait', undefined, 60_000);
  accepted.catch(() => undefined); // awaited below unless the webhooks failed first
  const t0 = epochNow();
  const { webhookMs, sentAt, failures, redeliveries } = await fire(agent, target, bodies, concurrency);
  const answered = epochNow();
  if (failures.length > 0) throw new Error(`${target.name}: ${failures.length} of ${bodies.length} webhooks failed, e.g. ${failures.slice(0, 3).join(' | ')}`);
  const lastAccepted = await accepted;
  await idle(target);
  const seen = await sandbox.call<Collected>('collect');
  checkCollected(target, bodies, seen, kind);
  const turnMs = bodies.map((b, i) => seen.at[b.user]! - sentAt[i]!);
  return {
    result: { users: bodies.length, answersMs: answered - t0, acceptedMs: Math.max(lastAccepted, answered) - t0, webhookMs, turnMs, redeliveries, calls: seen.calls, reads: seen.reads },
    ids: seen.ids,
  };
}

/** A closed-loop round: `users` each send a text (a new conversation), then each taps the list row they were sent. */
export async function round(agent: Agent, target: Target, sandbox: Child, users: readonly string[], concurrency: number): Promise<RoundResult> {
  const fresh = await phase(agent, target, sandbox, users.map(textFrom), 'list', concurrency);
  const taps = users.map((u) => signed(u, listReplyMessage({ from: u, rowId: 'margherita', title: 'Margherita', context: { from: SENDER, id: fresh.ids[u] ?? 'wamid.unknown' } })));
  const existing = await phase(agent, target, sandbox, taps, 'buttons', concurrency);
  return { fresh: fresh.result, existing: existing.result };
}

/** What an open-loop run measured. */
export interface OpenLoopResult {
  readonly rate: number;
  readonly sent: number;
  /** Webhooks sent ÷ the time from the first scheduled send to the last actual send, per second. */
  readonly achievedRate: number;
  /** Per webhook: scheduled send time → answer read, ms (from the schedule, so a late send counts). */
  readonly ackMs: number[];
  /** Per user whose reply came: scheduled send time → reply accepted by the sandbox, ms. */
  readonly replyMs: number[];
  /** Webhooks answered with another status than 200 (or whose request failed), not answered within the drain time, and replies that did not come. */
  readonly failed: number;
  readonly unanswered: number;
  readonly missing: number;
  /** Webhooks delivered again after a 5xx or a failed request. */
  readonly redeliveries: number;
  readonly failures: string[];
  /** The load generator's largest lag behind its own schedule, ms. */
  readonly maxSendLagMs: number;
}

/**
 * Sends one new user's text every 1/`rate` s for `seconds` s (evenly spaced; the schedule is kept
 * whatever the answers do), then waits at most `drainMs` for the replies. Latencies count from each
 * webhook's scheduled time, so a generator or a server that falls behind shows in them.
 */
export async function openLoop(agent: Agent, target: Target, sandbox: Child, users: Users, rate: number, seconds: number, drainMs: number): Promise<OpenLoopResult> {
  const n = Math.max(1, Math.round(rate * seconds));
  const bodies = users.take(n).map(textFrom);
  const interval = 1000 / rate;
  const ackMs = new Array<number>(n).fill(NaN);
  const scheduled = new Array<number>(n).fill(0);
  const failures: string[] = [];
  let failed = 0;
  let redeliveries = 0;
  let maxLag = 0;
  await arm(sandbox, bodies);
  if (target.provider === 'cloud-api')
    await sandbox.call(
      'wrote',
      bodies.map((b) => [b.user, b.id]),
    );
  const accepted = sandbox.call<number>('wait', undefined, seconds * 1000 + drainMs);
  accepted.catch(() => undefined);
  const inflight: Promise<void>[] = [];
  const start = performance.now() + 5;
  let lastSent = start;
  for (let i = 0; i < n; ) {
    const now = performance.now();
    // Send everything whose time has come (catching up after a late timer), then sleep to the next.
    while (i < n && start + i * interval <= now) {
      const due = start + i * interval;
      maxLag = Math.max(maxLag, now - due);
      scheduled[i] = performance.timeOrigin + due;
      const k = i;
      inflight.push(
        post(agent, target, bodies[k]!).then((r) => {
          ackMs[k] = performance.now() - due;
          redeliveries += r.redeliveries;
          if (r.failure !== undefined) {
            failed++;
            if (failures.length < 3) failures.push(r.failure);
          }
        }),
      );
      lastSent = now;
      i++;
    }
    if (i < n) await new Promise((r) => setTimeout(r, Math.max(0, start + i * interval - performance.now())));
  }
  let drained: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(inflight),
    new Promise((r) => {
      drained = setTimeout(r, drainMs);
    }),
  ]);
  clearTimeout(drained);
  const complete = await accepted.then(
    () => true,
    () => false,
  ); // every reply came, or the time limit passed
  // Every webhook answered and every reply in: nothing of this phase is left in the server.
  if (!complete || ackMs.some((x) => Number.isNaN(x))) await settle(target, sandbox, 30_000);
  else await idle(target);
  const seen = await sandbox.call<Collected>('collect');
  const replyMs: number[] = [];
  bodies.forEach((b, i) => {
    const at = seen.at[b.user];
    if (at !== undefined) replyMs.push(at - scheduled[i]!);
  });
  return {
    rate,
    sent: n,
    achievedRate: n / Math.max(0.001, (lastSent - start) / 1000 + interval / 1000),
    ackMs: ackMs.filter((x) => !Number.isNaN(x)),
    replyMs,
    failed,
    unanswered: ackMs.filter((x) => Number.isNaN(x)).length,
    missing: n - replyMs.length,
    redeliveries,
    failures,
    maxSendLagMs: maxLag,
  };
}
