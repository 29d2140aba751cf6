CREATE INDEX tournament_games_by_start ON tournament_games (tournament_id, created_at, match_id);
