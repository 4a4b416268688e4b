/**
 * The worker: the one loop that claims, renews and settles the work kept in the database. Five
 * kinds: conversations' lanes (their turns), outbox rows (sends), helpdesk connector events, due
 * timers and handoff claims idle past their deadline. It wakes on local work (a commit of this process), on `NOTIFY` (another process added
 * work), on the poll (what makes takeover certain) and on the earliest due time; it claims each
 * kind up to its free slots and hands each item to its handler, a plain function that settles it.
 * One heartbeat renews everything this process holds, one statement per table; one backoff covers
 * a store that is unavailable for now.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { ConfigError, isStoreUnavailable } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { Claimant, ConversationKey, HandoffEventRecord, HandoffRecord, HeldLane, HeldWork, LaneClaim, OutboxRecord, Store, WorkKind } from '../store/types.js';
import { storeRetryDelay } from './backoff.js';
import type { RuntimeClock } from './clock.js';

/** How work is leased and how often the database is looked at. */
export interface WorkOptions {
  /** This process's name as the owner of claims (default host, pid and a random suffix). */
  readonly owner?: string | undefined;
  /**
   * How long a claim holds without renewal (default 10 s), on the database's clock: a dead
   * process's work (its lanes, sends in flight, helpdesk events) is taken over this long after its
   * last heartbeat, plus at most one poll.
   */
  readonly leaseMs?: number | undefined;
  /** How often this process renews everything it holds (default 3 s, or a third of a shorter lease). */
  readonly heartbeatMs?: number | undefined;
  /** How often the database is polled for work no event announced here (default 1 s). */
  readonly pollMs?: number | undefined;
}

/** The default lease of every claim. */
export const DEFAULT_LEASE_MS = 10_000;
/** The default heartbeat. */
export const DEFAULT_HEARTBEAT_MS = 3_000;
/** The default poll interval. */
export const DEFAULT_POLL_MS = 1_000;

/** A claim this process holds on a send or an event; its token changes if this process claims the item again. */
export interface Held {
  claim: string;
}

/** The lanes' side of the worker (the lane runner). */
export interface LaneSlots {
  /** How many more lanes may start now. */
  free(): number;
  /** Runs lanes the poll claimed. */
  adopt(claims: readonly LaneClaim[]): void;
  /** A mark taken before a renewal: lanes claimed after it are not judged by that renewal's answer. */
  mark(): number;
  /** What the heartbeat found: the lanes this process holds (others it thought it held were taken over). */
  renewed(held: readonly HeldLane[], mark: number): void;
}

/** What runs each kind of work. */
export interface WorkHandlers {
  readonly lanes: LaneSlots;
  /** Sends one claimed row and settles it. */
  send(row: OutboxRecord, held: Held): Promise<void>;
  /** Delivers one helpdesk event and settles it; absent when no connector is configured. */
  readonly event?: ((e: HandoffEventRecord, held: Held) => Promise<void>) | undefined;
  /** Timers fired into these conversations' inboxes. */
  fired(keys: readonly ConversationKey[]): void;
  /**
   * Handoff claims idle past their deadline: returned to the queue by the store (no machine turn),
   * with `handoff.claim_expired` queued when `notify`; absent, this process leaves them to others.
   */
  readonly idle?: { readonly notify: boolean; returned(handoffs: readonly HandoffRecord[]): void } | undefined;
}

interface Deps {
  readonly store: Store;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  readonly handlers: WorkHandlers;
  /** How many sends and events may be in flight at once. */
  readonly slots: { readonly send: number; readonly event: number; readonly timer: number; readonly idle?: number | undefined };
  /** Background work failed on an unavailable store; it is tried again after `delayMs`. */
  readonly storeUnavailable: (work: string, err: Error, delayMs: number) => void;
  /** For metrics: what the heartbeat renewed. */
  readonly beat?: ((held: number) => void) | undefined;
}

/** The kinds whose due time the worker arms a clock for. */
const TIMED: readonly WorkKind[] = ['send', 'event', 'timer', 'idle'];
const ALL: readonly WorkKind[] = ['lane', 'send', 'event', 'timer', 'idle'];
/** How many idle claims one look returns to the queue, by default. */
const IDLE_SLOTS = 100;
/** How soon to look again when work is due but the last claim got none (no busy loop). */
const DUE_RECHECK_MS = 50;

/** The one work loop of a runtime. */
export class Worker {
  readonly owner: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly pollMs: number;
  private readonly wanted = new Set<WorkKind>();
  private readonly inflight = { send: new Map<number, Held>(), event: new Map<number, Held>() };
  private readonly tasks = new Set<Promise<void>>();
  private on = false;
  private scheduled = false;
  private ticking: Promise<void> | undefined;
  private failures = 0;
  private retry: unknown;
  private due: unknown;
  private dueAt: number | undefined;
  private poll: unknown;
  private beatTimer: unknown;
  private beating: Promise<void> | undefined;
  /** Lapsed claims are taken from this time on (the process clock): later after an outage of our own. */
  private takeoverFrom = 0;
  private lastRenewed: number | undefined;
  private renewFailed = false;
  /** Claims started so far, and claims running now (a renewal judges held work only when none ran meanwhile). */
  private claimsStarted = 0;
  private claimsRunning = 0;
  /** The last look for lanes found more than it had slots for: lanes may wait in the database. */
  private lanesLeft = false;
  /** Counts due-time reads started and due times noted, in one sequence: a read covers what was noted before it started. */
  private seq = 0;
  /** The soonest due time noted by {@link noteDue} that a read may have started too early to see. */
  private noted: number | undefined;
  private notedSeq = 0;

  constructor(
    private readonly d: Deps,
    o: WorkOptions = {},
  ) {
    this.owner = o.owner ?? newOwnerName();
    this.leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;
    this.heartbeatMs = o.heartbeatMs ?? Math.min(DEFAULT_HEARTBEAT_MS, Math.floor(this.leaseMs / 3));
    this.pollMs = o.pollMs ?? DEFAULT_POLL_MS;
    if (!(this.leaseMs > 0)) throw new ConfigError('work.leaseMs', `must be a positive number of milliseconds (got ${this.leaseMs})`);
    if (!(this.heartbeatMs > 0 && this.heartbeatMs < this.leaseMs))
      throw new ConfigError('work.heartbeatMs', `must be positive and shorter than the lease (${this.leaseMs} ms), got ${this.heartbeatMs}`);
    if (!(this.pollMs > 0)) throw new ConfigError('pollMs', `must be a positive number of milliseconds (got ${this.pollMs})`);
    const worker = this;
    this.claimant = {
      owner: this.owner,
      leaseMs: this.leaseMs,
      get lapsed() {
        return worker.mayTakeLapsed();
      },
    };
  }

  /**
   * Who claims: this process, its lease, and whether lapsed claims may be taken. `lapsed` is read
   * when the claim runs, not when it was asked for: a claim queued behind a locked database runs
   * after the outage, when what held before it may no longer hold.
   */
  readonly claimant: Claimant;

  /**
   * Lapsed claims are taken only while this process's own renewals reach the database: not while
   * they fail or hang (the database may be out for everyone, and their owners alive), and not for
   * a lease after they come back from such an outage (the owners renew theirs first).
   */
  private mayTakeLapsed(): boolean {
    const now = this.d.clock.now();
    if (this.renewFailed || now < this.takeoverFrom) return false;
    return this.lastRenewed === undefined || now - this.lastRenewed <= this.leaseMs - this.heartbeatMs;
  }

  /** Starts: claims what waits, then keeps the heartbeat and the poll going. */
  start(): void {
    this.on = true;
    // The start counts as a renewal: renewals that then fail for about a lease are an outage too.
    this.lastRenewed = this.d.clock.now();
    this.scheduleBeat();
    this.schedulePoll();
    this.wake();
  }

  /** Looks for work of these kinds (all when none is named), once for every wake of this event-loop turn. */
  wake(...kinds: WorkKind[]): void {
    if (!this.on) return;
    for (const k of kinds.length ? kinds : ALL) this.wanted.add(k);
    if (this.scheduled || this.ticking) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startTick();
    });
  }

  /**
   * A lane slot came free: claims more lanes only if the last look for lanes could not take every
   * one it found (all slots were busy), so a lane finishing costs no statement otherwise.
   */
  laneFreed(): void {
    if (this.lanesLeft) this.wake('lane');
  }

  /** A commit of this process stored work due at `at` (a timer, a send put back, a claim's idle deadline): wakes for it without reading the database. */
  noteDue(at: number): void {
    if (!this.on) return;
    this.notedSeq = ++this.seq;
    this.noted = this.noted === undefined ? at : Math.min(this.noted, at);
    if (this.dueAt === undefined || at < this.dueAt) this.armDue(at);
  }

  /** True when no claim is running or due and no send or event is in flight. */
  get idle(): boolean {
    return !this.scheduled && this.ticking === undefined && this.tasks.size === 0 && this.beating === undefined;
  }

  /** Waits for claims running and the work they started. */
  async settle(): Promise<void> {
    for (;;) {
      if (this.scheduled) await new Promise((resolve) => setImmediate(resolve));
      else if (this.ticking || this.tasks.size || this.beating) await Promise.all([...this.tasks, this.ticking, this.beating]);
      else return;
    }
  }

  /** Stops claiming and waits for the sends and events in flight (lanes are the lane runner's to stop). */
  async stop(): Promise<void> {
    this.on = false;
    for (const t of [this.retry, this.due, this.poll, this.beatTimer]) if (t !== undefined) this.d.clock.clearTimeout(t);
    this.retry = this.due = this.poll = this.beatTimer = this.dueAt = undefined;
    this.wanted.clear();
    await this.settle();
  }

  /** After stop: gives up every claim still held (lanes of live actors), for another process to take at once. */
  async giveUp(): Promise<void> {
    try {
      await this.d.store.renew(this.owner, 0);
    } catch (err) {
      this.d.logger.warn({ err: errorInfo(err) }, 'could not give up the work held; another process takes it over when its leases run out');
    }
  }

  /** Runs the heartbeat now (tests; the timer runs it every `heartbeatMs`). */
  async heartbeat(): Promise<void> {
    if (this.beating) return this.beating;
    const run = this.renew().finally(() => {
      this.beating = undefined;
    });
    this.beating = run;
    return run;
  }

  private startTick(): void {
    if (!this.on) return;
    this.ticking = this.tick()
      .then(() => {
        this.failures = 0;
      })
      .catch((err: unknown) => this.tickFailed(err))
      .finally(() => {
        this.ticking = undefined;
        if (this.wanted.size) this.wake(...this.wanted);
      });
  }

  /** Claims every wanted kind up to its free slots, then arms the clock for the earliest due time. */
  private async tick(): Promise<void> {
    let claimedDue = 0;
    let timed = false;
    while (this.on && this.wanted.size) {
      const kinds = [...this.wanted];
      this.wanted.clear();
      for (const kind of kinds) {
        if (TIMED.includes(kind)) timed = true;
        const n = await this.claim(kind);
        if (kind !== 'lane') claimedDue += n;
      }
    }
    if (timed && this.on) await this.arm(claimedDue);
  }

  /** Claims one kind up to its free slots and starts its handler on each item; how many were claimed. */
  private async claim(kind: WorkKind): Promise<number> {
    this.claimsStarted++;
    this.claimsRunning++;
    try {
      return await this.claimKind(kind);
    } finally {
      this.claimsRunning--;
    }
  }

  private async claimKind(kind: WorkKind): Promise<number> {
    const { store, clock, handlers } = this.d;
    const limit = this.free(kind);
    if (kind === 'lane') this.lanesLeft = limit <= 0;
    if (limit <= 0) return 0;
    const request = { limit, now: clock.now() };
    switch (kind) {
      case 'lane': {
        const claims = await store.claim(this.claimant, { kind, ...request });
        handlers.lanes.adopt(claims);
        if (claims.length === limit) {
          this.lanesLeft = true;
          this.wanted.add('lane');
        }
        return claims.length;
      }
      case 'timer': {
        const keys = await store.claim(this.claimant, { kind, ...request });
        if (keys.length) handlers.fired(keys);
        if (keys.length === limit) this.wanted.add('timer');
        return keys.length;
      }
      case 'send': {
        const rows = await store.claim(this.claimant, { kind, ...request });
        for (const row of rows) this.run('send', row.id, row.claim ?? '', (held) => handlers.send(row, held));
        if (rows.length === limit) this.wanted.add('send');
        return rows.length;
      }
      case 'event': {
        const deliver = handlers.event;
        if (!deliver) return 0;
        const events = await store.claim(this.claimant, { kind, ...request });
        for (const e of events) this.run('event', e.id, e.claim, (held) => deliver(e, held));
        if (events.length === limit) this.wanted.add('event');
        return events.length;
      }
      case 'idle': {
        const idle = handlers.idle;
        if (!idle) return 0;
        const back = await store.claim(this.claimant, { kind, ...request, notify: idle.notify });
        if (back.length) idle.returned(back);
        if (back.length === limit) this.wanted.add('idle');
        return back.length;
      }
    }
  }

  private free(kind: WorkKind): number {
    if (kind === 'lane') return this.d.handlers.lanes.free();
    if (kind === 'timer') return this.d.slots.timer;
    if (kind === 'idle') return this.d.handlers.idle ? (this.d.slots.idle ?? IDLE_SLOTS) : 0;
    if (kind === 'event' && !this.d.handlers.event) return 0;
    return this.d.slots[kind] - this.inflight[kind].size;
  }

  /** Runs an item's handler; an item this process is still working on (claimed again after its own lease lapsed) keeps its one run, with the new claim. */
  private run(kind: 'send' | 'event', id: number, claim: string, handler: (held: Held) => Promise<void>): void {
    const running = this.inflight[kind].get(id);
    if (running) {
      running.claim = claim;
      return;
    }
    const held: Held = { claim };
    this.inflight[kind].set(id, held);
    const t = handler(held)
      .catch((err) => this.d.logger.error({ err: errorInfo(err), [kind]: id }, `${kind === 'send' ? 'a send' : 'a helpdesk event'} failed to settle`))
      .finally(() => {
        this.inflight[kind].delete(id);
        this.tasks.delete(t);
        this.wake(kind);
      });
    this.tasks.add(t);
  }

  /**
   * Wakes for the earliest due send, event or timer, already due ones included (one can fall due
   * while a claim runs). When one is due yet this tick claimed none, it looks again a little later
   * rather than spinning.
   */
  private async arm(claimed: number): Promise<void> {
    const started = ++this.seq;
    const next = this.withNoted(await this.d.store.nextDue(), started);
    if (!this.on) return;
    if (next === undefined) {
      if (this.due !== undefined) this.d.clock.clearTimeout(this.due);
      this.due = this.dueAt = undefined;
      return;
    }
    const now = this.d.clock.now();
    this.armDue(next > now ? next : claimed > 0 ? now : now + DUE_RECHECK_MS, true);
  }

  /** `next`, or a noted due time if sooner: a read that started before it was noted may not have seen it. */
  private withNoted(next: number | undefined, started: number): number | undefined {
    const noted = this.noted;
    if (noted === undefined) return next;
    if (this.notedSeq < started) {
      this.noted = undefined; // this read started after every noted commit
      return next;
    }
    return next === undefined ? noted : Math.min(next, noted);
  }

  private armDue(at: number, replace = false): void {
    if (!replace && this.dueAt !== undefined && this.dueAt <= at) return;
    if (this.due !== undefined) this.d.clock.clearTimeout(this.due);
    this.dueAt = at;
    this.due = this.d.clock.setTimeout(
      () => {
        this.due = this.dueAt = undefined;
        this.wake(...TIMED);
      },
      Math.max(0, at - this.d.clock.now()),
    );
  }

  /** A claim failed: the same kinds are tried again with backoff, whatever else happens or not. */
  private tickFailed(err: unknown): void {
    const delay = storeRetryDelay(++this.failures);
    if (isStoreUnavailable(err)) this.d.storeUnavailable('work', err, delay);
    else this.d.logger.error({ err: errorInfo(err), delayMs: delay }, 'claiming work failed; trying again');
    const again = ALL.filter((k) => this.wanted.has(k));
    this.wanted.clear();
    if (this.retry !== undefined) this.d.clock.clearTimeout(this.retry);
    this.retry = this.d.clock.setTimeout(() => {
      this.retry = undefined;
      this.wake(...(again.length ? again : ALL));
    }, delay);
  }

  private schedulePoll(): void {
    if (!this.on) return;
    this.poll = this.d.clock.setTimeout(() => {
      this.poll = undefined;
      // Timers and idle claims are not claimed on every poll: the look for due times that ends the
      // claims finds any that fell due (another process stored them), and wakes their claim.
      this.wake('lane', 'send', 'event');
      this.schedulePoll();
    }, this.pollMs);
  }

  private scheduleBeat(): void {
    if (!this.on) return;
    this.beatTimer = this.d.clock.setTimeout(() => {
      this.beatTimer = undefined;
      void this.heartbeat().finally(() => this.scheduleBeat());
    }, this.heartbeatMs);
  }

  /**
   * Renews everything this process holds. After renewals that could not reach the database for
   * about a lease (an outage, a frozen database), lapsed claims are left alone for one more lease:
   * their owners may be alive and renewing now, and a send they hold must not go out twice.
   */
  private async renew(): Promise<void> {
    const { clock, handlers } = this.d;
    const mark = handlers.lanes.mark();
    const claims = this.claimsStarted;
    const claiming = this.claimsRunning > 0;
    const started = clock.now();
    let held: HeldWork;
    try {
      held = await this.d.store.renew(this.owner, this.leaseMs);
    } catch (err) {
      this.renewFailed = true;
      this.d.logger.warn({ err: errorInfo(err) }, 'could not renew the work held; trying at the next beat');
      return;
    }
    const now = clock.now();
    const unsure = this.leaseMs - this.heartbeatMs;
    const cutOff = (this.renewFailed && this.lastRenewed !== undefined && now - this.lastRenewed > unsure) || now - started > unsure;
    if (cutOff) {
      this.takeoverFrom = now + this.leaseMs;
      this.d.logger.warn({ waitMs: this.leaseMs }, 'renewed the work held after losing the database for about a lease; taking over no lapsed work for one more lease');
    }
    this.renewFailed = false;
    this.lastRenewed = now;
    handlers.lanes.renewed(held.lanes, mark);
    this.d.beat?.(held.lanes.length);
    // No claim ran while the renewal did: every send or event held is one a claim answered, or one
    // whose answer was lost (its connection cut after the commit). Those are given back.
    if (!claiming && this.claimsRunning === 0 && this.claimsStarted === claims) await this.giveBackUnknown(held);
  }

  /** Sends and events this process holds in the database but never heard it claimed: back to waiting, for any process. */
  private async giveBackUnknown(held: HeldWork): Promise<void> {
    const now = this.d.clock.now();
    const error = 'claimed by a statement whose answer was lost with its connection; given back unsent';
    const sends = held.sends.filter((c) => !this.inflight.send.has(c.id));
    const events = held.events.filter((c) => !this.inflight.event.has(c.id));
    for (const h of sends) {
      this.d.logger.warn({ outbox: h.id }, 'gave back a send this process held without knowing (its claim’s answer was lost)');
      await this.d.store.settleSend(h.id, h.claim, { kind: 'retry', at: now, error }, now).catch(() => false);
    }
    for (const h of events) {
      this.d.logger.warn({ event: h.id }, 'gave back a helpdesk event this process held without knowing (its claim’s answer was lost)');
      await this.d.store.settleEvent(h.id, h.claim, { sent: false, error, retryAt: now }, now).catch(() => false);
    }
    if (sends.length + events.length > 0) this.wake('send', 'event');
  }
}

/** A fresh owner name: readable in the database, unique per process start. */
function newOwnerName(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}
