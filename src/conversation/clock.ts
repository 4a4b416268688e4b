/** The runtime's clock: real by default, manual in tests and the simulator. */

/** Time and timers, injectable. */
export interface RuntimeClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Wall-clock time; timers do not keep the process alive. */
export const systemClock: RuntimeClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), 2_147_483_647));
    t.unref();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Where a {@link ManualClock} starts unless told otherwise: 2026-01-01 12:00 UTC. */
export const MANUAL_CLOCK_START = Date.UTC(2026, 0, 1, 12);

/** A clock that moves only when told to: `advance()` runs what fell due, in order. */
export class ManualClock implements RuntimeClock {
  private t: number;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  constructor(start: number = MANUAL_CLOCK_START) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.pending.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** Moves time forward by `ms`, running each callback at its own time. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.pending) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.pending.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
}
