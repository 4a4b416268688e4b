/**
 * The store port. The runtime sees only this interface; SQLite (better-sqlite3) is the default
 * implementation, and another database is one new file implementing it.
 */

import type { HandoffChange, HandoffEventOutcome, HandoffEventRecord, HandoffRecord, HandoffStore } from './handoff-types.js';
import type { AgentStore } from './agent-types.js';
export type * from './handoff-types.js';
export type * from './agent-types.js';
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
/** A user's latest WhatsApp message, as the window needs it. */
export interface UserMessageFact {
  /** When it was received (ms since the epoch). */
  readonly at: number;
  /** The Cloud API `phone_number_id` it was written to, when known. */
  readonly numberId: string | undefined;
}

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
  /**
   * How often the row was taken from a lapsed claim (its sender died, or lost the database, before
   * recording the result): each such take may send it once more. The worker never sends a row
   * taken a second time, so a message reaches the provider at most twice however many crashes.
   */
  readonly resends: number;
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
  /**
   * The fallback is a template for a closed window, and one per closed window is enough: when the
   * conversation already has a template (not failed) created at or after `since`, `otherwise` is
   * recorded instead of the fallback. Decided inside the write, so two failures planned at once
   * (two processes, two statuses) never queue two templates.
   */
  readonly templateOnce?: { readonly since: number; readonly otherwise: NewInbound } | undefined;
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
  /** `flowToken` replaces the conversation's (it sent a new flow, or moved to another bot version). */
  readonly flowTokenChanged?: boolean | undefined;
  /** A Flow endpoint submit this turn ran: stored with it, its dedupe key unique. */
  readonly flowSubmit?: NewFlowSubmit | undefined;
}

/** A live flow's submit that ran a turn, kept so a retry of it answers the same and runs nothing. */
export interface NewFlowSubmit {
  /** Unique: the request chained to the submit before it (two racing copies of one retry collide on it). */
  readonly dedupeKey: string;
  /** A hash of the flow token, the screen and the data: a request equal to the latest submit's is its retry. */
  readonly requestKey: string;
  readonly flowToken: string;
  readonly screen: string;
  /** The answer sent back (the decrypted reply's JSON, before encryption). */
  readonly answer: unknown;
  /** The submit closed the flow (its answer was SUCCESS): the `nfm_reply` that follows runs no turn. */
  readonly completes: boolean;
}

/** A stored flow submit. */
export interface FlowSubmitRecord extends NewFlowSubmit {
  readonly id: number;
  readonly conversationId: number;
  readonly createdAt: number;
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
 * The kinds of claimable work: a conversation's lane (its turns, one at a time), an outbox row (a
 * send), a helpdesk connector event, a due timer (moved into its conversation's inbox), an idle
 * handoff claim (returned to the queue).
 */
export type WorkKind = 'lane' | 'send' | 'event' | 'timer' | 'idle';

/**
 * Who claims, for how long. A claim holds while its owner renews it ({@link Store.renew}); leases
 * are set and compared on the database's clock, never the claiming process's.
 */
export interface Claimant {
  /** The claiming process's name (unique per process start). */
  readonly owner: string;
  /** How long a claim holds without renewal. */
  readonly leaseMs: number;
  /**
   * Also take work whose claim lapsed (its owner stopped renewing: it died, or cannot reach the
   * database). False while this process's own renewals have only just come back after failing for
   * longer than a lease: after a database outage the owners who are alive renew theirs first.
   */
  readonly lapsed: boolean;
}

/** What a claim of each kind hands out. */
export interface ClaimedWork {
  readonly lane: LaneClaim;
  /** An outbox row now `sending`, with its claim token and how often it was taken from a lapsed claim. */
  readonly send: OutboxRecord;
  readonly event: HandoffEventRecord;
  /** A timer fired into its conversation's inbox (claimed and settled in one transaction): that conversation. */
  readonly timer: ConversationKey;
  /** A handoff whose claim was idle past its deadline, back in the queue (claimed and settled in one transaction): as it is now. */
  readonly idle: HandoffRecord;
}

/** What {@link Store.claim} looks at. */
export interface ClaimRequest<K extends WorkKind = WorkKind> {
  readonly kind: K;
  /** At most this many (the worker's free slots for the kind). */
  readonly limit: number;
  /** The process's clock, for due times (a send's retry, a timer's firing): they are the bots' time, not leases. */
  readonly now: number;
  /** Lanes only: this conversation's lane (whether or not it has work), unless another owner's claim on it is live. */
  readonly key?: ConversationKey | undefined;
  /** Idle claims only: queue `handoff.claim_expired` for the helpdesk connector (one is configured). */
  readonly notify?: boolean | undefined;
}

/** A conversation's lane as a process claimed it. A lane with work (its `work_seq` ahead of its `done_seq`) and no live claim is taken by any process. */
export interface LaneClaim {
  readonly key: ConversationKey;
  /** The claim token: it changes each time another owner takes the lane. */
  readonly fence: number;
  /** The lane's work counter when it was claimed: everything added up to it is visible now. */
  readonly workSeq: number;
  /** The lane was another owner's (whose claim lapsed, or who gave it up): re-open what it was running. */
  readonly takeover: boolean;
}

/** A lane an owner holds, as its renewal found it. */
export interface HeldLane {
  readonly key: ConversationKey;
  readonly fence: number;
  readonly workSeq: number;
}

/** A send or helpdesk event an owner holds, as its renewal found it. */
export interface HeldClaim {
  readonly id: number;
  readonly claim: string;
}

/**
 * Everything an owner holds, as its renewal found it. A send or event it holds that it does not
 * know of (a claim whose answer was lost with its connection) is its to give back.
 */
export interface HeldWork {
  readonly lanes: readonly HeldLane[];
  readonly sends: readonly HeldClaim[];
  readonly events: readonly HeldClaim[];
}

/** What {@link Store.settleLane} found. */
export type LaneNext =
  /** The conversation's oldest pending inbound: the lane stays held. */
  | { readonly outcome: 'next'; readonly inbound: InboxRecord }
  /** None pending, and no work added since `seen`: the lane is released. */
  | { readonly outcome: 'released' }
  /** None pending, and the lane stays held (asked with `seen` null: a live actor runs in it). */
  | { readonly outcome: 'idle' }
  /** Work was added since the owner looked: the lane stays its owner's, with the new counter. */
  | { readonly outcome: 'more'; readonly workSeq: number }
  /** Another owner holds the lane now (this one's claim lapsed). */
  | { readonly outcome: 'lost' };

/** How a send ended, for {@link Store.settleSend}. */
export type SendOutcome =
  /** The provider took it. */
  | { readonly kind: 'sent'; readonly record: SendRecord }
  /** Try again at `at` (the process's clock). */
  | { readonly kind: 'retry'; readonly at: number; readonly error: string; readonly errorCode?: string | undefined }
  /** Failed for good (`record` absent: not sent at all), with what follows, in the same transaction. */
  | { readonly kind: 'failed'; readonly record?: SendRecord | undefined; readonly follow: FailureFollowUp };

/** A figure a store reports about itself for `/metrics`: a gauge's name, labels and value. */
export interface StoreFigure {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly value: number;
}

/** A busy or failing database met by a store call (for metrics): retried, or given up. */
export interface BusyEvent {
  readonly code: string;
  /** Whether the store gave up (the caller gets StoreUnavailableError) or will try again. */
  readonly outcome: 'retried' | 'unavailable';
}

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
export interface Store extends HandoffStore, AgentStore {
  /**
   * Commits an inbound; a known `providerId` is a no-op reported as a duplicate. With `claim`, it
   * also claims the inbound's lane for `claim.owner` in the same write, as {@link Store.claim} of
   * the lane by its key would (never from another owner whose claim is live): `claim` in the answer
   * is then that lane's claim. Without it in the answer, the owner claims the lane itself.
   */
  addInbound(inbound: NewInbound, claim?: Claimant): Promise<{ id: number; duplicate: boolean; claim?: LaneClaim | undefined }>;
  /** Marks an inbound failed (a bot error); it is kept for inspection. */
  failInbound(id: number, error: string, now: number): Promise<void>;
  /** Marks an inbound done without a turn (a timer of an ended conversation), with a note. */
  skipInbound(id: number, note: string, now: number): Promise<void>;
  inbound(id: number): Promise<InboxRecord | undefined>;

  activeConversation(key: ConversationKey): Promise<ConversationRecord | undefined>;
  conversation(id: number): Promise<ConversationRecord | undefined>;
  conversationByFlowToken(token: string): Promise<ConversationRecord | undefined>;
  /** The latest submit a turn stored for a flow token. */
  latestFlowSubmit(flowToken: string): Promise<FlowSubmitRecord | undefined>;
  /** The submit stored under a dedupe key (a copy of that request already ran). */
  flowSubmit(dedupeKey: string): Promise<FlowSubmitRecord | undefined>;
  /** Whether a submit that closed the flow of this token ran a turn (its `nfm_reply` runs none). */
  flowCompleted(flowToken: string): Promise<boolean>;
  conversations(filter?: { botId?: string; user?: string; status?: ConversationStatus }): Promise<ConversationRecord[]>;
  /** Active conversations whose snapshot has running invocations (for recovery on start). */
  activeConversationIds(): Promise<number[]>;
  /** Commits a turn; throws VersionConflictError when another writer got there first. */
  commitTurn(commit: TurnCommit): Promise<CommitResult>;
  /** Marks active conversations of a bot idle since before `before` as expired; returns how many. */
  expireIdle(botId: string, before: number, now: number): Promise<number>;

  /**
   * What follows a sent row's failure (the provider reported it failed), in one transaction: an
   * SMS fallback (at most one per row), an inbound for the bot, a channel change. Idempotent: doing
   * it again adds nothing twice. (A claimed send's failure is settled by {@link Store.settleSend}.)
   */
  failOutbound(id: number, now: number, follow: FailureFollowUp): Promise<boolean>;
  /** Sent messages the provider reported failed whose follow-up (fallback or `delivery.failed`) is missing. */
  unfollowedFailures(): Promise<OutboxRecord[]>;
  /** The conversation's latest list, buttons or flow message, and whether it went by SMS. */
  lastInteractive(conversationId: number): Promise<{ record: OutboxRecord; bySms: boolean } | undefined>;
  outbound(id: number): Promise<OutboxRecord | undefined>;
  /**
   * When the user last wrote to the bot on WhatsApp (the 24-hour window opens then), and the
   * Cloud API `phone_number_id` that message came to (when the webhook recorded it). Undefined: never.
   */
  lastUserMessage(key: ConversationKey): Promise<UserMessageFact | undefined>;
  outboundByProviderId(providerId: string): Promise<OutboxRecord | undefined>;
  timers(conversationId: number): Promise<TimerSpec[]>;

  /** Records a status; returns whether it was new and the outbound row it is about. */
  addStatus(status: NewStatus): Promise<{ duplicate: boolean; outbound: OutboxRecord | undefined }>;
  statuses(providerMessageId: string): Promise<NewStatus[]>;

  /** Both directions of a conversation, in order. */
  transcript(conversationId: number): Promise<TranscriptEntry[]>;
  /**
   * Calls `listener` when another process may have added work or given up lanes (PostgreSQL's
   * LISTEN/NOTIFY); a hint only, polling stays the guarantee. Optional; returns an unsubscribe.
   */
  onWork?(listener: () => void): Promise<() => Promise<void>>;

  /**
   * Claims up to `limit` items of one kind for `who`: due, and held by no live claim (with
   * `who.lapsed`, also those whose claim lapsed). Per kind:
   * - `lane`: lanes with work, those with the oldest pending inbound first; with `key`, that lane.
   * - `send`: each conversation's next unsent row, none in flight before it, due at `now`. A row
   *   taken from a lapsed claim counts one more `resends`.
   * - `event`: each handoff's next unsent connector event, due at `now`.
   * - `timer`: due timers, moved into their conversations' inboxes in the same transaction.
   * - `idle`: claimed handoffs whose idle deadline is at or before `now`, returned to the queue in
   *   the same transaction (see `returnClaimToQueue` in each engine's handoffs).
   * Two claimants never both get an item. Adding work to a lane (an inbound, a fired timer, a
   * delivery failure's inbound) bumps its `work_seq` in the same transaction as the work.
   */
  claim<K extends WorkKind>(who: Claimant, request: ClaimRequest<K>): Promise<ClaimedWork[K][]>;
  /**
   * The heartbeat: extends every claim `owner` holds (lanes, sends, events; one statement per
   * table) by `leaseMs` on the database's clock (0 gives them all up, for others to take at once),
   * and returns what it holds: the lanes with their work counters, the sends and events with their
   * claims.
   */
  renew(owner: string, leaseMs: number): Promise<HeldWork>;
  /**
   * The earliest time a send, a connector event, a timer or a claim's idle deadline falls due, already due ones included
   * (the worker's wake-up); undefined when nothing waits. Lapsed claims are not in it: the poll
   * finds them.
   */
  nextDue(): Promise<number | undefined>;
  /**
   * A drained lane's last look and its release at once: the conversation's oldest pending inbound,
   * or the lane released, only while `owner` still holds it with `fence` and its work counter is
   * still `seen` (work added since is never stranded). With `seen` null the lane is never released
   * (a live actor runs in it): the oldest pending inbound, or `idle`.
   */
  settleLane(owner: string, key: ConversationKey, fence: number, seen: number | null): Promise<LaneNext>;
  /** Records how a claimed send ended, only while `claim` still holds the row; false (nothing recorded) when another claim took it. */
  settleSend(id: number, claim: string, outcome: SendOutcome, now: number): Promise<boolean>;
  /** Records a connector event's delivery attempt, only while `claim` still holds it; false when it was lost. */
  settleEvent(id: number, claim: string, outcome: HandoffEventOutcome, now: number): Promise<boolean>;

  /** What the store reports about itself for `/metrics` (totals since it opened); optional. */
  figures?(): readonly StoreFigure[];
  /** Whether the database can take work now; optional (without it `/healthz` does not check the store). */
  health?(): Promise<StoreHealth>;
  close(): Promise<void>;
}
