-- The PostgreSQL twin of migrations/sqlite/0013_work_kernel.sql: one work contract for lanes, sends
-- and helpdesk events. Each claim names its owner (the claiming process), and the owner's heartbeat
-- extends all its claims at once (one UPDATE per table, by owner). A claim is live while lease_until
-- (epoch ms on the database's clock, now()) is ahead; a lapsed one is taken over. A send taken from a
-- lapsed claim counts a resend: it may have reached the provider already.
-- Rows left `sending` by a version before this one have no owner, and a lease on the process's
-- clock: they count as lapsed claims.
ALTER TABLE outbox ADD COLUMN owner TEXT;
ALTER TABLE outbox ADD COLUMN resends BIGINT NOT NULL DEFAULT 0;
ALTER TABLE handoff_events ADD COLUMN owner TEXT;
-- The heartbeat's lookups: the rows an owner is sending (few), never a scan of the tables.
CREATE INDEX outbox_sending_owner ON outbox (owner) WHERE state = 'sending';
CREATE INDEX handoff_events_sending_owner ON handoff_events (owner) WHERE state = 'sending';
