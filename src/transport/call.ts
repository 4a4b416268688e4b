/**
 * One provider call with its bearer token and bounded retries: backoff with jitter on 408, 429,
 * 5xx and network errors, `Retry-After` honoured. A refused token is dropped and refreshed (one
 * refresh in flight for every call that saw it refused): the first refusal is retried at once,
 * a refusal after that (a token revoked again) backs off within the same retry budget.
 */
import { AuthError, TransportError } from '../errors.js';
import type { Classifier, Verdict } from './channels.js';
import { networkReason, type HttpPoster, type HttpResponse, type Target } from './http.js';
import { emit, redact, type ObserverOptions } from './log.js';
import { backoffDelay, nextDelay, parseRetryAfter, type RetryPolicy } from './retry.js';
import type { TokenProvider } from './token.js';
import type { Channel, Clock, SendFailed, SendResult } from './types.js';

/** What every call of one channel shares. */
export interface CallContext extends ObserverOptions {
  readonly http: HttpPoster;
  readonly tokens: TokenProvider;
  readonly clock: Clock;
  readonly retry: RetryPolicy;
  /** Values never kept from an answer (the client secrets), besides the call's own tokens. */
  readonly secrets?: readonly string[] | undefined;
}

/** One call: where, what, and how to read the answer. */
export interface ProviderCall {
  readonly channel: Channel;
  readonly endpoint: 'messaging' | 'sms';
  readonly target: Target;
  readonly body: string;
  readonly classify: Classifier;
  readonly signal?: AbortSignal | undefined;
}

/** One attempt's outcome, with what the result needs from it. */
interface Tried {
  readonly verdict: Verdict;
  readonly status?: number | undefined;
  readonly raw?: unknown;
  readonly retryAfterMs?: number | undefined;
}

/**
 * Makes the call, retrying as the policy allows. Never throws for provider or network failures.
 * Whatever it returns has passed through {@link redact}: a provider that echoes the request or the
 * credentials in any field of its answer leaves none of them in the result.
 */
export async function callProvider(ctx: CallContext, call: ProviderCall): Promise<SendResult> {
  /** What a provider echoing the request could put in its answer: every token this call used, and the secrets. */
  const secrets: string[] = [...(ctx.secrets ?? []), ...(ctx.tokens.recent?.() ?? [])];
  const result = await callWithRetries(ctx, call, secrets);
  return redact(result, [...secrets, ...(ctx.tokens.recent?.() ?? [])]);
}

/** The attempts of one call; every token it uses is added to `secrets`. */
async function callWithRetries(ctx: CallContext, call: ProviderCall, secrets: string[]): Promise<SendResult> {
  let attempts = 0;
  let retries = 0;
  let refreshed = false;
  /** True only for the attempt right after a refused token was invalidated. */
  let wantFresh = false;
  let lastToken: string | undefined;
  let lastTried: Tried | undefined;
  for (;;) {
    if (call.signal?.aborted) return aborted(call, attempts, lastTried);
    let token: string;
    try {
      token = await ctx.tokens.getToken();
    } catch (err) {
      return tokenFailure(call, err, attempts);
    }
    // Only the attempt right after the refusal needs a new token; later retries reuse the fresh one.
    if (wantFresh && token === lastToken) return authFailure(call, attempts, lastTried, 'the token source has no other token');
    wantFresh = false;
    lastToken = token;
    if (!secrets.includes(token)) secrets.push(token);
    attempts++;
    const tried = await attempt(ctx, call, token);
    lastTried = tried;
    const v = tried.verdict;
    if (v.ok) return { ok: true, channel: call.channel, status: tried.status ?? 0, providerId: v.providerId, raw: tried.raw, ...(v.sms && { sms: v.sms }), attempts };
    let delay: number | undefined;
    const refused = tried.status === 401 || v.tokenRefused === true;
    if (refused) {
      ctx.tokens.invalidate(token);
      wantFresh = true;
      if (!refreshed) {
        // The usual case, an expired token: refresh and retry at once, outside the retry budget.
        refreshed = true;
        ctx.logger?.debug({ endpoint: call.endpoint, status: tried.status }, 'token refused; refreshing it and retrying');
        continue;
      }
      // Refused again (revoked twice, or a refresh racing a revocation): back off, as for a 503.
      delay = retries + 1 >= ctx.retry.maxAttempts || call.signal?.aborted ? undefined : backoffDelay(ctx.retry, retries + 1);
      if (delay === undefined) return refusedAgain(call, tried, attempts);
    } else {
      delay = retryDelay(ctx, call, tried, retries + 1);
      if (delay === undefined) return failure(call, tried, attempts);
    }
    retries++;
    const reason = redact(v.reason, secrets);
    emit(ctx, { type: 'retry', endpoint: call.endpoint, attempt: attempts, delayMs: delay, status: tried.status, reason });
    ctx.logger?.debug({ endpoint: call.endpoint, attempt: attempts, delayMs: delay, status: tried.status }, `retrying: ${reason}`);
    try {
      await ctx.clock.sleep(delay, call.signal);
    } catch {
      return refused ? refusedAgain(call, tried, attempts) : failure(call, tried, attempts);
    }
  }
}

/** The wait before retry number `retry`, or `undefined` when the call should end now. */
function retryDelay(ctx: CallContext, call: ProviderCall, tried: Tried, retry: number): number | undefined {
  const retryable = !tried.verdict.ok && tried.verdict.kind === 'retryable';
  if (!retryable || retry >= ctx.retry.maxAttempts || call.signal?.aborted) return undefined;
  return nextDelay(ctx.retry, retry, tried.retryAfterMs);
}

/** One HTTP attempt, read by the channel's classifier. */
async function attempt(ctx: CallContext, call: ProviderCall, token: string): Promise<Tried> {
  let res: HttpResponse;
  try {
    res = await ctx.http.post({
      target: call.target,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: call.body,
      signal: call.signal,
    });
  } catch (err) {
    const reason = call.signal?.aborted ? 'aborted by the caller' : networkReason(err);
    return { verdict: { ok: false, kind: 'retryable', reason } };
  }
  const verdict = call.classify(res);
  const retryAfterMs = verdict.ok ? undefined : parseRetryAfter(res.headers['retry-after'], ctx.clock.now());
  return { verdict, status: res.status, raw: res.body, retryAfterMs };
}

function failure(call: ProviderCall, tried: Tried, attempts: number): SendFailed {
  const v = tried.verdict;
  if (v.ok) throw new Error('unreachable: failure() given an accepted verdict');
  return {
    ok: false,
    channel: call.channel,
    kind: v.kind,
    status: tried.status,
    providerCode: v.providerCode,
    reason: v.reason,
    hint: v.hint,
    raw: tried.raw,
    attempts,
    retryAfterMs: tried.retryAfterMs,
  };
}

function aborted(call: ProviderCall, attempts: number, tried: Tried | undefined): SendFailed {
  return { ok: false, channel: call.channel, kind: 'retryable', status: tried?.status, reason: 'aborted by the caller', raw: tried?.raw, attempts };
}

/**
 * Fresh tokens kept being refused until the retry budget ran out: a retryable failure, so the
 * outbox tries again later and the usual fallback rules apply then. Not an auth failure: the
 * identity provider did issue tokens, so the credentials themselves are good.
 */
function refusedAgain(call: ProviderCall, tried: Tried, attempts: number): SendFailed {
  const code = tried.verdict.ok === false ? tried.verdict.providerCode : undefined;
  return {
    ok: false,
    channel: call.channel,
    kind: 'retryable',
    status: tried.status,
    providerCode: code,
    reason: `The ${call.endpoint} endpoint refused the access token ${attempts} times, each time after refreshing it${answerOf(tried)}`,
    raw: tried.raw,
    attempts,
  };
}

function authFailure(call: ProviderCall, attempts: number, tried: Tried | undefined, why: string): SendFailed {
  const code = tried?.verdict.ok === false ? tried.verdict.providerCode : undefined;
  return {
    ok: false,
    channel: call.channel,
    kind: 'permanent',
    status: tried?.status,
    providerCode: code,
    reason: `The ${call.endpoint} endpoint refused the access token${answerOf(tried)}, and ${why}: check the credentials and the token source configured for it`,
    raw: tried?.raw,
    attempts,
    auth: true,
  };
}

/** ` (HTTP 401, code 190)`, or nothing when no answer came. */
function answerOf(tried: Tried | undefined): string {
  const code = tried?.verdict.ok === false ? tried.verdict.providerCode : undefined;
  return tried?.status === undefined ? '' : ` (HTTP ${tried.status}${code !== undefined ? `, code ${code}` : ''})`;
}

function tokenFailure(call: ProviderCall, err: unknown, attempts: number): SendFailed {
  const e = err instanceof TransportError ? err : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return {
    ok: false,
    channel: call.channel,
    kind: e?.retryable ? 'retryable' : 'permanent',
    status: e?.status,
    providerCode: e?.providerCode,
    reason: `Could not obtain an access token: ${message}`,
    attempts,
    auth: err instanceof AuthError ? true : undefined,
  };
}
