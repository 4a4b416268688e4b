/**
 * Pacing: keeps sends under the provider's throughput limit (Meta allows 80 messages/s per sending
 * number by default, up to 1,000 when upgraded) instead of meeting it as 429/130429 errors. A token
 * bucket per sending number (and one for SMS) wraps any send adapter; waiting sends go in order.
 */
import { systemClock } from './clock.js';
import type { Clock, Outbound, SendAdapter } from './types.js';
import { isProvider, type Provider } from './provider.js';

/** What {@link withPacing} takes. */
export interface PacingOptions {
  /** Messages per second for each sending number (and for SMS as a whole). */
  readonly perSecond: number;
  /** How many may go at once after a quiet spell (default: one second's worth). */
  readonly burst?: number | undefined;
  readonly clock?: Clock | undefined;
}

/** The bucket a message draws from: its sending number, or SMS. */
function keyOf(o: Outbound): string {
  return o.channel === 'interactive' ? `interactive:${o.numberId ?? o.from ?? String((o.request as { from?: unknown }).from)}` : 'sms';
}

class Bucket {
  private tokens: number;
  private at: number;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly clock: Clock,
  ) {
    this.tokens = burst;
    this.at = clock.now();
  }

  /** Resolves when a token is taken; callers are served in order. */
  take(signal?: AbortSignal): Promise<void> {
    const turn = this.queue.then(async () => {
      this.refill();
      if (this.tokens < 1) {
        await this.clock.sleep(Math.ceil(((1 - this.tokens) / this.rate) * 1000), signal);
        this.refill();
      }
      this.tokens -= 1;
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) * this.rate) / 1000);
    this.at = now;
  }
}

/** Wraps a send adapter so that each sending number sends at most `perSecond` messages a second. */
export function withPacing<A extends SendAdapter>(adapter: A, o: PacingOptions): A {
  if (!(o.perSecond > 0)) throw new RangeError('perSecond must be a positive number');
  const clock = o.clock ?? systemClock;
  const burst = Math.max(1, o.burst ?? o.perSecond);
  const buckets = new Map<string, Bucket>();
  const paced: SendAdapter = {
    async send(outbound, options) {
      const key = keyOf(outbound);
      let bucket = buckets.get(key);
      if (!bucket) buckets.set(key, (bucket = new Bucket(o.perSecond, burst, clock)));
      try {
        await bucket.take(options?.signal);
      } catch (err) {
        // Aborted while waiting its turn: not sent, so worth trying later (send() never throws).
        return {
          ok: false,
          channel: outbound.channel,
          kind: 'retryable',
          reason: `not sent: aborted while waiting for the send rate (${err instanceof Error ? err.message : String(err)})`,
          attempts: 0,
        };
      }
      return adapter.send(outbound, options);
    },
    close: () => adapter.close(),
  };
  if (!isProvider(adapter)) return paced as A;
  // A provider stays one: its features, request builder and read receipts pass through unpaced.
  const provider: Provider = { ...paced, name: adapter.name, features: adapter.features, request: (m, a) => adapter.request(m, a) };
  if (adapter.markRead) provider.markRead = (r) => adapter.markRead!(r);
  if (adapter.statusClass) provider.statusClass = (c) => adapter.statusClass!(c);
  return provider as unknown as A;
}
