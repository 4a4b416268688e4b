-- Claims that end: a claim with no agent activity (a claim, a message, a note) for a while goes
-- back to the queue. `claim_idle_ms` is the idle time the claim was made under (NULL: it never
-- expires; claims made before this migration never do); `claim_idle_until` is when it goes back
-- unless its agent acts, set only while the handoff is claimed. The worker's due-time query and
-- its claim of expired claims read the partial index.
ALTER TABLE handoffs ADD COLUMN claim_idle_ms BIGINT;
ALTER TABLE handoffs ADD COLUMN claim_idle_until BIGINT;
CREATE INDEX handoffs_claim_idle ON handoffs (claim_idle_until) WHERE state = 'claimed' AND claim_idle_until IS NOT NULL;
