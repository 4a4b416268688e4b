/** Rows of the agents' tables as records, the same for every store. */
import type { AgentRecord, AgentSessionRecord, AgentVia, HandoffLogAction, HandoffLogEntry } from './agent-types.js';
import { num, str } from './rows.js';

type Row = Record<string, unknown>;

/** An `agents` row (without its token hash). */
export function toAgent(r: Row): AgentRecord {
  return { name: String(r['name']), createdAt: Number(r['created_at']) };
}

/** An `agent_sessions` row. */
export function toAgentSession(r: Row): AgentSessionRecord {
  return { agent: String(r['agent']), csrf: String(r['csrf']), createdAt: Number(r['created_at']), expiresAt: Number(r['expires_at']) };
}

/** A `handoff_log` row. */
export function toLogEntry(r: Row): HandoffLogEntry {
  return {
    id: Number(r['id']),
    handoffId: Number(r['handoff_id']),
    conversationId: Number(r['conversation_id']),
    action: r['action'] as HandoffLogAction,
    agent: str(r['agent']),
    via: str(r['via']) as AgentVia | null,
    text: str(r['text']),
    outboxId: num(r['outbox_id']),
    at: Number(r['at']),
  };
}

/** One handoff log row to write. */
export interface NewLogEntry {
  readonly handoffId: number;
  readonly conversationId: number;
  readonly action: HandoffLogAction;
  readonly agent: string | null;
  readonly via?: AgentVia | null | undefined;
  readonly text?: string | null | undefined;
  readonly outboxId?: number | null | undefined;
  readonly at: number;
}

/** The values of a log row, in the column order of every store's insert. */
export function logValues(e: NewLogEntry): unknown[] {
  return [e.handoffId, e.conversationId, e.action, e.agent, e.via ?? null, e.text ?? null, e.outboxId ?? null, e.at];
}

/** The log row `e` became once inserted as `id`. */
export function logEntryOf(id: number, e: NewLogEntry): HandoffLogEntry {
  return { id, handoffId: e.handoffId, conversationId: e.conversationId, action: e.action, agent: e.agent, via: e.via ?? null, text: e.text ?? null, outboxId: e.outboxId ?? null, at: e.at };
}

/** The columns {@link logValues} fills. */
export const LOG_COLUMNS = 'handoff_id, conversation_id, action, agent, via, text, outbox_id, at';
