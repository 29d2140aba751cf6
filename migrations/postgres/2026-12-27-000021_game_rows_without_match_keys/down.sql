CREATE INDEX tournament_games_by_start ON tournament_games (tournament_id, created_at, match_id);
ALTER TABLE tournament_games ADD CONSTRAINT tournament_games_match_id_fkey
    FOREIGN KEY (match_id) REFERENCES matches (id) ON DELETE CASCADE;
ALTER TABLE match_players ADD CONSTRAINT match_players_match_id_fkey
    FOREIGN KEY (match_id) REFERENCES matches (id) ON DELETE CASCADE;
