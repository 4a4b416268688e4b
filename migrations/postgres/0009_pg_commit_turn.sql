-- A turn's commit in one round trip: the conversation (created, or updated under the version
-- check), the consumed inbound (under its `pending` guard), the outbox rows in the turn's order, and
-- the timers. What the store did statement by statement (pg-turns.ts), done here server-side: one
-- call instead of 5–10 round trips, and as one autocommitted statement no BEGIN or COMMIT either.
-- A lost race (another writer committed the turn, created the conversation or consumed the inbound
-- first) raises SQLSTATE CQ409, which the store turns into a VersionConflictError; the raise undoes
-- everything the call wrote. The handoff part of a turn stays in the store (rare, and it builds its
-- events' payloads in TypeScript): then the store calls this with p_apply_timers = false inside its
-- transaction and applies the timers itself after the handoff, in the old order.
CREATE FUNCTION colloquy_commit_turn(
  p_conversation_id  BIGINT,
  p_expected_version BIGINT,
  p_bot_id           TEXT,
  p_user             TEXT,
  p_status           TEXT,
  p_snapshot         TEXT,
  p_state            TEXT,
  p_flow_token       TEXT,
  p_channel          TEXT,
  p_last_prompt      TEXT,
  p_now              BIGINT,
  p_user_activity    BOOLEAN,
  p_ended_at         BIGINT,
  p_bot_version      BIGINT,
  p_inbox_id         BIGINT,
  p_inbox_note       TEXT,
  p_kinds            TEXT[],
  p_messages         TEXT[],
  p_channels         TEXT[],
  p_requests         TEXT[],
  p_fallback_of      BIGINT[],
  p_apply_timers     BOOLEAN,
  p_timers_removed   TEXT[],
  p_active_nodes     TEXT[],
  p_timer_keys       TEXT[],
  p_timer_nodes      TEXT[],
  p_timer_events     TEXT[],
  p_timer_fire_at    BIGINT[],
  OUT turn_conversation_id BIGINT,
  OUT turn_outbox_ids      BIGINT[]
) LANGUAGE plpgsql AS $$
DECLARE
  v_id BIGINT := p_conversation_id;
  v_row BIGINT;
BEGIN
  turn_outbox_ids := '{}';
  IF v_id IS NULL THEN
    -- Any unique index refusing the row (the active conversation of this user, the flow token) means
    -- another writer was first: a conflict, without the cost of a subtransaction to catch it.
    INSERT INTO conversations (bot_id, user_number, status, snapshot, state, version, flow_token, channel, last_prompt,
        created_at, updated_at, last_activity_at, ended_at, bot_version)
      VALUES (p_bot_id, p_user, p_status, p_snapshot, p_state, 1, p_flow_token, COALESCE(p_channel, 'interactive'), p_last_prompt,
        p_now, p_now, p_now, p_ended_at, COALESCE(p_bot_version, 1))
      ON CONFLICT DO NOTHING RETURNING id INTO v_id;
    IF v_id IS NULL THEN
      RAISE EXCEPTION 'conversation of % % created by another writer', p_bot_id, p_user USING ERRCODE = 'CQ409';
    END IF;
  ELSE
    UPDATE conversations SET snapshot = p_snapshot, state = p_state, status = p_status, version = version + 1,
        channel = COALESCE(p_channel, channel), last_prompt = COALESCE(p_last_prompt, last_prompt), updated_at = p_now,
        last_activity_at = CASE WHEN p_user_activity THEN p_now ELSE last_activity_at END, ended_at = p_ended_at,
        bot_version = COALESCE(p_bot_version, bot_version)
      WHERE id = v_id AND version = p_expected_version;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'conversation % is no longer at version %', v_id, p_expected_version USING ERRCODE = 'CQ409';
    END IF;
  END IF;
  turn_conversation_id := v_id;
  IF p_inbox_id IS NOT NULL THEN
    -- An inbound consumed by another writer (the same turn in two processes) must not run twice.
    UPDATE inbox SET state = 'done', conversation_id = v_id, attempts = attempts + 1, processed_at = p_now,
        outbox_mark = (SELECT COALESCE(MAX(m.id), 0) FROM outbox m WHERE m.conversation_id = v_id), error = p_inbox_note
      WHERE id = p_inbox_id AND state = 'pending';
    IF NOT FOUND THEN
      RAISE EXCEPTION 'inbound % was consumed by another writer', p_inbox_id USING ERRCODE = 'CQ409';
    END IF;
  END IF;
  -- One by one, so that ids follow the turn's order.
  FOR i IN 1 .. COALESCE(array_length(p_kinds, 1), 0) LOOP
    INSERT INTO outbox (conversation_id, bot_id, user_number, inbox_id, kind, message, channel, request, next_attempt_at, fallback_of, created_at)
      VALUES (v_id, p_bot_id, p_user, p_inbox_id, p_kinds[i], p_messages[i], p_channels[i], p_requests[i], p_now, p_fallback_of[i], p_now)
      RETURNING id INTO v_row;
    turn_outbox_ids := turn_outbox_ids || v_row;
  END LOOP;
  IF p_apply_timers THEN
    IF p_status <> 'active' THEN
      DELETE FROM timers WHERE conversation_id = v_id;
    ELSE
      DELETE FROM timers WHERE conversation_id = v_id AND key = ANY (p_timers_removed);
      -- Timers armed by states the conversation has left.
      DELETE FROM timers WHERE conversation_id = v_id AND state_node IS NOT NULL AND NOT (state_node = ANY (p_active_nodes));
      FOR i IN 1 .. COALESCE(array_length(p_timer_keys, 1), 0) LOOP
        INSERT INTO timers (conversation_id, bot_id, user_number, key, state_node, event, fire_at)
          VALUES (v_id, p_bot_id, p_user, p_timer_keys[i], p_timer_nodes[i], p_timer_events[i], p_timer_fire_at[i])
          ON CONFLICT (conversation_id, key) DO UPDATE SET state_node = EXCLUDED.state_node, event = EXCLUDED.event, fire_at = EXCLUDED.fire_at;
      END LOOP;
    END IF;
  END IF;
END;
$$;

-- Several turns in one call (the store's group commit: turns ready together commit together, in
-- one transaction and one WAL flush). Turn i's outbox rows, removed timers, active state nodes and
-- timer upserts are the entries whose *_turn is i. All or nothing: one turn's conflict fails the
-- call, and the store then commits each turn alone, for each its own outcome.
CREATE FUNCTION colloquy_commit_turns(
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
  p_o_turn           INTEGER[],
  p_kinds            TEXT[],
  p_messages         TEXT[],
  p_channels         TEXT[],
  p_requests         TEXT[],
  p_fallback_of      BIGINT[],
  p_r_turn           INTEGER[],
  p_timers_removed   TEXT[],
  p_a_turn           INTEGER[],
  p_active_nodes     TEXT[],
  p_u_turn           INTEGER[],
  p_timer_keys       TEXT[],
  p_timer_nodes      TEXT[],
  p_timer_events     TEXT[],
  p_timer_fire_at    BIGINT[]
) RETURNS TABLE (batch_n INTEGER, batch_conversation_id BIGINT, batch_outbox_ids BIGINT[]) LANGUAGE plpgsql AS $$
DECLARE
  o INTEGER[];
  r INTEGER[];
  a INTEGER[];
  u INTEGER[];
BEGIN
  FOR i IN 1 .. COALESCE(array_length(p_bot_id, 1), 0) LOOP
    o := ARRAY(SELECT j FROM generate_subscripts(p_o_turn, 1) AS j WHERE p_o_turn[j] = i ORDER BY j);
    r := ARRAY(SELECT j FROM generate_subscripts(p_r_turn, 1) AS j WHERE p_r_turn[j] = i ORDER BY j);
    a := ARRAY(SELECT j FROM generate_subscripts(p_a_turn, 1) AS j WHERE p_a_turn[j] = i ORDER BY j);
    u := ARRAY(SELECT j FROM generate_subscripts(p_u_turn, 1) AS j WHERE p_u_turn[j] = i ORDER BY j);
    batch_n := i;
    SELECT c.turn_conversation_id, c.turn_outbox_ids INTO batch_conversation_id, batch_outbox_ids
    FROM colloquy_commit_turn(p_conversation_id[i], p_expected_version[i], p_bot_id[i], p_user[i], p_status[i], p_snapshot[i],
      p_state[i], p_flow_token[i], p_channel[i], p_last_prompt[i], p_now[i], p_user_activity[i], p_ended_at[i], p_bot_version[i],
      p_inbox_id[i], p_inbox_note[i],
      ARRAY(SELECT p_kinds[j] FROM unnest(o) AS j), ARRAY(SELECT p_messages[j] FROM unnest(o) AS j),
      ARRAY(SELECT p_channels[j] FROM unnest(o) AS j), ARRAY(SELECT p_requests[j] FROM unnest(o) AS j),
      ARRAY(SELECT p_fallback_of[j] FROM unnest(o) AS j),
      TRUE, ARRAY(SELECT p_timers_removed[j] FROM unnest(r) AS j), ARRAY(SELECT p_active_nodes[j] FROM unnest(a) AS j),
      ARRAY(SELECT p_timer_keys[j] FROM unnest(u) AS j), ARRAY(SELECT p_timer_nodes[j] FROM unnest(u) AS j),
      ARRAY(SELECT p_timer_events[j] FROM unnest(u) AS j), ARRAY(SELECT p_timer_fire_at[j] FROM unnest(u) AS j)) AS c;
    RETURN NEXT;
  END LOOP;
END;
$$;
