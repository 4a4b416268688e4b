/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses its threshold: it copies a thousand pages and fsyncs, on the event loop, for
 * milliseconds. The store turns it off and a worker thread with its own connection to the same
 * file does the work instead: when the WAL file has grown past a threshold, a PASSIVE checkpoint
 * copies the pages while writes go on, then the store holds its writes for the moment a TRUNCATE
 * checkpoint needs to copy the few pages written meanwhile and reset the file (a concurrent
 * checkpoint alone may never catch up with a busy writer, and the WAL would grow without bound).
 * Should the worker fail to start or die, the connection goes back to SQLite's own checkpoints.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** When the worker checkpoints. */
export interface CheckpointOptions {
  /** The WAL size, in pages, past which it checkpoints (default 1,000, SQLite's own threshold). */
  readonly walPages?: number | undefined;
  /** How often it looks at the WAL's size (default 100 ms). */
  readonly intervalMs?: number | undefined;
  /**
   * How long the store holds its writes for the worker's TRUNCATE at most (default 200 ms; the
   * worker waits half of it for a lock another connection holds, then leaves the WAL for next time).
   */
  readonly holdMs?: number | undefined;
}

/** What the checkpointer has done (for metrics). */
export interface CheckpointStats {
  /**
   * `starting` until the thread has opened its connection, `worker` while it runs, `fallback` when
   * SQLite checkpoints on commit again, `off` when closed or not needed.
   */
  readonly mode: 'starting' | 'worker' | 'fallback' | 'off';
  readonly passive: number;
  readonly truncate: number;
  /** Checkpoints that could not finish (a reader or another process in the way). */
  readonly incomplete: number;
  /** How long the store's writes were held for TRUNCATE checkpoints, in total and the longest hold (ms). */
  readonly heldMs: number;
  readonly maxHeldMs: number;
}

/** What the checkpointer needs of the store: holding and releasing its writes. */
export interface WriteGate {
  pause(): void;
  resume(): void;
}

type FromWorker = { type: 'ready' } | { type: 'hold' } | { type: 'done'; mode: 'passive' | 'truncate'; busy: number };

/**
 * The worker's program (CommonJS, run with `eval`, so that it loads the same way from src/, dist/
 * and under a test runner): it loads better-sqlite3 from the path the store resolved.
 */
const WORKER = `
const { parentPort, workerData: d } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(d.driver);
const db = new Database(d.path, { fileMustExist: true });
db.pragma('busy_timeout = ' + d.busyTimeoutMs);
db.pragma('wal_autocheckpoint = 0');
const limit = d.walPages * db.pragma('page_size', { simple: true });
let holding = false;
const walSize = () => { try { return statSync(d.path + '-wal').size; } catch { return 0; } };
const checkpoint = (mode) => {
  let busy = 1;
  try { busy = db.pragma('wal_checkpoint(' + mode + ')')[0].busy; } catch {}
  parentPort.postMessage({ type: 'done', mode: mode.toLowerCase(), busy });
};
const timer = setInterval(() => {
  if (holding || walSize() < limit) return;
  checkpoint('PASSIVE');
  holding = true;
  parentPort.postMessage({ type: 'hold' });
}, d.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'held') {
    checkpoint('TRUNCATE');
    holding = false;
  } else if (m === 'close') {
    clearInterval(timer);
    db.close();
    parentPort.close();
  }
});
parentPort.postMessage({ type: 'ready' });
`;

/** Runs the WAL checkpoints of one SQLite file in a worker thread. */
export class WalCheckpointer {
  private worker: Worker | undefined;
  private holdTimer: NodeJS.Timeout | undefined;
  private mode: CheckpointStats['mode'] = 'starting';
  private readonly counts = { passive: 0, truncate: 0, incomplete: 0, heldMs: 0, maxHeldMs: 0 };
  private heldSince: number | undefined;

  private constructor(
    private readonly db: Database.Database,
    private readonly gate: WriteGate,
    private readonly holdMs: number,
  ) {}

  /**
   * Starts the worker for a file database in WAL mode; undefined for `:memory:`, read-only or
   * non-WAL connections, which keep SQLite's own behaviour.
   */
  static start(db: Database.Database, gate: WriteGate, o: CheckpointOptions = {}): WalCheckpointer | undefined {
    if (db.memory || db.readonly || db.pragma('journal_mode', { simple: true }) !== 'wal') return undefined;
    const holdMs = o.holdMs ?? 200;
    const c = new WalCheckpointer(db, gate, holdMs);
    db.pragma('wal_autocheckpoint = 0');
    try {
      const driver = createRequire(import.meta.url).resolve('better-sqlite3');
      const workerData = { driver, path: db.name, walPages: o.walPages ?? 1_000, intervalMs: o.intervalMs ?? 100, busyTimeoutMs: Math.max(1, Math.floor(holdMs / 2)) };
      // No flags of this process (an --input-type or a loader would change how the program loads).
      const worker = new Worker(WORKER, { eval: true, workerData, execArgv: [] });
      worker.on('message', (m: FromWorker) => c.onMessage(m));
      worker.on('error', () => c.fallBack());
      worker.on('exit', () => c.fallBack());
      worker.unref(); // after the listeners: adding a 'message' listener refs the worker again
      c.worker = worker;
    } catch {
      c.fallBack();
    }
    return c;
  }

  /** What it has done so far. */
  stats(): CheckpointStats {
    const { heldMs, maxHeldMs, ...counts } = this.counts;
    return { mode: this.mode, ...counts, heldMs: Math.round(heldMs), maxHeldMs: Math.round(maxHeldMs * 1000) / 1000 };
  }

  /** Stops the worker once its connection is closed; the store's writes go on without it. */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.mode = 'off';
    this.worker = undefined;
    this.release();
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    const timeout = setTimeout(() => void worker.terminate(), 2_000);
    await exited;
    clearTimeout(timeout);
  }

  /** Checkpoints everything and empties the WAL file, for a tidy close. */
  truncate(): void {
    try {
      if (this.db.open) this.db.pragma('wal_checkpoint(TRUNCATE)');
    } catch {
      // another process holds the database: SQLite checkpoints when the last connection closes
    }
  }

  private onMessage(m: FromWorker): void {
    if (m.type === 'ready') {
      if (this.mode === 'starting') this.mode = 'worker';
    } else if (m.type === 'hold') {
      // Writes are synchronous: none is running while this message is handled, so the worker may go.
      this.gate.pause();
      this.heldSince = performance.now();
      this.holdTimer = setTimeout(() => this.release(), this.holdMs); // ref'd: held writes keep the process alive
      this.worker?.postMessage('held');
    } else if (m.type === 'done') {
      this.counts[m.mode]++;
      if (m.busy !== 0) this.counts.incomplete++;
      if (m.mode === 'truncate') this.release();
    }
  }

  private release(): void {
    if (this.holdTimer !== undefined) clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    if (this.heldSince !== undefined) {
      const ms = performance.now() - this.heldSince;
      this.counts.heldMs += ms;
      this.counts.maxHeldMs = Math.max(this.counts.maxHeldMs, ms);
      this.heldSince = undefined;
    }
    this.gate.resume();
  }

  /** The worker is gone: SQLite checkpoints on commit again, as it does by default. */
  private fallBack(): void {
    if (this.mode !== 'worker' && this.mode !== 'starting') return;
    this.mode = 'fallback';
    this.worker = undefined;
    this.release();
    if (this.db.open) this.db.pragma('wal_autocheckpoint = 1000');
  }
}
