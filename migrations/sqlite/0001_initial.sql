-- Conversations: one user's run of one bot. At most one active per (bot, user).
CREATE TABLE conversations (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  bot_id           TEXT    NOT NULL,
  user             TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('active', 'done', 'expired', 'failed')),
  snapshot         TEXT,                 -- XState getPersistedSnapshot(), as JSON
  state            TEXT,                 -- the snapshot's state value, for people and queries
  version          INTEGER NOT NULL,     -- bumped by every committed turn
  flow_token       TEXT    NOT NULL UNIQUE,
  channel          TEXT    NOT NULL DEFAULT 'interactive' CHECK (channel IN ('interactive', 'sms')),
  last_prompt      TEXT,                 -- JSON array of the messages re-sent on unhandled input
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  last_activity_at INTEGER NOT NULL,
  ended_at         INTEGER
);
CREATE UNIQUE INDEX conversations_active ON conversations (bot_id, user) WHERE status = 'active';
CREATE INDEX conversations_activity ON conversations (status, last_activity_at);

-- Inbox: every inbound (a user's message, a fired timer, a delivery failure) before its turn.
CREATE TABLE inbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  provider_id     TEXT    NOT NULL UNIQUE,   -- dedupe key: a redelivery is a no-op
  bot_id          TEXT    NOT NULL,
  user            TEXT    NOT NULL,
  source          TEXT    NOT NULL,          -- whatsapp | sms | timer | delivery | api
  event           TEXT    NOT NULL,          -- the runtime event, JSON
  raw             TEXT,                      -- the provider's payload, JSON
  state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed')),
  conversation_id INTEGER REFERENCES conversations (id),
  attempts        INTEGER NOT NULL DEFAULT 0,
  error           TEXT,
  received_at     INTEGER NOT NULL,
  processed_at    INTEGER,
  outbox_mark     INTEGER                    -- the highest outbox id when it was processed: orders transcripts
);
CREATE INDEX inbox_pending ON inbox (bot_id, user, id) WHERE state = 'pending';
CREATE INDEX inbox_conversation ON inbox (conversation_id, id);

-- Outbox: every message a turn emitted, sent by the dispatcher in order per conversation.
CREATE TABLE outbox (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id INTEGER NOT NULL REFERENCES conversations (id),
  bot_id          TEXT    NOT NULL,
  user            TEXT    NOT NULL,
  inbox_id        INTEGER REFERENCES inbox (id),
  kind            TEXT    NOT NULL,          -- list | buttons | flow | text | sms
  message         TEXT    NOT NULL,          -- the Message, JSON
  channel         TEXT    NOT NULL CHECK (channel IN ('interactive', 'sms')),
  request         TEXT    NOT NULL,          -- the provider request body, JSON
  state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until     INTEGER,
  provider_id     TEXT,
  http_status     INTEGER,
  response        TEXT,
  sms_code        INTEGER,
  sms_mailing_id  TEXT,
  sms_result      TEXT,
  error           TEXT,
  error_code      TEXT,
  fallback_of     INTEGER REFERENCES outbox (id),
  delivery_status TEXT,                      -- the furthest status the provider reported
  created_at      INTEGER NOT NULL,
  sent_at         INTEGER
);
CREATE INDEX outbox_unsent ON outbox (state, next_attempt_at) WHERE state IN ('pending', 'sending');
CREATE INDEX outbox_conversation ON outbox (conversation_id, id);
CREATE INDEX outbox_provider_id ON outbox (provider_id);
CREATE UNIQUE INDEX outbox_one_fallback ON outbox (fallback_of) WHERE fallback_of IS NOT NULL;

-- Durable timers: XState delayed events (after, delayed raise/sendTo), fired by the runtime.
CREATE TABLE timers (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id INTEGER NOT NULL REFERENCES conversations (id),
  bot_id          TEXT    NOT NULL,
  user            TEXT    NOT NULL,
  key             TEXT    NOT NULL,          -- XState's id of the delayed event
  state_node      TEXT,                      -- the state that armed an `after` delay
  event           TEXT    NOT NULL,
  fire_at         INTEGER NOT NULL,
  UNIQUE (conversation_id, key)
);
CREATE INDEX timers_due ON timers (fire_at);

-- Delivery statuses reported by the provider (out of order and repeated ones kept once).
CREATE TABLE statuses (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  provider_message_id TEXT    NOT NULL,
  status              TEXT    NOT NULL,
  timestamp           INTEGER,
  recipient           TEXT,
  errors              TEXT,
  raw                 TEXT,
  received_at         INTEGER NOT NULL,
  UNIQUE (provider_message_id, status)
);
