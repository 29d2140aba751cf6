DROP INDEX tournament_games_by_start;
ALTER TABLE tournament_players DROP COLUMN removed;
ALTER TABLE tournament_players DROP COLUMN back_at;
ALTER TABLE tournament_games DROP COLUMN o_berserk;
ALTER TABLE tournament_games DROP COLUMN x_berserk;
