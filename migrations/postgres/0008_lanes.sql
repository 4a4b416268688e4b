-- The PostgreSQL twin of migrations/sqlite/0008_lanes.sql: who runs a conversation's work. One row
-- per conversation key that has (or had) work; work_seq is bumped with the work, done_seq set on a
-- release that found work_seq unchanged. Leases are epoch milliseconds on the database's clock.
CREATE TABLE lanes (
  bot_id      TEXT    NOT NULL,
  user_number TEXT    NOT NULL,
  owner       TEXT,
  lease_until BIGINT,
  fence       BIGINT  NOT NULL DEFAULT 0,
  work_seq    BIGINT  NOT NULL DEFAULT 0,
  done_seq    BIGINT  NOT NULL DEFAULT 0,
  PRIMARY KEY (bot_id, user_number)
);
CREATE INDEX lanes_with_work ON lanes (lease_until) WHERE work_seq > done_seq;
CREATE INDEX lanes_owner ON lanes (owner) WHERE owner IS NOT NULL;
-- Work waiting when this migration ran, owned by nobody alive: taken over by the first process to look.
INSERT INTO lanes (bot_id, user_number, owner, lease_until, fence, work_seq, done_seq)
  SELECT bot_id, user_number, 'migration', 0, 0, 1, 0 FROM inbox WHERE state = 'pending'
  UNION SELECT bot_id, user_number, 'migration', 0, 0, 1, 0 FROM conversations
    WHERE status = 'active' AND snapshot LIKE '%"children":{"%';
