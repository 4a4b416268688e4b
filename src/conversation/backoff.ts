/**
 * Waiting out a store that is unavailable for now (a locked database): background work retries
 * with a growing, jittered delay, and never waits for an unrelated event to be tried again.
 */
import { isStoreUnavailable } from '../errors.js';
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

/** How {@link untilStored} waits. */
export interface StoreWaits {
  readonly clock: RuntimeClock;
  /** True once the runtime stops: a store that stays unavailable is no longer waited out. */
  readonly stopped: () => boolean;
  /** The waits running, so that a stop can end them at once. */
  readonly waits: Set<() => void>;
  /** Called before each wait (to log and count it). */
  readonly onWait: (err: Error, delayMs: number) => void;
}

/**
 * Runs a store write, waiting out a store that is unavailable for now with {@link storeRetryDelay}:
 * what the write records (a send's result, say) is known only here, so giving up would lose it.
 * Any other error, or one after a stop, is thrown.
 */
export async function untilStored<T>(write: () => Promise<T>, w: StoreWaits): Promise<T> {
  for (let failures = 1; ; failures++) {
    try {
      return await write();
    } catch (err) {
      if (!isStoreUnavailable(err) || w.stopped()) throw err;
      const delay = storeRetryDelay(failures);
      w.onWait(err, delay);
      const wait = pause(w.clock, delay);
      w.waits.add(wait.cancel);
      await wait.done;
      w.waits.delete(wait.cancel);
    }
  }
}
