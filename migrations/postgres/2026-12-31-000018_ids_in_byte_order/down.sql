-- Back to the database's default collation.
ALTER TABLE analyses ALTER COLUMN match_id TYPE text COLLATE "default",
  ALTER COLUMN requested_by TYPE text COLLATE "default";
ALTER TABLE challenges ALTER COLUMN challenged_id TYPE text COLLATE "default",
  ALTER COLUMN challenger_id TYPE text COLLATE "default",
  ALTER COLUMN id TYPE text COLLATE "default",
  ALTER COLUMN match_id TYPE text COLLATE "default";
ALTER TABLE match_players ALTER COLUMN match_id TYPE text COLLATE "default",
  ALTER COLUMN player_id TYPE text COLLATE "default";
ALTER TABLE matches ALTER COLUMN id TYPE text COLLATE "default",
  ALTER COLUMN o_player_id TYPE text COLLATE "default",
  ALTER COLUMN x_player_id TYPE text COLLATE "default";
ALTER TABLE moves ALTER COLUMN match_id TYPE text COLLATE "default";
ALTER TABLE players ALTER COLUMN id TYPE text COLLATE "default";
ALTER TABLE rating_changes ALTER COLUMN match_id TYPE text COLLATE "default",
  ALTER COLUMN player_id TYPE text COLLATE "default";
ALTER TABLE ratings ALTER COLUMN last_opponent_id TYPE text COLLATE "default",
  ALTER COLUMN player_id TYPE text COLLATE "default";
ALTER TABLE refresh_tokens ALTER COLUMN family_id TYPE text COLLATE "default",
  ALTER COLUMN id TYPE text COLLATE "default",
  ALTER COLUMN player_id TYPE text COLLATE "default";
ALTER TABLE rooms ALTER COLUMN guest_id TYPE text COLLATE "default",
  ALTER COLUMN host_id TYPE text COLLATE "default",
  ALTER COLUMN match_id TYPE text COLLATE "default";
ALTER TABLE tickets ALTER COLUMN id TYPE text COLLATE "default",
  ALTER COLUMN match_id TYPE text COLLATE "default",
  ALTER COLUMN player_id TYPE text COLLATE "default";
ALTER TABLE tournament_games ALTER COLUMN match_id TYPE text COLLATE "default",
  ALTER COLUMN o_player_id TYPE text COLLATE "default",
  ALTER COLUMN tournament_id TYPE text COLLATE "default",
  ALTER COLUMN x_player_id TYPE text COLLATE "default";
ALTER TABLE tournament_players ALTER COLUMN last_opponent_id TYPE text COLLATE "default",
  ALTER COLUMN player_id TYPE text COLLATE "default",
  ALTER COLUMN tournament_id TYPE text COLLATE "default";
ALTER TABLE tournament_rounds ALTER COLUMN bye_player_id TYPE text COLLATE "default",
  ALTER COLUMN tournament_id TYPE text COLLATE "default";
ALTER TABLE tournaments ALTER COLUMN director_id TYPE text COLLATE "default",
  ALTER COLUMN id TYPE text COLLATE "default";
