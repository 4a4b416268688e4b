/** The connector's event bodies, built the same way by every store. */
import { randomBytes } from 'node:crypto';
import type { HandoffEventType, HandoffRecord, NewHandoff } from './handoff-types.js';

/** A connector event's body. */
export interface HandoffEventBody {
  /** Unique per event: the receiver's dedupe key. */
  readonly id: string;
  readonly type: HandoffEventType;
  readonly createdAt: number;
  readonly handoff: HandoffPayload;
  /** `handoff.message`: what the user wrote (the event the machine would have received). */
  readonly message?: { readonly event: unknown; readonly source: string; readonly receivedAt: number } | undefined;
  /** `handoff.claim_expired`: why the claim went back to the queue (`idle`, `agent_removed`). */
  readonly reason?: string | undefined;
}

/** A handoff as the connector sees it. */
export interface HandoffPayload {
  readonly id: number;
  readonly conversationId: number;
  readonly bot: string;
  readonly user: string;
  readonly state: HandoffRecord['state'];
  readonly reason: string | null;
  readonly queue: string | null;
  readonly agent: string | null;
  readonly note: string | null;
  readonly endedBy: string | null;
  readonly startedAt: number;
  readonly claimedAt: number | null;
  readonly endedAt: number | null;
  readonly timeoutAt: number | null;
  /** When a claimed handoff goes back to the queue unless its agent acts (null: not claimed, or never). */
  readonly claimIdleUntil: number | null;
}

/** A fresh event id. */
export function newEventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}

/** The body of one connector event. */
export function handoffEventBody(type: HandoffEventType, h: HandoffRecord, now: number, message?: HandoffEventBody['message'], reason?: string): HandoffEventBody {
  const handoff: HandoffPayload = {
    id: h.id,
    conversationId: h.conversationId,
    bot: h.botId,
    user: h.user,
    state: h.state,
    reason: h.reason,
    queue: h.queue,
    agent: h.agent,
    note: h.note,
    endedBy: h.endedBy,
    startedAt: h.startedAt,
    claimedAt: h.claimedAt,
    endedAt: h.endedAt,
    timeoutAt: h.timeoutAt,
    claimIdleUntil: h.claimIdleUntil,
  };
  return { id: newEventId(), type, createdAt: now, handoff, ...(message !== undefined && { message }), ...(reason !== undefined && { reason }) };
}

/** The event the handoff's timeout timer delivers to the machine when nobody claimed it in time. */
export function handoffTimeoutEvent(o: NewHandoff): { readonly type: 'handoff.timeout'; readonly waitedMs: number; readonly reason?: string; readonly queue?: string } {
  return { type: 'handoff.timeout', waitedMs: o.timeoutMs, ...(o.reason !== undefined && { reason: o.reason }), ...(o.queue !== undefined && { queue: o.queue }) };
}

/** The event the machine receives when an agent hands the conversation back. */
export function handoffEndedEvent(agent: string, note: string | undefined): { readonly type: 'handoff.ended'; readonly by: string; readonly note?: string } {
  return { type: 'handoff.ended', by: agent, ...(note !== undefined && { note }) };
}
