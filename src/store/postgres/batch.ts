/**
 * Group commit for the PostgreSQL store: calls of one operation that arrive while earlier ones are
 * still at the database run together, as one statement (one round trip, one transaction, one WAL
 * flush) instead of one each. A call made while nothing of its kind is in flight goes at once, alone
 * (no waiting for company), so batches only form under load, and grow with it.
 *
 * A batch is an optimisation, never a change of meaning: every batched statement is one
 * autocommitted statement, all or nothing, and when a batch of several fails, each of its calls runs
 * again alone, so that each gets its own result or its own error (a conflict of one turn never fails
 * another). Calls with the same `key` (one inbound's provider id, one outbox row, one lane) never
 * run at once: the later one waits until the earlier is answered, and then sees what it wrote.
 */
import { StoreUnavailableError } from '../../errors.js';

/** A deadlock or serialization failure is the batch's, not each call's: they are tried alone. */
const LOCK_CONFLICTS = new Set(['40P01', '40001']);

/** How an operation runs in batches. */
export interface BatchOptions<I, O> {
  /** Runs several calls as one statement; the results in the calls' order. */
  readonly many: (items: readonly I[]) => Promise<O[]>;
  /** Runs one call alone (a batch of one, and each call of a batch that failed). */
  readonly one: (item: I) => Promise<O>;
  /** Calls with the same key never share a batch (undefined: any calls may). */
  readonly key?: (item: I) => string;
  /** Batches of this operation at the database at once (default 2). */
  readonly inflight?: number;
  /** The most calls in one batch (default 64). */
  readonly max?: number;
}

interface Waiting<I, O> {
  readonly item: I;
  readonly resolve: (o: O) => void;
  readonly reject: (err: unknown) => void;
}

/** One operation's queue of calls; see the module's comment. */
export class Batcher<I, O> {
  private readonly queue: Waiting<I, O>[] = [];
  private running = 0;
  private scheduled = false;
  /** The keys of the calls in flight: a call with one of them waits until that call is answered. */
  private readonly busy = new Set<string>();

  constructor(private readonly o: BatchOptions<I, O>) {}

  /** Runs a call, in a batch with others when some are waiting. */
  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        // Calls made in the same tick (a dispatcher finishing several sends) go together.
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    while (this.running < (this.o.inflight ?? 2) && this.queue.length > 0) {
      const batch = this.take();
      if (batch.length === 0) return; // every waiting call's key is in flight
      const keys = this.o.key === undefined ? [] : batch.map((w) => this.o.key!(w.item));
      for (const k of keys) this.busy.add(k);
      this.running++;
      void this.execute(batch).finally(() => {
        this.running--;
        for (const k of keys) this.busy.delete(k);
        this.pump();
      });
    }
  }

  /** The next batch: waiting calls in order, up to `max`, skipping keys already in it or in flight. */
  private take(): Waiting<I, O>[] {
    const max = this.o.max ?? 64;
    const key = this.o.key;
    if (key === undefined) return this.queue.splice(0, max);
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < this.queue.length && batch.length < max; ) {
      const k = key(this.queue[i]!.item);
      if (keys.has(k) || this.busy.has(k)) {
        i++;
        continue;
      }
      keys.add(k);
      batch.push(...this.queue.splice(i, 1));
    }
    return batch;
  }

  private async execute(batch: Waiting<I, O>[]): Promise<void> {
    if (batch.length === 1) return this.alone(batch[0]!);
    let results: O[];
    try {
      results = await this.o.many(batch.map((w) => w.item));
    } catch (err) {
      // The database is out of reach: each call alone would fail the same way.
      if (err instanceof StoreUnavailableError && !LOCK_CONFLICTS.has(err.reason)) {
        for (const w of batch) w.reject(err);
        return;
      }
      // All or nothing: nothing of the batch was written. Each call again, alone, for its own outcome.
      await Promise.all(batch.map((w) => this.alone(w)));
      return;
    }
    batch.forEach((w, i) => w.resolve(results[i]!));
  }

  private async alone(w: Waiting<I, O>): Promise<void> {
    try {
      w.resolve(await this.o.one(w.item));
    } catch (err) {
      w.reject(err);
    }
  }
}
