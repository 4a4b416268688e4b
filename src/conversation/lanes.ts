/**
 * Lanes: one per conversation, each running that conversation's work one piece at a time, in
 * arrival order. Lanes run independently of each other. A lane drains until its inbox is empty.
 */
import { isStoreUnavailable } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import type { ConversationKey, InboxRecord } from '../store/types.js';
import { pause, storeRetryDelay } from './backoff.js';
import type { RuntimeClock } from './clock.js';

/** What a lane runs. */
export interface LaneWork {
  /** Re-opens a conversation whose invocation was running when the process stopped. */
  resume(key: ConversationKey): Promise<void>;
  /** Commits what a live actor did outside a turn. */
  sync(key: ConversationKey): Promise<void>;
  /** The conversation's oldest pending inbound. */
  next(key: ConversationKey): Promise<InboxRecord | undefined>;
  /** Runs one inbound's turn. */
  process(row: InboxRecord): Promise<void>;
  /** The store was unavailable: the lane waits `delayMs` and tries the same work again. */
  storeUnavailable?(key: ConversationKey, err: Error, delayMs: number): void;
}

interface Lane { running: boolean; again: boolean; sync: boolean; resume: boolean; done: Promise<void> }

/** The key of a conversation's lane. */
export function laneKey(key: ConversationKey): string {
  return `${key.botId}\u0000${key.user}`;
}

/** The conversations' lanes. */
export class Lanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly waits = new Set<() => void>();
  private stopping = false;

  constructor(private readonly work: LaneWork, private readonly logger: Logger, private readonly clock: RuntimeClock) {}

  /** Lanes waiting out an unavailable store give up (their work stays in the store for the next start). */
  stop(): void {
    this.stopping = true;
    for (const cancel of this.waits) cancel();
  }

  /** Makes the conversation's lane run (again): for new inbounds, a live actor's change, or a resume. */
  kick(key: ConversationKey, mode?: 'sync' | 'resume'): void {
    const k = laneKey(key);
    let lane = this.lanes.get(k);
    if (!lane) this.lanes.set(k, (lane = { running: false, again: false, sync: false, resume: false, done: Promise.resolve() }));
    if (mode === 'sync') lane.sync = true;
    if (mode === 'resume') lane.resume = true;
    if (lane.running) { lane.again = true; return; }
    lane.running = true;
    const l = lane;
    const at = { botId: key.botId, user: key.user };
    l.done = this.drain(at, l)
      .catch((err) => this.logger.error({ err: errorInfo(err), bot: key.botId, user: key.user }, 'conversation lane failed'))
      .finally(() => {
        l.running = false;
        if (l.again || l.sync || l.resume) this.kick(at);
        else if (this.lanes.get(k) === l) this.lanes.delete(k);
      });
  }

  /** The lanes at work now (to wait for them). */
  running(): Promise<void>[] {
    return [...this.lanes.values()].map((l) => l.done);
  }

  /** Runs the lane's work until none is left; a store that is unavailable for now is waited out and tried again. */
  private async drain(key: ConversationKey, lane: Lane): Promise<void> {
    const count = { turns: 0 };
    for (let failures = 0; ;) {
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
    lane.again = false;
    if (lane.resume) {
      lane.resume = false;
      try { await this.work.resume(key); } catch (err) { if (isStoreUnavailable(err)) lane.resume = true; throw err; }
    }
    if (lane.sync) {
      lane.sync = false;
      try { await this.work.sync(key); } catch (err) { if (isStoreUnavailable(err)) lane.sync = true; throw err; }
    }
    const row = await this.work.next(key);
    if (!row) return lane.again || lane.sync || lane.resume;
    await this.work.process(row);
    if (++count.turns % 8 === 0) await new Promise((r) => setImmediate(r)); // let the webhook answer during a burst
    return true;
  }
}
