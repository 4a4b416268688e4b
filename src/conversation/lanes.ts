/**
 * Lanes: one per conversation, each running that conversation's work one piece at a time, in
 * arrival order. Lanes run independently of each other. Which process runs a lane is a claim in
 * the database: a process drains a lane only while it holds it, and releases a drained lane only
 * if no work was added since it looked. The worker claims lanes with work no live process holds
 * and renews the ones held (its heartbeat), so a dead process's conversations are taken over.
 */
import { ConfigError, isStoreUnavailable } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { Claimant, ConversationKey, HeldLane, InboxRecord, LaneClaim, LaneNext, Store } from '../store/types.js';
import { pause, storeRetryDelay } from './backoff.js';
import type { RuntimeClock } from './clock.js';

/** What a lane runs. */
export interface LaneWork {
  /** Re-opens a conversation whose invocation was running when its process stopped. */
  resume(key: ConversationKey): Promise<void>;
  /** Commits what a live actor did outside a turn. */
  sync(key: ConversationKey): Promise<void>;
  /** Runs one inbound's turn. */
  process(row: InboxRecord): Promise<void>;
  /** Whether the conversation has a live actor (an invocation running): its lane stays held. */
  keep(key: ConversationKey): boolean;
  /** Another process took the lane over: forget the live actor (that process runs it now). */
  lost(key: ConversationKey): void;
  /** The store was unavailable: the lane waits `delayMs` and tries the same work again. */
  storeUnavailable?(key: ConversationKey, err: Error, delayMs: number): void;
  /** For metrics: a lane was taken over from another owner. */
  observe?(e: { readonly type: 'takeover' }): void;
}

/** How many lanes run at once. */
export interface LaneOptions {
  /**
   * Lanes running at once (default 128). More lanes with work wait their turn in arrival order:
   * their inbounds wait in the store, not in memory, so a burst costs disk, not heap, and earlier
   * messages are answered first.
   */
  readonly concurrency?: number | undefined;
}

/** The default number of lanes running at once. */
export const DEFAULT_LANE_CONCURRENCY = 128;

interface Lane {
  running: boolean;
  /** Waiting for a free slot (at most {@link LaneOptions.concurrency} lanes run at once). */
  queued: boolean;
  /** A release is in flight: the database may already say "not ours" before its answer is here. */
  releasing: boolean;
  again: boolean;
  sync: boolean;
  resume: boolean;
  done: Promise<void>;
  /** The claim this process holds on the lane, if it holds it. */
  held: { fence: number; epoch: number } | undefined;
  /** The lane's work counter as last read from the database: the work up to it is visible. */
  seq: number;
  /** Settles when the piece of work running in the lane (a turn, a sync, an exclusive run) is done. */
  busy: Promise<void>;
}

/** The key of a conversation's lane. */
export function laneKey(key: ConversationKey): string {
  return `${key.botId}\u0000${key.user}`;
}

/** Whether a claim starts a new hold of the lane here (not the fence this process holds already). */
function newHold(lane: Lane, c: LaneClaim): boolean {
  return !lane.held || lane.held.fence !== c.fence;
}

/** What the lanes need from the worker. */
export interface LaneDeps {
  readonly store: Pick<Store, 'claim' | 'settleLane'>;
  readonly logger: Logger;
  readonly clock: RuntimeClock;
  /** Who claims (the worker's claimant: owner, lease, whether lapsed claims may be taken). */
  readonly claimant: () => Claimant;
  /** A lane slot came free: the worker may claim more lanes. */
  readonly freed: () => void;
}

/** The conversations' lanes. */
export class Lanes {
  private readonly concurrency: number;
  private readonly lanes = new Map<string, Lane>();
  /** Lanes waiting for a slot, oldest first. */
  private readonly queue: ConversationKey[] = [];
  private active = 0;
  private readonly waits = new Set<() => void>();
  private stopping = false;
  /** Counts claims, so a heartbeat never judges lost a lane claimed while it ran. */
  private epoch = 0;
  private readonly store: LaneDeps['store'];
  private readonly logger: Logger;
  private readonly clock: RuntimeClock;

  constructor(
    private readonly work: LaneWork,
    private readonly d: LaneDeps,
    o: LaneOptions = {},
  ) {
    this.store = d.store;
    this.logger = d.logger;
    this.clock = d.clock;
    this.concurrency = o.concurrency ?? DEFAULT_LANE_CONCURRENCY;
    if (!(Number.isInteger(this.concurrency) && this.concurrency > 0)) throw new ConfigError('lanes.concurrency', `must be a positive whole number (got ${this.concurrency})`);
  }

  /** Lanes waiting out an unavailable store give up (their work stays in the store for a live process). */
  stop(): void {
    this.stopping = true;
    for (const cancel of this.waits) cancel();
    // Queued lanes never start: their work stays in the store for the next start or another process.
    for (const key of this.queue.splice(0)) {
      const lane = this.lanes.get(laneKey(key));
      if (!lane) continue;
      lane.queued = false;
      if (!lane.held && !lane.running) this.lanes.delete(laneKey(key));
    }
  }

  /** After stop() and the lanes' end (the worker gives up the claims still held): forgets every lane. */
  clear(): void {
    this.lanes.clear();
  }

  /** What a store needs to claim a lane along with the work it stores (see `Store.addInbound`); undefined once stopping. */
  get claimWith(): Claimant | undefined {
    return this.stopping ? undefined : this.d.claimant();
  }

  /** How many more lanes may start now (the worker claims at most this many). */
  free(): number {
    return this.stopping ? 0 : Math.max(0, this.concurrency - this.active - this.queue.length);
  }

  /** A mark for {@link renewed}: lanes claimed after it are not judged by that renewal. */
  mark(): number {
    return this.epoch;
  }

  /**
   * Records a claim the store granted along with new work (the inbound's own statement), so the
   * lane's next run needs no claim of its own. Kick the lane after it.
   */
  granted(c: LaneClaim): void {
    const lane = this.lane(c.key);
    this.hold(lane, c, newHold(lane, c));
  }

  /** Makes the conversation's lane run (again): for new inbounds, a live actor's change, or a resume. */
  kick(key: ConversationKey, mode?: 'sync' | 'resume'): void {
    if (this.stopping) return;
    const lane = this.lane(key);
    if (mode === 'sync') lane.sync = true;
    if (mode === 'resume') lane.resume = true;
    if (lane.running) {
      lane.again = true;
      return;
    }
    if (lane.queued) return;
    const at = { botId: key.botId, user: key.user };
    if (this.active >= this.concurrency || this.queue.length > 0) {
      lane.queued = true;
      this.queue.push(at);
      this.startQueued();
      return;
    }
    this.run(at, lane);
  }

  private run(at: ConversationKey, lane: Lane): void {
    lane.running = true;
    this.active++;
    const k = laneKey(at);
    lane.done = this.drain(at, lane)
      .catch((err) => this.logger.error({ err: errorInfo(err), bot: at.botId, user: at.user }, 'conversation lane failed'))
      .finally(() => {
        lane.running = false;
        this.active--;
        if (!this.stopping && (lane.again || lane.sync || lane.resume)) this.kick(at);
        else if (!lane.held && this.lanes.get(k) === lane) this.lanes.delete(k);
        this.startQueued();
        if (!this.stopping && this.queue.length === 0) this.d.freed();
      });
  }

  /** Starts waiting lanes while slots are free (before a finished lane's `done` resolves, so `running()` sees them). */
  private startQueued(): void {
    while (!this.stopping && this.active < this.concurrency && this.queue.length > 0) {
      const key = this.queue.shift()!;
      const lane = this.lanes.get(laneKey(key));
      if (!lane?.queued) continue;
      lane.queued = false;
      if (lane.running) continue;
      this.run(key, lane);
    }
  }

  /** The lanes at work now (to wait for them); a waiting lane starts before a running one's promise resolves. */
  running(): Promise<void>[] {
    return [...this.lanes.values()].filter((l) => l.running).map((l) => l.done);
  }

  /** Lanes running and lanes waiting for a slot, for metrics. */
  get load(): { readonly running: number; readonly queued: number } {
    return { running: this.active, queued: this.queue.length };
  }

  /**
   * Runs `fn` in the conversation's lane ahead of its queue: after the piece of work running now (one
   * turn), before the next inbound, with the lane held by this process (claimed for it when it was
   * not). Undefined, `fn` not run, when another live process holds the lane or the lanes are stopping.
   */
  async exclusive<T>(key: ConversationKey, fn: () => Promise<T>): Promise<{ readonly value: T } | undefined> {
    if (this.stopping) return undefined;
    const lane = this.lane(key);
    if (!lane.held && !(await this.claim(key, lane))) {
      if (!lane.running && !lane.held && this.lanes.get(laneKey(key)) === lane) this.lanes.delete(laneKey(key));
      return undefined;
    }
    try {
      return { value: await this.locked(lane, fn) };
    } finally {
      // The lane settles as after any work: it runs what came meanwhile, or is released (kept while a live actor runs).
      this.kick(key);
    }
  }

  /** Runs `fn` when the lane's current piece of work is done; the next waits for it. */
  private async locked<T>(lane: Lane, fn: () => Promise<T>): Promise<T> {
    const before = lane.busy;
    let done!: () => void;
    lane.busy = new Promise<void>((resolve) => {
      done = resolve;
    });
    await before;
    try {
      return await fn();
    } finally {
      done();
    }
  }

  /** Runs lanes the worker claimed (with work no live process held: a dead process's, or never taken). */
  adopt(claims: readonly LaneClaim[]): void {
    for (const c of claims) this.adoptOne(c);
  }

  /** Records a claim the database granted, and runs the lane if it has work this process has not seen. */
  private adoptOne(c: LaneClaim): void {
    const lane = this.lane(c.key);
    const fresh = newHold(lane, c);
    const unseen = c.workSeq > lane.seq;
    this.hold(lane, c, fresh);
    if (c.takeover) this.logger.info({ bot: c.key.botId, user: c.key.user }, 'took over a conversation whose owner stopped renewing its lease');
    if (fresh || c.takeover || unseen) this.kick(c.key);
  }

  /**
   * Records a claim the database granted: a new hold (a new epoch) when `fresh`, the work counter it
   * saw, and a takeover's resume.
   */
  private hold(lane: Lane, c: LaneClaim, fresh: boolean): void {
    if (fresh) lane.held = { fence: c.fence, epoch: ++this.epoch };
    lane.seq = Math.max(lane.seq, c.workSeq);
    if (c.takeover) {
      lane.resume = true;
      this.work.observe?.({ type: 'takeover' });
    }
  }

  private lane(key: ConversationKey): Lane {
    const k = laneKey(key);
    let lane = this.lanes.get(k);
    if (!lane)
      this.lanes.set(
        k,
        (lane = { running: false, queued: false, releasing: false, again: false, sync: false, resume: false, done: Promise.resolve(), held: undefined, seq: 0, busy: Promise.resolve() }),
      );
    return lane;
  }

  /**
   * What the worker's heartbeat renewed: every lane this process holds. A lane missing from it was
   * taken over by another process (our claim lapsed): its live actor is dropped. A lane with work
   * added by another process (its inbound could not take the lane) runs.
   */
  renewed(renewed: readonly HeldLane[], mark: number): void {
    const seen = new Set<string>();
    for (const r of renewed) {
      seen.add(laneKey(r.key));
      const lane = this.lanes.get(laneKey(r.key));
      // Ours in the database, not known here (a claim whose answer was lost): run it, which re-claims it.
      if (!lane?.held) this.kick(r.key);
      else if (r.workSeq > lane.seq) {
        lane.seq = r.workSeq;
        this.kick(r.key);
      }
    }
    for (const [k, lane] of this.lanes) {
      // Released (or being released) by us, not taken: a release committed before the renewal ran
      // leaves the lane out of its answer while the release's own answer is still on its way.
      if (!lane.held || lane.held.epoch > mark || seen.has(k) || lane.releasing) continue;
      const [botId = '', user = ''] = k.split('\u0000');
      this.lose({ botId, user }, lane);
    }
  }

  private lose(key: ConversationKey, lane: Lane): void {
    lane.held = undefined;
    this.logger.warn({ bot: key.botId, user: key.user }, 'another process took over this conversation (our lease ran out); it runs there now');
    this.work.lost(key);
    if (!lane.running && this.lanes.get(laneKey(key)) === lane) this.lanes.delete(laneKey(key));
  }

  /** Runs the lane's work until none is left; a store that is unavailable for now is waited out and tried again. */
  private async drain(key: ConversationKey, lane: Lane): Promise<void> {
    const count = { turns: 0 };
    for (let failures = 0; ; ) {
      try {
        if (!(await this.step(key, lane, count))) return;
        failures = 0;
      } catch (err) {
        if (!isStoreUnavailable(err) || this.stopping) throw err;
        const delay = storeRetryDelay(++failures);
        this.work.storeUnavailable?.(key, err, delay);
        const wait = pause(this.clock, delay);
        this.waits.add(wait.cancel);
        await wait.done;
        this.waits.delete(wait.cancel);
        if (this.stopping) throw err;
      }
    }
  }

  /** One piece of work; false when none is left. A resume or sync the store could not take stays asked for. */
  private async step(key: ConversationKey, lane: Lane, count: { turns: number }): Promise<boolean> {
    if (!lane.held && !(await this.claim(key, lane))) return false;
    lane.again = false;
    if (lane.resume) {
      lane.resume = false;
      try {
        await this.locked(lane, () => this.work.resume(key));
      } catch (err) {
        if (isStoreUnavailable(err)) lane.resume = true;
        throw err;
      }
    }
    if (lane.sync) {
      lane.sync = false;
      try {
        await this.locked(lane, () => this.work.sync(key));
      } catch (err) {
        if (isStoreUnavailable(err)) lane.sync = true;
        throw err;
      }
    }
    // Everything added up to `seen` was committed before it was read, so the store finds it.
    // A live actor (an invocation running) keeps its lane held: its inbounds run, the lane stays.
    return lane.held ? this.settle(key, lane, this.work.keep(key) ? null : lane.seq, count) : false;
  }

  private async turn(row: InboxRecord, lane: Lane, count: { turns: number }): Promise<boolean> {
    if (!lane.held) return false; // taken over meanwhile: the new owner runs it
    await this.locked(lane, () => this.work.process(row));
    if (++count.turns % 8 === 0) await new Promise((r) => setImmediate(r)); // let the webhook answer during a burst
    return true;
  }

  /** The next inbound, or the lane released when there is none, in one call (see `Store.settleLane`). */
  private async settle(key: ConversationKey, lane: Lane, seen: number | null, count: { turns: number }): Promise<boolean> {
    lane.releasing = true;
    let r: LaneNext;
    try {
      r = await this.store.settleLane(this.d.claimant().owner, key, lane.held!.fence, seen);
    } finally {
      lane.releasing = false;
    }
    if (r.outcome === 'next') return this.turn(r.inbound, lane, count);
    if (r.outcome === 'idle') return lane.again || lane.sync || lane.resume;
    return this.released(key, lane, r);
  }

  /** Takes the lane for this process (the fast path after an inbound); false when another process holds it. */
  private async claim(key: ConversationKey, lane: Lane): Promise<boolean> {
    const [c] = await this.store.claim(this.d.claimant(), { kind: 'lane', key, limit: 1, now: this.clock.now() });
    if (!c) {
      // Its owner is alive and sees the new work (its release fails, its heartbeat or poll finds it).
      lane.sync = lane.resume = false;
      return false;
    }
    this.hold(lane, c, true); // a new epoch even for a fence held meanwhile: the heartbeat judges it from now
    return true;
  }

  /** Acts on a release's outcome; true when there is more to do. */
  private released(key: ConversationKey, lane: Lane, r: Exclude<LaneNext, { outcome: 'next' | 'idle' }>): boolean {
    if (r.outcome === 'released') {
      lane.held = undefined;
      return false;
    }
    if (r.outcome === 'more') {
      lane.seq = Math.max(lane.seq, r.workSeq);
      return true;
    }
    this.lose(key, lane);
    return false;
  }
}
