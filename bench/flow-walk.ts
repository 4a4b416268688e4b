/**
 * The `flows` part's load generator (runs in the orchestrator): WhatsApp's side of live flows.
 * Each action of the walk (INIT, the read-only `DAYS` submit, the durable `CONFIRM` submit, its
 * replay) goes to every user of a phase, `concurrency` requests in flight, each encrypted with a
 * fresh AES key and IV and signed (bench/flow-crypto.ts); every answer must be a 200 that opens
 * under the inverted IV, and is checked against what that action must answer.
 */
import { isDeepStrictEqual } from 'node:util';
import { performance } from 'node:perf_hooks';
import type { KeyObject } from 'node:crypto';
import type { Agent } from 'undici';
import { FLOW_BENCH_DAYS } from './flow-shape.js';
import { openAnswer, sealRequest } from './flow-crypto.js';
import { SECRET } from './ipc.js';

/** The actions of a walk, in order, as the JSON line names them. */
export const FLOW_ACTIONS = ['init', 'read', 'submit', 'replay'] as const;
export type FlowAction = (typeof FLOW_ACTIONS)[number];

/** One user's flow: the token the bot sent, and the answers received so far. */
export interface FlowUser {
  readonly user: string;
  readonly token: string;
  /** The decrypted answer of each action, once received. */
  readonly answers: Partial<Record<FlowAction, unknown>>;
}

/** What one action over a phase's users measured. */
export interface ActionResult {
  /** Per request: request sent → answer read, ms (sealing and opening outside). */
  readonly ms: number[];
  /** Requests that were not a 200 that opens, or whose answer was wrong (the first few, described). */
  readonly failures: string[];
  readonly failed: number;
}

const VERSION = '3.0';
/** The booking reference a user's CONFIRM submit carries (the bot echoes it in its text and the completion). */
export const refOf = (user: string): string => `R${user}`;

/** The decrypted request of `action` for user `u` (the replay is the submit again, its data's keys in another order). */
export function payloadOf(action: FlowAction, u: FlowUser): Record<string, unknown> {
  const base = { version: VERSION, flow_token: u.token };
  if (action === 'init') return { ...base, action: 'INIT' };
  if (action === 'read') return { ...base, action: 'data_exchange', screen: 'DAYS', data: { day: 'tue' } };
  if (action === 'submit') return { ...base, action: 'data_exchange', screen: 'CONFIRM', data: { day: 'tue', slot: '10:30', ref: refOf(u.user) } };
  return { ...base, action: 'data_exchange', screen: 'CONFIRM', data: { ref: refOf(u.user), slot: '10:30', day: 'tue' } };
}

/** Why Colloquy's answer to `action` is wrong, or undefined when it is right. */
export function colloquyProblem(action: FlowAction, u: FlowUser, body: unknown): string | undefined {
  const b = body as { screen?: unknown; data?: Record<string, unknown> } | null;
  if (action === 'init') return b?.screen === 'DAYS' && isDeepStrictEqual(b.data, { days: FLOW_BENCH_DAYS }) ? undefined : 'INIT did not answer the DAYS screen';
  if (action === 'read') return b?.screen === 'SLOTS' && b.data?.['day'] === 'tue' ? undefined : 'the DAYS submit did not answer the SLOTS screen of that day';
  if (action === 'submit') {
    const params = (b?.data?.['extension_message_response'] as { params?: unknown } | undefined)?.params;
    return b?.screen === 'SUCCESS' && isDeepStrictEqual(params, { flow_token: u.token, booking: refOf(u.user) }) ? undefined : 'the CONFIRM submit did not complete the flow with its booking';
  }
  return undefined; // the replay is compared with the submit's answer, on both sides
}

/** Runs `fn` over `items`, `concurrency` at a time. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i]!, i);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** What {@link walkAction} needs. */
export interface WalkTarget {
  readonly agent: Agent;
  /** The endpoint's origin (`http://127.0.0.1:port`); requests go to `/flows`. */
  readonly origin: string;
  readonly publicKey: KeyObject;
  /** Checks Colloquy's answers' content too (the baseline's is a constant). */
  readonly checkContent: boolean;
}

/** Sends `action` for every user, `concurrency` at a time; records each decrypted answer in the user's `answers`. */
export async function walkAction(t: WalkTarget, users: readonly FlowUser[], action: FlowAction, concurrency: number): Promise<ActionResult> {
  const ms: number[] = [];
  const failures: string[] = [];
  let failed = 0;
  const fail = (u: FlowUser, why: string) => {
    failed++;
    if (failures.length < 3) failures.push(`${action} of ${u.user}: ${why}`);
  };
  await pool(users, concurrency, async (u) => {
    const sealed = sealRequest(payloadOf(action, u), t.publicKey, SECRET);
    const started = performance.now();
    let status: number;
    let text: string;
    try {
      const res = await t.agent.request({
        origin: t.origin,
        path: '/flows',
        method: 'POST',
        body: sealed.body,
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': sealed.signature },
      });
      text = await res.body.text();
      status = res.statusCode;
    } catch (err) {
      fail(u, err instanceof Error ? err.message : String(err));
      return;
    }
    ms.push(performance.now() - started);
    if (status !== 200) return fail(u, `answered ${status}: ${text.slice(0, 200)}`);
    let body: unknown;
    try {
      body = openAnswer(text, sealed);
    } catch (err) {
      return fail(u, `the answer does not decrypt under the request's key and inverted IV (${err instanceof Error ? err.message : String(err)})`);
    }
    (u.answers as Record<FlowAction, unknown>)[action] = body;
    const problem =
      action === 'replay' ? (isDeepStrictEqual(body, u.answers.submit) ? undefined : 'the replay answered differently from the submit') : t.checkContent ? colloquyProblem(action, u, body) : undefined;
    if (problem !== undefined) fail(u, problem);
  });
  return { ms, failures, failed };
}
