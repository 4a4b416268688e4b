-- Submits of live WhatsApp Flows (the Flow endpoint's data_exchange) that ran a turn: one row per
-- flow token, screen and data (the dedupe key, a hash), written in the turn's own transaction, so a
-- submit WhatsApp retries with a new AES key and IV answers the stored answer and runs nothing again.
-- `completes` marks the submit that closed the flow: its nfm_reply then runs no second turn.
CREATE TABLE flow_submits (
  dedupe_key       TEXT    PRIMARY KEY,
  conversation_id  INTEGER NOT NULL,
  flow_token       TEXT    NOT NULL,
  screen           TEXT    NOT NULL,
  answer           TEXT    NOT NULL,
  completes        INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL
);
CREATE INDEX flow_submits_token ON flow_submits (flow_token) WHERE completes = 1;
