/** The real clock: wall time and abortable timers. */
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from './types.js';

/** Wall-clock time (`Date.now()`) and `setTimeout`-based sleep that an `AbortSignal` can cut short. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) => (ms <= 0 ? Promise.resolve() : delay(ms, undefined, signal ? { signal } : undefined)),
};
