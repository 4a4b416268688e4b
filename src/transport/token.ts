/**
 * Bearer tokens for the provider's calls: an OAuth 2.0 client-credentials provider (RFC 6749 §4.4)
 * with an in-memory cache and single-flight refresh, and a static token.
 */
import { AuthError, TransportError } from '../errors.js';
import { systemClock } from './clock.js';
import { HttpClient, asRecord, networkReason, targetOf, type HttpPoster, type HttpResponse, type Target } from './http.js';
import { emit, redact, type ObserverOptions } from './log.js';
import { isRetryableStatus, nextDelay, parseRetryAfter, resolveRetry, type RetryOptions, type RetryPolicy } from './retry.js';
import type { Clock } from './types.js';

/** Gives the bearer token for a call, and forgets one the provider refused. */
export interface TokenProvider {
  /** A valid token; rejects with {@link AuthError} (bad credentials) or {@link TransportError}. */
  getToken(): Promise<string>;
  /** Drops the cached token, but only if it is `token`: a newer one stays. */
  invalidate(token: string): void;
  /** The current and the previous token, to redact from what the provider answers (a provider may echo them). */
  recent?(): readonly string[];
}

/** A token that never changes (no refresh: a 401 with it is final). */
export function staticToken(token: string): TokenProvider {
  const value = Promise.resolve(token);
  return { getToken: () => value, invalidate: () => {}, recent: () => [token] };
}

/** How the client authenticates to the identity provider (RFC 6749 §2.3.1). */
export type AuthMethod = 'body' | 'basic';

/** Settings of {@link OAuthTokenProvider}. */
export interface OAuthTokenOptions extends ObserverOptions {
  /** The identity provider's base URL; the token is requested at `{authUrl}/token`. */
  readonly authUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** `body` (default): credentials as form fields; `basic`: an HTTP Basic `Authorization` header. */
  readonly authMethod?: AuthMethod | undefined;
  /** An OAuth `scope`, when the identity provider wants one. */
  readonly scope?: string | undefined;
  /** The token lifetime when the answer has no `expires_in` (default 600 s: the seed's "about 10 minutes"). */
  readonly defaultLifetimeMs?: number | undefined;
  /** Retries of 408, 429, 5xx and network errors. */
  readonly retry?: RetryOptions | undefined;
  readonly clock?: Clock | undefined;
  /** The HTTP client to use; without one the provider makes (and closes) its own. */
  readonly http?: HttpPoster | undefined;
  /** Request timeout of the provider's own client. */
  readonly timeoutMs?: number | undefined;
}

interface CachedToken {
  readonly token: string;
  readonly expiresAt: number;
  readonly refreshAt: number;
}

type Attempt = { readonly ok: true; readonly token: CachedToken } | { readonly ok: false; readonly error: TransportError; readonly retryAfterMs?: number | undefined };

const CONFIG_ERRORS = new Set(['invalid_client', 'unauthorized_client']);

/**
 * Client-credentials tokens, cached in memory and refreshed at `expiresAt − min(60 s, lifetime/2)`.
 * However many callers wait, one request is in flight; a failure is never cached.
 */
export class OAuthTokenProvider implements TokenProvider {
  readonly #o: OAuthTokenOptions;
  readonly #target: Target;
  readonly #clock: Clock;
  readonly #retry: RetryPolicy;
  readonly #http: HttpPoster;
  readonly #ownHttp: HttpClient | undefined;
  readonly #request: { readonly headers: Record<string, string>; readonly body: string };
  #cached: CachedToken | undefined;
  /** The token before the cached one (a provider may still echo it). */
  #previous: string | undefined;
  #inflight: Promise<CachedToken> | undefined;

  constructor(options: OAuthTokenOptions) {
    this.#o = options;
    this.#target = targetOf(options.authUrl, 'token', 'authUrl');
    this.#clock = options.clock ?? systemClock;
    this.#retry = resolveRetry(options.retry);
    this.#ownHttp = options.http ? undefined : new HttpClient({ timeoutMs: options.timeoutMs, connections: 2 });
    this.#http = options.http ?? this.#ownHttp!;
    this.#request = tokenRequest(options);
  }

  /** The cached token, or the one the refresh in flight brings, or a new one. */
  async getToken(): Promise<string> {
    const cached = this.#cached;
    if (cached !== undefined && this.#clock.now() < cached.refreshAt) return cached.token;
    try {
      return (await this.#refresh()).token;
    } catch (err) {
      // A refresh that fails before the old token expires is not worth failing a send for.
      if (!(err instanceof AuthError) && cached !== undefined && cached === this.#cached && this.#clock.now() < cached.expiresAt) return cached.token;
      throw err;
    }
  }

  /** The cached token and the one before it. */
  recent(): readonly string[] {
    return [this.#cached?.token, this.#previous].filter((t): t is string => t !== undefined);
  }

  /** Drops the cached token if it is `token`. */
  invalidate(token: string): void {
    if (this.#cached?.token !== token) return;
    this.#previous = token;
    this.#cached = undefined;
  }

  /** Closes the provider's own HTTP client, if it made one. */
  async close(): Promise<void> {
    await this.#ownHttp?.close();
  }

  #refresh(): Promise<CachedToken> {
    this.#inflight ??= this.#fetch().then(
      (token) => {
        if (this.#cached !== undefined && this.#cached.token !== token.token) this.#previous = this.#cached.token;
        this.#cached = token;
        this.#inflight = undefined;
        return token;
      },
      (err: unknown) => {
        this.#inflight = undefined;
        throw err;
      },
    );
    return this.#inflight;
  }

  async #fetch(): Promise<CachedToken> {
    for (let attempt = 1; ; attempt++) {
      const result = await this.#attempt();
      if (result.ok) return result.token;
      const delay = result.error.retryable && attempt < this.#retry.maxAttempts ? nextDelay(this.#retry, attempt, result.retryAfterMs) : undefined;
      if (delay === undefined) {
        this.#o.logger?.warn({ endpoint: 'token', status: result.error.status, code: result.error.providerCode, attempts: attempt }, result.error.message);
        throw result.error;
      }
      emit(this.#o, { type: 'retry', endpoint: 'token', attempt, delayMs: delay, status: result.error.status, reason: result.error.message });
      this.#o.logger?.debug({ endpoint: 'token', attempt, delayMs: delay, status: result.error.status }, 'retrying token request');
      await this.#clock.sleep(delay);
    }
  }

  async #attempt(): Promise<Attempt> {
    const started = this.#clock.now();
    let res: HttpResponse;
    try {
      res = await this.#http.post({ target: this.#target, ...this.#request });
    } catch (err) {
      emit(this.#o, { type: 'token.request', ok: false, ms: this.#clock.now() - started });
      const error = new TransportError({ endpoint: 'token', message: `Token request failed: ${networkReason(err)}`, retryable: true }, { cause: err });
      return { ok: false, error };
    }
    const result = this.#read(res, started);
    emit(this.#o, { type: 'token.request', ok: result.ok, ms: this.#clock.now() - started, status: res.status });
    return result;
  }

  #read(res: HttpResponse, started: number): Attempt {
    const body = asRecord(res.body);
    if (res.status >= 200 && res.status < 300) {
      const token = body?.['access_token'];
      if (typeof token !== 'string' || token === '') {
        return { ok: false, error: new TransportError({ endpoint: 'token', status: res.status, retryable: false, message: 'Token response has no access_token' }) };
      }
      const lifetime = lifetimeMs(body?.['expires_in']) ?? this.#o.defaultLifetimeMs ?? 600_000;
      const expiresAt = started + lifetime;
      return { ok: true, token: { token, expiresAt, refreshAt: expiresAt - Math.min(60_000, lifetime / 2) } };
    }
    const error = tokenError(res.status, body, [this.#o.clientSecret, this.#request.headers['authorization']?.slice('Basic '.length)]);
    return { ok: false, error, retryAfterMs: parseRetryAfter(res.headers['retry-after'], this.#clock.now()) };
  }
}

/** The form body and headers of the token request, built once. */
function tokenRequest(o: OAuthTokenOptions): { headers: Record<string, string>; body: string } {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (o.scope !== undefined) form.set('scope', o.scope);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  if ((o.authMethod ?? 'body') === 'basic') {
    const user = `${formEncode(o.clientId)}:${formEncode(o.clientSecret)}`;
    headers['authorization'] = `Basic ${Buffer.from(user).toString('base64')}`;
  } else {
    form.set('client_id', o.clientId);
    form.set('client_secret', o.clientSecret);
  }
  return { headers, body: form.toString() };
}

/** RFC 6749 §2.3.1: the id and secret are form-encoded before they are joined for Basic. */
function formEncode(s: string): string {
  return encodeURIComponent(s).replace(/%20/g, '+');
}

/** An RFC 6749 §5.2 error answer as an error: bad credentials are an {@link AuthError}. */
function tokenError(status: number, body: Record<string, unknown> | undefined, secrets: readonly (string | undefined)[]): TransportError {
  const code = typeof body?.['error'] === 'string' ? body['error'] : undefined;
  const described = typeof body?.['error_description'] === 'string' ? `: ${redact(body['error_description'], secrets).slice(0, 200).replaceAll('\u0000', '\ufffd')}` : '';
  if ((code !== undefined && CONFIG_ERRORS.has(code)) || (code === undefined && status === 401)) {
    const message = `The identity provider refused the client credentials (HTTP ${status}${code ? `, ${code}` : ''}${described}); check clientId, clientSecret and authMethod`;
    return new AuthError(message, { status, providerCode: code });
  }
  const retryable = isRetryableStatus(status);
  const message = `Token request failed (HTTP ${status}${code ? `, ${code}` : ''}${described})`;
  return new TransportError({ endpoint: 'token', status, providerCode: code, retryable, message });
}

function lifetimeMs(v: unknown): number | undefined {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n * 1000 : undefined;
}
