-- Submits of live WhatsApp Flows (the Flow endpoint's data_exchange) that ran a turn, written in the
-- turn's own transaction. `request_key` hashes the flow token, the screen and the data: a request
-- equal to the token's latest submit is WhatsApp retrying it (with a new AES key and IV), answered
-- with the stored answer and run no more. `dedupe_key` chains the request to the submit before it,
-- so two racing copies of one retry collide here while the user sending the same data again later
-- (after another answer) is a new submit. `completes` marks the submit that closed the flow: its
-- nfm_reply then runs no second turn.
CREATE TABLE flow_submits (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  dedupe_key       TEXT    NOT NULL UNIQUE,
  request_key      TEXT    NOT NULL,
  conversation_id  INTEGER NOT NULL,
  flow_token       TEXT    NOT NULL,
  screen           TEXT    NOT NULL,
  answer           TEXT    NOT NULL,
  completes        INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL
);
CREATE INDEX flow_submits_token ON flow_submits (flow_token, id);
