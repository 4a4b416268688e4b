-- Handoffs: a conversation handed to a person. While one is open (waiting or claimed) the user's
-- messages are kept for the agents instead of being given to the machine. At most one open
-- handoff per conversation.
CREATE TABLE handoffs (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  conversation_id INTEGER NOT NULL REFERENCES conversations (id),
  bot_id          TEXT    NOT NULL,
  user_number     TEXT    NOT NULL,
  state           TEXT    NOT NULL CHECK (state IN ('waiting', 'claimed', 'ended', 'timeout', 'closed')),
  reason          TEXT,
  queue           TEXT,
  agent           TEXT,                      -- who holds it (claimed) or held it
  note            TEXT,                      -- the agent's note on release
  ended_by        TEXT,                      -- the agent who released it, or the system
  timeout_at      INTEGER,                   -- when an unclaimed handoff times out
  started_at      INTEGER NOT NULL,
  claimed_at      INTEGER,
  ended_at        INTEGER
);
CREATE UNIQUE INDEX handoffs_open ON handoffs (conversation_id) WHERE state IN ('waiting', 'claimed');
CREATE INDEX handoffs_by_state ON handoffs (state, started_at);

-- An agent's message goes through the same outbox as the bot's: marked with the agent's name, and
-- with the request's Idempotency-Key so that a retried request sends once.
ALTER TABLE outbox ADD COLUMN agent TEXT;
ALTER TABLE outbox ADD COLUMN idempotency_key TEXT;
CREATE UNIQUE INDEX outbox_idempotency ON outbox (conversation_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

-- Handoff events for the helpdesk connector (COLLOQUY_HANDOFF_WEBHOOK_URL): a durable outbox of its
-- own, delivered in order per handoff, retried with backoff. `event_id` is the receiver's dedupe key.
CREATE TABLE handoff_events (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id        TEXT    NOT NULL UNIQUE,
  handoff_id      INTEGER NOT NULL REFERENCES handoffs (id),
  type            TEXT    NOT NULL,
  payload         TEXT    NOT NULL,          -- the JSON body POSTed
  state           TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until     INTEGER,
  claim           TEXT,                      -- the token of the attempt holding it while `sending`
  last_error      TEXT,
  created_at      INTEGER NOT NULL,
  sent_at         INTEGER
);
CREATE INDEX handoff_events_unsent ON handoff_events (handoff_id, id) WHERE state IN ('pending', 'sending');
