UPDATE match_players SET mode = 'casual' WHERE mode = 'tournament';
UPDATE matches SET mode = 'casual' WHERE mode = 'tournament';
ALTER TABLE match_players DROP CONSTRAINT match_players_mode_check;
ALTER TABLE match_players ADD CONSTRAINT match_players_mode_check
    CHECK (mode IN ('ranked', 'casual', 'practice'));
ALTER TABLE matches DROP CONSTRAINT matches_mode_check;
ALTER TABLE matches ADD CONSTRAINT matches_mode_check
    CHECK (mode IN ('ranked', 'casual', 'practice'));
