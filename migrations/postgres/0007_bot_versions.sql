-- The bot version each conversation runs on (a bot's `version`, 1 unless declared). Not to be
-- confused with `version`, the optimistic-concurrency counter bumped by every committed turn.
ALTER TABLE conversations ADD COLUMN bot_version BIGINT NOT NULL DEFAULT 1;
-- Operators count and list live conversations by bot, version and state (colloquy check, conversations).
CREATE INDEX conversations_bot_version ON conversations (bot_id, bot_version) WHERE status = 'active';
