/** Test doubles for the transport: a fake clock and a scriptable provider on 127.0.0.1. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Clock, Outbound } from '../../src/transport/index.js';

/** Fake time: `sleep` records the delay, advances time and resolves at once. */
export class FakeClock implements Clock {
  t = Date.parse('2025-01-01T00:00:00Z');
  readonly sleeps: number[] = [];
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.t += ms;
    return Promise.resolve();
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

/** One request the fake provider received. */
export interface Seen {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What a handler answers. */
export interface Reply {
  readonly status?: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Drop the connection without answering. */
  readonly destroy?: boolean;
}

/** Answers one request; `n` counts the requests on that path, from 1. */
export type Handler = (req: Seen, n: number) => Reply | Promise<Reply>;

/** A fake provider: `/auth/token`, the messaging path and the SMS path, each scriptable. */
export interface FakeProvider {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly seen: Seen[];
  handlers: Record<string, Handler>;
  count(path: string): number;
  close(): Promise<void>;
}

export const TOKEN = '/auth/token';
export const MESSAGING = '/api/messaging-bsp-api-endpoint-ws/services/v1/messaging';
export const SMS = '/api/services/messaging';

let issued = 0;
/** The default token handler: a new token each time, 600 s. */
export const issueToken: Handler = () => ({ body: { access_token: `tok-${++issued}-secretish`, token_type: 'Bearer', expires_in: 600 } });

/** Starts a fake provider on 127.0.0.1, port 0. */
export async function startProvider(handlers: Record<string, Handler> = {}): Promise<FakeProvider> {
  const seen: Seen[] = [];
  const counts = new Map<string, number>();
  const provider: FakeProvider = {
    baseUrl: '',
    authUrl: '',
    seen,
    handlers: { [TOKEN]: issueToken, [MESSAGING]: () => ({ body: { id: 'wamid.1' } }), [SMS]: () => ({ body: { code: 0, mailingId: 42, result: 'Applied' } }), ...handlers },
    count: (path) => counts.get(path) ?? 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const s: Seen = { path, headers: req.headers, body: Buffer.concat(chunks).toString() };
      seen.push(s);
      const handler: Handler = provider.handlers[path] ?? (() => ({ status: 404, body: { error: 'not found' } }));
      void Promise.resolve(handler(s, n)).then((r) => {
        if (r.destroy) return void req.socket.destroy();
        const body = r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
        res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
        res.end(body);
      });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(provider, { baseUrl: `http://127.0.0.1:${port}/api`, authUrl: `http://127.0.0.1:${port}/auth` });
  return provider;
}

/** A valid-looking interactive request body. */
export const interactive: Outbound = {
  channel: 'interactive',
  request: { from: '5215500000000', to: '5215511111111', type: 'interactive', replyButtons: { body: 'Pick one', buttons: [{ id: '1', title: 'Yes' }] } },
};

/** A valid-looking SMS request body. */
export const sms: Outbound = { channel: 'sms', request: { msisdns: ['5215511111111'], message: 'Hello', tag: 'bot', country: 'MX' } };
