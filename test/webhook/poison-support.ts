/**
 * For the poison-input tests: one server per store (the real `serve` wiring with the support bot,
 * a webhook secret and the agents' API), signed requests, and a seeded generator of hostile Unicode.
 */
import { loadConfig, type Config } from '../../src/config.js';
import { ManualClock } from '../../src/conversation/clock.js';
import { SANDBOX_SENDER, SIGNATURE_HEADER, signBody } from '../../src/sandbox/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import support from '../../bots/support.js';
import { TOKEN, walkToHandoff } from '../agent/helpers.js';

export const SECRET = 'poison-webhook-secret';
export const USER = '5215512349999';
/** The number the support bot serves: inbounds are routed by it. */
export const BOT_NUMBER = support.options.sender ?? SANDBOX_SENDER;

/** The support bot's server on `db` (`:memory:` or a PostgreSQL URL). */
export async function serverOn(db: string): Promise<RunningServer> {
  const config: Config = { ...loadConfig({}), port: 0, db, logLevel: 'silent', webhookSecret: SECRET, agentToken: TOKEN };
  return startServer({ bots: [support], config, clock: new ManualClock() });
}

/** A conversation of `who` handed over and claimed by `agent`; its id. */
export async function claimedHandoff(s: RunningServer, who: string, agent: string): Promise<number> {
  const id = await walkToHandoff(s, who);
  const r = await request(s, 'POST', `/agent/handoffs/${id}/claim`, JSON.stringify({ agent }));
  if (r.status !== 200) throw new Error(`claim failed: ${r.status} ${r.text}`);
  return id;
}

/** What a request was answered. */
export interface Answer {
  readonly status: number;
  readonly text: string;
}

/** Posts raw bytes to a webhook path, signed. */
export async function postSigned(s: RunningServer, path: string, raw: Buffer): Promise<Answer> {
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(SECRET, raw) }, body: new Uint8Array(raw) });
  return { status: res.status, text: await res.text() };
}

/** Calls the agents' API with a raw body. */
export async function request(s: RunningServer, method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body }),
  });
  return { status: res.status, text: await res.text() };
}

/** A small seeded generator (mulberry32): the same seed gives the same cases. */
export class Random {
  #state: number;
  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)]!;
  }
}

/** Pieces that break stores: NUL and other controls, unpaired surrogates, the largest code points. */
const HOSTILE = ['\u0000', '\u0001', '\u001f', '\u007f', '\u0080', '\u009f', '\ud800', '\udfff', '\udbff\udfff', '\uffff', '\ufffe', '\u2028', '\ufeff', '"', '\\', '%00'];

/** A random string: ordinary text, hostile pieces, and now and then a very long run. */
export function hostileString(r: Random): string {
  const roll = r.next();
  if (roll < 0.05) return '';
  if (roll < 0.12) return r.pick(['a', '\u0000', '\ud800', '\udbff\udfff']).repeat(1 + r.int(r.next() < 0.5 ? 3_000 : 200_000));
  let out = '';
  const parts = 1 + r.int(6);
  for (let i = 0; i < parts; i++) {
    const kind = r.int(4);
    if (kind === 0) out += r.pick(HOSTILE);
    else if (kind === 1)
      out += String.fromCodePoint(r.int(0x110000)); // any code point, a lone surrogate included
    else if (kind === 2) out += 'wamid.' + r.int(1e9).toString(36);
    else out += String.fromCharCode(r.int(0x10000));
  }
  return out;
}
