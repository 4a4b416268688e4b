/**
 * Test doubles for the Cloud API provider: a scriptable Cloud API on 127.0.0.1 (port 0) that
 * records every request, a clock whose sleeps wait until the test moves time, an HTTP client that
 * stamps each request with that time, and a logger that keeps every line.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpClient, type Clock, type HttpPoster, type HttpRequest, type HttpResponse } from '../../src/transport/index.js';
import type { Logger } from '../../src/log.js';

/** One request the fake Cloud API received. */
export interface CloudSeen {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly json: Record<string, unknown>;
}

/** What the fake answers. */
export interface CloudReply {
  readonly status?: number | undefined;
  readonly body?: unknown;
  readonly headers?: Record<string, string> | undefined;
  /** Drop the connection without answering. */
  readonly destroy?: boolean;
  /** Never answer (until the server closes). */
  readonly hang?: boolean;
}

/** Answers request number `n` (from 1, over all paths). */
export type CloudHandler = (req: CloudSeen, n: number) => CloudReply;

/** The fake Cloud API. `baseUrl` has a version, like Meta's. */
export interface FakeCloud {
  readonly baseUrl: string;
  readonly seen: CloudSeen[];
  handler: CloudHandler;
  close(): Promise<void>;
}

let wamid = 0;
/** Meta's answer to an accepted message. */
export const accepted: CloudHandler = (req) => ({
  body: { messaging_product: 'whatsapp', contacts: [{ input: req.json['to'], wa_id: req.json['to'] }], messages: [{ id: `wamid.${++wamid}` }] },
});

/** Meta's error answer. */
export function metaError(status: number, code: number, message: string, details?: string, headers?: Record<string, string>): CloudReply {
  return {
    status,
    headers,
    body: { error: { message, type: 'OAuthException', code, ...(details !== undefined && { error_data: { messaging_product: 'whatsapp', details } }), fbtrace_id: 'Atrace' } },
  };
}

/** Starts the fake Cloud API. Answers what `handler` says; by default every message is accepted, a read receipt gets `{success: true}`. */
export async function startCloud(handler?: CloudHandler): Promise<FakeCloud> {
  const seen: CloudSeen[] = [];
  const hanging = new Set<() => void>();
  const fake: FakeCloud = {
    baseUrl: '',
    seen,
    handler: handler ?? ((req, n) => (req.json['status'] === 'read' ? { body: { success: true } } : accepted(req, n))),
    close: () =>
      new Promise((resolve) => {
        for (const end of hanging) end();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // recorded as is
      }
      const s: CloudSeen = { path: req.url ?? '', headers: req.headers, body, json };
      seen.push(s);
      const r = fake.handler(s, seen.length);
      if (r.destroy) return void req.socket.destroy();
      if (r.hang) return void hanging.add(() => res.destroy());
      res.writeHead(r.status ?? 200, { 'content-type': 'application/json', ...r.headers });
      res.end(r.body === undefined ? '' : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(fake, { baseUrl: `http://127.0.0.1:${port}/v23.0` });
  return fake;
}

interface Timer {
  readonly at: number;
  readonly resolve: () => void;
}

/** Fake time that moves only when the test says: `sleep` waits until `advance` passes its deadline. */
export class ManualClock implements Clock {
  t = Date.parse('2025-01-01T00:00:00Z');
  readonly start = this.t;
  #timers: Timer[] = [];

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer: Timer = { at: this.t + ms, resolve };
      this.#timers.push(timer);
      signal?.addEventListener('abort', () => {
        this.#timers = this.#timers.filter((x) => x !== timer);
        reject(signal.reason);
      });
    });
  }

  /** Sleeps not yet over. */
  get pending(): number {
    return this.#timers.length;
  }

  /** Moves time to the earliest deadline and wakes every sleep due then, in the order they began. */
  advanceToNext(): void {
    const next = Math.min(...this.#timers.map((x) => x.at));
    this.t = Math.max(this.t, next);
    const due = this.#timers.filter((x) => x.at <= this.t);
    this.#timers = this.#timers.filter((x) => x.at > this.t);
    for (const x of due) x.resolve();
  }

  /** Time since the start, in ms. */
  get elapsed(): number {
    return this.t - this.start;
  }
}

/** One request as the provider made it, with the fake time it was made at. */
export interface Stamp {
  readonly path: string;
  readonly to: string | undefined;
  readonly body: Record<string, unknown>;
  /** Ms since the clock's start. */
  readonly at: number;
}

/** A real {@link HttpClient} that notes when (in fake time) each request left, and how many are in flight. */
export class StampingHttp implements HttpPoster {
  readonly stamps: Stamp[] = [];
  readonly #inner = new HttpClient({ timeoutMs: 5_000 });
  #inflight = 0;

  constructor(private readonly clock: ManualClock) {}

  async post(request: HttpRequest): Promise<HttpResponse> {
    const body = JSON.parse(request.body) as Record<string, unknown>;
    this.stamps.push({ path: request.target.path, to: typeof body['to'] === 'string' ? body['to'] : undefined, body, at: this.clock.elapsed });
    this.#inflight++;
    try {
      return await this.#inner.post(request);
    } finally {
      this.#inflight--;
    }
  }

  /**
   * Returns once nothing can happen without time moving: no request in flight and every promise
   * that could run has run. Not a wait for "long enough": it waits for the requests themselves.
   */
  async settle(): Promise<void> {
    for (;;) {
      while (this.#inflight > 0) await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      if (this.#inflight === 0) return;
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** Runs `work` to its end, moving fake time from one sleep's deadline to the next whenever everything else is waiting. */
export async function drive<T>(clock: ManualClock, http: StampingHttp, work: Promise<T>): Promise<T> {
  let done = false;
  void work.then(
    () => (done = true),
    () => (done = true),
  );
  for (;;) {
    await http.settle();
    if (done) return work;
    if (clock.pending > 0) clock.advanceToNext();
  }
}

/** A logger that keeps every line (object and message), for checks that nothing secret was logged. */
export function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (obj: object, msg?: string) => void lines.push(`${level} ${JSON.stringify(obj)} ${msg ?? ''}`);
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}
