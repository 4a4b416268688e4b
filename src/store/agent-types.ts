/**
 * The store's part of agents with identities: agents (a name and the hash of its token), the
 * inbox's sign-in sessions, and the handoff log (who claimed, wrote, noted, released; what the
 * system did). Kept apart from `types.ts` so a second store ports them as one block.
 */
import type { AgentVia, HandoffRefusal, HandoffWrite } from './handoff-types.js';

/** An agent as the store keeps it (never its token: only the token's SHA-256, in hex). */
export interface AgentRecord {
  readonly name: string;
  readonly createdAt: number;
}

/** How an agent's request was authenticated (defined beside `HandoffWrite`, which carries it). */
export type { AgentVia };

/** Who did something to a handoff: an agent, and how it was known. */
export interface AgentActor {
  readonly name: string;
  readonly via: AgentVia;
}

/** An inbox sign-in session (the cookie carries a random id; the store keeps its SHA-256). */
export interface AgentSessionRecord {
  readonly agent: string;
  /** The value every write of this session must carry in its CSRF header. */
  readonly csrf: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/** What the handoff log records. */
export type HandoffLogAction = 'claim' | 'message' | 'note' | 'release' | 'claim_expired' | 'timeout' | 'closed';

/** One line of a conversation's handoff log. */
export interface HandoffLogEntry {
  readonly id: number;
  readonly handoffId: number;
  readonly conversationId: number;
  readonly action: HandoffLogAction;
  /** Who acted; null for the system (a timeout, an expired claim, a closed conversation). */
  readonly agent: string | null;
  readonly via: AgentVia | null;
  /** A note's text, a release's note, why a claim expired. */
  readonly text: string | null;
  /** A message's outbox row. */
  readonly outboxId: number | null;
  readonly at: number;
}

/** The agent methods of a store. Each is one transaction. */
export interface AgentStore {
  /** Adds an agent; false (nothing changed) when the name is taken. */
  addAgent(name: string, tokenHash: string, now: number): Promise<boolean>;
  /** Gives an agent a new token (the old one and its sessions stop at once); false when there is no such agent. */
  setAgentToken(name: string, tokenHash: string): Promise<boolean>;
  /** Every agent, by name. */
  agents(): Promise<AgentRecord[]>;
  /** The agent whose token hashes to `tokenHash`. */
  agentByTokenHash(tokenHash: string): Promise<AgentRecord | undefined>;
  /**
   * Removes an agent: its token and sessions stop at once, and the handoffs it holds go back to
   * the queue (as an idle claim does, `handoff.claim_expired` with `reason: 'agent_removed'`).
   */
  removeAgent(name: string, w: HandoffWrite): Promise<{ readonly removed: boolean; readonly sessions: number; readonly claims: number }>;
  /**
   * Opens a session; false when the agent is gone or, with `tokenHash`, no longer has that token
   * (rotated since the sign-in checked it).
   */
  createAgentSession(idHash: string, agent: string, csrf: string, now: number, expiresAt: number, tokenHash?: string): Promise<boolean>;
  /** A live session (undefined once expired, ended, or its agent removed or given a new token). */
  agentSession(idHash: string, now: number): Promise<AgentSessionRecord | undefined>;
  /** Ends a session (signing out); no error when it is already gone. */
  endAgentSession(idHash: string): Promise<void>;
  /** Adds an internal note (the user never sees it) to the conversation's open handoff, by any agent. */
  addHandoffNote(conversationId: number, actor: AgentActor, text: string, now: number): Promise<{ ok: true; entry: HandoffLogEntry } | HandoffRefusal>;
  /** The conversation's handoff log, oldest first (every handoff it had). */
  handoffLog(conversationId: number): Promise<HandoffLogEntry[]>;
}
