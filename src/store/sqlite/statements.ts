/** The SQLite store's prepared statements: every query it runs, in one place. */
import type Database from 'better-sqlite3';
import { statusRank } from '../sql.js';

/** Every query the store runs, by name. */
const SQL = {
  insertInbox: `INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at)
    VALUES (@providerId, @botId, @user, @source, @event, @raw, @receivedAt) ON CONFLICT (provider_id) DO NOTHING`,
  inboxByProvider: 'SELECT id FROM inbox WHERE provider_id = ?',
  failInbox: `UPDATE inbox SET state = 'failed', error = ?, attempts = attempts + 1, processed_at = ?, outbox_mark = (SELECT COALESCE(MAX(id), 0) FROM outbox), conversation_id = COALESCE(conversation_id, (SELECT c.id FROM conversations c WHERE c.bot_id = inbox.bot_id AND c.user_number = inbox.user_number AND c.status = 'active'))
    WHERE id = ? AND state = 'pending'`,
  skipInbox: `UPDATE inbox SET state = 'done', error = ?, processed_at = ?, outbox_mark = (SELECT COALESCE(MAX(id), 0) FROM outbox) WHERE id = ? AND state = 'pending'`,
  inbox: 'SELECT * FROM inbox WHERE id = ?',
  active: `SELECT * FROM conversations WHERE bot_id = ? AND user_number = ? AND status = 'active'`,
  conv: 'SELECT * FROM conversations WHERE id = ?',
  convByToken: 'SELECT * FROM conversations WHERE flow_token = ?',
  setFlowToken: 'UPDATE conversations SET flow_token = ? WHERE id = ?',
  latestFlowSubmit: 'SELECT * FROM flow_submits WHERE flow_token = ? ORDER BY id DESC LIMIT 1',
  flowSubmit: 'SELECT * FROM flow_submits WHERE dedupe_key = ?',
  flowCompleted: 'SELECT 1 FROM flow_submits WHERE flow_token = ? AND completes = 1 LIMIT 1',
  insertFlowSubmit: `INSERT INTO flow_submits (dedupe_key, request_key, conversation_id, flow_token, screen, answer, completes, created_at)
    VALUES (@dedupeKey, @requestKey, @conversationId, @flowToken, @screen, @answer, @completes, @now)`,
  activeIds: `SELECT id FROM conversations WHERE status = 'active' AND snapshot LIKE '%"children":{"%' ORDER BY id`,
  insertConv: `INSERT INTO conversations (bot_id, user_number, status, snapshot, state, version, bot_version, flow_token, channel, last_prompt, created_at, updated_at, last_activity_at, ended_at)
    VALUES (@botId, @user, @status, @snapshot, @state, 1, @botVersion, @flowToken, @channel, @lastPrompt, @now, @now, @now, @endedAt)`,
  updateConv: `UPDATE conversations SET snapshot = @snapshot, state = @state, status = @status, version = version + 1, bot_version = COALESCE(@botVersion, bot_version),
    channel = COALESCE(@channel, channel), last_prompt = COALESCE(@lastPrompt, last_prompt), updated_at = @now,
    last_activity_at = CASE WHEN @activity THEN @now ELSE last_activity_at END, ended_at = @endedAt
    WHERE id = @id AND version = @expectedVersion`,
  /**
   * updateConv for the common turn: the conversation stays active on the same bot version. It sets
   * neither status nor bot_version, so SQLite leaves the indexes over them alone; a turn it does
   * not match (another status or version before or after) runs updateConv.
   */
  updateActiveConv: `UPDATE conversations SET snapshot = @snapshot, state = @state, version = version + 1,
    channel = COALESCE(@channel, channel), last_prompt = COALESCE(@lastPrompt, last_prompt), updated_at = @now,
    last_activity_at = CASE WHEN @activity THEN @now ELSE last_activity_at END, ended_at = NULL
    WHERE id = @id AND version = @expectedVersion AND status = 'active' AND bot_version = COALESCE(@botVersion, bot_version)`,
  expireOne: `UPDATE conversations SET status = 'expired', version = version + 1, ended_at = ?, updated_at = ? WHERE id = ? AND status = 'active'`,
  idleIds: `SELECT id FROM conversations WHERE bot_id = ? AND status = 'active' AND last_activity_at < ?`,
  expireIdle: `UPDATE conversations SET status = 'expired', version = version + 1, ended_at = @now, updated_at = @now
    WHERE bot_id = @botId AND status = 'active' AND last_activity_at < @before`,
  setChannel: 'UPDATE conversations SET channel = ?, updated_at = ? WHERE id = ?',
  markInboxDone: `UPDATE inbox SET state = 'done', error = ?, conversation_id = ?, attempts = attempts + 1, processed_at = ?, outbox_mark = (SELECT COALESCE(MAX(id), 0) FROM outbox) WHERE id = ? AND state = 'pending'`,
  insertOutbox: `INSERT INTO outbox (conversation_id, bot_id, user_number, inbox_id, kind, message, channel, request, next_attempt_at, fallback_of, created_at)
    VALUES (@conversationId, @botId, @user, @inboxId, @kind, @message, @channel, @request, @now, @fallbackOf, @now)`,
  /** Records a send; statuses that came before it (a fast provider) raise its delivery status in the same statement. */
  finish: `UPDATE outbox SET state = @state, provider_id = @providerId, http_status = @httpStatus, response = @response,
    sms_code = @smsCode, sms_mailing_id = @smsMailingId, sms_result = @smsResult, error = @error, error_code = @errorCode,
    sent_at = CASE WHEN @state = 'sent' THEN @now ELSE sent_at END, owner = NULL, lease_until = NULL, claim = NULL,
    delivery_status = COALESCE((SELECT s.status FROM statuses s WHERE s.provider_message_id = @providerId
      AND ${statusRank('s.status')} > ${statusRank('outbox.delivery_status')} ORDER BY ${statusRank('s.status')} DESC LIMIT 1), delivery_status)
    WHERE id = @id AND claim = @claim AND state = 'sending'`,
  outbox: 'SELECT * FROM outbox WHERE id = ?',
  insertFallback: `INSERT INTO outbox (conversation_id, bot_id, user_number, inbox_id, kind, message, channel, request, next_attempt_at, fallback_of, created_at, agent)
    VALUES (@conversationId, @botId, @user, @inboxId, @kind, @message, @channel, @request, @now, @fallbackOf, @now, (SELECT f.agent FROM outbox f WHERE f.id = @fallbackOf))
    ON CONFLICT (fallback_of) WHERE fallback_of IS NOT NULL DO NOTHING`,
  lastInteractive: `SELECT o.*, (o.channel = 'sms' OR EXISTS (SELECT 1 FROM outbox f WHERE f.fallback_of = o.id)) AS by_sms
    FROM outbox o WHERE o.conversation_id = ? AND o.kind IN ('list', 'buttons', 'flow') AND o.fallback_of IS NULL ORDER BY o.id DESC LIMIT 1`,
  outboxByProvider: 'SELECT * FROM outbox WHERE provider_id = ? ORDER BY id DESC LIMIT 1',
  lastUserMessage: `SELECT received_at, raw FROM inbox WHERE bot_id = ? AND user_number = ? AND source = 'whatsapp' ORDER BY id DESC LIMIT 1`,
  /** Whether a failed row already has what follows it: its fallback, or its event for the bot. */
  followed: `SELECT (EXISTS (SELECT 1 FROM outbox WHERE fallback_of = @id) OR EXISTS (SELECT 1 FROM inbox WHERE provider_id = 'delivery:' || CAST(@id AS INTEGER))) AS found`,
  templateSince: `SELECT EXISTS (SELECT 1 FROM outbox WHERE conversation_id = ? AND kind = 'template' AND created_at >= ? AND state <> 'failed') AS found`,
  convOutbox: 'SELECT * FROM outbox WHERE conversation_id = ? ORDER BY id',
  convInbox: 'SELECT * FROM inbox WHERE conversation_id = ? ORDER BY id',
  upsertTimer: `INSERT INTO timers (conversation_id, bot_id, user_number, key, state_node, event, fire_at)
    VALUES (@conversationId, @botId, @user, @key, @stateNode, @event, @fireAt)
    ON CONFLICT (conversation_id, key) DO UPDATE SET state_node = excluded.state_node, event = excluded.event, fire_at = excluded.fire_at`,
  deleteTimer: 'DELETE FROM timers WHERE conversation_id = ? AND key = ?',
  deleteTimers: 'DELETE FROM timers WHERE conversation_id = ?',
  /** The timers armed by state nodes that are no longer active (the second argument: a JSON array of the active ones). */
  deleteStaleTimers: `DELETE FROM timers WHERE conversation_id = ? AND state_node IS NOT NULL AND state_node NOT IN (SELECT value FROM json_each(?))`,
  timersOf: 'SELECT * FROM timers WHERE conversation_id = ? ORDER BY fire_at, id',
  bumpLane: `INSERT INTO lanes (bot_id, user_number, work_seq) VALUES (?, ?, 1)
    ON CONFLICT (bot_id, user_number) DO UPDATE SET work_seq = work_seq + 1`,
  insertStatus: `INSERT INTO statuses (provider_message_id, status, timestamp, recipient, errors, raw, received_at)
    VALUES (@providerMessageId, @status, @timestamp, @recipient, @errors, @raw, @receivedAt) ON CONFLICT DO NOTHING`,
  statusesOf: 'SELECT * FROM statuses WHERE provider_message_id = ? ORDER BY id',
  setDelivery: 'UPDATE outbox SET delivery_status = ? WHERE id = ?',
  unfollowedFailures: `SELECT o.* FROM outbox o WHERE o.state = 'sent' AND o.delivery_status = 'failed' AND o.fallback_of IS NULL
    AND NOT EXISTS (SELECT 1 FROM outbox f WHERE f.fallback_of = o.id)
    AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.provider_id = 'delivery:' || o.id) ORDER BY o.id`,
} as const;

/** The store's prepared statements, by name. */
export type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

/** Prepares every statement once, when the store opens. */
export function prepareStatements(db: Database.Database): Statements {
  return Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
}
