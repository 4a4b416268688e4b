/**
 * Group commit for the SQLite store. A write transaction costs far more than the statements in it
 * (BEGIN IMMEDIATE, COMMIT, the WAL frames of every page it touched), so the store's writes are
 * queued and everything issued in one turn of the event loop commits in one transaction, flushed
 * from `setImmediate`. Each write runs in its own savepoint: one that throws rolls back alone and
 * rejects only its own promise. Every promise settles only after the COMMIT, so a caller that sees
 * a result knows it is durable (the webhook answers 200 only then). A flush is bounded in
 * operations and time so that it never holds the event loop long; the rest waits for the next one.
 */
import type Database from 'better-sqlite3';
import { backoffMs, transientCode, unavailable, type BusyRetry } from './busy.js';

/** How a flush is bounded. */
export interface GroupCommitOptions {
  /** Most writes in one transaction (default 256). */
  readonly maxOps?: number | undefined;
  /** Work after which a flush commits and leaves the rest to the next one (default 2 ms). */
  readonly maxFlushMs?: number | undefined;
}

/** What the group commit has done since the store opened (for metrics). */
export interface WriteStats {
  /** Transactions committed. */
  readonly commits: number;
  /** Writes committed (one that threw inside its savepoint counts: its rejection is final once committed). */
  readonly ops: number;
  /** Of those, writes that threw (a version conflict, a constraint): rolled back alone. */
  readonly failedOps: number;
  /** The most writes one transaction held. */
  readonly maxOpsPerCommit: number;
  /** Flushes that met a busy or failing database and were retried later. */
  readonly busyRetries: number;
  /** Writes given up with StoreUnavailableError. */
  readonly unavailable: number;
  /** Time spent in flushes (statements, savepoints, BEGIN and COMMIT), in total and the longest one. */
  readonly flushMs: number;
  readonly maxFlushMs: number;
  /** Writes waiting now. */
  readonly queued: number;
  /** Per store method: calls committed and the milliseconds their statements took inside flushes. */
  readonly methods: Readonly<Record<string, { readonly calls: number; readonly ms: number }>>;
}

interface Op {
  readonly name: string;
  readonly work: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: unknown) => void;
  /** When the write was issued: its busy budget counts from here. */
  readonly issued: number;
  outcome?: { ok: true; value: unknown } | { ok: false; error: unknown };
}

/** A write whose error left SQLite without its transaction (it rolled everything back itself). */
class TransactionLost {
  constructor(readonly error: unknown) {}
}

/** Queues writes and commits them in groups, one `BEGIN IMMEDIATE` per flush. */
export class GroupCommit {
  private queue: Op[] = [];
  private scheduled: { kind: 'immediate'; handle: NodeJS.Immediate } | { kind: 'timer'; handle: NodeJS.Timeout } | undefined;
  private attempt = 0;
  private paused = false;
  private draining = false;
  private readonly maxOps: number;
  private readonly maxFlushMs: number;
  private readonly st = { commits: 0, ops: 0, failedOps: 0, maxOpsPerCommit: 0, busyRetries: 0, unavailable: 0, flushMs: 0, maxFlushMs: 0 };
  private readonly methods: Record<string, { calls: number; ms: number }> = {};
  private readonly sql: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Database.Statement>;

  constructor(
    private readonly db: Database.Database,
    private readonly busy: BusyRetry,
    o: GroupCommitOptions = {},
  ) {
    this.maxOps = Math.max(1, o.maxOps ?? 256);
    this.maxFlushMs = o.maxFlushMs ?? 2;
    const prepare = (sql: string) => db.prepare(sql);
    this.sql = {
      begin: prepare('BEGIN IMMEDIATE'),
      commit: prepare('COMMIT'),
      rollback: prepare('ROLLBACK'),
      savepoint: prepare('SAVEPOINT colloquy_op'),
      release: prepare('RELEASE colloquy_op'),
      rollbackTo: prepare('ROLLBACK TO colloquy_op'),
    };
  }

  /** Queues a synchronous write; its promise settles once the transaction holding it committed. */
  run<T>(name: string, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ name, work, resolve: resolve as (v: unknown) => void, reject, issued: Date.now() });
      if (this.scheduled === undefined && !this.paused) this.schedule();
    });
  }

  /** What the group commit has done so far. */
  stats(): WriteStats {
    const methods = Object.fromEntries(Object.entries(this.methods).map(([k, m]) => [k, { calls: m.calls, ms: Math.round(m.ms * 1000) / 1000 }]));
    return { ...this.st, flushMs: Math.round(this.st.flushMs), maxFlushMs: Math.round(this.st.maxFlushMs * 1000) / 1000, queued: this.queue.length, methods };
  }

  /** Holds every write until {@link resume} (a checkpoint that needs the database to itself). */
  pause(): void {
    if (this.draining) return;
    this.paused = true;
    this.cancel();
  }

  /** Whether writes are held for a checkpoint right now. */
  get held(): boolean {
    return this.paused;
  }

  /** Lets writes commit again after {@link pause}. */
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.queue.length > 0 && this.scheduled === undefined) this.schedule();
  }

  /** Commits everything queued (waiting out a busy database within each write's budget), for close(). */
  async drain(): Promise<void> {
    this.draining = true;
    this.paused = false;
    while (this.queue.length > 0) {
      this.cancel();
      this.flush();
      if (this.queue.length > 0 && this.attempt > 0) await new Promise((resolve) => setTimeout(resolve, backoffMs(this.attempt)));
    }
    this.cancel();
  }

  private schedule(): void {
    this.scheduled = { kind: 'immediate', handle: setImmediate(this.flush) };
  }

  private cancel(): void {
    const s = this.scheduled;
    if (s?.kind === 'immediate') clearImmediate(s.handle);
    else if (s?.kind === 'timer') clearTimeout(s.handle);
    this.scheduled = undefined;
  }

  /** One transaction: as many queued writes as the bounds allow, in the order they were issued. */
  private readonly flush = (): void => {
    this.scheduled = undefined;
    if (this.paused || this.queue.length === 0) return;
    const started = performance.now();
    let n = 0;
    try {
      this.sql.begin.run();
      while (n < this.queue.length && n < this.maxOps) {
        this.runOp(this.queue[n]!);
        n++;
        if (performance.now() - started >= this.maxFlushMs) break;
      }
      this.sql.commit.run();
    } catch (err) {
      this.abandon(n, err);
      this.timeFlush(started);
      return;
    }
    this.attempt = 0;
    this.busy.recovered();
    const done = this.queue.splice(0, n);
    this.st.commits++;
    this.st.ops += n;
    this.st.maxOpsPerCommit = Math.max(this.st.maxOpsPerCommit, n);
    this.timeFlush(started);
    if (this.queue.length > 0) this.schedule();
    for (const op of done) this.settle(op);
  };

  /** Runs one write in its own savepoint; a write that throws is rolled back alone and remembered. */
  private runOp(op: Op): void {
    const t = performance.now();
    this.sql.savepoint.run();
    try {
      op.outcome = { ok: true, value: op.work() };
      this.sql.release.run();
    } catch (error) {
      if (!this.db.inTransaction) throw new TransactionLost(error);
      this.sql.rollbackTo.run();
      this.sql.release.run();
      if (transientCode(error) !== undefined) throw error; // the whole flush is tried again
      op.outcome = { ok: false, error };
    } finally {
      const m = (this.methods[op.name] ??= { calls: 0, ms: 0 });
      m.ms += performance.now() - t;
    }
  }

  /** The flush could not commit: nothing of it is kept; decide what each queued write gets. */
  private abandon(ran: number, thrown: unknown): void {
    if (this.db.open && this.db.inTransaction) this.sql.rollback.run();
    const err = thrown instanceof TransactionLost ? thrown.error : thrown;
    for (const op of this.queue.slice(0, ran)) delete op.outcome;
    if (transientCode(err) !== undefined) return this.retryLater(err);
    // Not transient. A write whose error cost the transaction fails alone; the writes before it
    // run again at once. Otherwise BEGIN or COMMIT failed (a closed database): every write it held fails.
    const failed = thrown instanceof TransactionLost ? this.queue.splice(ran, 1) : this.queue.splice(0, Math.max(ran, this.db.open ? 1 : this.queue.length));
    for (const op of failed) op.reject(err);
    if (this.queue.length > 0) this.schedule();
  }

  /** A busy or failing database: wait with backoff; writes whose budget is spent get StoreUnavailableError. */
  private retryLater(err: unknown): void {
    const code = transientCode(err)!;
    this.attempt++;
    this.st.busyRetries++;
    const wait = backoffMs(this.attempt);
    const now = Date.now();
    const keep: Op[] = [];
    for (const op of this.queue) {
      const giveUp = now + wait - op.issued > this.busy.budget;
      this.busy.failed(code, giveUp ? 'unavailable' : 'retried');
      if (!giveUp) keep.push(op);
      else {
        this.st.unavailable++;
        op.reject(unavailable(code, err));
      }
    }
    this.queue = keep;
    if (keep.length > 0 && !this.paused) this.scheduled = { kind: 'timer', handle: setTimeout(this.flush, wait) };
  }

  private settle(op: Op): void {
    const m = this.methods[op.name];
    if (m) m.calls++;
    const outcome = op.outcome!;
    if (outcome.ok) return op.resolve(outcome.value);
    this.st.failedOps++;
    op.reject(outcome.error);
  }

  private timeFlush(started: number): void {
    const ms = performance.now() - started;
    this.st.flushMs += ms;
    if (ms > this.st.maxFlushMs) this.st.maxFlushMs = ms;
  }
}
