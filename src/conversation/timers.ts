/**
 * The runtime's clockwork: fires durable timers when they fall due (into the inbox, so they are
 * deduplicated and ordered like any inbound) and sweeps idle conversations.
 */
import type { Metrics } from '../metrics.js';
import type { ConversationKey, Store } from '../store/types.js';
import { DEFAULT_EXPIRE_AFTER_MS, type Bot } from './bot.js';
import { storeRetryDelay } from './backoff.js';
import type { RuntimeClock } from './clock.js';

interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly metrics: Metrics;
  readonly bots: () => Iterable<Bot>;
  /** A fired timer's conversation has work. */
  readonly kick: (key: ConversationKey) => void;
  /** Runs background work that `idle()` waits for. */
  readonly track: (work: Promise<unknown>) => void;
  /** A timer check failed (a store unavailable for now); it is tried again after `delayMs`. */
  readonly failed: (err: Error, delayMs: number) => void;
}

/** Durable timers and the idle sweep. */
export class Clockwork {
  private timer: unknown;
  private timerAt: number | undefined;
  private sweeper: unknown;
  private running = false;
  /** Checks that failed in a row: the next try waits longer. */
  private failures = 0;
  /** Counts checks started and timers noted, in one sequence: a check covers what was noted before it started. */
  private seq = 0;
  /** The soonest timer noted by {@link noteTimer} that a check may have read the database too early to see. */
  private noted: number | undefined;
  /** The sequence number of the last timer merged into `noted`. */
  private notedSeq = 0;

  constructor(
    private readonly d: Deps,
    private readonly sweepEveryMs: number,
  ) {}

  start(): Promise<void> {
    this.running = true;
    this.scheduleSweep();
    return this.check();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== undefined) this.d.clock.clearTimeout(this.timer);
    if (this.sweeper !== undefined) this.d.clock.clearTimeout(this.sweeper);
    this.timer = this.timerAt = this.sweeper = undefined;
  }

  /**
   * Fires what is due and arms the clock for the next timer. Cheap when nothing is due. When the
   * store fails, the check is tried again with backoff: a due timer never waits for another event.
   */
  async check(): Promise<void> {
    if (!this.running) return;
    try {
      await this.fireAndArm();
      this.failures = 0;
    } catch (err) {
      const delay = storeRetryDelay(++this.failures);
      this.d.failed(err as Error, delay);
      this.arm(this.d.clock.now() + delay);
    }
  }

  /**
   * A commit of this process stored a timer firing at `at` (a machine's delay, a handoff's timeout):
   * arms the clock for it when it is sooner than what is armed, without reading the database, which
   * after every turn cost a query. Timers other processes store are found by the poll, as before.
   */
  noteTimer(at: number): void {
    if (!this.running) return;
    this.notedSeq = ++this.seq;
    this.noted = this.noted === undefined ? at : Math.min(this.noted, at);
    if (this.timerAt === undefined || at < this.timerAt) this.arm(at);
  }

  private async fireAndArm(): Promise<void> {
    const { store, clock } = this.d;
    const started = ++this.seq;
    let next = await store.nextTimerAt();
    if (next !== undefined && next <= clock.now()) {
      const fired = await store.fireDueTimers(clock.now(), 500);
      for (const key of fired) this.d.kick(key);
      if (fired.length) this.d.metrics.inc('colloquy_timers_fired_total', {}, fired.length);
      next = await store.nextTimerAt();
    }
    this.arm(this.withNoted(next, started));
  }

  /** `next`, or a noted timer if sooner: a check that started before a timer was noted may not have seen it. */
  private withNoted(next: number | undefined, started: number): number | undefined {
    const noted = this.noted;
    if (noted === undefined) return next;
    if (this.notedSeq < started) {
      this.noted = undefined; // this check read the database after every noted commit
      return next;
    }
    return next === undefined ? noted : Math.min(next, noted);
  }

  private arm(next: number | undefined): void {
    if (!this.running || next === this.timerAt) return; // already armed for that time (the common case after a turn)
    const { clock } = this.d;
    if (this.timer !== undefined) clock.clearTimeout(this.timer);
    this.timerAt = next;
    this.timer =
      next === undefined
        ? undefined
        : clock.setTimeout(
            () => {
              this.timer = this.timerAt = undefined;
              this.d.track(this.check());
            },
            Math.max(0, next - clock.now()),
          );
  }

  /** Expires conversations idle past their bot's expiry; returns how many. */
  async sweep(): Promise<number> {
    let n = 0;
    const now = this.d.clock.now();
    for (const bot of this.d.bots()) n += await this.d.store.expireIdle(bot.id, now - (bot.options.expireAfterMs ?? DEFAULT_EXPIRE_AFTER_MS), now);
    if (n) this.d.metrics.inc('colloquy_conversations_expired_total', {}, n);
    return n;
  }

  private scheduleSweep(): void {
    this.sweeper = this.d.clock.setTimeout(() => {
      this.d.track(
        this.sweep().finally(() => {
          if (this.running) this.scheduleSweep();
        }),
      );
    }, this.sweepEveryMs);
  }
}
