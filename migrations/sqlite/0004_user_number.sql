-- `user` is a reserved word in PostgreSQL (it means current_user when unquoted), so both dialects
-- call the user's number `user_number`. SQLite renames the indexes' columns along with the tables'.
ALTER TABLE conversations RENAME COLUMN user TO user_number;
ALTER TABLE inbox RENAME COLUMN user TO user_number;
ALTER TABLE outbox RENAME COLUMN user TO user_number;
ALTER TABLE timers RENAME COLUMN user TO user_number;
