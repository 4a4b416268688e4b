-- Fewer index writes per turn. Every outbox row is inserted, claimed (pending -> sending) and
-- finished (sending -> sent), and each step rewrote every index that holds its changed columns.
-- outbox_pending_due and outbox_sending_lease served only the `after` form of nextOutboundAt, which
-- nothing asks any more: the dispatcher's wake-up time comes from outbox_unsent_conversation.
-- provider_id is NULL until a send is recorded and inbox.conversation_id until the turn that
-- consumes the row: their indexes now hold only the rows that can match an equality lookup.
DROP INDEX outbox_pending_due;
DROP INDEX outbox_sending_lease;
DROP INDEX outbox_provider_id;
CREATE INDEX outbox_provider_id ON outbox (provider_id) WHERE provider_id IS NOT NULL;
DROP INDEX inbox_conversation;
CREATE INDEX inbox_conversation ON inbox (conversation_id, id) WHERE conversation_id IS NOT NULL;
