/**
 * Lanes: one per conversation, each running that conversation's work one piece at a time, in
 * arrival order. Lanes run independently of each other. A lane drains until its inbox is empty.
 */
import { errorInfo, type Logger } from '../log.js';
import type { ConversationKey, InboxRecord } from '../store/types.js';

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
}

interface Lane { running: boolean; again: boolean; sync: boolean; resume: boolean; done: Promise<void> }

/** The key of a conversation's lane. */
export function laneKey(key: ConversationKey): string {
  return `${key.botId}\u0000${key.user}`;
}

/** The conversations' lanes. */
export class Lanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly work: LaneWork, private readonly logger: Logger) {}

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

  private async drain(key: ConversationKey, lane: Lane): Promise<void> {
    let turns = 0;
    for (;;) {
      lane.again = false;
      if (lane.resume) { lane.resume = false; await this.work.resume(key); }
      if (lane.sync) { lane.sync = false; await this.work.sync(key); }
      const row = await this.work.next(key);
      if (!row) { if (lane.again || lane.sync || lane.resume) continue; return; }
      await this.work.process(row);
      if (++turns % 8 === 0) await new Promise((r) => setImmediate(r)); // let the webhook answer during a burst
    }
  }
}
