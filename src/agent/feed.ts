/**
 * The inbox's live queue: `GET /agent/stream` (Server-Sent Events). Every open stream gets a
 * `queue` event (`{ now, handoffs }`, the queue as `GET /agent/handoffs` answers it) when it opens
 * and whenever handoffs change:
 * - changes made by this process arrive at once through {@link HandoffDesk.onChange};
 * - changes made by another process on the same database (PostgreSQL deployments run several) are
 *   found by comparing the store's handoff fingerprint every `checkMs` while any stream is open.
 * A comment line every `heartbeatMs` keeps proxies from closing an idle stream.
 */
import type { Request, Response } from 'express';
import type { HandoffDesk } from '../conversation/handoff-desk.js';
import { errorInfo, type Logger } from '../log.js';

/** What a {@link HandoffFeed} takes. */
export interface HandoffFeedOptions {
  readonly desk: HandoffDesk;
  readonly logger?: Logger | undefined;
  /** How often the store is checked for other processes' changes while streams are open (default 2 s). */
  readonly checkMs?: number | undefined;
  /** How often an idle stream gets a comment line (default 15 s). */
  readonly heartbeatMs?: number | undefined;
}

type Send = (event: string, data: string) => void;

/** The streams of one router, fed together: one queue read per change, whatever the number of streams. */
export class HandoffFeed {
  readonly #subs = new Set<Send>();
  readonly #o: HandoffFeedOptions;
  #stop: (() => void) | undefined;
  #fingerprint: string | undefined;
  #building = false;
  #again = false;
  #checking = false;

  constructor(o: HandoffFeedOptions) {
    this.#o = o;
  }

  /** How many streams are open. */
  get size(): number {
    return this.#subs.size;
  }

  /** Serves one stream until the client goes (or the server stops listening). */
  stream(req: Request, res: Response): void {
    res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no', Connection: 'keep-alive' });
    res.write('retry: 2000\n\n');
    const send: Send = (event, data) => void res.write(`event: ${event}\ndata: ${data}\n\n`);
    const stop = this.#subscribe(send);
    // The HTTP server waits for open streams when it closes: end ours as soon as it stops listening.
    const server = (req.socket as { server?: { listening?: boolean } }).server;
    const beatEvery = Math.max(1, Math.round((this.#o.heartbeatMs ?? 15_000) / 250));
    let ticks = 0;
    const tick = setInterval(() => {
      if (server?.listening === false) end();
      else if (++ticks % beatEvery === 0) res.write(': keep-alive\n\n');
    }, 250);
    tick.unref();
    function end(): void {
      clearInterval(tick);
      stop();
      if (!res.writableEnded) res.end();
    }
    res.on('close', end);
  }

  #subscribe(send: Send): () => void {
    this.#subs.add(send);
    if (this.#stop === undefined) this.#start();
    this.#refresh();
    return () => {
      if (!this.#subs.delete(send)) return;
      if (this.#subs.size === 0) {
        this.#stop?.();
        this.#stop = undefined;
      }
    };
  }

  #start(): void {
    const off = this.#o.desk.onChange(() => this.#refresh());
    const check = setInterval(() => void this.#check(), this.#o.checkMs ?? 2_000);
    check.unref();
    this.#stop = () => {
      off();
      clearInterval(check);
      this.#fingerprint = undefined;
    };
  }

  /** Another process's change: the store's fingerprint moved since the queue was last sent. */
  async #check(): Promise<void> {
    if (this.#checking || this.#building) return;
    this.#checking = true;
    try {
      const now = await this.#o.desk.fingerprint();
      if (this.#fingerprint !== undefined && now !== this.#fingerprint) this.#refresh();
    } catch (err) {
      this.#o.logger?.warn({ err: errorInfo(err) }, "the agents' inbox could not check the store for handoff changes");
    } finally {
      this.#checking = false;
    }
  }

  /** Reads the queue once and sends it to every stream (a change meanwhile reads it once more after). */
  #refresh(): void {
    if (this.#building) {
      this.#again = true;
      return;
    }
    this.#building = true;
    void this.#build()
      .catch((err: unknown) => this.#o.logger?.warn({ err: errorInfo(err) }, "the agents' inbox could not read the queue"))
      .finally(() => {
        this.#building = false;
        const again = this.#again;
        this.#again = false;
        if (again && this.#subs.size > 0) this.#refresh();
      });
  }

  async #build(): Promise<void> {
    if (this.#subs.size === 0) return;
    // Read before the queue: a change between the two is then seen by the next check.
    const fingerprint = await this.#o.desk.fingerprint();
    const handoffs = await this.#o.desk.queue();
    const data = JSON.stringify({ now: this.#o.desk.now(), handoffs });
    if (this.#stop !== undefined) this.#fingerprint = fingerprint;
    for (const send of this.#subs) send('queue', data);
  }
}
