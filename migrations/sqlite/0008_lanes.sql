-- Lanes: who runs a conversation's work is decided here, not in a process's memory. One row per
-- conversation key that has (or had) work. Anything that adds work (an inbound, a fired timer, a
-- delivery failure for the bot) bumps work_seq in the same transaction; the owner that has drained
-- the lane up to a work_seq it saw sets done_seq to it on release, only if work_seq has not moved
-- since. A lane with work_seq > done_seq and no live lease (lease_until passed, or no owner) is
-- claimed by any process; fence grows at each change of owner. Times are epoch milliseconds.
CREATE TABLE lanes (
  bot_id      TEXT    NOT NULL,
  user_number TEXT    NOT NULL,
  owner       TEXT,                          -- the process holding the lane, or NULL when released
  lease_until INTEGER,                       -- the owner's lease runs out then (the database's clock)
  fence       INTEGER NOT NULL DEFAULT 0,    -- the claim token: bumped when another owner takes the lane
  work_seq    INTEGER NOT NULL DEFAULT 0,
  done_seq    INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (bot_id, user_number)
);
CREATE INDEX lanes_with_work ON lanes (lease_until) WHERE work_seq > done_seq;
CREATE INDEX lanes_owner ON lanes (owner) WHERE owner IS NOT NULL;
-- Work that was waiting when this migration ran: pending inbounds, and conversations whose
-- invocation was running (a live actor of a process that stopped). Owned by nobody alive, so the
-- first process to look takes them over and re-opens them.
INSERT INTO lanes (bot_id, user_number, owner, lease_until, fence, work_seq, done_seq)
  SELECT bot_id, user_number, 'migration', 0, 0, 1, 0 FROM inbox WHERE state = 'pending'
  UNION SELECT bot_id, user_number, 'migration', 0, 0, 1, 0 FROM conversations
    WHERE status = 'active' AND snapshot LIKE '%"children":{"%';
