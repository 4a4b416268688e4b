/**
 * Waiting out a store that is unavailable for now (a locked database): background work retries
 * with a growing, jittered delay, and never waits for an unrelated event to be tried again.
 */
import type { RuntimeClock } from './clock.js';

/** The first wait after a store failure. */
export const STORE_RETRY_FIRST_MS = 100;
/** The longest wait between two tries. */
export const STORE_RETRY_LONGEST_MS = 5_000;

/** The wait before try number `failures + 1`: doubling from 100 ms up to 5 s, half of it jittered. */
export function storeRetryDelay(failures: number, random: () => number = Math.random): number {
  const exp = Math.min(STORE_RETRY_LONGEST_MS, STORE_RETRY_FIRST_MS * 2 ** Math.max(0, failures - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/**
 * The wait before try number `attempt + 1` of work whose next try is stored (a send, a helpdesk
 * event): `first · 2^(attempt−1)` capped at `longest`, half of it jittered, in whole milliseconds,
 * since the time is kept as an integer (a BIGINT on PostgreSQL refuses a fraction).
 */
export function retryDelay(attempt: number, first: number, longest: number, random: () => number = Math.random): number {
  const exp = Math.min(longest, first * 2 ** (attempt - 1));
  return Math.ceil(exp / 2 + random() * (exp / 2));
}

/** Waits `ms` on the runtime's clock; `cancel()` ends the wait at once (on shutdown). */
export function pause(clock: RuntimeClock, ms: number): { done: Promise<void>; cancel: () => void } {
  let cancel = () => {};
  const done = new Promise<void>((resolve) => {
    const handle = clock.setTimeout(resolve, ms);
    cancel = () => {
      clock.clearTimeout(handle);
      resolve();
    };
  });
  return { done, cancel };
}
