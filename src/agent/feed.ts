/**
 * The inbox's live queue: `GET /agent/stream` (Server-Sent Events). Every open stream gets a
 * `queue` event (`{ now, handoffs }`, the queue as `GET /agent/handoffs` answers it) when it opens
 * and whenever handoffs change:
 * - changes made by this process arrive at once through {@link HandoffDesk.onChange};
 * - changes made by another process on the same database (PostgreSQL deployments run several) are
 *   found by comparing the store's handoff fingerprint every `checkMs` while any stream is open.
 * A new stream gets the last queue built (while no change has come since), not a rebuild sent to
 * everyone. Each stream's credential is checked again before each queue it gets and every
 * `checkMs` (see feed-stream.ts). One timer beats for all the streams: a comment line every
 * `heartbeatMs` keeps proxies from closing an idle stream.
 */
import type { Request, Response } from 'express';
import type { HandoffDesk } from '../conversation/handoff-desk.js';
import { errorInfo, type Logger } from '../log.js';
import { FeedStream, type Checks } from './feed-stream.js';

/** What a {@link HandoffFeed} takes. */
export interface HandoffFeedOptions {
  readonly desk: HandoffDesk;
  readonly logger?: Logger | undefined;
  /** How often the store is checked for other processes' changes, and each stream's credential, while streams are open (default 2 s). */
  readonly checkMs?: number | undefined;
  /** How often an idle stream gets a comment line (default 15 s). */
  readonly heartbeatMs?: number | undefined;
  /** How long a stream whose client stopped reading stays open (default 30 s). */
  readonly stallMs?: number | undefined;
  /** The most streams one agent (or the service account, or the open sandbox) may have open (default 8). */
  readonly maxStreamsPerAgent?: number | undefined;
  /** The most streams open at once (default 1000). */
  readonly maxStreams?: number | undefined;
}

/** Who a stream is for, and how to ask whether its credential still holds. */
export interface StreamCaller {
  /** Who it counts against in the caps. */
  readonly owner: string;
  /** Its credential's key (streams of one session end together at sign-out). */
  readonly credential: string;
  readonly holds: () => Promise<boolean>;
}

const TICK_MS = 250;

/** The streams of one router, fed together: one queue read per change, whatever the number of streams. */
export class HandoffFeed {
  readonly #streams = new Set<FeedStream>();
  readonly #o: HandoffFeedOptions;
  #stop: (() => void) | undefined;
  #fingerprint: string | undefined;
  /** The last queue built (its `handoffs` JSON), while no change has come since. */
  #cached: string | undefined;
  #building = false;
  #again = false;
  #checking = false;
  #warnedAt = 0;

  constructor(o: HandoffFeedOptions) {
    this.#o = o;
  }

  /** How many streams are open. */
  get size(): number {
    return this.#streams.size;
  }

  /** Serves one stream until the client goes, its credential stops holding, or the server stops listening. */
  stream(req: Request, res: Response, caller: StreamCaller): void {
    // The client left while it was being authenticated: its 'close' has come and gone.
    if (res.destroyed || req.socket.destroyed) return;
    const refusal = this.#refusal(caller.owner);
    if (refusal !== undefined) return void res.status(refusal.status).json({ error: { code: refusal.code, message: refusal.message } });
    const s = new FeedStream({
      res,
      ...caller,
      server: (req.socket as { server?: { listening?: boolean } }).server,
      onEnd: (ended) => this.#remove(ended),
      onCheckFailed: (err) => this.#warn(err, "the agents' inbox could not check a stream's credentials"),
    });
    this.#streams.add(s);
    if (this.#stop === undefined) this.#start();
    // A queue being read goes to every stream open when it is read, this one too.
    if (this.#building) return;
    if (this.#cached !== undefined) s.offer(this.#data(this.#cached));
    else this.#refresh();
  }

  /** Ends the streams opened with `credential` (a session signed out). */
  endCredential(credential: string): void {
    for (const s of this.#streams) if (s.credential === credential) s.end();
  }

  #refusal(owner: string): { status: number; code: string; message: string } | undefined {
    const most = this.#o.maxStreams ?? 1000;
    if (this.#streams.size >= most) return { status: 503, code: 'busy', message: `this server already serves ${most} live queues; try again later` };
    const perAgent = this.#o.maxStreamsPerAgent ?? 8;
    let mine = 0;
    for (const s of this.#streams) if (s.owner === owner) mine++;
    if (mine >= perAgent) return { status: 429, code: 'too_many_streams', message: `${perAgent} live queues are already open for this agent: close a tab or window of the inbox` };
    return undefined;
  }

  #remove(s: FeedStream): void {
    if (!this.#streams.delete(s) || this.#streams.size > 0) return;
    this.#stop?.();
    this.#stop = undefined;
  }

  #start(): void {
    const off = this.#o.desk.onChange(() => {
      this.#cached = undefined;
      this.#refresh();
    });
    const check = setInterval(() => void this.#check(), this.#o.checkMs ?? 2_000);
    const heartbeatMs = this.#o.heartbeatMs ?? 15_000;
    const stallMs = this.#o.stallMs ?? 30_000;
    const tick = setInterval(() => {
      const now = Date.now();
      for (const s of this.#streams) s.tick(now, heartbeatMs, stallMs);
    }, TICK_MS);
    check.unref();
    tick.unref();
    this.#stop = () => {
      off();
      clearInterval(check);
      clearInterval(tick);
      this.#fingerprint = undefined;
      this.#cached = undefined;
    };
  }

  /** Every `checkMs`: each stream's credential (a removal or sign-out in another process), and another process's change. */
  async #check(): Promise<void> {
    const checks: Checks = new Map();
    for (const s of this.#streams) void s.recheck(checks);
    if (this.#checking || this.#building) return;
    this.#checking = true;
    try {
      const now = await this.#o.desk.fingerprint();
      // No queue to give (the last read failed), or one that another process's change made stale.
      if (this.#cached === undefined || now !== this.#fingerprint) {
        this.#cached = undefined;
        this.#refresh();
      }
    } catch (err) {
      this.#warn(err, "the agents' inbox could not check the store for handoff changes");
    } finally {
      this.#checking = false;
    }
  }

  /** Reads the queue once and offers it to every stream (a change meanwhile reads it once more after). */
  #refresh(): void {
    if (this.#building) {
      this.#again = true;
      return;
    }
    this.#building = true;
    void this.#build()
      .catch((err: unknown) => this.#warn(err, "the agents' inbox could not read the queue"))
      .finally(() => {
        this.#building = false;
        const again = this.#again;
        this.#again = false;
        if (again && this.#streams.size > 0) this.#refresh();
      });
  }

  async #build(): Promise<void> {
    if (this.#streams.size === 0) return;
    // Read before the queue: a change between the two is then seen by the next check.
    const fingerprint = await this.#o.desk.fingerprint();
    const handoffs = JSON.stringify(await this.#o.desk.queue());
    if (this.#stop === undefined) return;
    this.#fingerprint = fingerprint;
    this.#cached = handoffs;
    const data = this.#data(handoffs);
    const checks: Checks = new Map();
    for (const s of this.#streams) s.offer(data, checks);
  }

  /** A `queue` event's JSON, stamped with the server's clock now (the page counts down by it). */
  #data(handoffs: string): string {
    return `{"now":${this.#o.desk.now()},"handoffs":${handoffs}}`;
  }

  /** Logs a store problem, at most every half minute (each stream and each check would repeat it). */
  #warn(err: unknown, message: string): void {
    const now = Date.now();
    if (now - this.#warnedAt < 30_000) return;
    this.#warnedAt = now;
    this.#o.logger?.warn({ err: errorInfo(err) }, message);
  }
}
