/**
 * One Cloud API call (a message or a read receipt) with its bounded retries: 131000, 5xx, network
 * errors and timeouts back off as the retry policy says (`Retry-After` honoured); 130429 pauses
 * the number and 131056 the user, and the retry waits for them; everything else ends the call.
 * A refused token (401, 190) is never retried: a static token cannot get better by asking again.
 */
import { networkReason, type HttpPoster, type HttpResponse } from '../http.js';
import { emit, redact, type ObserverOptions } from '../log.js';
import { nextDelay, parseRetryAfter, type RetryPolicy } from '../retry.js';
import type { Clock, SendFailed, SendResult } from '../types.js';
import { classifyCloud, type CloudVerdict } from './classify.js';
import type { ResolvedNumber } from './numbers.js';
import { PAIR_RATE_BACKOFF_MS, type Blocked, type Pacer } from './pace.js';

/** What every call of one provider shares. */
export interface CloudContext extends ObserverOptions {
  readonly http: HttpPoster;
  readonly clock: Clock;
  readonly retry: RetryPolicy;
  readonly pacer: Pacer;
  /** Every configured token: none may appear in a result or a log line. */
  readonly secrets: readonly string[];
}

/** One call. */
export interface CloudCall {
  readonly number: ResolvedNumber;
  readonly token: string;
  readonly body: string;
  /** The user a message goes to: the call waits on the number's and the pair's pace. Absent: unpaced (a read receipt). */
  readonly to?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

interface Tried {
  readonly verdict: CloudVerdict;
  readonly status?: number | undefined;
  readonly raw?: unknown;
  readonly retryAfterMs?: number | undefined;
  /** Why no answer came (network error, timeout). */
  readonly unreached?: string | undefined;
}

/** Makes the call. Never throws; what it returns holds no token. */
export async function callCloud(ctx: CloudContext, call: CloudCall): Promise<SendResult> {
  return redact(await callWithRetries(ctx, call), [...ctx.secrets, call.token]);
}

async function callWithRetries(ctx: CloudContext, call: CloudCall): Promise<SendResult> {
  const { numberId } = call.number;
  let attempts = 0;
  for (;;) {
    if (call.to !== undefined) {
      let blocked: Blocked | undefined;
      try {
        blocked = await ctx.pacer.acquire(numberId, call.to, { maxWaitMs: ctx.retry.maxRetryAfterMs, signal: call.signal });
      } catch {
        return aborted(attempts);
      }
      if (blocked !== undefined) return paused(call, blocked, attempts);
    }
    if (call.signal?.aborted) return aborted(attempts);
    attempts++;
    const tried = await attempt(ctx, call);
    const v = tried.verdict;
    if (v.ok) {
      ctx.pacer.succeeded(numberId);
      return { ok: true, channel: 'interactive', status: tried.status ?? 0, providerId: v.providerId, raw: tried.raw, attempts };
    }
    const wait = waitBefore(ctx, call, tried, attempts);
    if (v.kind === 'permanent' || wait === undefined || attempts >= ctx.retry.maxAttempts || wait > ctx.retry.maxRetryAfterMs || call.signal?.aborted) {
      return failure(call, tried, attempts, v.class === 'transient' ? tried.retryAfterMs : wait);
    }
    const reason = redact(reasonOf(call, tried), [...ctx.secrets, call.token]);
    emit(ctx, { type: 'retry', endpoint: 'cloud-api', attempt: attempts, delayMs: wait, status: tried.status, reason });
    ctx.logger?.debug({ endpoint: 'cloud-api', numberId, attempt: attempts, delayMs: wait, status: tried.status, class: v.class }, `retrying: ${reason}`);
    // A paced call's wait is the pacer's: the next acquire() sleeps until the number or the pair may send again.
    if (v.class === 'transient' || call.to === undefined) {
      try {
        await ctx.clock.sleep(wait, call.signal);
      } catch {
        return failure(call, tried, attempts, wait);
      }
    }
  }
}

/** How long until the next attempt may go, in ms, after pausing what the answer asks to pause. */
function waitBefore(ctx: CloudContext, call: CloudCall, tried: Tried, attempts: number): number | undefined {
  const v = tried.verdict;
  if (v.ok) return undefined;
  const { numberId } = call.number;
  if (v.class === 'throughput') return ctx.pacer.throttled(numberId, tried.retryAfterMs);
  if (v.class === 'pair-rate') return call.to === undefined ? (tried.retryAfterMs ?? PAIR_RATE_BACKOFF_MS) : ctx.pacer.pairLimited(numberId, call.to, tried.retryAfterMs);
  if (v.class === 'transient') return nextDelay(ctx.retry, attempts, tried.retryAfterMs);
  return undefined;
}

/** One HTTP attempt, read. */
async function attempt(ctx: CloudContext, call: CloudCall): Promise<Tried> {
  let res: HttpResponse;
  try {
    res = await ctx.http.post({
      target: call.number.target,
      headers: { authorization: `Bearer ${call.token}`, 'content-type': 'application/json' },
      body: call.body,
      signal: call.signal,
    });
  } catch (err) {
    const unreached = call.signal?.aborted ? 'aborted by the caller' : networkReason(err);
    return { verdict: { ok: false, class: 'transient', kind: 'retryable', code: undefined, said: '' }, unreached };
  }
  const verdict = classifyCloud(res);
  const retryAfterMs = verdict.ok ? undefined : parseRetryAfter(res.headers['retry-after'], ctx.clock.now());
  return { verdict, status: res.status, raw: res.body, retryAfterMs };
}

function failure(call: CloudCall, tried: Tried, attempts: number, retryAfterMs: number | undefined): SendFailed {
  const v = tried.verdict;
  if (v.ok) throw new Error('unreachable: failure() given an accepted verdict');
  return {
    ok: false,
    channel: 'interactive',
    kind: v.kind,
    class: v.class,
    status: tried.status,
    providerCode: v.code,
    reason: reasonOf(call, tried),
    raw: tried.raw,
    attempts,
    ...(retryAfterMs !== undefined && v.kind === 'retryable' && { retryAfterMs }),
    ...(v.class === 'auth' && { auth: true }),
  };
}

/** Why, for a person: what Meta said, and for a refused token which token it was (never the token). */
function reasonOf(call: CloudCall, tried: Tried): string {
  const v = tried.verdict;
  if (v.ok) return '';
  if (tried.unreached !== undefined) return `Cloud API not reached for phone_number_id ${call.number.numberId}: ${tried.unreached}`;
  const answer = `HTTP ${tried.status}${v.code !== undefined ? `, code ${v.code}` : ''}${v.said !== '' ? `: ${v.said}` : ''}`;
  if (v.class === 'auth') return `${call.number.tokenName} was refused by the Cloud API for phone_number_id ${call.number.numberId} (${answer}): check that token`;
  return `Cloud API answered ${answer}`;
}

/** Not sent now: the number or the user is paused for longer than a call waits. */
function paused(call: CloudCall, b: Blocked, attempts: number): SendFailed {
  const who =
    b.class === 'throughput'
      ? `phone_number_id ${call.number.numberId} is paused after its throughput limit (130429)`
      : `messages to this user from phone_number_id ${call.number.numberId} are paused after the pair rate limit (131056)`;
  return { ok: false, channel: 'interactive', kind: 'retryable', class: b.class, reason: `Not sent yet: ${who} for another ${b.waitMs} ms`, attempts, retryAfterMs: b.waitMs };
}

function aborted(attempts: number): SendFailed {
  return { ok: false, channel: 'interactive', kind: 'retryable', class: 'transient', reason: 'aborted by the caller', attempts };
}
