/**
 * Waiting in tests: `eventually` retries a probe until it holds and, when it never does, fails with
 * what it last saw; `sleep` is for the few waits that must let real time pass (a lease lapsing).
 */

/** How `eventually` retries. */
export interface EventuallyOptions {
  /** How long to keep trying, in ms (default 10 000). */
  readonly timeoutMs?: number;
  /** The pause between tries, in ms (default 20). */
  readonly intervalMs?: number;
  /** What is awaited, for the failure's message. */
  readonly what?: string;
}

/** Resolves after `ms` ms of real time. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Calls `probe` until it neither throws nor returns `false`, and resolves to what it returned. A
 * probe is an assertion (`() => expect(sent()).toHaveLength(2)`) or a check returning a boolean.
 * After `timeoutMs` it rejects with the last assertion error (as message and cause) or says that
 * the check still returned false.
 */
export async function eventually<T>(probe: () => T | Promise<T>, o: EventuallyOptions = {}): Promise<Exclude<T, false>> {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  let tries = 0;
  let last: unknown;
  for (;;) {
    tries++;
    try {
      const value = await probe();
      if (value !== false) return value as Exclude<T, false>;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) break;
    await sleep(o.intervalMs ?? 20);
  }
  const saw = last === undefined ? 'the check still returned false' : `the last try failed with: ${last instanceof Error ? last.message : String(last)}`;
  throw new Error(`${o.what ?? 'the condition'} did not hold within ${timeoutMs} ms (${tries} tries); ${saw}`, { cause: last });
}
