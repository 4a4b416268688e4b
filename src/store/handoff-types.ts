/**
 * The store's part of handoffs (a conversation handed to a person): records and the methods every
 * store implements. Kept apart from `types.ts` so a second store ports them as one block.
 */
import type { ChannelName, ConversationKey, NewOutbound } from './keys.js';

/** `waiting` for an agent, `claimed` by one; then `ended` (released), `timeout`, or `closed` (the conversation ended). */
export type HandoffState = 'waiting' | 'claimed' | 'ended' | 'timeout' | 'closed';

/** The durable timer that fires `handoff.timeout` (a timer row the store writes and removes itself). */
export const HANDOFF_TIMER_KEY = 'colloquy.handoff.timeout';

/** A stored handoff. */
export interface HandoffRecord extends ConversationKey {
  readonly id: number;
  readonly conversationId: number;
  readonly state: HandoffState;
  readonly reason: string | null;
  readonly queue: string | null;
  /** The agent holding it (claimed), or who last held it. */
  readonly agent: string | null;
  readonly note: string | null;
  /** Who ended it: an agent's name, `timeout`, or `system` (the conversation ended). */
  readonly endedBy: string | null;
  readonly timeoutAt: number | null;
  /**
   * When the claim goes back to the queue unless its agent acts (claims, writes, notes) before:
   * null when the handoff is not claimed, or its claim never expires.
   */
  readonly claimIdleUntil: number | null;
  readonly startedAt: number;
  readonly claimedAt: number | null;
  readonly endedAt: number | null;
}

/** A handoff a turn opens (with its snapshot, atomically). */
export interface NewHandoff {
  readonly reason?: string | undefined;
  readonly queue?: string | undefined;
  readonly timeoutMs: number;
}

/** When a handoff opened by a turn committed at `now` times out: its timer's `fireAt` and the record's `timeoutAt`. */
export function handoffTimeoutAt(now: number, open: NewHandoff): number {
  return now + open.timeoutMs;
}

/** How a turn changes its conversation's handoff. */
export type HandoffChange =
  | { readonly open: NewHandoff }
  /**
   * The turn handled `handoff.timeout`: the handoff must still be waiting with the timeout the turn
   * read, else the commit conflicts (a claim that went back to the queue meanwhile waits anew, with
   * a timeout of its own, though the conversation's version did not move).
   */
  | { readonly timeout: { readonly id: number; readonly timeoutAt: number | null } };

/** The events the helpdesk connector receives. */
export type HandoffEventType = 'handoff.started' | 'handoff.claimed' | 'handoff.message' | 'handoff.ended' | 'handoff.timeout' | 'handoff.claim_expired';

/** Why a claim went back to the queue: no agent activity for the claim's idle time, or its agent was removed. */
export type ClaimExpiryReason = 'idle' | 'agent_removed';

/** A connector event waiting to be POSTed. */
export interface HandoffEventRecord {
  readonly id: number;
  /** The receiver's dedupe key. */
  readonly eventId: string;
  readonly handoffId: number;
  readonly type: HandoffEventType;
  /** The JSON body, as POSTed. */
  readonly payload: unknown;
  readonly attempts: number;
  /** The claim holding it while it is being sent. */
  readonly claim: string;
}

/** How one delivery attempt of a connector event went. */
export type HandoffEventOutcome = { readonly sent: true } | { readonly sent: false; readonly error: string; readonly retryAt?: number | undefined };

/**
 * Why an agent's action was refused: no open handoff, another agent holds it, or (a message) its
 * Idempotency-Key was used before for another request.
 */
export type HandoffRefusal = {
  readonly ok: false;
  /** `agent_gone`: a claim made with an agent's own token or session, by an agent removed meanwhile. */
  readonly reason: 'none' | 'taken' | 'key_reused' | 'key_taken' | 'agent_gone';
  readonly handoff?: HandoffRecord | undefined;
};

/** Whether a write's agent was known by its own credentials, so it must still exist when the write lands. */
export const knownAgent = (w: HandoffWrite): boolean => w.via === 'token' || w.via === 'session';

/** An agent's message, to queue in the outbox. */
export interface AgentMessage {
  readonly conversationId: number;
  readonly agent: string;
  readonly outbound: NewOutbound;
  /**
   * The request's Idempotency-Key: a second request with the same key and fingerprint is the same
   * message (queued once); with another fingerprint it is refused (`key_reused`).
   */
  readonly idempotencyKey?: string | undefined;
  /** The request's fingerprint (see `requestFingerprint`), kept with the key. */
  readonly fingerprint?: string | undefined;
  /** How the agent was known (recorded in the handoff log; absent: NULL there). */
  readonly via?: AgentVia | undefined;
  readonly now: number;
}

/** How an agent's request was authenticated. */
export type AgentVia =
  /** The agent's own token (`colloquy agents add`). */
  | 'token'
  /** An inbox session (a cookie made from the agent's token at sign-in). */
  | 'session'
  /** `COLLOQUY_AGENT_TOKEN`, the service account, acting for the agent it names. */
  | 'service'
  /** The sandbox without a token, from loopback (the simulator, the terminal chat, the harness). */
  | 'open';

/** Options of the handoff methods that may notify the connector. */
export interface HandoffWrite {
  readonly now: number;
  /** Queue connector events (only when a connector is configured). */
  readonly notify: boolean;
  /** How the acting agent was known, for the handoff log (absent: the log records NULL). */
  readonly via?: AgentVia | undefined;
  /**
   * A fresh claim made by this write goes back to the queue after this long without agent activity
   * (absent or 0: it never does).
   */
  readonly claimIdleMs?: number | undefined;
}

/** The handoff methods of a store. Each is one transaction. */
export interface HandoffStore {
  /** Open handoffs (waiting or claimed) of active conversations, oldest first. */
  openHandoffs(): Promise<HandoffRecord[]>;
  /**
   * The conversation's open handoff, if any. With `inboxId`, also a handoff released after that
   * inbound arrived (its `handoff.ended` still queued behind it): the inbound was written to the agent.
   */
  openHandoff(conversationId: number, inboxId?: number): Promise<HandoffRecord | undefined>;
  /** The conversation's handoffs, oldest first. */
  handoffs(conversationId: number): Promise<HandoffRecord[]>;
  /**
   * Claims a waiting handoff and removes its timeout (`fresh`), with an idle deadline when
   * `w.claimIdleMs` is set; claimed again by the same agent: a no-op.
   */
  claimHandoff(conversationId: number, agent: string, w: HandoffWrite): Promise<{ ok: true; handoff: HandoffRecord; fresh: boolean } | HandoffRefusal>;
  /**
   * Ends a handoff held by `agent` (or waiting) and queues `handoff.ended` for the machine in the
   * inbox, ordered after everything the user wrote before it. Returns the inbox row.
   */
  releaseHandoff(conversationId: number, agent: string, note: string | undefined, w: HandoffWrite): Promise<{ ok: true; handoff: HandoffRecord; inboxId: number } | HandoffRefusal>;
  /**
   * Consumes a user's inbound during a handoff without a turn: marked done for the conversation,
   * counted as the user's activity (and channel), and sent to the connector as `handoff.message`.
   * False when the inbound was not pending (another process took it).
   */
  holdInbound(inboxId: number, handoff: HandoffRecord, channel: ChannelName | undefined, w: HandoffWrite): Promise<boolean>;
  /**
   * Queues an agent's message, if the handoff is claimed by that agent (its claim's idle deadline
   * moves on, as with any activity of the holder). A key already used on the
   * conversation is looked up first: the same agent and body return its row whatever the handoff
   * is now; another body is `key_reused`, another agent `key_taken`.
   */
  addAgentMessage(m: AgentMessage): Promise<{ ok: true; outboxId: number; duplicate: boolean } | HandoffRefusal>;
  /** Closes open handoffs whose conversation is no longer active (expired); returns how many. */
  closeOrphanHandoffs(w: HandoffWrite): Promise<number>;
}
