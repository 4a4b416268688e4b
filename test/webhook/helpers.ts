/**
 * A whole stack on 127.0.0.1 for webhook tests: the real sandbox provider, the real HTTP adapter,
 * a SQLite file, the real runtime, and the webhook router on its own port-0 server.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Router } from 'express';
import { afterEach } from 'vitest';
import { ManualClock, Runtime, type Bot } from '../../src/conversation/index.js';
import type { Logger } from '../../src/log.js';
import type { NumbersConfig } from '../../src/numbers/index.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { createHttpAdapter, type SendAdapter } from '../../src/transport/index.js';
import { createWebhookRouter, type WebhookRouterOptions } from '../../src/webhook/index.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, SIGNATURE_HEADER, signBody, startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp.js';

export const USER = '5215512345678';
export const SECRET = 'webhook-test-secret';

/** Options of {@link stack}. */
export interface StackOptions {
  readonly bots: readonly Bot[];
  /** Webhook secret (default {@link SECRET}; `null` for none). */
  readonly secret?: string | null;
  readonly verifyToken?: string;
  readonly maxBodyBytes?: number;
  readonly logger?: Logger;
  /** A numbers file, as loaded. */
  readonly numbers?: NumbersConfig;
}

/** A running stack. */
export interface Stack {
  /** The webhook server's base URL. */
  readonly url: string;
  readonly sb: RunningSandbox;
  store: SqliteStore;
  runtime: Runtime;
  /** Posts a body (a string is sent as is) to a path of the webhook server, signed unless told. */
  post(path: string, body: unknown, o?: PostOptions): Promise<Answer>;
  /** Rows in a table of the store. */
  count(table: 'inbox' | 'outbox' | 'statuses' | 'conversations'): number;
  /** Stops the runtime, closes the store, and opens both again on the same file, with a new router. */
  restart(): Promise<void>;
}

/** How {@link Stack.post} sends. */
export interface PostOptions {
  readonly sign?: boolean;
  readonly signature?: string;
  readonly contentType?: string | null;
}

/** What the webhook answered. */
export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly json: unknown;
  readonly headers: Headers;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Starts a stack; it is closed after the test. */
export async function stack(o: StackOptions): Promise<Stack> {
  const dir = tempDir('colloquy-webhook-');
  const path = dir.path('colloquy.db');
  const sb = await startSandbox({ port: 0, host: '127.0.0.1' });
  const secret = o.secret === null ? undefined : (o.secret ?? SECRET);
  let router: Router | undefined;
  const server = await listen((req, res, next) => (router ? router(req, res, next) : next()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sb.sandbox.setWebhook({ url: `${url}/webhook`, ...(secret !== undefined && { secret }) });
  let parts = await open(path, sb, o.bots, o.logger);
  const routerOptions = (): WebhookRouterOptions => ({
    runtime: parts.runtime,
    defaultSender: SANDBOX_SENDER,
    secret,
    verifyToken: o.verifyToken,
    maxBodyBytes: o.maxBodyBytes,
    numbers: o.numbers,
  });
  router = createWebhookRouter(routerOptions());
  const s: Stack = {
    url,
    sb,
    store: parts.store,
    runtime: parts.runtime,
    post: (p, body, po = {}) => post(`${url}${p}`, body, secret, po),
    count: (table) => (s.store.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n,
    async restart() {
      router = undefined;
      await parts.close();
      parts = await open(path, sb, o.bots, o.logger);
      s.store = parts.store;
      s.runtime = parts.runtime;
      router = createWebhookRouter(routerOptions());
    },
  };
  cleanups.push(async () => {
    await parts.close();
    await closeServer(server);
    await sb.close();
    dir.remove();
  });
  return s;
}

async function open(path: string, sb: RunningSandbox, bots: readonly Bot[], logger?: Logger): Promise<{ store: SqliteStore; runtime: Runtime; adapter: SendAdapter; close(): Promise<void> }> {
  const store = openSqliteStore(path);
  const adapter = createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
  const runtime = new Runtime({ store, adapter, bots, sender: SANDBOX_SENDER, clock: new ManualClock(Date.now()), logger });
  await runtime.start();
  let closed = false;
  return {
    store,
    runtime,
    adapter,
    async close() {
      if (closed) return;
      closed = true;
      await runtime.stop();
      await adapter.close();
      await store.close();
    },
  };
}

/** Serves an Express app (or one handler) on 127.0.0.1, port 0. */
export function listen(handler: express.RequestHandler | express.Express): Promise<Server> {
  const app = express();
  app.use(handler);
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1');
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

async function post(url: string, body: unknown, secret: string | undefined, o: PostOptions): Promise<Answer> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = {};
  if (o.contentType !== null) headers['content-type'] = o.contentType ?? 'application/json';
  if (o.signature !== undefined) headers[SIGNATURE_HEADER] = o.signature;
  else if (o.sign !== false && secret !== undefined) headers[SIGNATURE_HEADER] = signBody(secret, raw);
  const res = await fetch(url, { method: 'POST', headers, body: raw });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

/** The error code of a refusal body. */
export function codeOf(a: Answer): string | undefined {
  return (a.json as { error?: { code?: string } } | undefined)?.error?.code;
}

/** Closes a server and its open connections. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((r) => {
    server.close(() => r());
    server.closeAllConnections();
  });
}

/** Runs `fn` after the current test. */
export function afterThisTest(fn: () => Promise<void>): void {
  cleanups.push(fn);
}
