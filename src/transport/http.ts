/**
 * The HTTP client: one undici `Agent` (a keep-alive pool per origin) and one POST per call. The
 * retry loop that wraps it lives in `call.ts`, the token refresh in `token.ts`.
 */
import { Agent } from 'undici';
import { ConfigError } from '../errors.js';

/** Where a request goes, split once so the hot path does not parse URLs. */
export interface Target {
  /** `scheme://host:port`. */
  readonly origin: string;
  /** The path, with the base URL's own path prefix. */
  readonly path: string;
}

/** One POST. */
export interface HttpRequest {
  readonly target: Target;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly signal?: AbortSignal | undefined;
}

/** What came back: the status, the headers and the body (parsed when JSON, else text). */
export interface HttpResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: unknown;
}

/** Something that POSTs: {@link HttpClient}, or a fake in tests. Rejects on network errors. */
export interface HttpPoster {
  post(request: HttpRequest): Promise<HttpResponse>;
}

/** Settings of {@link HttpClient}. */
export interface HttpClientOptions {
  /** Connect, headers and body timeout of each request (default 10 s). */
  readonly timeoutMs?: number | undefined;
  /** Most connections per origin (default 64); further requests queue. */
  readonly connections?: number | undefined;
  /** How long an idle connection is kept (default 30 s; the server's keep-alive hint wins when shorter). */
  readonly keepAliveTimeoutMs?: number | undefined;
}

/** Joins a base URL and a path: `http://h:1/api/` + `/token` → `{origin: 'http://h:1', path: '/api/token'}`. */
export function targetOf(base: string, path: string, option = 'baseUrl'): Target {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new ConfigError(option, 'must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(option, 'must be an http(s) URL');
  const prefix = url.pathname.replace(/\/+$/, '');
  return { origin: url.origin, path: `${prefix}/${path.replace(/^\/+/, '')}` };
}

/** A POST-only HTTP client on undici with keep-alive pools and a per-request timeout. */
export class HttpClient implements HttpPoster {
  readonly #agent: Agent;
  readonly #timeoutMs: number;

  constructor(options: HttpClientOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#agent = new Agent({
      connections: options.connections ?? 64,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      connect: { timeout: this.#timeoutMs },
    });
  }

  /** Sends one POST and reads the whole answer. Rejects on network errors and timeouts. */
  async post(request: HttpRequest): Promise<HttpResponse> {
    const res = await this.#agent.request({
      origin: request.target.origin,
      path: request.target.path,
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: request.signal ?? null,
      headersTimeout: this.#timeoutMs,
      bodyTimeout: this.#timeoutMs,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, body: parseBody(text) };
  }

  #closed: Promise<void> | undefined;

  /** Closes every connection, letting requests in flight finish. Calling it again waits for the same close. */
  close(): Promise<void> {
    this.#closed ??= this.#agent.close();
    return this.#closed;
  }
}

/** JSON when it parses, the text otherwise, `undefined` when empty. */
export function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Why a request threw, without the request itself: an error code or name. */
export function networkReason(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return `network error (${typeof code === 'string' ? code : err.name})`;
  }
  return 'network error';
}

/** The value as a plain object, or `undefined`. */
export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
