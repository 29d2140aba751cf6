ALTER TABLE matches ADD CONSTRAINT matches_x_player_id_fkey
    FOREIGN KEY (x_player_id) REFERENCES players (id) ON DELETE SET NULL;
ALTER TABLE matches ADD CONSTRAINT matches_o_player_id_fkey
    FOREIGN KEY (o_player_id) REFERENCES players (id) ON DELETE SET NULL;
