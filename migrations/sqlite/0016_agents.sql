-- Agents with identities: each agent has a name and the SHA-256 (hex) of its token, never the
-- token itself. An inbox sign-in session is kept by the SHA-256 of the id its cookie carries,
-- with the CSRF value its writes must send back; it ends with its agent (removed) or its token
-- (rotated: the store deletes the agent's sessions).
CREATE TABLE agents (
  name        TEXT    PRIMARY KEY,
  token_hash  TEXT    NOT NULL UNIQUE,
  created_at  INTEGER NOT NULL
);

CREATE TABLE agent_sessions (
  id_hash     TEXT    PRIMARY KEY,
  agent       TEXT    NOT NULL REFERENCES agents (name) ON DELETE CASCADE,
  csrf        TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
);
CREATE INDEX agent_sessions_agent ON agent_sessions (agent);
CREATE INDEX agent_sessions_expiry ON agent_sessions (expires_at);

-- The handoff log: who claimed, wrote, noted and released, and what the system did (a timeout, a
-- claim that went back to the queue, a conversation that closed), each row written in the same
-- transaction as what it records. `agent` is NULL for the system; `via` says how the agent was
-- known (NULL when the caller did not say). Agents' names are kept as written: the log outlives them.
CREATE TABLE handoff_log (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  handoff_id      INTEGER NOT NULL REFERENCES handoffs (id),
  conversation_id INTEGER NOT NULL,
  action          TEXT    NOT NULL CHECK (action IN ('claim', 'message', 'note', 'release', 'claim_expired', 'timeout', 'closed')),
  agent           TEXT,
  via             TEXT    CHECK (via IN ('token', 'session', 'service', 'open')),
  text            TEXT,
  outbox_id       INTEGER,
  at              INTEGER NOT NULL
);
CREATE INDEX handoff_log_conversation ON handoff_log (conversation_id, id);

-- A handoff's own timeout, kept past its claim: a claim that goes back to the queue (its agent
-- removed) is given the whole timeout again from then. Handoffs opened before this migration get
-- what their timer had, or the default (10 minutes) once claimed.
ALTER TABLE handoffs ADD COLUMN timeout_ms INTEGER;
UPDATE handoffs SET timeout_ms = COALESCE(timeout_at - started_at, 600000);
