/**
 * One provider call with its bearer token and bounded retries: backoff with jitter on 408, 429,
 * 5xx and network errors, `Retry-After` honoured, and on a refused token one refresh and one retry.
 */
import { AuthError, TransportError } from '../errors.js';
import type { Classifier, Verdict } from './channels.js';
import { networkReason, type HttpPoster, type HttpResponse, type Target } from './http.js';
import { emit, redact, redactValue, type ObserverOptions } from './log.js';
import { nextDelay, parseRetryAfter, type RetryPolicy } from './retry.js';
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

/** Makes the call, retrying as the policy allows. Never throws for provider or network failures. */
export async function callProvider(ctx: CallContext, call: ProviderCall): Promise<SendResult> {
  let attempts = 0;
  let retries = 0;
  let refreshed = false;
  /** True only for the attempt right after a refused token was invalidated. */
  let wantFresh = false;
  let lastToken: string | undefined;
  let lastTried: Tried | undefined;
  /** What a provider echoing the request could put in its answer: every token this call used, and the secrets. */
  const secrets: string[] = [...(ctx.secrets ?? []), ...(ctx.tokens.recent?.() ?? [])];
  for (;;) {
    if (call.signal?.aborted) return aborted(call, attempts, lastTried, secrets);
    let token: string;
    try {
      token = await ctx.tokens.getToken();
    } catch (err) {
      return tokenFailure(call, err, attempts, secrets);
    }
    // Only the attempt right after the refusal needs a new token; later retries reuse the fresh one.
    if (wantFresh && token === lastToken) return authFailure(call, attempts, lastTried, secrets, 'the token source has no other token');
    wantFresh = false;
    lastToken = token;
    if (!secrets.includes(token)) secrets.push(token);
    attempts++;
    const tried = await attempt(ctx, call, token);
    lastTried = tried;
    const v = tried.verdict;
    if (v.ok) return { ok: true, channel: call.channel, status: tried.status ?? 0, providerId: v.providerId, raw: redactValue(tried.raw, secrets), ...(v.sms && { sms: v.sms }), attempts };
    if (tried.status === 401 || v.tokenRefused) {
      ctx.tokens.invalidate(token);
      if (refreshed) return authFailure(call, attempts, tried, secrets, 'a freshly issued token was refused as well');
      refreshed = true;
      wantFresh = true;
      ctx.logger?.debug({ endpoint: call.endpoint, status: tried.status }, 'token refused; refreshing it and retrying once');
      continue;
    }
    const delay = retryDelay(ctx, call, tried, retries + 1);
    if (delay === undefined) return failure(call, tried, attempts, secrets);
    retries++;
    const reason = redact(v.reason, secrets);
    emit(ctx, { type: 'retry', endpoint: call.endpoint, attempt: attempts, delayMs: delay, status: tried.status, reason });
    ctx.logger?.debug({ endpoint: call.endpoint, attempt: attempts, delayMs: delay, status: tried.status }, `retrying: ${reason}`);
    try {
      await ctx.clock.sleep(delay, call.signal);
    } catch {
      return failure(call, tried, attempts, secrets);
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

function failure(call: ProviderCall, tried: Tried, attempts: number, secrets: readonly string[]): SendFailed {
  const v = tried.verdict;
  if (v.ok) throw new Error('unreachable: failure() given an accepted verdict');
  return {
    ok: false,
    channel: call.channel,
    kind: v.kind,
    status: tried.status,
    providerCode: v.providerCode,
    reason: redact(v.reason, secrets),
    hint: v.hint === undefined ? undefined : redact(v.hint, secrets),
    raw: redactValue(tried.raw, secrets),
    attempts,
    retryAfterMs: tried.retryAfterMs,
  };
}

function aborted(call: ProviderCall, attempts: number, tried: Tried | undefined, secrets: readonly string[]): SendFailed {
  return { ok: false, channel: call.channel, kind: 'retryable', status: tried?.status, reason: 'aborted by the caller', raw: redactValue(tried?.raw, secrets), attempts };
}

function authFailure(call: ProviderCall, attempts: number, tried: Tried | undefined, secrets: readonly string[], why: string): SendFailed {
  const code = tried?.verdict.ok === false ? tried.verdict.providerCode : undefined;
  const answer = tried?.status === undefined ? '' : ` (HTTP ${tried.status}${code !== undefined ? `, code ${code}` : ''})`;
  return {
    ok: false,
    channel: call.channel,
    kind: 'permanent',
    status: tried?.status,
    providerCode: code,
    reason: redact(`The ${call.endpoint} endpoint refused the access token${answer}, and ${why}: check the credentials and the token source configured for it`, secrets),
    raw: redactValue(tried?.raw, secrets),
    attempts,
    auth: true,
  };
}

function tokenFailure(call: ProviderCall, err: unknown, attempts: number, secrets: readonly string[]): SendFailed {
  const e = err instanceof TransportError ? err : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return {
    ok: false,
    channel: call.channel,
    kind: e?.retryable ? 'retryable' : 'permanent',
    status: e?.status,
    providerCode: e?.providerCode,
    reason: redact(`Could not obtain an access token: ${message}`, secrets),
    attempts,
    auth: err instanceof AuthError ? true : undefined,
  };
}
