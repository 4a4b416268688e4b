/**
 * Lanes: one per conversation, each running that conversation's work one piece at a time, in
 * arrival order. Lanes run independently of each other. Which process runs a lane is a lease in
 * the database: a process drains a lane only while it holds it, renews what it holds with a
 * heartbeat, and releases a drained lane only if no work was added since it looked. A poll claims
 * lanes with work whose lease ran out, so a dead process's conversations are taken over.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigError, isStoreUnavailable } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { ConversationKey, InboxRecord, LaneClaim, LaneNext, LaneRelease, Store } from '../store/types.js';
import { pause, storeRetryDelay } from './backoff.js';
import type { RuntimeClock } from './clock.js';

/** What a lane runs. */
export interface LaneWork {
  /** Re-opens a conversation whose invocation was running when its process stopped. */
  resume(key: ConversationKey): Promise<void>;
  /** Commits what a live actor did outside a turn. */
  sync(key: ConversationKey): Promise<void>;
  /** The conversation's oldest pending inbound. */
  next(key: ConversationKey): Promise<InboxRecord | undefined>;
  /** Runs one inbound's turn. */
  process(row: InboxRecord): Promise<void>;
  /** Whether the conversation has a live actor (an invocation running): its lane stays held. */
  keep(key: ConversationKey): boolean;
  /** Another process took the lane over: forget the live actor (that process runs it now). */
  lost(key: ConversationKey): void;
  /** The store was unavailable: the lane waits `delayMs` and tries the same work again. */
  storeUnavailable?(key: ConversationKey, err: Error, delayMs: number): void;
  /** For metrics: a lane was taken over from another owner, or the heartbeat renewed `held` lanes. */
  observe?(e: { readonly type: 'takeover' } | { readonly type: 'held'; readonly count: number }): void;
}

/** How lanes are leased. */
export interface LaneOptions {
  /** How long a lane is ours without renewal (default 10 s): a dead process's lanes are taken over after it. */
  readonly leaseMs?: number | undefined;
  /** How often held lanes are renewed (default 3 s; shorter than the lease). */
  readonly heartbeatMs?: number | undefined;
  /** This process's name in the `lanes` table (default host, pid and a random suffix). */
  readonly owner?: string | undefined;
  /**
   * Lanes running at once (default 128). More lanes with work wait their turn in arrival order:
   * their inbounds wait in the store, not in memory, so a burst costs disk, not heap, and earlier
   * messages are answered first.
   */
  readonly concurrency?: number | undefined;
}

/** The default number of lanes running at once. */
export const DEFAULT_LANE_CONCURRENCY = 128;

/** The default lane lease. */
export const DEFAULT_LANE_LEASE_MS = 10_000;
/** The default lane heartbeat. */
export const DEFAULT_LANE_HEARTBEAT_MS = 3_000;

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
}

/** The key of a conversation's lane. */
export function laneKey(key: ConversationKey): string {
  return `${key.botId}\u0000${key.user}`;
}

/** A fresh owner name: readable in the `lanes` table, unique per process start. */
export /** Whether a claim starts a new hold of the lane here (not the fence this process holds already). */
function newHold(lane: Lane, c: LaneClaim): boolean {
  return !lane.held || lane.held.fence !== c.fence;
}

function newOwnerName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** The conversations' lanes. */
export class Lanes {
  /** This process's name as the owner of lanes. */
  readonly owner: string;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly concurrency: number;
  private readonly lanes = new Map<string, Lane>();
  /** Lanes waiting for a slot, oldest first. */
  private readonly queue: ConversationKey[] = [];
  private active = 0;
  private readonly waits = new Set<() => void>();
  private stopping = false;
  private beat: unknown;
  /** Counts claims, so a heartbeat never judges lost a lane claimed while it ran. */
  private epoch = 0;

  constructor(
    private readonly work: LaneWork,
    private readonly store: Pick<Store, 'claimLanes' | 'renewLanes' | 'releaseLane' | 'nextOrReleaseLane'>,
    private readonly logger: Logger,
    private readonly clock: RuntimeClock,
    o: LaneOptions = {},
  ) {
    this.owner = o.owner ?? newOwnerName();
    this.leaseMs = o.leaseMs ?? DEFAULT_LANE_LEASE_MS;
    this.heartbeatMs = o.heartbeatMs ?? Math.min(DEFAULT_LANE_HEARTBEAT_MS, Math.floor(this.leaseMs / 3));
    this.concurrency = o.concurrency ?? DEFAULT_LANE_CONCURRENCY;
    if (!(Number.isInteger(this.concurrency) && this.concurrency > 0)) throw new ConfigError('lanes.concurrency', `must be a positive whole number (got ${this.concurrency})`);
    if (!(this.leaseMs > 0)) throw new ConfigError('lanes.leaseMs', `must be a positive number of milliseconds (got ${this.leaseMs})`);
    if (!(this.heartbeatMs > 0 && this.heartbeatMs < this.leaseMs))
      throw new ConfigError('lanes.heartbeatMs', `must be positive and shorter than the lease (${this.leaseMs} ms), got ${this.heartbeatMs}`);
  }

  /** Starts the heartbeat. */
  start(): void {
    this.stopping = false;
    this.scheduleBeat();
  }

  /** Lanes waiting out an unavailable store give up (their work stays in the store for a live process). */
  stop(): void {
    this.stopping = true;
    if (this.beat !== undefined) this.clock.clearTimeout(this.beat);
    this.beat = undefined;
    for (const cancel of this.waits) cancel();
    // Queued lanes never start: their work stays in the store for the next start or another process.
    for (const key of this.queue.splice(0)) {
      const lane = this.lanes.get(laneKey(key));
      if (!lane) continue;
      lane.queued = false;
      if (!lane.held && !lane.running) this.lanes.delete(laneKey(key));
    }
  }

  /** After stop() and the lanes' end: gives up the lanes still held (live actors), for another process to take over at once. */
  async giveUp(): Promise<void> {
    try {
      await this.store.renewLanes(this.owner, 0);
    } catch (err) {
      this.logger.warn({ err: errorInfo(err) }, 'could not give up the lanes held; another process takes them over when their leases run out');
    }
    this.lanes.clear();
  }

  /** What a store needs to claim a lane along with the work it stores (see `Store.addInbound`); undefined once stopping. */
  get claimWith(): { readonly owner: string; readonly leaseMs: number } | undefined {
    return this.stopping ? undefined : { owner: this.owner, leaseMs: this.leaseMs };
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

  /** Claims lanes with work that no live process holds (a dead process's, or never taken) and runs them. */
  async poll(limit = 100): Promise<number> {
    if (this.stopping) return 0;
    const claims = await this.store.claimLanes(this.owner, { leaseMs: this.leaseMs, limit });
    for (const c of claims) this.adopt(c);
    return claims.length;
  }

  /** Records a claim the database granted, and runs the lane if it has work this process has not seen. */
  private adopt(c: LaneClaim): void {
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
    if (!lane) this.lanes.set(k, (lane = { running: false, queued: false, releasing: false, again: false, sync: false, resume: false, done: Promise.resolve(), held: undefined, seq: 0 }));
    return lane;
  }

  private scheduleBeat(): void {
    if (this.stopping) return;
    this.beat = this.clock.setTimeout(() => {
      this.beat = undefined;
      void this.heartbeat().finally(() => this.scheduleBeat());
    }, this.heartbeatMs);
  }

  /**
   * Renews every lane this process holds, in one statement. A lane missing from the answer was
   * taken over by another process (our lease ran out): its live actor is dropped. A lane with work
   * added by another process (its inbound could not take the lane) runs.
   */
  async heartbeat(): Promise<void> {
    const mark = this.epoch;
    let renewed;
    try {
      renewed = await this.store.renewLanes(this.owner, this.leaseMs);
    } catch (err) {
      this.logger.warn({ err: errorInfo(err) }, 'could not renew the lanes held; trying at the next beat');
      return;
    }
    this.work.observe?.({ type: 'held', count: renewed.length });
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
        await this.work.resume(key);
      } catch (err) {
        if (isStoreUnavailable(err)) lane.resume = true;
        throw err;
      }
    }
    if (lane.sync) {
      lane.sync = false;
      try {
        await this.work.sync(key);
      } catch (err) {
        if (isStoreUnavailable(err)) lane.sync = true;
        throw err;
      }
    }
    // Everything added up to `seen` was committed before it was read, so `next` finds it.
    const seen = lane.seq;
    if (this.store.nextOrReleaseLane && lane.held && !this.work.keep(key)) return this.nextOrRelease(key, lane, seen, count);
    const row = await this.work.next(key);
    if (row) return this.turn(row, lane, count);
    if (lane.again || lane.sync || lane.resume) return true;
    return this.release(key, lane, seen);
  }

  private async turn(row: InboxRecord, lane: Lane, count: { turns: number }): Promise<boolean> {
    if (!lane.held) return false; // taken over meanwhile: the new owner runs it
    await this.work.process(row);
    if (++count.turns % 8 === 0) await new Promise((r) => setImmediate(r)); // let the webhook answer during a burst
    return true;
  }

  /** The next inbound, or the lane released when there is none, in one call (see `Store.nextOrReleaseLane`). */
  private async nextOrRelease(key: ConversationKey, lane: Lane, seen: number, count: { turns: number }): Promise<boolean> {
    lane.releasing = true;
    let r: LaneNext;
    try {
      r = await this.store.nextOrReleaseLane!(this.owner, key, lane.held!.fence, seen);
    } finally {
      lane.releasing = false;
    }
    if (r.outcome === 'next') return this.turn(r.inbound, lane, count);
    return this.released(key, lane, r);
  }

  /** Takes the lane for this process (the fast path after an inbound); false when another process holds it. */
  private async claim(key: ConversationKey, lane: Lane): Promise<boolean> {
    const [c] = await this.store.claimLanes(this.owner, { leaseMs: this.leaseMs, key });
    if (!c) {
      // Its owner is alive and sees the new work (its release fails, its heartbeat or poll finds it).
      lane.sync = lane.resume = false;
      return false;
    }
    this.hold(lane, c, true); // a new epoch even for a fence held meanwhile: the heartbeat judges it from now
    return true;
  }

  /** Releases a drained lane; true when there is more to do. A live actor keeps the lane held. */
  private async release(key: ConversationKey, lane: Lane, seen: number): Promise<boolean> {
    if (this.work.keep(key) || !lane.held) return false;
    lane.releasing = true;
    let r: LaneRelease;
    try {
      r = await this.store.releaseLane(this.owner, key, lane.held.fence, seen);
    } finally {
      lane.releasing = false;
    }
    return this.released(key, lane, r);
  }

  /** Acts on a release's outcome; true when there is more to do. */
  private released(key: ConversationKey, lane: Lane, r: LaneRelease): boolean {
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
