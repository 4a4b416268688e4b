-- An agent's Idempotency-Key is kept with a fingerprint of the request it came with (a SHA-256 of
-- the canonical body, the agent and the conversation): a request that reuses the key with another
-- body is refused instead of being taken for a retry. Rows queued before this have none (NULL).
ALTER TABLE outbox ADD COLUMN idempotency_fingerprint TEXT;
