/**
 * Live views for the page's Server-Sent Events. Each open page watches one (bot, user); its view
 * is rebuilt when the sandbox accepts a message or answers a request about that user, when a turn
 * the page caused has settled, and on a slow tick (timers, statuses), and sent only when it changed.
 */
import type { View } from './view.js';

/** One open page. */
interface Watcher {
  readonly bot: string;
  readonly user: string;
  /** Gets the view as JSON text. */
  readonly send: (json: string) => void;
  readonly onError: (err: unknown) => void;
  last: string;
  running: boolean;
  again: boolean;
}

/** Keeps the watchers and refreshes their views. */
export class ViewHub {
  readonly #watchers = new Set<Watcher>();
  readonly #build: (bot: string, user: string) => Promise<View>;
  readonly #tickMs: number;
  #ticker: NodeJS.Timeout | undefined;

  constructor(build: (bot: string, user: string) => Promise<View>, tickMs = 1_000) {
    this.#build = build;
    this.#tickMs = tickMs;
  }

  /** Starts watching; sends the current view at once. Returns a function that stops it. */
  watch(bot: string, user: string, send: (json: string) => void, onError: (err: unknown) => void): () => void {
    const w: Watcher = { bot, user, send, onError, last: '', running: false, again: false };
    this.#watchers.add(w);
    if (this.#ticker === undefined) {
      this.#ticker = setInterval(() => this.#refreshAll(undefined), this.#tickMs);
      this.#ticker.unref();
    }
    this.#refresh(w);
    return () => {
      this.#watchers.delete(w);
      if (this.#watchers.size === 0 && this.#ticker !== undefined) {
        clearInterval(this.#ticker);
        this.#ticker = undefined;
      }
    };
  }

  /** Refreshes the pages of `user` (every page when undefined), now and shortly after. */
  poke(user?: string): void {
    this.#refreshAll(user);
    // The store records a send's result only after the sandbox has answered it: look again soon.
    setTimeout(() => this.#refreshAll(user), 60).unref();
    setTimeout(() => this.#refreshAll(user), 300).unref();
  }

  /** How many pages are open. */
  get size(): number {
    return this.#watchers.size;
  }

  #refreshAll(user: string | undefined): void {
    for (const w of this.#watchers) if (user === undefined || w.user === user) this.#refresh(w);
  }

  /** Rebuilds one page's view (one rebuild at a time; a request meanwhile runs once more after). */
  #refresh(w: Watcher): void {
    if (w.running) {
      w.again = true;
      return;
    }
    w.running = true;
    void this.#build(w.bot, w.user)
      .then((view) => {
        const json = JSON.stringify(view);
        if (json === w.last || !this.#watchers.has(w)) return;
        w.last = json;
        w.send(json);
      })
      .catch((err: unknown) => w.onError(err))
      .finally(() => {
        w.running = false;
        if (w.again) {
          w.again = false;
          this.#refresh(w);
        }
      });
  }
}
