-- A claim token per send: a row's result is recorded only by the claim that is still holding it,
-- so a send that outlived its lease (and was claimed again elsewhere) cannot overwrite the row.
ALTER TABLE outbox ADD COLUMN claim TEXT;
