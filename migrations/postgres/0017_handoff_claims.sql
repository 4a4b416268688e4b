-- Claims that end: a claim with no agent activity (a claim, a message, a note) for a while goes
-- back to the queue. `claim_idle_ms` is the idle time the claim was made under (NULL: it never
-- expires; claims made before this migration never do); `claim_idle_until` is when it goes back
-- unless its agent acts, set only while the handoff is claimed. The worker's due-time query and
-- its claim of expired claims read the partial index.
ALTER TABLE handoffs ADD COLUMN claim_idle_ms BIGINT;
ALTER TABLE handoffs ADD COLUMN claim_idle_until BIGINT;
CREATE INDEX handoffs_claim_idle ON handoffs (claim_idle_until) WHERE state = 'claimed' AND claim_idle_until IS NOT NULL;

-- A handoff's own timeout, kept past its claim: a claim that goes back to the queue is given the
-- whole timeout again from then. Handoffs opened before this migration get what their timer had,
-- or the default (10 minutes) once claimed.
ALTER TABLE handoffs ADD COLUMN timeout_ms BIGINT;
UPDATE handoffs SET timeout_ms = COALESCE(timeout_at - started_at, 600000);
