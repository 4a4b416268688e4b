/**
 * The conversation runtime: inbox → turn → outbox, exactly once. Each conversation has a lane that
 * runs its pending inbounds one at a time, in arrival order; lanes run independently. Timers and
 * delivery failures come back through the inbox, so they are deduplicated and ordered the same way.
 * One worker claims, renews and settles every kind of work kept in the database (lanes, sends,
 * helpdesk events, timers); `Runtime` is its wiring and the public API.
 */
import { randomUUID } from 'node:crypto';
import { ColloquyError, ConfigError } from '../errors.js';
import { errorInfo, silentLogger, type Logger } from '../log.js';
import { Metrics } from '../metrics.js';
import type { ConversationKey, HandoffEventOutcome, HandoffEventRecord, InboundSource, NewStatus, Store, TranscriptEntry } from '../store/types.js';
import type { SendAdapter } from '../transport/types.js';
import type { NumbersConfig } from '../numbers/types.js';
import { Senders } from './senders.js';
import { ReadReceipts } from './read-receipts.js';
import type { Bot } from './bot.js';
import { systemClock, type RuntimeClock } from './clock.js';
import type { SmsSettings } from './outbound.js';
import type { LiveConversation, TurnDeps } from './turn.js';
import { ServedBots } from './served.js';
import { Deliveries } from './deliveries.js';
import { Lanes, laneKey, type LaneOptions } from './lanes.js';
import { IdleSweep } from './sweep.js';
import { Turns } from './turns.js';
import { FlowExchange } from './flow-exchange.js';
import { HandoffDesk } from './handoff-desk.js';
import { claimIdleOption, claimsReturned } from './handoff-claims.js';
import { Sender, type SendOptions } from './sends.js';
import { untilStored, type StoreWaits } from './backoff.js';
import { DEFAULT_POLL_MS, Worker, type Held, type WorkOptions } from './worker.js';

/** What the runtime is built from. */
export interface RuntimeOptions {
  readonly store: Store;
  /**
   * The provider that carries the bots' messages: a {@link Provider} (the seed's `createHttpAdapter`,
   * the Cloud API's `createCloudApiProvider`, or one of your own), or a bare send adapter, read as
   * the seed provider.
   */
  readonly adapter: SendAdapter;
  /** Providers of particular bots, by bot id (a numbers file can put bots on different providers). */
  readonly providers?: Readonly<Record<string, SendAdapter>> | undefined;
  /** Several numbers in one deployment (COLLOQUY_NUMBERS_FILE): each bot's number and phone_number_id. */
  readonly numbers?: NumbersConfig | undefined;
  readonly bots: readonly Bot[];
  /** The default `from` number (a bot's own `sender` wins). */
  readonly sender: string;
  readonly sms?: SmsSettings | undefined;
  readonly clock?: RuntimeClock | undefined;
  readonly logger?: Logger | undefined;
  readonly metrics?: Metrics | undefined;
  /** How sends are paced and retried (concurrency, attempts, backoff). */
  readonly sends?: SendOptions | undefined;
  /** How often idle conversations are swept (default 60 s). */
  readonly sweepEveryMs?: number | undefined;
  /** How claims on work are leased in the database (owner name, lease, heartbeat). */
  readonly work?: Omit<WorkOptions, 'pollMs'> | undefined;
  /** How many conversations' lanes run at once. */
  readonly lanes?: LaneOptions | undefined;
  /**
   * How often the database is polled for work no event announced here (default 1 s): lanes, sends,
   * helpdesk events and timers another process left (it died) or added. PostgreSQL's notifications
   * only wake it sooner.
   */
  readonly pollMs?: number | undefined;
  /** How long a live flow's answer may take when its declaration sets no `budgetMs` (default 3 s). */
  readonly flowBudgetMs?: number | undefined;
  /** Queue handoff events for a helpdesk connector (implied by `helpdesk`). */
  readonly handoffEvents?: boolean | undefined;
  /** Delivers queued handoff events (a {@link HandoffConnector} from `colloquy/server`). */
  readonly helpdesk?: { deliver(e: HandoffEventRecord): Promise<HandoffEventOutcome> } | undefined;
  /**
   * How long a claim lasts without activity of its agent (a claim, a message, a note) before it
   * goes back to the queue, with `handoff.claim_expired` for the connector (ms; default 30
   * minutes; 0: claims never expire).
   */
  readonly handoffClaimIdleMs?: number | undefined;
}

export { DEFAULT_POLL_MS };

/** An inbound for {@link Runtime.receive}. */
export interface Inbound extends ConversationKey {
  /** The provider's message id (the dedupe key); generated when absent. */
  readonly providerId?: string | undefined;
  readonly source?: InboundSource | undefined;
  readonly event: { readonly type: string; readonly [k: string]: unknown };
  readonly raw?: unknown;
}

/** Runs bots' conversations. */
export class Runtime {
  readonly store: Store;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly clock: RuntimeClock;
  private readonly bots: ServedBots;
  private readonly turns: Turns;
  private readonly lanes: Lanes;
  private readonly worker: Worker;
  private readonly sender: Sender;
  private readonly deliveries: Deliveries;
  private readonly receipts: ReadReceipts;
  /** Each bot's provider, business number and phone_number_id. */
  readonly senders: Senders;
  private readonly sweeper: IdleSweep;
  private readonly deps: TurnDeps;
  /** Handoffs to people: the agents' queue, claim, messages and release. */
  readonly handoffs: HandoffDesk;
  /** Live flows' screens (the Flow endpoint's decrypted requests), answered from the conversations. */
  readonly flows: FlowExchange;
  private accepting = false;
  private stopped = false;
  /** Waits for a store that is unavailable for now, ended at once by stop(). */
  private readonly waits = new Set<() => void>();
  private unlisten: (() => Promise<void>) | undefined;
  /** Background work (timer checks, sweeps) that idle() waits for. */
  private readonly background = new Set<Promise<unknown>>();

  constructor(o: RuntimeOptions) {
    this.store = o.store;
    this.clock = o.clock ?? systemClock;
    this.logger = o.logger ?? silentLogger;
    this.metrics = o.metrics ?? new Metrics();
    this.bots = new ServedBots(o.bots);
    this.senders = new Senders({ provider: o.adapter, byBot: o.providers, sender: o.sender, numbers: o.numbers });
    this.senders.check(o.bots);
    const newest = (id: string) => this.bots.newest(id);
    this.receipts = new ReadReceipts({ senders: this.senders, metrics: this.metrics, logger: this.logger, bot: newest, track: (p) => this.track(p) });
    const kick = (key: ConversationKey, mode?: 'sync' | 'resume') => this.lanes.kick(key, mode);
    const notify = o.handoffEvents === true || o.helpdesk !== undefined;
    const claimIdleMs = claimIdleOption(o.handoffClaimIdleMs);
    this.deps = { store: o.store, senders: this.senders, sms: o.sms ?? {}, now: () => this.clock.now(), onLiveChange: (key) => kick(key, 'sync'), notifyHandoffs: notify };
    const base = { store: o.store, clock: this.clock, metrics: this.metrics };
    const wakeSends = () => this.worker.wake('send');
    this.deliveries = new Deliveries({ ...base, logger: this.logger, sms: o.sms ?? {}, senders: this.senders, bot: (row) => this.botOf(row), wakeSends, kick });
    this.sender = new Sender(
      {
        ...base,
        senders: this.senders,
        bot: newest,
        logger: this.logger,
        waits: this.storeWaits('outbox-record'),
        followUp: (row, r, exhausted) => this.deliveries.plan(row, r, exhausted ? 'retries-exhausted' : 'permanent'),
        onSent: (row, id) => this.deliveries.sent(row, id),
      },
      o.sends,
    );
    const helpdesk = o.helpdesk;
    this.worker = new Worker(
      {
        store: o.store,
        clock: this.clock,
        logger: this.logger,
        slots: { send: this.sender.o.concurrency, event: 16, timer: 500 },
        storeUnavailable: (work, err, delayMs) => this.storeUnavailable(work, err, delayMs),
        beat: (held) => {
          this.metrics.set('colloquy_lanes_held', {}, held);
          this.metrics.set('colloquy_lanes_waiting', {}, this.lanes.load.queued);
        },
        handlers: {
          lanes: { free: () => this.lanes.free(), adopt: (c) => this.lanes.adopt(c), mark: () => this.lanes.mark(), renewed: (held, mark) => this.lanes.renewed(held, mark) },
          send: (row, held) => this.sender.send(row, held),
          event: helpdesk && ((e, held) => this.deliverEvent(helpdesk, e, held)),
          fired: (keys) => {
            for (const key of keys) kick(key);
            this.metrics.inc('colloquy_timers_fired_total', {}, keys.length);
          },
          idle: { notify, returned: claimsReturned({ logger: this.logger, metrics: this.metrics, changed: () => this.handoffs.changed() }) },
        },
      },
      { ...o.work, pollMs: o.pollMs },
    );
    this.lanes = new Lanes(
      {
        resume: (k) => this.turns.resume(k),
        sync: (k) => this.turns.sync(k),
        process: async (row) => {
          await this.turns.process(row);
          this.receipts.handled(row);
        },
        keep: (k) => this.turns.keeps(k),
        lost: (k) => this.turns.dropLive(k),
        storeUnavailable: (k, err, delayMs) => this.storeUnavailable('conversation', err, delayMs, { bot: k.botId, user: k.user }),
        observe: () => this.metrics.inc('colloquy_lane_takeovers_total', {}),
      },
      { store: o.store, logger: this.logger, clock: this.clock, claimant: () => this.worker.claimant, freed: () => this.worker.laneFreed() },
      o.lanes,
    );
    this.handoffs = new HandoffDesk({
      ...base,
      logger: this.logger,
      senders: this.senders,
      sms: o.sms ?? {},
      notify,
      bot: (id) => this.bots.newest(id),
      kick: (key) => kick(key),
      wakeDispatcher: wakeSends,
      claimIdleMs,
      due: (at) => this.worker.noteDue(at),
    });
    if (helpdesk) this.handoffs.onChange(() => this.worker.wake('event'));
    const committed = (sends: boolean, dueAt: number | undefined) => {
      if (sends) this.worker.wake('send');
      if (dueAt !== undefined) this.worker.noteDue(dueAt);
    };
    this.turns = new Turns({ ...base, logger: this.logger, bots: this.bots, turn: this.deps, handoffs: this.handoffs, kick, committed });
    this.flows = new FlowExchange({
      store: o.store,
      clock: this.clock,
      logger: this.logger,
      bots: this.bots,
      turn: this.deps,
      committed: (bot, key, live, result) => this.turns.adopt(bot, key, live, result),
      exclusive: (key, fn) => this.lanes.exclusive(key, fn),
      budgetMs: o.flowBudgetMs,
    });
    this.sweeper = new IdleSweep({ ...base, bots: () => this.bots.newestEach(), track: (p) => this.track(p) }, o.sweepEveryMs ?? 60_000);
  }

  /** How background work waits out a store that is unavailable for now. */
  private storeWaits(work: string): StoreWaits {
    return { clock: this.clock, stopped: () => this.stopped, waits: this.waits, onWait: (err, delayMs) => this.storeUnavailable(work, err, delayMs) };
  }

  /** Delivers a helpdesk event and records how it went under its claim. */
  private async deliverEvent(helpdesk: NonNullable<RuntimeOptions['helpdesk']>, e: HandoffEventRecord, held: Held): Promise<void> {
    const outcome = await helpdesk.deliver(e);
    const ok = await untilStored(() => this.store.settleEvent(e.id, held.claim, outcome, this.clock.now()), this.storeWaits('handoff-event'));
    if (!ok) this.logger.warn({ event: e.eventId }, 'another process claimed this helpdesk event while it was being delivered (its lease ran out); this result is not recorded');
  }

  /** A served bot by id: its newest version, or the version asked for. */
  bot(id: string, version?: number): Bot | undefined {
    return version === undefined ? this.bots.newest(id) : this.bots.get(id, version);
  }

  /** The bots served, one per id: the newest version (what routing and listings need). */
  get botList(): Bot[] {
    return this.bots.newestEach();
  }

  /** The served version a conversation runs on (the newest when its own is not served), and the state it is in. */
  private async botOf(row: { botId: string; conversationId: number }): Promise<{ bot: Bot; state: string | null } | undefined> {
    const conv = await this.store.conversation(row.conversationId);
    const bot = (conv && this.bots.get(row.botId, conv.botVersion)) ?? this.bots.newest(row.botId);
    return bot && { bot, state: conv?.state ?? null };
  }

  /** Every served version of every bot, newest first within an id. */
  get botVersions(): Bot[] {
    return this.bots.all();
  }

  /** This process's name as the owner of claims in the database. */
  get owner(): string {
    return this.worker.owner;
  }

  /**
   * Starts: claims the conversations with work that no live process holds (pending inbounds,
   * running invocations of a process that stopped), sends unsent messages, fires due timers, and
   * from then on polls the database for work another process left or added.
   */
  async start(): Promise<void> {
    this.accepting = true;
    this.stopped = false;
    this.worker.start();
    await this.deliveries.recover();
    this.sweeper.start();
    this.unlisten = await this.store.onWork?.(() => this.worker.wake());
  }

  /** Commits an inbound to the inbox (a redelivery is a no-op) and queues its turn. */
  async receive(inbound: Inbound): Promise<{ inboxId: number; duplicate: boolean }> {
    if (!this.accepting) throw new ColloquyError('stopped', 'The runtime is not accepting messages (not started, or shutting down)');
    if (!this.bots.has(inbound.botId)) throw new ConfigError('botId', `no bot "${inbound.botId}" is served`);
    const r = await this.store.addInbound(
      {
        providerId: inbound.providerId ?? `api:${randomUUID()}`,
        botId: inbound.botId,
        user: inbound.user,
        source: inbound.source ?? 'api',
        event: inbound.event,
        raw: inbound.raw,
        receivedAt: this.clock.now(),
      },
      this.lanes.claimWith,
    );
    if (r.claim) this.lanes.granted(r.claim);
    this.metrics.inc('colloquy_inbound_total', { source: inbound.source ?? 'api', duplicate: String(r.duplicate) });
    if (!r.duplicate) {
      this.lanes.kick(inbound);
      this.receipts.accepted({ ...inbound, providerId: inbound.providerId ?? '', source: inbound.source ?? 'api' });
    }
    return { inboxId: r.id, duplicate: r.duplicate };
  }

  /**
   * Records a delivery status from the provider. Repeated and out-of-order statuses are kept once
   * and never move a message's status back; a `failed` status of a sent message is a delivery
   * failure (fallback, then `delivery.failed` for the bot).
   */
  async receiveStatus(status: Omit<NewStatus, 'receivedAt'>): Promise<{ duplicate: boolean; known: boolean }> {
    return this.deliveries.status(status);
  }

  /** Resolves when no turn is running or queued and no send is in flight. */
  async idle(): Promise<void> {
    for (;;) {
      const lanes = this.lanes.running();
      if (lanes.length) {
        await Promise.all(lanes);
        continue;
      }
      if (!this.worker.idle) {
        await this.worker.settle();
        continue;
      }
      if (this.background.size) {
        await Promise.all(this.background);
        continue;
      }
      return;
    }
  }

  /** True while a live conversation (any, or the one of `key`) has an invoked actor still running. */
  invoking(key?: ConversationKey): boolean {
    return this.busyLive(key).length > 0;
  }

  /**
   * Resolves once no live conversation (any, or the one of `key`) has an invoked actor running,
   * and what the invocations did is committed and sent (as {@link idle}). An invocation that
   * never settles keeps it waiting: bound it with a timeout of your own.
   */
  async invocationsSettled(key?: ConversationKey): Promise<void> {
    for (;;) {
      await this.idle();
      const busy = this.busyLive(key);
      if (busy.length === 0) return;
      await Promise.race(busy.map((l) => l.handle.nextChange()));
    }
  }

  private busyLive(key: ConversationKey | undefined): LiveConversation[] {
    const k = key === undefined ? undefined : laneKey(key);
    return [...this.turns.live.entries()].filter(([lk, l]) => (k === undefined || lk === k) && l.handle.busy).map(([, l]) => l);
  }

  /** Stops taking inbounds, finishes turns in flight and the sends they started, stops timers. */
  async stop(): Promise<void> {
    this.accepting = false;
    await this.unlisten?.().catch((err: unknown) => this.logger.warn({ err: errorInfo(err) }, 'could not stop listening for work'));
    this.unlisten = undefined;
    this.sweeper.stop();
    this.lanes.stop();
    await Promise.all(this.lanes.running());
    this.stopped = true;
    for (const cancel of this.waits) cancel();
    await this.worker.stop();
    await Promise.all(this.background);
    for (const l of this.turns.live.values()) l.handle.stop();
    this.turns.live.clear();
    // Claims still held (lanes of live actors): another process takes them over now and runs them again.
    await this.worker.giveUp();
    this.lanes.clear();
  }

  /** Looks for due work now: sends, helpdesk events and timers (after the clock moved, in tests). */
  async poke(): Promise<void> {
    this.worker.wake();
    await this.worker.settle();
  }

  /** Expires conversations idle past their bot's expiry; returns how many. */
  sweep(): Promise<number> {
    return this.sweeper.sweep();
  }

  /** Both directions of a conversation, in order, with delivery results. */
  async transcript(key: ConversationKey | number): Promise<TranscriptEntry[]> {
    const conv = typeof key === 'number' ? await this.store.conversation(key) : ((await this.store.activeConversation(key)) ?? (await this.store.conversations(key)).at(-1));
    return conv ? this.store.transcript(conv.id) : [];
  }

  /** Background work met an unavailable store and will try again after `delayMs`: said and counted, never the bot's failure. */
  private storeUnavailable(work: string, err: Error, delayMs: number, where: Record<string, unknown> = {}): void {
    this.metrics.inc('colloquy_store_unavailable_total', { work });
    this.logger.warn({ ...where, work, delayMs, err: errorInfo(err) }, 'the store is unavailable for now; retrying');
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch((err) => this.logger.error({ err: errorInfo(err) }, 'background work failed')).finally(() => this.background.delete(t));
    this.background.add(t);
  }
}
