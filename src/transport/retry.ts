/** Bounded retries: exponential backoff with jitter, and the provider's `Retry-After`. */
import { ConfigError } from '../errors.js';

/** How a call is retried. */
export interface RetryPolicy {
  /** Attempts per call, the first included (default 3). The immediate retry after a first 401 (with a refreshed token) is not counted; a later 401 is, like a 503. */
  readonly maxAttempts: number;
  /** The first backoff, before jitter (default 200 ms). */
  readonly baseDelayMs: number;
  /** The longest backoff (default 5 s). */
  readonly maxDelayMs: number;
  /**
   * The longest `Retry-After` waited out inside a call (default 15 s). When the provider asks for
   * more, the call ends as a retryable failure carrying `retryAfterMs`, for the caller to schedule.
   */
  readonly maxRetryAfterMs: number;
  /** A random number in [0, 1) for the jitter (default `Math.random`). */
  readonly random: () => number;
}

/** Retry settings; unset fields take the defaults. */
export type RetryOptions = Partial<RetryPolicy>;

/** The defaults of {@link RetryPolicy}. */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 3,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 15_000,
  random: Math.random,
};

/** Fills in defaults and checks the numbers. */
export function resolveRetry(options: RetryOptions = {}): RetryPolicy {
  const p = { ...DEFAULT_RETRY, ...options };
  if (!Number.isInteger(p.maxAttempts) || p.maxAttempts < 1) throw new ConfigError('retry.maxAttempts', 'must be an integer ≥ 1');
  for (const key of ['baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const) {
    if (!Number.isFinite(p[key]) || p[key] < 0) throw new ConfigError(`retry.${key}`, 'must be a number ≥ 0');
  }
  return p;
}

/**
 * The backoff before retry number `retry` (1 for the first retry): `base · 2^(retry−1)`, capped,
 * with "equal jitter" (half fixed, half random) so that retries spread out yet never hit at once.
 */
export function backoffDelay(p: RetryPolicy, retry: number): number {
  const exp = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** (retry - 1));
  return Math.round(exp / 2 + p.random() * (exp / 2));
}

/** The wait before retry number `retry`, or `undefined` when the provider asked for longer than we wait. */
export function nextDelay(p: RetryPolicy, retry: number, retryAfterMs: number | undefined): number | undefined {
  if (retryAfterMs === undefined) return backoffDelay(p, retry);
  return retryAfterMs > p.maxRetryAfterMs ? undefined : retryAfterMs;
}

/** Reads `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP date, relative to `now`. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (v === undefined || v === '') return undefined;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Whether an HTTP status is worth retrying: 408, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}
