/**
 * The poll: every `everyMs`, the runtime looks in the database for work no event announced here
 * (lanes another process left or added, rows to send, timers due). It is what makes takeover
 * certain; a wake-up (PostgreSQL's NOTIFY) only runs it sooner. One poll runs at a time, and a
 * wake-up that comes during one runs another right after it.
 */
import { ConfigError } from '../errors.js';
import type { RuntimeClock } from './clock.js';

/** Runs `work` every `everyMs`, and soon after each wake-up. */
export class Poller {
  private timer: unknown;
  private running: Promise<void> | undefined;
  private again = false;
  private on = false;

  constructor(
    private readonly clock: RuntimeClock,
    private readonly everyMs: number,
    private readonly work: () => Promise<void>,
    /** Runs background work that the runtime's `idle()` waits for (and logs its failure). */
    private readonly track: (work: Promise<unknown>) => void,
  ) {
    if (!(everyMs > 0)) throw new ConfigError('pollMs', `must be a positive number of milliseconds (got ${everyMs})`);
  }

  start(): void {
    this.on = true;
    this.schedule(this.everyMs);
  }

  /** Polls as soon as possible (after the poll running now, if one is). */
  wake(): void {
    if (this.running) this.again = true;
    else this.schedule(0);
  }

  /** No more polls; waits for the one running. */
  async stop(): Promise<void> {
    this.on = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  private schedule(ms: number): void {
    if (!this.on) return;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      const run = this.work().finally(() => {
        this.running = undefined;
        const soon = this.again;
        this.again = false;
        this.schedule(soon ? 0 : this.everyMs);
      });
      this.running = run;
      this.track(run);
    }, ms);
  }
}
