-- `user` is a reserved word in PostgreSQL (it means current_user when unquoted), so both dialects
-- call the user's number `user_number`. Indexes follow the renamed columns.
ALTER TABLE conversations RENAME COLUMN "user" TO user_number;
ALTER TABLE inbox RENAME COLUMN "user" TO user_number;
ALTER TABLE outbox RENAME COLUMN "user" TO user_number;
ALTER TABLE timers RENAME COLUMN "user" TO user_number;
