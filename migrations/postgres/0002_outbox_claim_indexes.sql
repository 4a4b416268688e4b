-- The dispatcher claims each conversation's next unsent row. These partial indexes keep that
-- independent of how many rows wait: unsent rows are walked in id order (stopping at the LIMIT),
-- a conversation's unsent rows are found without reading its sent ones, and the next wake-up time
-- is an index lookup.
CREATE INDEX outbox_unsent_id ON outbox (id) WHERE state IN ('pending', 'sending');
CREATE INDEX outbox_unsent_conversation ON outbox (conversation_id) WHERE state IN ('pending', 'sending');
CREATE INDEX outbox_pending_due ON outbox (next_attempt_at) WHERE state = 'pending';
CREATE INDEX outbox_sending_lease ON outbox (lease_until) WHERE state = 'sending';
DROP INDEX outbox_unsent;
