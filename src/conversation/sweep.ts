/** The idle sweep: conversations idle past their bot's expiry are marked expired, every so often. */
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/types.js';
import { DEFAULT_EXPIRE_AFTER_MS, type Bot } from './bot.js';
import type { RuntimeClock } from './clock.js';

interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly metrics: Metrics;
  readonly bots: () => Iterable<Bot>;
  /** Runs background work that `idle()` waits for (and logs its failure). */
  readonly track: (work: Promise<unknown>) => void;
}

/** Expires idle conversations every `everyMs`. */
export class IdleSweep {
  private timer: unknown;
  private on = false;

  constructor(
    private readonly d: Deps,
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.on = true;
    this.schedule();
  }

  stop(): void {
    this.on = false;
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Expires conversations idle past their bot's expiry; returns how many. */
  async sweep(): Promise<number> {
    let n = 0;
    const now = this.d.clock.now();
    for (const bot of this.d.bots()) n += await this.d.store.expireIdle(bot.id, now - (bot.options.expireAfterMs ?? DEFAULT_EXPIRE_AFTER_MS), now);
    if (n) this.d.metrics.inc('colloquy_conversations_expired_total', {}, n);
    return n;
  }

  private schedule(): void {
    this.timer = this.d.clock.setTimeout(() => {
      this.d.track(
        this.sweep().finally(() => {
          if (this.on) this.schedule();
        }),
      );
    }, this.everyMs);
  }
}
