CREATE INDEX matches_x_player ON matches (x_player_id, created_at DESC, id DESC);
CREATE INDEX matches_o_player ON matches (o_player_id, created_at DESC, id DESC);
DROP TABLE match_players;
