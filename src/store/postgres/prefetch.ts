/**
 * What a turn reads right after its lane is claimed, read by the claim itself. A lane's step is
 * claim, then the oldest pending inbound, then (in the turn) the active conversation: three round
 * trips one after the other, each waiting its turn at the pool. The claim statement returns the
 * other two as well, and the store answers the next `settleLane` (with `next`) and
 * `activeConversation` of that lane from them, once: `settleLane` only for the owner and fence of
 * the claim that read it.
 *
 * Why an answer read with the claim is as good as one read after it:
 * - An inbound is kept only when one was pending. The claim's `work_seq` may be newer than its
 *   snapshot (a row lock waited for re-reads the row), so "none pending" from that snapshot could
 *   miss work the lane counts as seen, and a release would strand it: that answer is never kept,
 *   and `settleLane` asks the database. A pending inbound that was visible is the oldest one:
 *   a conversation's inbounds take their ids in commit order (the lane row is locked first).
 * - The conversation is the one its turn would read a moment later. Anything that changed it since
 *   fails the turn's commit (the version check, the one-active-conversation index), and the turn is
 *   retried with a fresh read: the same guard as for a read that raced a write.
 * - Every write of this store that could change either answer drops what is kept (a turn's commit,
 *   an inbound failed, skipped or held, an expiry, a handoff, a settle); what is left unused goes
 *   when the lane is settled, or at the heartbeat that finds the lane lost.
 */
import { toConversation, toInbox } from '../rows.js';
import type { ConversationKey, ConversationRecord, InboxRecord } from '../types.js';

type Row = Record<string, unknown>;

/**
 * The columns a claim statement adds (`kb`, `ku`: the key; `claimed`: whether the lane was taken):
 * the oldest pending inbound and the active conversation, as JSON rows (their `SELECT *` columns).
 */
export const PREFETCH_COLUMNS = (kb: string, ku: string, claimed: string): string => `
  CASE WHEN ${claimed} THEN (SELECT row_to_json(pi) FROM inbox pi WHERE pi.bot_id = ${kb} AND pi.user_number = ${ku} AND pi.state = 'pending' ORDER BY pi.id LIMIT 1) END AS prefetch_inbox,
  CASE WHEN ${claimed} THEN (SELECT row_to_json(pc) FROM conversations pc WHERE pc.bot_id = ${kb} AND pc.user_number = ${ku} AND pc.status = 'active') END AS prefetch_conversation`;

const keyOf = (k: ConversationKey): string => `${k.botId}\u0000${k.user}`;

/** An inbound a claim read, with the claim that read it. */
interface KeptInbound {
  readonly inbound: InboxRecord;
  readonly owner: string;
  readonly fence: number;
}

/** The answers kept from claims, by lane; each used once. */
export class Prefetched {
  private readonly inbox = new Map<string, KeptInbound>();
  private readonly conversation = new Map<string, ConversationRecord | undefined>();

  /** Keeps what a claim granted to `owner` carried. */
  keep(key: ConversationKey, r: Row, owner: string): void {
    const k = keyOf(key);
    const i = r['prefetch_inbox'];
    if (i !== null && i !== undefined && typeof i === 'object') this.inbox.set(k, { inbound: toInbox(i as Row), owner, fence: Number(r['fence']) });
    else this.inbox.delete(k);
    const c = r['prefetch_conversation'];
    this.conversation.set(k, c !== null && c !== undefined && typeof c === 'object' ? toConversation(c as Row) : undefined);
  }

  /**
   * The lane's oldest pending inbound as the claim of `owner` with `fence` saw it, once; undefined:
   * ask the database (also when the look is another owner's, or of another claim).
   */
  takeInbound(key: ConversationKey, owner: string, fence: number): InboxRecord | undefined {
    const k = keyOf(key);
    const i = this.inbox.get(k);
    this.inbox.delete(k);
    return i && i.owner === owner && i.fence === fence ? i.inbound : undefined;
  }

  /** The lane's active conversation as its claim saw it, once (`found: false`: ask the database). */
  takeConversation(key: ConversationKey): { found: boolean; conversation: ConversationRecord | undefined } {
    const k = keyOf(key);
    if (!this.conversation.has(k)) return { found: false, conversation: undefined };
    const conversation = this.conversation.get(k);
    this.conversation.delete(k);
    return { found: true, conversation };
  }

  /** Drops what is kept for a lane. */
  forget(key: ConversationKey): void {
    const k = keyOf(key);
    this.inbox.delete(k);
    this.conversation.delete(k);
  }

  /** Drops a kept inbound by id (it was failed, skipped or held). */
  forgetInbound(id: number): void {
    for (const [k, i] of this.inbox) if (i.inbound.id === id) this.inbox.delete(k);
  }

  /** Drops every kept conversation (an expiry or a handoff changed some). */
  forgetConversations(): void {
    this.conversation.clear();
  }

  /** Keeps only what was read for these lanes (the ones this process still holds). */
  retain(keys: readonly ConversationKey[]): void {
    const held = new Set(keys.map(keyOf));
    for (const k of this.inbox.keys()) if (!held.has(k)) this.inbox.delete(k);
    for (const k of this.conversation.keys()) if (!held.has(k)) this.conversation.delete(k);
  }

  /** Drops everything kept. */
  clear(): void {
    this.inbox.clear();
    this.conversation.clear();
  }
}
