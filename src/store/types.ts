/**
 * The store port. The runtime sees only this interface; SQLite (better-sqlite3) is the default
 * implementation, and another database is one new file implementing it.
 */

import type { HandoffChange, HandoffStore } from './handoff-types.js';
export type * from './handoff-types.js';
export type { ChannelName, ConversationKey, NewOutbound } from './keys.js';
import type { ChannelName, ConversationKey, NewOutbound } from './keys.js';
import type { InboundFacts } from './inbound-facts.js';
export type { DeliveryFailed, HandoffReleased, InboundFacts, TimerFired } from './inbound-facts.js';

export type ConversationStatus = 'active' | 'done' | 'expired' | 'failed';

/** A stored conversation. */
export interface ConversationRecord extends ConversationKey {
  readonly id: number;
  readonly status: ConversationStatus;
  /** XState's persisted snapshot (parsed JSON), or null before the first turn commits. */
  readonly snapshot: unknown;
  /** The state value as text (`"menu"`, `{"order":"size"}`), for people and queries. */
  readonly state: string | null;
  /** The optimistic-concurrency counter, bumped by every committed turn. */
  readonly version: number;
  /** The version of its bot the conversation runs on (1 for conversations from before versions). */
  readonly botVersion: number;
  readonly flowToken: string;
  /** The channel the conversation is on: `sms` while its messages go by SMS. */
  readonly channel: ChannelName;
  /** The messages re-sent on unhandled input (JSON values of Message). */
  readonly lastPrompt: readonly unknown[] | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly lastActivityAt: number;
  readonly endedAt: number | null;
}

/** Where an inbound came from. */
export type InboundSource = 'whatsapp' | 'sms' | 'timer' | 'delivery' | 'api' | 'internal';

/** An inbound to commit before its turn. */
export interface NewInbound extends ConversationKey {
  /** The dedupe key: the provider's message id (or `timer:…`, `delivery:…` for our own). */
  readonly providerId: string;
  readonly source: InboundSource;
  /** The runtime event, a JSON object with a `type`. */
  readonly event: { readonly type: string; readonly [k: string]: unknown };
  readonly raw?: unknown;
  readonly receivedAt: number;
}

/**
 * A stored inbound. Colloquy's own inbounds carry typed facts decoded from `raw` when the row is
 * read: `timer` (source `timer`), `delivery` (source `delivery`), `release` (a handoff's end).
 */
export interface InboxRecord extends NewInbound, InboundFacts {
  readonly id: number;
  readonly state: 'pending' | 'done' | 'failed';
  readonly conversationId: number | null;
  readonly attempts: number;
  readonly error: string | null;
  readonly processedAt: number | null;
}

export type OutboxState = 'pending' | 'sending' | 'sent' | 'failed';

/** A stored outbound message. */
export interface OutboxRecord extends ConversationKey {
  readonly id: number;
  readonly conversationId: number;
  readonly inboxId: number | null;
  readonly kind: string;
  readonly message: unknown;
  readonly channel: ChannelName;
  readonly request: unknown;
  readonly state: OutboxState;
  readonly attempts: number;
  readonly nextAttemptAt: number;
  readonly providerId: string | null;
  readonly httpStatus: number | null;
  readonly response: unknown;
  readonly smsCode: number | null;
  readonly smsMailingId: string | null;
  readonly smsResult: string | null;
  readonly error: string | null;
  readonly errorCode: string | null;
  readonly fallbackOf: number | null;
  readonly deliveryStatus: string | null;
  /** The token of the claim sending it, while it is `sending`. */
  readonly claim: string | null;
  readonly createdAt: number;
  readonly sentAt: number | null;
  /** The agent who wrote it during a handoff; null (or absent) for the bot's own messages. */
  readonly agent?: string | null | undefined;
}

/** The result of one send, as recorded. */
export interface SendRecord {
  readonly state: 'sent' | 'failed';
  readonly providerId?: string | undefined;
  readonly httpStatus?: number | undefined;
  readonly response?: unknown;
  readonly smsCode?: number | undefined;
  readonly smsMailingId?: string | undefined;
  readonly smsResult?: string | undefined;
  readonly error?: string | undefined;
  readonly errorCode?: string | undefined;
}

/** What follows a message's failure. */
export interface FailureFollowUp {
  /** The SMS that stands in for the failed message. */
  readonly fallback?: NewOutbound | undefined;
  /** An inbound for the bot (`delivery.failed`). */
  readonly inbound?: NewInbound | undefined;
  /** The conversation's new channel. */
  readonly channel?: ChannelName | undefined;
}

/** A durable timer: an XState delayed event that fires through the inbox. */
export interface TimerSpec {
  readonly key: string;
  /** The state node that armed an `after` delay: the timer dies when that state is left. */
  readonly stateNode: string | null;
  readonly event: { readonly type: string; readonly [k: string]: unknown };
  readonly fireAt: number;
}

/** How a turn changes the conversation's timers. */
export interface TimerChanges {
  readonly upsert: readonly TimerSpec[];
  readonly remove: readonly string[];
  /** Timers armed by states not in this list are removed (`null` state nodes are kept). */
  readonly activeStateNodes: readonly string[];
}

/** Everything one turn commits, atomically. */
export interface TurnCommit {
  readonly key: ConversationKey;
  /** Undefined to create the conversation (with `flowToken`). */
  readonly conversationId: number | undefined;
  /** The version the turn started from (0 for a new conversation). */
  readonly expectedVersion: number;
  readonly snapshot: unknown;
  readonly state: string;
  readonly status: ConversationStatus;
  readonly flowToken: string;
  /** The bot version the conversation runs on after this turn; undefined keeps it (1 for a new conversation). */
  readonly botVersion?: number | undefined;
  readonly channel?: ChannelName | undefined;
  /** Set to replace the prompt; undefined keeps it. */
  readonly lastPrompt?: readonly unknown[] | undefined;
  /** Whether the user was active in this turn (for idle expiry). */
  readonly userActivity: boolean;
  /** An older conversation to mark expired first (when idle expiry starts a new one). */
  readonly expire?: number | undefined;
  /** The inbox row this turn consumed, if any. */
  readonly inboxId?: number | undefined;
  /** A note kept on that inbox row (why it was consumed without running, say). */
  readonly inboxNote?: string | undefined;
  readonly outbox: readonly NewOutbound[];
  readonly timers: TimerChanges;
  readonly now: number;
  /** A handoff the turn opens (the machine ran `handoff()`) or a timeout it settles. */
  readonly handoff?: HandoffChange | undefined;
  /** Queue the helpdesk connector's events for handoff changes (a connector is configured). */
  readonly notifyHandoffs?: boolean | undefined;
}

/** What a commit produced. */
export interface CommitResult {
  readonly conversationId: number;
  readonly version: number;
  readonly outboxIds: readonly number[];
}

/** A delivery status reported by the provider. */
export interface NewStatus {
  readonly providerMessageId: string;
  readonly status: string;
  readonly timestamp?: number | undefined;
  readonly recipient?: string | undefined;
  readonly errors?: unknown;
  readonly raw?: unknown;
  readonly receivedAt: number;
}

/** One line of a transcript. */
export type TranscriptEntry =
  | {
      readonly direction: 'in';
      readonly at: number;
      readonly source: InboundSource;
      readonly event: unknown;
      readonly providerId: string;
      readonly state: InboxRecord['state'];
      readonly error: string | null;
    }
  | { readonly direction: 'out'; readonly at: number; readonly record: OutboxRecord };

/**
 * A conversation's lane as a process claimed it. Who runs a conversation's work is a lease in the
 * database: a lane with work (its `work_seq` ahead of its `done_seq`) and no live lease is taken by
 * any process, so a dead process's conversations are taken over once its leases run out.
 */
export interface LaneClaim {
  readonly key: ConversationKey;
  /** The claim token: it changes each time another owner takes the lane. */
  readonly fence: number;
  /** The lane's work counter when it was claimed: everything added up to it is visible now. */
  readonly workSeq: number;
  /** The lane was another owner's (whose lease ran out, or who gave it up): re-open what it was running. */
  readonly takeover: boolean;
}

/** How {@link Store.claimLanes} claims. */
export interface LaneClaimOptions {
  /** How long the claim holds without renewal, on the database's clock. */
  readonly leaseMs: number;
  /** Claims this conversation's lane (whether or not it has work), if no other owner's lease is live. */
  readonly key?: ConversationKey | undefined;
  /** At most this many lanes (without `key`; default 100). */
  readonly limit?: number | undefined;
}

/** What {@link Store.releaseLane} found. */
export type LaneRelease =
  | { readonly outcome: 'released' }
  /** Work was added since the owner looked: the lane stays its owner's, with the new counter. */
  | { readonly outcome: 'more'; readonly workSeq: number }
  /** Another owner holds the lane now (this one's lease ran out). */
  | { readonly outcome: 'lost' };

/** What {@link Store.nextOrReleaseLane} found: the lane's oldest pending inbound, or what its release found. */
export type LaneNext = { readonly outcome: 'next'; readonly inbound: InboxRecord } | LaneRelease;

/** Whether the store can take work now (`GET /healthz`). */
export interface StoreHealth {
  readonly ok: boolean;
  /** True when the database is busy (locked by another process): work waits and is retried. */
  readonly busy?: boolean | undefined;
  /** Why it is not ok, for a person. */
  readonly reason?: string | undefined;
  /** Since when it has been busy (epoch ms), when known. */
  readonly since?: number | undefined;
}

/**
 * The conversation store. A failure that a later attempt can get past (a locked database, a
 * dropped connection) is thrown as StoreUnavailableError; the runtime retries it with backoff.
 */
export interface Store extends HandoffStore {
  /**
   * Commits an inbound; a known `providerId` is a no-op reported as a duplicate. With `claim`, a
   * store may also claim the inbound's lane for `claim.owner` in the same write, as
   * {@link Store.claimLanes} with its key would (never from another owner whose lease is live):
   * `claim` in the answer is then that lane's claim. A store that does not (or could not) answers
   * without it, and the owner claims the lane itself.
   */
  addInbound(inbound: NewInbound, claim?: { readonly owner: string; readonly leaseMs: number }): Promise<{ id: number; duplicate: boolean; claim?: LaneClaim | undefined }>;
  /** The oldest pending inbound of a conversation. */
  nextInbound(key: ConversationKey): Promise<InboxRecord | undefined>;
  /** Conversations with pending inbounds (for recovery on start). */
  pendingKeys(): Promise<ConversationKey[]>;
  /** Marks an inbound failed (a bot error); it is kept for inspection. */
  failInbound(id: number, error: string, now: number): Promise<void>;
  /** Marks an inbound done without a turn (a timer of an ended conversation), with a note. */
  skipInbound(id: number, note: string, now: number): Promise<void>;
  inbound(id: number): Promise<InboxRecord | undefined>;

  activeConversation(key: ConversationKey): Promise<ConversationRecord | undefined>;
  conversation(id: number): Promise<ConversationRecord | undefined>;
  conversationByFlowToken(token: string): Promise<ConversationRecord | undefined>;
  conversations(filter?: { botId?: string; user?: string; status?: ConversationStatus }): Promise<ConversationRecord[]>;
  /** Active conversations whose snapshot has running invocations (for recovery on start). */
  activeConversationIds(): Promise<number[]>;
  /** Commits a turn; throws VersionConflictError when another writer got there first. */
  commitTurn(commit: TurnCommit): Promise<CommitResult>;
  /** Marks active conversations of a bot idle since before `before` as expired; returns how many. */
  expireIdle(botId: string, before: number, now: number): Promise<number>;

  /** Claims due outbound rows: the oldest unsent of each conversation, none in flight before it. */
  claimOutbound(now: number, limit: number, leaseMs: number): Promise<OutboxRecord[]>;
  /**
   * Records a final result. With `claim`, only while that claim still holds the row: returns false
   * when another process claimed it since (its lease ran out), and records nothing.
   */
  finishOutbound(id: number, result: SendRecord, now: number, claim?: string): Promise<boolean>;
  /** Extends a claimed row's lease while its send is in flight; false when the claim was lost. */
  renewLease(id: number, claim: string, leaseUntil: number): Promise<boolean>;
  /**
   * Records a row's final failure (when `record` is given) together with what follows it, in one
   * transaction: an SMS fallback (at most one per row), an inbound for the bot, a channel change.
   * Idempotent: doing it again adds nothing twice.
   */
  failOutbound(id: number, record: SendRecord | undefined, now: number, follow: FailureFollowUp, claim?: string): Promise<boolean>;
  /** Sent messages the provider reported failed whose follow-up (fallback or `delivery.failed`) is missing. */
  unfollowedFailures(): Promise<OutboxRecord[]>;
  /** The conversation's latest list, buttons or flow message, and whether it went by SMS. */
  lastInteractive(conversationId: number): Promise<{ record: OutboxRecord; bySms: boolean } | undefined>;
  /** Puts a claimed row back for a later attempt. */
  retryOutbound(id: number, nextAttemptAt: number, error: string, errorCode: string | undefined, claim?: string): Promise<boolean>;
  outbound(id: number): Promise<OutboxRecord | undefined>;
  outboundByProviderId(providerId: string): Promise<OutboxRecord | undefined>;
  /**
   * The earliest time an unsent row becomes due, if any: a conversation's next row only (rows behind
   * an in-flight or retried one are not due), its lease end while it is in flight. Rows already
   * due count too (the dispatcher's wake-up).
   */
  nextOutboundAt(): Promise<number | undefined>;

  /** The earliest timer, if any. */
  nextTimerAt(): Promise<number | undefined>;
  /** Moves due timers into the inbox, atomically; returns the conversations touched. */
  fireDueTimers(now: number, limit: number): Promise<ConversationKey[]>;
  timers(conversationId: number): Promise<TimerSpec[]>;

  /** Records a status; returns whether it was new and the outbound row it is about. */
  addStatus(status: NewStatus): Promise<{ duplicate: boolean; outbound: OutboxRecord | undefined }>;
  statuses(providerMessageId: string): Promise<NewStatus[]>;

  /** Both directions of a conversation, in order. */
  transcript(conversationId: number): Promise<TranscriptEntry[]>;
  /**
   * Claims lanes for `owner`: with `key`, that conversation's lane (unless another owner's lease on
   * it is live); else lanes with work whose lease is not live, those with the oldest pending inbound
   * first (work added to lanes `owner` holds shows in {@link Store.renewLanes}). Leases are
   * compared on the database's clock. Adding work to a lane (an inbound, a fired timer, a delivery
   * failure's inbound) bumps its `work_seq` in the same transaction as the work.
   */
  claimLanes(owner: string, options: LaneClaimOptions): Promise<LaneClaim[]>;
  /**
   * The heartbeat: extends every lane `owner` holds by `leaseMs` (0 gives them up for others to take
   * over at once), returning them with their work counters.
   */
  renewLanes(owner: string, leaseMs: number): Promise<{ key: ConversationKey; fence: number; workSeq: number }[]>;
  /**
   * Releases a drained lane: only while `owner` still holds it with `fence`, and only if its work
   * counter is still `seen` (work added since is never stranded).
   */
  releaseLane(owner: string, key: ConversationKey, fence: number, seen: number): Promise<LaneRelease>;
  /**
   * A drained lane's last look and its release at once: the conversation's oldest pending inbound
   * (`next`, the lane stays held; `lost` when another owner holds it now), or, when none is pending, the lane released as
   * {@link Store.releaseLane} would release it (same guards, same outcomes). Optional: a store
   * without it is asked `nextInbound`, then `releaseLane` (two round trips where one does).
   */
  nextOrReleaseLane?(owner: string, key: ConversationKey, fence: number, seen: number): Promise<LaneNext>;
  /**
   * Calls `listener` when another process may have added work or given up lanes (PostgreSQL's
   * LISTEN/NOTIFY); a hint only, polling stays the guarantee. Optional; returns an unsubscribe.
   */
  onWork?(listener: () => void): Promise<() => Promise<void>>;

  /** Whether the database can take work now; optional (without it `/healthz` does not check the store). */
  health?(): Promise<StoreHealth>;
  close(): Promise<void>;
}
