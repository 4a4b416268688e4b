/**
 * The webhooks of the `flows` part (bench/flows.ts): each user's first message, whose answer is the
 * live flow (its token read from what the sandbox provider accepted), and the `nfm_reply` WhatsApp
 * sends after a flow completes, which must make the bot send nothing.
 */
import { flowReplyMessage, textMessage } from '../src/sandbox/inbound.js';
import type { Child } from './ipc.js';
import { post, signed, type Signed, type Target } from './load.js';
import type { Agent } from 'undici';
import { pool, refOf, type FlowUser } from './flow-walk.js';

/** What a phase cost Colloquy's process: requests or messages, CPU, SQLite statements (and of those the group commit's framing). */
export interface FlowCost {
  n: number;
  cpuMs: number;
  statements: number;
  framing: number;
}

/** What the webhooks need of a round. */
interface Round {
  readonly agent: Agent;
  readonly sandbox: Child;
  readonly colloquy: Target;
  readonly concurrency: number;
}

const TOKEN = /"flow_token":"([^"]+)"/;

/**
 * `write`: every user writes; resolves to each user's flow token, read from the one message the
 * sandbox accepted for them. `nfm_reply`: every user's completed flow comes back as WhatsApp sends
 * it; the bot must send nothing. With `cost`, what the phase cost Colloquy is added to it.
 */
export async function writeAndRead(r: Round, numbers: readonly string[], kind: 'write' | 'nfm_reply', cost: FlowCost | undefined, flows?: readonly FlowUser[]): Promise<FlowUser[]> {
  const server = r.colloquy.servers[0]!;
  const lo = Number(numbers[0]);
  await r.sandbox.call('arm', { n: numbers.length, lo, hi: lo + numbers.length - 1, capture: true });
  const accepted = r.sandbox.call<number>('wait', undefined, 120_000);
  accepted.catch(() => undefined); // awaited for `write` only: after `nfm_reply` nothing may come
  const bodies: Signed[] =
    kind === 'write'
      ? numbers.map((user) => signed(user, textMessage({ from: user, text: 'hi' })))
      : flows!.map((f) => signed(f.user, flowReplyMessage({ from: f.user, flowToken: f.token, data: { booking: refOf(f.user) } })));
  const since = await counters(server, true);
  const failures: string[] = [];
  await pool(bodies, r.concurrency, async (b) => {
    const res = await post(r.agent, r.colloquy, b);
    if (res.failure !== undefined) failures.push(res.failure);
  });
  if (failures.length > 0) throw new Error(`Colloquy: ${failures.length} of ${bodies.length} ${kind} webhooks failed, e.g. ${failures.slice(0, 3).join(' | ')}`);
  if (kind === 'write') await accepted;
  await server.call('idle');
  if (cost !== undefined) {
    const d = await since();
    cost.n += numbers.length;
    cost.cpuMs += d.cpuMs;
    cost.statements += d.statements;
    cost.framing += d.framing;
  }
  const seen = await r.sandbox.call<{ count: number; bodies?: Record<string, string[]> }>('collect');
  if (kind === 'nfm_reply') {
    if (seen.count !== 0) throw new Error(`the nfm_reply after a completed flow made Colloquy send ${seen.count} messages to ${numbers.length} users`);
    return [...flows!];
  }
  return numbers.map((user) => {
    const got = seen.bodies?.[user] ?? [];
    const token = got.length === 1 ? TOKEN.exec(got[0]!)?.[1] : undefined;
    if (token === undefined) throw new Error(`user ${user} got ${got.length} messages after writing, not one flow message with a flow token`);
    return { user, token, answers: {} };
  });
}

/** Snapshots a process's CPU time (and, with `statements`, its SQLite statements); resolves to a reader of what changed since. */
export async function counters(child: Child, statements: boolean): Promise<() => Promise<Omit<FlowCost, 'n'>>> {
  const read = async () => ({
    cpuMs: await child.call<number>('cpuMs'),
    statements: statements ? await child.call<number>('statements') : 0,
    framing: statements ? await child.call<number>('framingStatements') : 0,
  });
  const before = await read();
  return async () => {
    const after = await read();
    return { cpuMs: after.cpuMs - before.cpuMs, statements: after.statements - before.statements, framing: after.framing - before.framing };
  };
}
