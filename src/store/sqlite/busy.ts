/**
 * A locked database must not freeze the process: better-sqlite3 waits for `busy_timeout`
 * synchronously, blocking the event loop. The store waits only briefly per attempt and retries
 * asynchronously with backoff, so the process keeps answering; past its budget it gives up with
 * {@link StoreUnavailableError}, for the caller to retry later.
 */
import type { BusyEvent } from '../types.js';
import { StoreUnavailableError } from '../../errors.js';

/** SQLite result codes (extended codes included) that a later attempt can get past. */
const TRANSIENT = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|PROTOCOL)(_|$)/;

/** The SQLite code of a transient failure, or undefined for any other error. */
export function transientCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT.test(code) ? code : undefined;
}

/** One wait for a busy database, as reported to {@link BusyOptions.onBusy}. */
export type { BusyEvent } from '../types.js';

/** How long the store waits for a busy database. */
export interface BusyOptions {
  /** SQLite's `busy_timeout`: how long one attempt blocks the event loop (default 50 ms). */
  readonly busyTimeoutMs?: number | undefined;
  /** How long one call keeps retrying, asynchronously, before it gives up (default 3 s). */
  readonly busyRetryMs?: number | undefined;
  /** Called for every busy attempt (for metrics). */
  readonly onBusy?: ((e: BusyEvent) => void) | undefined;
}

/** What the store knows of the database's availability. */
export interface BusyState {
  /** Set while the latest attempt failed transiently: since when, and why. */
  readonly since: number | undefined;
  readonly reason: string | undefined;
}

const FIRST_WAIT_MS = 5;
const LONGEST_WAIT_MS = 250;

/** How long to wait before the `attempt`th retry (1-based): doubling from 5 ms, at most 250 ms. */
export function backoffMs(attempt: number): number {
  return Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** (attempt - 1));
}

/** The error a call gets once its budget is spent on a database that stayed unavailable. */
export function unavailable(code: string, err: unknown): StoreUnavailableError {
  return new StoreUnavailableError(code, `The database is unavailable (${code}: ${(err as Error).message}); try again later`, { cause: err });
}

/** Runs store work, retrying transient failures asynchronously within a budget. */
export class BusyRetry {
  private busySince: number | undefined;
  private lastReason: string | undefined;
  private readonly budgetMs: number;

  constructor(private readonly o: BusyOptions = {}) {
    this.budgetMs = o.busyRetryMs ?? 3_000;
  }

  /** Since when the database has been failing transiently, if it is. */
  get state(): BusyState {
    return { since: this.busySince, reason: this.lastReason };
  }

  /** How long one call may keep retrying. */
  get budget(): number {
    return this.budgetMs;
  }

  /** Records a transient failure (for {@link state}) and reports it to `onBusy`. */
  failed(code: string, outcome: BusyEvent['outcome']): void {
    this.busySince ??= Date.now();
    this.lastReason = code;
    this.o.onBusy?.({ code, outcome });
  }

  /** Records that the database answered again. */
  recovered(): void {
    this.busySince = this.lastReason = undefined;
  }

  /** Runs `work`; a transient failure is retried until the budget is spent, then StoreUnavailableError. */
  async run<T>(work: () => T | Promise<T>): Promise<T> {
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await work();
        this.recovered();
        return result;
      } catch (err) {
        const code = transientCode(err);
        if (code === undefined) throw err;
        const wait = backoffMs(attempt);
        const giveUp = Date.now() + wait - started > this.budgetMs;
        this.failed(code, giveUp ? 'unavailable' : 'retried');
        if (giveUp) throw unavailable(code, err);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
