/**
 * One open `GET /agent/stream`. It asks again, before each queue it writes, whether the credential
 * it was opened with still holds (a session signed out, an agent removed or given a new token stop
 * it), and it never piles queues up for a client that does not read: while the response's buffer
 * is full it keeps only the latest queue and writes that once the client drains it.
 */
import type { Response } from 'express';

/** A stream's credential check, shared by the streams of one credential during one round of sends. */
export type Checks = Map<string, Promise<boolean>>;

/** What a {@link FeedStream} takes. */
export interface FeedStreamOptions {
  readonly res: Response;
  /** Who the stream counts against in the caps (an agent, the service account, the open sandbox). */
  readonly owner: string;
  /** The credential's key: streams of one credential are checked once, and end together. */
  readonly credential: string;
  /** Whether the credential still holds (a store lookup). */
  readonly holds: () => Promise<boolean>;
  /** The HTTP server the request came through, to end with it. */
  readonly server: { readonly listening?: boolean } | undefined;
  /** Called once, when the stream ends. */
  readonly onEnd: (s: FeedStream) => void;
  /** Called when the credential could not be checked (the stream waits for the next check). */
  readonly onCheckFailed: (err: unknown) => void;
}

/** One client's live queue. */
export class FeedStream {
  readonly #o: FeedStreamOptions;
  /** The queue still to write: the latest only. */
  #pending: string | undefined;
  #flushing = false;
  /** Since when the response's buffer has been full (undefined while it takes writes). */
  #blockedSince: number | undefined;
  #lastWrite = Date.now();
  #ended = false;

  constructor(o: FeedStreamOptions) {
    this.#o = o;
    o.res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
    this.#write('retry: 2000\n\n');
    o.res.on('close', () => this.end());
  }

  get owner(): string {
    return this.#o.owner;
  }

  get credential(): string {
    return this.#o.credential;
  }

  /** Queues `data` (a `queue` event's JSON) to be written once the credential is checked. */
  offer(data: string, checks: Checks = new Map()): void {
    this.#pending = data;
    void this.#flush(checks);
  }

  /** Checks the credential again (the periodic check: a removal in another process), and ends the stream when it fails. */
  async recheck(checks: Checks): Promise<void> {
    if (this.#ended) return;
    if (!(await this.#holds(checks))) return;
    // A queue left waiting by a failed check goes now.
    if (this.#pending !== undefined) void this.#flush(checks);
  }

  /** The shared timer's beat: ends a stream whose server stopped or whose client stopped reading too long; keeps an idle one open. */
  tick(now: number, heartbeatMs: number, stallMs: number): void {
    if (this.#ended) return;
    if (this.#o.server?.listening === false) return this.end();
    if (this.#blockedSince !== undefined) {
      // Its buffer is full: ending it politely would wait for that buffer to drain.
      if (now - this.#blockedSince >= stallMs) this.end(true);
      return;
    }
    if (now - this.#lastWrite >= heartbeatMs) this.#write(': keep-alive\n\n');
  }

  /** Ends the stream (again: nothing happens). `abort` drops what the client has not read. */
  end(abort = false): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#pending = undefined;
    this.#o.onEnd(this);
    const res = this.#o.res;
    if (abort) res.destroy();
    else if (!res.writableEnded) res.end();
  }

  async #flush(checks: Checks): Promise<void> {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      while (this.#pending !== undefined && this.#blockedSince === undefined && !this.#ended) {
        if (!(await this.#holds(checks))) return;
        const data = this.#pending;
        // Ended, blocked or sent meanwhile (a drain's flush): nothing to write.
        if (this.#ended || this.#blockedSince !== undefined || data === undefined) return;
        this.#pending = undefined;
        this.#write(`event: queue\ndata: ${data}\n\n`);
        checks = new Map();
      }
    } finally {
      this.#flushing = false;
    }
  }

  /** Whether the credential holds; ends the stream when it does not, leaves it waiting when it could not be checked. */
  async #holds(checks: Checks): Promise<boolean> {
    let check = checks.get(this.#o.credential);
    if (check === undefined) {
      check = this.#o.holds();
      checks.set(this.#o.credential, check);
    }
    try {
      if (await check) return !this.#ended;
      this.end();
    } catch (err) {
      this.#o.onCheckFailed(err);
    }
    return false;
  }

  #write(chunk: string): void {
    if (this.#ended) return;
    this.#lastWrite = Date.now();
    if (this.#o.res.write(chunk)) return;
    this.#blockedSince = this.#lastWrite;
    this.#o.res.once('drain', () => {
      this.#blockedSince = undefined;
      if (this.#pending !== undefined) void this.#flush(new Map());
    });
  }
}
