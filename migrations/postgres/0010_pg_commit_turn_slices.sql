-- The group commit's per-turn plumbing, cheaper. colloquy_commit_turns (0009) found each turn's
-- outbox rows and timers by scanning four whole "which turn" arrays per turn and rebuilt eleven
-- arrays with a subquery each: per turn a dozen statements of its own beside the turn's writes, and
-- quadratic in the batch. The caller sends each turn's entries contiguously, so a turn's part is a
-- slice: colloquy_commit_turn_batch takes where each turn's entries start and how many there are.
-- 0009's function stays (a process of the previous version may still call it during a rollout).
CREATE FUNCTION colloquy_commit_turn_batch(
  p_conversation_id  BIGINT[],
  p_expected_version BIGINT[],
  p_bot_id           TEXT[],
  p_user             TEXT[],
  p_status           TEXT[],
  p_snapshot         TEXT[],
  p_state            TEXT[],
  p_flow_token       TEXT[],
  p_channel          TEXT[],
  p_last_prompt      TEXT[],
  p_now              BIGINT[],
  p_user_activity    BOOLEAN[],
  p_ended_at         BIGINT[],
  p_bot_version      BIGINT[],
  p_inbox_id         BIGINT[],
  p_inbox_note       TEXT[],
  -- Per turn: the first index (1-based) and the count of its entries in the arrays below.
  p_o_from           INTEGER[],
  p_o_count          INTEGER[],
  p_kinds            TEXT[],
  p_messages         TEXT[],
  p_channels         TEXT[],
  p_requests         TEXT[],
  p_fallback_of      BIGINT[],
  p_r_from           INTEGER[],
  p_r_count          INTEGER[],
  p_timers_removed   TEXT[],
  p_a_from           INTEGER[],
  p_a_count          INTEGER[],
  p_active_nodes     TEXT[],
  p_u_from           INTEGER[],
  p_u_count          INTEGER[],
  p_timer_keys       TEXT[],
  p_timer_nodes      TEXT[],
  p_timer_events     TEXT[],
  p_timer_fire_at    BIGINT[]
) RETURNS TABLE (batch_n INTEGER, batch_conversation_id BIGINT, batch_outbox_ids BIGINT[]) LANGUAGE plpgsql AS $$
DECLARE
  o1 INTEGER; o2 INTEGER; r1 INTEGER; r2 INTEGER; a1 INTEGER; a2 INTEGER; u1 INTEGER; u2 INTEGER;
BEGIN
  FOR i IN 1 .. COALESCE(array_length(p_bot_id, 1), 0) LOOP
    -- A slice past the end, or of a count of 0, is empty.
    o1 := p_o_from[i]; o2 := o1 + p_o_count[i] - 1;
    r1 := p_r_from[i]; r2 := r1 + p_r_count[i] - 1;
    a1 := p_a_from[i]; a2 := a1 + p_a_count[i] - 1;
    u1 := p_u_from[i]; u2 := u1 + p_u_count[i] - 1;
    batch_n := i;
    SELECT c.turn_conversation_id, c.turn_outbox_ids INTO batch_conversation_id, batch_outbox_ids
    FROM colloquy_commit_turn(p_conversation_id[i], p_expected_version[i], p_bot_id[i], p_user[i], p_status[i], p_snapshot[i],
      p_state[i], p_flow_token[i], p_channel[i], p_last_prompt[i], p_now[i], p_user_activity[i], p_ended_at[i], p_bot_version[i],
      p_inbox_id[i], p_inbox_note[i],
      COALESCE(p_kinds[o1:o2], '{}'), COALESCE(p_messages[o1:o2], '{}'), COALESCE(p_channels[o1:o2], '{}'),
      COALESCE(p_requests[o1:o2], '{}'), COALESCE(p_fallback_of[o1:o2], '{}'),
      TRUE, COALESCE(p_timers_removed[r1:r2], '{}'), COALESCE(p_active_nodes[a1:a2], '{}'),
      COALESCE(p_timer_keys[u1:u2], '{}'), COALESCE(p_timer_nodes[u1:u2], '{}'),
      COALESCE(p_timer_events[u1:u2], '{}'), COALESCE(p_timer_fire_at[u1:u2], '{}')) AS c;
    RETURN NEXT;
  END LOOP;
END;
$$;
