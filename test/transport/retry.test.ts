import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { DEFAULT_RETRY, backoffDelay, parseRetryAfter } from '../../src/transport/index.js';
import { nextDelay, resolveRetry } from '../../src/transport/retry.js';

describe('retry policy', () => {
  it('backs off exponentially with equal jitter, capped', () => {
    const low = { ...DEFAULT_RETRY, random: () => 0 };
    const high = { ...DEFAULT_RETRY, random: () => 0.999999 };
    expect([1, 2, 3].map((n) => backoffDelay(low, n))).toEqual([100, 200, 400]);
    expect([1, 2, 3].map((n) => backoffDelay(high, n))).toEqual([200, 400, 800]);
    expect(backoffDelay(high, 20)).toBe(DEFAULT_RETRY.maxDelayMs);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(['7'], now)).toBe(7000);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('waits out a Retry-After up to maxRetryAfterMs, no longer', () => {
    expect(nextDelay(DEFAULT_RETRY, 1, 2000)).toBe(2000);
    expect(nextDelay(DEFAULT_RETRY, 1, DEFAULT_RETRY.maxRetryAfterMs + 1)).toBeUndefined();
  });

  it('rejects nonsense settings', () => {
    expect(() => resolveRetry({ maxAttempts: 0 })).toThrow(ConfigError);
    expect(() => resolveRetry({ baseDelayMs: -1 })).toThrow(ConfigError);
  });
});
