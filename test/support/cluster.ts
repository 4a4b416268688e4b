/**
 * Several real `colloquy serve` processes on one database, with the sandbox provider in a process of
 * its own (so every server sends to the same provider, slowly when asked), for the scale-out tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { Runtime, createHttpAdapter } from '../../src/entries/server.js';
import { openSqliteStore } from '../../src/entries/sqlite.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, startSandbox, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import echoBot from '../fixtures/order-echo-bot.js';

/**
 * How long the echo bot thinks in the servers: a kill leaves many invocations running, for the
 * process that takes over to run again. (The reference run thinks for 0 ms: its queue makes the
 * replies independent of timing.)
 */
const ECHO_THINK_MS = '1000';
import { ROOT, serve } from '../e2e/cli.js';
import { eventually } from './eventually.js';

const BIN = join(ROOT, 'bin', 'colloquy.js');
/** The bot every server of a cluster serves. */
export const BOT_FILE = join(ROOT, 'test', 'fixtures', 'order-echo-bot.ts');

/** A process of the cluster. */
export interface Node {
  readonly url: string;
  readonly proc: ChildProcess;
  /** Its name as an owner of lanes (from its start log line). */
  readonly owner: string;
  stderr(): string;
  kill(): Promise<void>;
}

/** The sandbox provider in its own process. */
export interface ProviderProcess {
  readonly url: string;
  /** Every SMS it accepted to `to`, in order, with when. */
  texts(to: string): Promise<{ text: string; at: number }[]>;
  all(): Promise<{ to: string; text: string; at: number }[]>;
  latency(ms: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `colloquy sandbox` on a free port. */
export async function startProviderProcess(): Promise<ProviderProcess> {
  const proc = spawn(process.execPath, ['--conditions=colloquy-source', BIN, 'sandbox'], { cwd: ROOT, env: { ...process.env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`the sandbox did not start: ${out}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /Sandbox provider on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
  });
  const all = async () =>
    ((await (await fetch(`${url}/_sandbox/messages`)).json()) as { to: string; text?: string; at: number; channel: string }[])
      .filter((m) => m.channel === 'sms')
      .map((m) => ({ to: m.to, text: m.text ?? '', at: m.at }));
  return {
    url,
    all,
    texts: async (to) => (await all()).filter((m) => m.to === to),
    latency: async (ms) => {
      await fetch(`${url}/_sandbox/faults/latency`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ms, endpoint: 'sms' }) });
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) {
          resolve();
          return;
        }
        proc.once('exit', () => resolve());
        proc.kill('SIGKILL');
      }),
  };
}

/** Starts one `colloquy serve` of the cluster on `database` (environment: COLLOQUY_DB or COLLOQUY_DATABASE_URL). */
export async function startNode(provider: ProviderProcess, database: Record<string, string>, env: Record<string, string> = {}): Promise<Node> {
  const s = await serve([BOT_FILE], {
    ...database,
    COLLOQUY_BASE_URL: provider.url,
    COLLOQUY_AUTH_URL: provider.url,
    COLLOQUY_CLIENT_ID: SANDBOX_CLIENT_ID,
    COLLOQUY_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
    COLLOQUY_SENDER: SANDBOX_SENDER,
    ECHO_THINK_MS,
    ...env,
  });
  const owner = await eventually(
    () => {
      const named = /"owner":"([^"]+)"/.exec(s.stderr())?.[1];
      if (!named) throw new Error(`its stderr so far: ${s.stderr()}`);
      return named;
    },
    { what: 'serve logging its owner name' },
  );
  return {
    url: s.url,
    proc: s.proc,
    owner,
    stderr: s.stderr,
    kill: async () => {
      if (s.proc.exitCode === null && s.proc.signalCode === null) await s.stop('SIGKILL');
    },
  };
}

/** Posts a user's text to a node's webhook as the provider would; resolves to the HTTP status. */
export async function post(node: Node, from: string, id: string, text: string): Promise<number> {
  const body = JSON.stringify(webhookPayload({ messages: [textMessage({ from, id, text })], displayPhoneNumber: SANDBOX_SENDER }));
  const res = await fetch(`${node.url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  await res.arrayBuffer();
  return res.status;
}

/** Runs `fn` over `items`, at most `limit` at once. */
export async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * The replies each user gets from one process on one in-memory database, fed the same texts in the
 * same order: what the cluster must end up with.
 */
export async function referenceRun(script: ReadonlyMap<string, readonly string[]>): Promise<Map<string, string[]>> {
  const sb = await startSandbox({ port: 0 });
  const store = openSqliteStore(':memory:');
  const adapter = createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET });
  const runtime = new Runtime({ store, adapter, bots: [echoBot], sender: SANDBOX_SENDER });
  await runtime.start();
  try {
    for (const [user, texts] of script) {
      for (const [i, text] of texts.entries()) await runtime.receive({ botId: 'echo', user, providerId: `ref.${user}.${i}`, source: 'whatsapp', event: { type: 'text', text } });
    }
    // Replies come from invocations, after the turns: wait for all of them.
    const expected = [...script.values()].reduce((n, t) => n + t.length, 0);
    await eventually(
      async () => {
        await runtime.idle();
        const got = sb.sandbox.messages.length;
        if (got < expected) throw new Error(`${got} of ${expected} replies sent`);
      },
      { what: 'every reply of the reference run', timeoutMs: 30_000 },
    );
    return new Map([...script.keys()].map((u) => [u, sb.sandbox.messagesTo(u).map((m) => (m.channel === 'sms' ? m.text : '?'))]));
  } finally {
    await runtime.stop();
    await store.close();
    await adapter.close();
    await sb.close();
  }
}

/** Consecutive repeats removed, and how many there were: a send repeated after a crash shows as a repeat. */
export function collapse(texts: readonly string[]): { texts: string[]; repeats: string[] } {
  const out: string[] = [];
  const repeats: string[] = [];
  for (const t of texts) {
    if (out.at(-1) === t) repeats.push(t);
    else out.push(t);
  }
  return { texts: out, repeats };
}
