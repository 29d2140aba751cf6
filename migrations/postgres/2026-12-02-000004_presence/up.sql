-- The presence worker's scan: active matches by the start of the current turn.
CREATE INDEX matches_active_turns ON matches (turn_started_at) WHERE status = 'active';
