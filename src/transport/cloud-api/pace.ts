/**
 * The Cloud API's two rate limits, kept before they are hit: a token bucket per sending number
 * (its throughput, 80 messages/s by default) and a least spacing per (number, user) pair (the pair
 * rate). When WhatsApp answers 130429 anyway, the whole number pauses; 131056 pushes back only that
 * user's next message. All waiting is on the {@link Clock}, in order of arrival.
 */
import type { Clock } from '../types.js';

/** One number's pace. */
export interface PaceSettings {
  /** Messages per second from the number; the burst is one second's worth. */
  readonly sendRate: number;
  /** The least time between two messages to one user, in ms (0: none). */
  readonly userPaceMs: number;
}

/** How long a user is left alone after a 131056 at least (Meta: about one message per 6 s to one user). */
export const PAIR_RATE_BACKOFF_MS = 6_000;
/** The first pause of a number after 130429 without `Retry-After`; it doubles while they repeat. */
export const THROUGHPUT_BACKOFF_MS = 1_000;
const THROUGHPUT_BACKOFF_MAX_MS = 60_000;
/** Idle pairs are forgotten once this many are kept. */
const PAIRS_SWEEP_AT = 4_096;

/** Sends that must wait longer than this for a pause are not held: they end, to be tried again later. */
export interface Patience {
  readonly maxWaitMs: number;
  readonly signal?: AbortSignal | undefined;
}

/** Why a send was not held: the pause it met, and how long it has to run. */
export interface Blocked {
  readonly class: 'throughput' | 'pair-rate';
  readonly waitMs: number;
}

/**
 * Sleeps until `until()` has passed, looking again after each sleep (a pause may be extended
 * meanwhile). Returns the wait instead of sleeping when it is longer than the caller's patience.
 */
async function waitUntil(clock: Clock, until: () => number, p: Patience): Promise<number | undefined> {
  for (let wait = until() - clock.now(); wait > 0; wait = until() - clock.now()) {
    if (wait > p.maxWaitMs) return wait;
    await clock.sleep(wait, p.signal);
  }
  return undefined;
}

/** One sending number's token bucket, with the pause a 130429 sets. */
class NumberLane {
  #tokens: number;
  #at: number;
  #queue: Promise<void> = Promise.resolve();
  #pausedUntil = Number.NEGATIVE_INFINITY;
  /** 130429s in a row without a send getting through, for the backoff. */
  #strikes = 0;

  constructor(
    private readonly rate: number,
    private readonly clock: Clock,
  ) {
    this.#tokens = Math.max(1, rate);
    this.#at = clock.now();
  }

  /** Resolves when this send may go (sends are served in order), or with the pause left when it is too long to hold it. */
  async take(p: Patience): Promise<number | undefined> {
    // Waiting out a pause before joining the queue makes every paused send a sleep on the clock.
    const early = await waitUntil(this.clock, () => this.#pausedUntil, p);
    if (early !== undefined) return early;
    const turn = this.#queue.then(async () => {
      const late = await waitUntil(this.clock, () => this.#pausedUntil, p);
      if (late !== undefined) return late;
      for (;;) {
        this.#refill();
        if (this.#tokens >= 1) {
          this.#tokens -= 1;
          return undefined;
        }
        await this.clock.sleep(Math.ceil(((1 - this.#tokens) / this.rate) * 1000), p.signal);
      }
    });
    this.#queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** A 130429: pauses the number (for `retryAfterMs`, else a doubling backoff). Returns the pause left, in ms. */
  throttled(retryAfterMs: number | undefined): number {
    const now = this.clock.now();
    // Several sends in flight see the same limit: only the first of them counts as a new strike.
    if (now >= this.#pausedUntil) this.#strikes++;
    const ms = retryAfterMs ?? Math.min(THROUGHPUT_BACKOFF_MAX_MS, THROUGHPUT_BACKOFF_MS * 2 ** (this.#strikes - 1));
    this.#pausedUntil = Math.max(this.#pausedUntil, now + ms);
    // After the pause one send goes at once, then the number restarts at its rate, not with a full burst.
    this.#tokens = 1;
    this.#at = Math.max(this.#at, this.#pausedUntil);
    return this.#pausedUntil - now;
  }

  succeeded(): void {
    this.#strikes = 0;
  }

  #refill(): void {
    const now = this.clock.now();
    if (now <= this.#at) return;
    this.#tokens = Math.min(Math.max(1, this.rate), this.#tokens + ((now - this.#at) * this.rate) / 1000);
    this.#at = now;
  }
}

interface Pair {
  /** The earliest time the next message to this user may go. */
  next: number;
  tail: Promise<void>;
  waiting: number;
}

/** Both limits for every number of one provider. */
export class Pacer {
  readonly #lanes = new Map<string, NumberLane>();
  readonly #pairs = new Map<string, Pair>();

  constructor(
    private readonly clock: Clock,
    private readonly settingsOf: (numberId: string) => PaceSettings,
  ) {}

  /**
   * Waits for this user's turn (the pair's spacing), then the number's (its bucket and any pause).
   * A pause longer than `maxWaitMs` is not waited out: the send is told what blocks it instead.
   * Rejects only when `signal` aborts the wait.
   */
  async acquire(numberId: string, to: string, p: Patience): Promise<Blocked | undefined> {
    const pair = await this.#pass(numberId, to, p);
    if (pair !== undefined) return { class: 'pair-rate', waitMs: pair };
    const lane = await this.#lane(numberId).take(p);
    return lane === undefined ? undefined : { class: 'throughput', waitMs: lane };
  }

  /** A 130429 from this number: every send from it waits. Returns the pause left, in ms. */
  throttled(numberId: string, retryAfterMs?: number): number {
    return this.#lane(numberId).throttled(retryAfterMs);
  }

  /** A 131056 for this pair: only this user's next message waits. Returns that wait, in ms. */
  pairLimited(numberId: string, to: string, retryAfterMs?: number): number {
    const pair = this.#pair(`${numberId}:${to}`);
    const now = this.clock.now();
    const ms = Math.max(retryAfterMs ?? 0, this.settingsOf(numberId).userPaceMs, PAIR_RATE_BACKOFF_MS);
    pair.next = Math.max(pair.next, now + ms);
    return pair.next - now;
  }

  /** A send from this number got through: its throughput backoff starts again from the first step. */
  succeeded(numberId: string): void {
    this.#lanes.get(numberId)?.succeeded();
  }

  #lane(numberId: string): NumberLane {
    let lane = this.#lanes.get(numberId);
    if (lane === undefined) this.#lanes.set(numberId, (lane = new NumberLane(this.settingsOf(numberId).sendRate, this.clock)));
    return lane;
  }

  /** The pair's turn: after the messages to this user before it, and not before its spacing allows. */
  async #pass(numberId: string, to: string, p: Patience): Promise<number | undefined> {
    const key = `${numberId}:${to}`;
    const pair = this.#pair(key);
    const pace = this.settingsOf(numberId).userPaceMs;
    pair.waiting++;
    const turn = pair.tail.then(async () => {
      const tooLong = await waitUntil(this.clock, () => pair.next, p);
      if (tooLong === undefined) pair.next = this.clock.now() + pace;
      return tooLong;
    });
    pair.tail = turn.then(
      () => undefined,
      () => undefined,
    );
    try {
      return await turn;
    } finally {
      pair.waiting--;
      if (pair.waiting === 0 && pair.next <= this.clock.now()) this.#pairs.delete(key);
    }
  }

  #pair(key: string): Pair {
    let pair = this.#pairs.get(key);
    if (pair === undefined) {
      if (this.#pairs.size >= PAIRS_SWEEP_AT) this.#sweep();
      this.#pairs.set(key, (pair = { next: Number.NEGATIVE_INFINITY, tail: Promise.resolve(), waiting: 0 }));
    }
    return pair;
  }

  /** Forgets the pairs nobody waits on whose spacing has passed. */
  #sweep(): void {
    const now = this.clock.now();
    for (const [key, pair] of this.#pairs) if (pair.waiting === 0 && pair.next <= now) this.#pairs.delete(key);
  }
}
