ALTER TABLE match_players ADD CONSTRAINT match_players_player_id_fkey
    FOREIGN KEY (player_id) REFERENCES players (id) ON DELETE CASCADE;
