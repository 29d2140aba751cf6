-- Tournament games get a mode of their own (they were stored as casual
-- matches and only their state said `tournament`), so the admin history and
-- a player's match list filter them like any other mode.
ALTER TABLE matches DROP CONSTRAINT matches_mode_check;
ALTER TABLE matches ADD CONSTRAINT matches_mode_check
    CHECK (mode IN ('ranked', 'casual', 'practice', 'tournament'));
ALTER TABLE match_players DROP CONSTRAINT match_players_mode_check;
ALTER TABLE match_players ADD CONSTRAINT match_players_mode_check
    CHECK (mode IN ('ranked', 'casual', 'practice', 'tournament'));
UPDATE matches SET mode = 'tournament'
    WHERE id IN (SELECT match_id FROM tournament_games);
UPDATE match_players SET mode = 'tournament'
    WHERE match_id IN (SELECT match_id FROM tournament_games);
