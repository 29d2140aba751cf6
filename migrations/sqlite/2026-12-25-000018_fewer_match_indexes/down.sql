CREATE INDEX matches_ladder_created ON matches (ladder, created_at DESC, id DESC);
CREATE INDEX matches_mode_created ON matches (mode, created_at DESC, id DESC);
CREATE INDEX matches_status_created ON matches (status, created_at DESC, id DESC);
CREATE INDEX matches_reason_created ON matches (reason, created_at DESC, id DESC);
CREATE INDEX matches_winner_created ON matches (winner, created_at DESC, id DESC);
