/**
 * Every statement the PostgreSQL store runs, by name: the SQLite store's queries
 * (SQLite's `statements.ts`) in PostgreSQL's dialect, with row locks where several processes meet.
 * Those every turn runs are named prepared statements: parsed and planned once per connection.
 */
import { prepared } from './db.js';
import { WORK_CHANNEL } from './lanes.js';
import { statusRank } from '../sql.js';

/** The highest outbox id of a conversation: an inbound processed now comes before every later row of it. */
const MARK = (conversation: string) => `(SELECT COALESCE(MAX(m.id), 0) FROM outbox m WHERE m.conversation_id = ${conversation})`;

/** The store's statements. */
export const PG = {
  /**
   * Adds an inbound and its work, in one statement. The lane's row is upserted first (the inbox
   * insert reads from it), so its lock is held before the inbound takes an id: two inbounds of one
   * conversation stored at once by two processes get their ids in commit order, and a drain that
   * reads the oldest pending one never runs a later one first. A known provider id adds no work (a
   * redelivery); the peers are told of new work on commit. `known` is the row already stored; when
   * neither `id` nor `known` comes back, another writer stored the same provider id after this
   * statement's snapshot (its lane then counts one spurious piece of work: a drain that finds
   * nothing, harmless).
   */
  addInbound: prepared(
    'add_inbound',
    `WITH known AS (SELECT id FROM inbox WHERE provider_id = $1::text),
    lane AS (
      INSERT INTO lanes (bot_id, user_number, work_seq) VALUES ($2::text, $3::text, CASE WHEN EXISTS (SELECT 1 FROM known) THEN 0 ELSE 1 END)
      ON CONFLICT (bot_id, user_number) DO UPDATE SET work_seq = lanes.work_seq + CASE WHEN EXISTS (SELECT 1 FROM known) THEN 0 ELSE 1 END
      RETURNING 1),
    ins AS (
      INSERT INTO inbox (provider_id, bot_id, user_number, source, event, raw, received_at)
      SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::bigint FROM lane WHERE NOT EXISTS (SELECT 1 FROM known)
      ON CONFLICT (provider_id) DO NOTHING RETURNING id)
    SELECT (SELECT id FROM ins) AS id, (SELECT id FROM known) AS known,
      (SELECT COUNT(*) FROM (SELECT pg_notify('${WORK_CHANNEL}', '') FROM ins) n) AS notified`,
  ),
  inboxByProvider: prepared('inbox_by_provider', 'SELECT id FROM inbox WHERE provider_id = $1'),
  failInbox: `WITH c AS (SELECT COALESCE(i.conversation_id, (SELECT a.id FROM conversations a WHERE a.bot_id = i.bot_id AND a.user_number = i.user_number AND a.status = 'active')) AS id
      FROM inbox i WHERE i.id = $3)
    UPDATE inbox SET state = 'failed', error = $1, attempts = attempts + 1, processed_at = $2, conversation_id = c.id, outbox_mark = ${MARK('c.id')}
    FROM c WHERE inbox.id = $3 AND inbox.state = 'pending'`,
  skipInbox: `UPDATE inbox SET state = 'done', error = $1, processed_at = $2, outbox_mark = ${MARK('inbox.conversation_id')} WHERE id = $3 AND state = 'pending'`,
  inbox: prepared('inbox', 'SELECT * FROM inbox WHERE id = $1'),
  active: prepared('active', `SELECT * FROM conversations WHERE bot_id = $1 AND user_number = $2 AND status = 'active'`),
  conv: prepared('conv', 'SELECT * FROM conversations WHERE id = $1'),
  convByToken: 'SELECT * FROM conversations WHERE flow_token = $1',
  setFlowToken: 'UPDATE conversations SET flow_token = $1 WHERE id = $2',
  latestFlowSubmit: 'SELECT * FROM flow_submits WHERE flow_token = $1 ORDER BY id DESC LIMIT 1',
  flowSubmit: 'SELECT * FROM flow_submits WHERE dedupe_key = $1',
  flowCompleted: 'SELECT 1 FROM flow_submits WHERE flow_token = $1 AND completes = 1 LIMIT 1',
  insertFlowSubmit: `INSERT INTO flow_submits (dedupe_key, request_key, conversation_id, flow_token, screen, answer, completes, created_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
  activeIds: `SELECT id FROM conversations WHERE status = 'active' AND snapshot LIKE '%"children":{"%' ORDER BY id`,
  expireOne: `UPDATE conversations SET status = 'expired', version = version + 1, ended_at = $1, updated_at = $1 WHERE id = $2 AND status = 'active'`,
  /** Expiry and the expired conversations' timers, in one statement: no turn can slip in between. */
  expireIdle: `WITH e AS (
      UPDATE conversations SET status = 'expired', version = version + 1, ended_at = $3, updated_at = $3
      WHERE bot_id = $1 AND status = 'active' AND last_activity_at < $2 RETURNING id),
    d AS (DELETE FROM timers WHERE conversation_id IN (SELECT id FROM e))
    SELECT COUNT(*) AS n FROM e`,
  setChannel: 'UPDATE conversations SET channel = $1, updated_at = $2 WHERE id = $3',
  /**
   * An SMS fallback row carries the agent's name of the message it replaces (a handoff's reply stays
   * the agent's); the peers are told of it (any process may send it).
   */
  insertFallback: `WITH i AS (
      INSERT INTO outbox (conversation_id, bot_id, user_number, inbox_id, kind, message, channel, request, next_attempt_at, fallback_of, created_at, agent)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $9, (SELECT f.agent FROM outbox f WHERE f.id = $10))
      ON CONFLICT (fallback_of) WHERE fallback_of IS NOT NULL DO NOTHING RETURNING 1)
    SELECT (SELECT COUNT(*) FROM (SELECT pg_notify('${WORK_CHANNEL}', '') FROM i) n) AS notified`,
  /** Records a send; statuses that came before it raise its delivery status in the same statement. */
  finish: prepared(
    'finish',
    `UPDATE outbox SET state = $2, provider_id = $3, http_status = $4, response = $5,
    sms_code = $6, sms_mailing_id = $7, sms_result = $8, error = $9, error_code = $10,
    sent_at = CASE WHEN $2 = 'sent' THEN $11 ELSE sent_at END, owner = NULL, lease_until = NULL, claim = NULL,
    delivery_status = COALESCE((SELECT s.status FROM statuses s WHERE s.provider_message_id = $3
      AND ${statusRank('s.status')} > ${statusRank('outbox.delivery_status')} ORDER BY ${statusRank('s.status')} DESC LIMIT 1), delivery_status)
    WHERE id = $1 AND claim = $12 AND state = 'sending'`,
  ),
  outbox: prepared('outbox', 'SELECT * FROM outbox WHERE id = $1'),
  lastInteractive: `SELECT o.*, (o.channel = 'sms' OR EXISTS (SELECT 1 FROM outbox f WHERE f.fallback_of = o.id)) AS by_sms
    FROM outbox o WHERE o.conversation_id = $1 AND o.kind IN ('list', 'buttons', 'flow') AND o.fallback_of IS NULL ORDER BY o.id DESC LIMIT 1`,
  outboxByProvider: 'SELECT * FROM outbox WHERE provider_id = $1 ORDER BY id DESC LIMIT 1',
  lastUserMessage: `SELECT received_at, raw FROM inbox WHERE bot_id = $1 AND user_number = $2 AND source = 'whatsapp' ORDER BY id DESC LIMIT 1`,
  /** Whether a failed row already has what follows it: its fallback, or its event for the bot. */
  followed: `SELECT (EXISTS (SELECT 1 FROM outbox WHERE fallback_of = $1) OR EXISTS (SELECT 1 FROM inbox WHERE provider_id = 'delivery:' || $1::text)) AS found`,
  outboxForUpdate: 'SELECT * FROM outbox WHERE id = $1 FOR UPDATE',
  templateSince: `SELECT EXISTS (SELECT 1 FROM outbox WHERE conversation_id = $1 AND kind = 'template' AND created_at >= $2 AND state <> 'failed') AS found`,
  convOutbox: 'SELECT * FROM outbox WHERE conversation_id = $1 ORDER BY id',
  convInbox: 'SELECT * FROM inbox WHERE conversation_id = $1 ORDER BY id',
  upsertTimer: `INSERT INTO timers (conversation_id, bot_id, user_number, key, state_node, event, fire_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (conversation_id, key) DO UPDATE SET state_node = EXCLUDED.state_node, event = EXCLUDED.event, fire_at = EXCLUDED.fire_at`,
  deleteTimer: 'DELETE FROM timers WHERE conversation_id = $1 AND key = $2',
  deleteTimers: 'DELETE FROM timers WHERE conversation_id = $1',
  /** Timers armed by states the conversation has left. */
  deleteLeftTimers: 'DELETE FROM timers WHERE conversation_id = $1 AND state_node IS NOT NULL AND NOT (state_node = ANY($2::text[]))',
  timersOf: 'SELECT * FROM timers WHERE conversation_id = $1 ORDER BY fire_at, id',
  /** Takes due timers no other process is firing (SKIP LOCKED), deleting them as it takes them. */
  takeDueTimers: `DELETE FROM timers WHERE id IN (
      SELECT id FROM timers WHERE fire_at <= $1 ORDER BY fire_at, id LIMIT $2 FOR UPDATE SKIP LOCKED)
    RETURNING *`,
  /** Records a status and raises the outbound's delivery status, in one statement: never moved back. */
  addStatus: `WITH ins AS (
      INSERT INTO statuses (provider_message_id, status, timestamp, recipient, errors, raw, received_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING id),
    target AS (SELECT id FROM outbox WHERE provider_id = $1 ORDER BY id DESC LIMIT 1),
    up AS (UPDATE outbox SET delivery_status = $2 WHERE id = (SELECT id FROM target) AND EXISTS (SELECT 1 FROM ins)
      AND ${statusRank('$2::text')} > ${statusRank('delivery_status')} RETURNING id)
    SELECT (SELECT COUNT(*) FROM ins) AS inserted, (SELECT id FROM target) AS outbox_id, (SELECT COUNT(*) FROM up) AS raised`,
  /** After every accepted send (a failure may have come first): prepared, not parsed each time. */
  statusesOf: prepared('statuses_of', 'SELECT * FROM statuses WHERE provider_message_id = $1 ORDER BY id'),
  unfollowedFailures: `SELECT o.* FROM outbox o WHERE o.state = 'sent' AND o.delivery_status = 'failed' AND o.fallback_of IS NULL
    AND NOT EXISTS (SELECT 1 FROM outbox f WHERE f.fallback_of = o.id)
    AND NOT EXISTS (SELECT 1 FROM inbox i WHERE i.provider_id = 'delivery:' || o.id) ORDER BY o.id`,
} as const;
