-- Match history for admins: every filter walks an index in the list's order
-- (newest first), so a page costs about its size whatever the table holds.
CREATE INDEX matches_created ON matches (created_at DESC, id DESC);
CREATE INDEX matches_ladder_created ON matches (ladder, created_at DESC, id DESC);
CREATE INDEX matches_mode_created ON matches (mode, created_at DESC, id DESC);
CREATE INDEX matches_status_created ON matches (status, created_at DESC, id DESC);
CREATE INDEX matches_reason_created ON matches (reason, created_at DESC, id DESC);
CREATE INDEX matches_winner_created ON matches (winner, created_at DESC, id DESC);
-- Username prefix search: a range on the lower-cased name.
CREATE INDEX players_username_key_pattern ON players (username_key text_pattern_ops);
