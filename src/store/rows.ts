/** Row ↔ record mapping, for both stores (the PostgreSQL one reads BIGINT as numbers and JSON as TEXT, like SQLite). */
import type {
  UserMessageFact,
  ConversationKey,
  ConversationRecord,
  FlowSubmitRecord,
  HandoffEventRecord,
  HandoffEventType,
  HandoffRecord,
  InboxRecord,
  NewInbound,
  NewStatus,
  OutboxRecord,
  TimerSpec,
  TranscriptEntry,
} from './types.js';
import type { HandoffRefusal } from './handoff-types.js';
import { decodeFacts, numberIdOf, timerRaw } from './inbound-facts.js';

type Row = Record<string, unknown>;

function json(v: unknown): unknown {
  return typeof v === 'string' ? JSON.parse(v) : null;
}

/** JSON text, or null for undefined: how both stores write an optional JSON column. */
export const j = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v));

/** A nullable text column. */
export const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
/** A nullable number column. */
export const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function toConversation(r: Row): ConversationRecord {
  return {
    id: Number(r['id']),
    botId: String(r['bot_id']),
    user: String(r['user_number']),
    status: r['status'] as ConversationRecord['status'],
    snapshot: json(r['snapshot']),
    state: str(r['state']),
    version: Number(r['version']),
    botVersion: Number(r['bot_version'] ?? 1),
    flowToken: String(r['flow_token']),
    channel: r['channel'] as ConversationRecord['channel'],
    lastPrompt: json(r['last_prompt']) as unknown[] | null,
    createdAt: Number(r['created_at']),
    updatedAt: Number(r['updated_at']),
    lastActivityAt: Number(r['last_activity_at']),
    endedAt: num(r['ended_at']),
  };
}

export function toInbox(r: Row): InboxRecord {
  const source = r['source'] as InboxRecord['source'];
  const raw = json(r['raw']);
  return {
    id: Number(r['id']),
    providerId: String(r['provider_id']),
    botId: String(r['bot_id']),
    user: String(r['user_number']),
    source,
    event: json(r['event']) as InboxRecord['event'],
    raw,
    ...decodeFacts(source, raw),
    state: r['state'] as InboxRecord['state'],
    conversationId: num(r['conversation_id']),
    attempts: Number(r['attempts']),
    error: str(r['error']),
    receivedAt: Number(r['received_at']),
    processedAt: num(r['processed_at']),
  };
}

export function toOutbox(r: Row): OutboxRecord {
  return {
    id: Number(r['id']),
    conversationId: Number(r['conversation_id']),
    botId: String(r['bot_id']),
    user: String(r['user_number']),
    inboxId: num(r['inbox_id']),
    kind: String(r['kind']),
    message: json(r['message']),
    channel: r['channel'] as OutboxRecord['channel'],
    request: json(r['request']),
    state: r['state'] as OutboxRecord['state'],
    attempts: Number(r['attempts']),
    nextAttemptAt: Number(r['next_attempt_at']),
    providerId: str(r['provider_id']),
    httpStatus: num(r['http_status']),
    response: json(r['response']),
    smsCode: num(r['sms_code']),
    smsMailingId: str(r['sms_mailing_id']),
    smsResult: str(r['sms_result']),
    error: str(r['error']),
    errorCode: str(r['error_code']),
    fallbackOf: num(r['fallback_of']),
    deliveryStatus: str(r['delivery_status']),
    claim: str(r['claim']),
    resends: Number(r['resends'] ?? 0),
    createdAt: Number(r['created_at']),
    sentAt: num(r['sent_at']),
    // Only agents' messages carry it (a handoff's); the bot's own rows stay as they were.
    ...(r['agent'] !== null && r['agent'] !== undefined && { agent: String(r['agent']) }),
  };
}

/** A handoff row as a record. */
export function toHandoff(r: Row): HandoffRecord {
  return {
    id: Number(r['id']),
    conversationId: Number(r['conversation_id']),
    botId: String(r['bot_id']),
    user: String(r['user_number']),
    state: r['state'] as HandoffRecord['state'],
    reason: str(r['reason']),
    queue: str(r['queue']),
    agent: str(r['agent']),
    note: str(r['note']),
    endedBy: str(r['ended_by']),
    timeoutAt: num(r['timeout_at']),
    claimIdleUntil: num(r['claim_idle_until']),
    startedAt: Number(r['started_at']),
    claimedAt: num(r['claimed_at']),
    endedAt: num(r['ended_at']),
  };
}

/** A fresh claim's idle columns: the idle time it is made under and its first deadline (both null: it never expires). */
export function claimIdle(w: { readonly now: number; readonly claimIdleMs?: number | undefined }): { idleMs: number | null; idleUntil: number | null } {
  const ms = w.claimIdleMs !== undefined && w.claimIdleMs > 0 ? w.claimIdleMs : null;
  return { idleMs: ms, idleUntil: ms === null ? null : w.now + ms };
}

/** The conversation a row (with `bot_id` and `user_number`) belongs to. */
export function toKey(r: Row): ConversationKey {
  return { botId: String(r['bot_id']), user: String(r['user_number']) };
}

/** The inbound a due timer row becomes when it fires; its provider id makes firing twice a duplicate. */
export function toTimerInbound(t: Row, now: number): NewInbound {
  return {
    providerId: `timer:${t['conversation_id']}:${t['id']}`,
    botId: String(t['bot_id']),
    user: String(t['user_number']),
    source: 'timer',
    event: JSON.parse(String(t['event'])) as NewInbound['event'],
    raw: timerRaw({ key: String(t['key']), fireAt: Number(t['fire_at']), conversationId: Number(t['conversation_id']) }),
    receivedAt: now,
  };
}

/** A connector event row as a record. */
export function toHandoffEvent(r: Row): HandoffEventRecord {
  return {
    id: Number(r['id']),
    eventId: String(r['event_id']),
    handoffId: Number(r['handoff_id']),
    type: r['type'] as HandoffEventType,
    payload: JSON.parse(String(r['payload'])),
    attempts: Number(r['attempts']),
    claim: String(r['claim']),
  };
}

export function toTimer(r: Row): TimerSpec {
  return { key: String(r['key']), stateNode: str(r['state_node']), event: json(r['event']) as TimerSpec['event'], fireAt: Number(r['fire_at']) };
}

/** How far along a delivery status is; a later report never moves it back. */
export const STATUS_RANK: Readonly<Record<string, number>> = { sent: 1, delivered: 2, read: 3, failed: 4 };

/** A stored delivery status. */
export function toStatus(r: Row): NewStatus {
  return {
    providerMessageId: String(r['provider_message_id']),
    status: String(r['status']),
    timestamp: r['timestamp'] === null ? undefined : Number(r['timestamp']),
    recipient: r['recipient'] === null ? undefined : String(r['recipient']),
    errors: r['errors'] === null ? undefined : JSON.parse(String(r['errors'])),
    raw: r['raw'] === null ? undefined : JSON.parse(String(r['raw'])),
    receivedAt: Number(r['received_at']),
  };
}

/**
 * A conversation's transcript from its inbox rows and outbox records, both in id order: each
 * inbound goes before the outbox rows added after it was processed (its `outbox_mark`, the
 * conversation's highest outbox id then); unprocessed inbounds go last.
 */
export function mergeTranscript(inbox: readonly Row[], outbox: readonly OutboxRecord[]): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  let i = 0;
  const inboundUpTo = (id: number) => {
    for (; i < inbox.length && Number(inbox[i]!['outbox_mark'] ?? Number.POSITIVE_INFINITY) < id; i++) {
      const r = toInbox(inbox[i]!);
      out.push({ direction: 'in', at: r.receivedAt, source: r.source, event: r.event, providerId: r.providerId, state: r.state, error: r.error });
    }
  };
  for (const o of outbox) {
    inboundUpTo(o.id);
    out.push({ direction: 'out', at: o.createdAt, record: o });
  }
  inboundUpTo(Number.POSITIVE_INFINITY);
  return out;
}

/**
 * The answer to an agent's message whose Idempotency-Key is already on `row`, whatever the handoff
 * is now: the same agent with the same fingerprint is that message again; the same agent with
 * another body is `key_reused`; another agent is `key_taken`, and learns nothing of the row. A row
 * queued before fingerprints were kept has none: the agent decides.
 */
export function keyAnswer(
  row: Row,
  m: { readonly agent: string; readonly fingerprint?: string | undefined },
  handoff: HandoffRecord | undefined,
): { ok: true; outboxId: number; duplicate: true } | HandoffRefusal {
  if (row['agent'] !== m.agent) return { ok: false, reason: 'key_taken', handoff };
  const stored = row['idempotency_fingerprint'];
  const same = typeof stored !== 'string' || m.fingerprint === undefined || stored === m.fingerprint;
  return same ? { ok: true, outboxId: Number(row['id']), duplicate: true } : { ok: false, reason: 'key_reused', handoff };
}

/** A user's latest WhatsApp inbound (`received_at`, `raw`) as the window needs it. */
export function toUserMessage(r: Record<string, unknown>): UserMessageFact {
  let numberId: string | undefined;
  let sentAt: number | undefined;
  try {
    const raw: unknown = typeof r['raw'] === 'string' ? JSON.parse(r['raw']) : r['raw'];
    numberId = numberIdOf(raw);
    const seconds = Number((raw as { timestamp?: unknown } | null)?.timestamp);
    if (Number.isFinite(seconds) && seconds > 0) sentAt = seconds * 1000;
  } catch {
    // A raw payload that is not JSON names no number.
  }
  // WhatsApp counts the window from the message's own time: a webhook redelivered hours late must not stretch it.
  const received = Number(r['received_at']);
  return { at: sentAt !== undefined && sentAt < received ? sentAt : received, numberId };
}

export function toFlowSubmit(r: Row): FlowSubmitRecord {
  return {
    id: Number(r['id']),
    dedupeKey: String(r['dedupe_key']),
    requestKey: String(r['request_key']),
    conversationId: Number(r['conversation_id']),
    flowToken: String(r['flow_token']),
    screen: String(r['screen']),
    answer: json(r['answer']),
    completes: r['completes'] === true || Number(r['completes']) === 1,
    createdAt: Number(r['created_at']),
  };
}
