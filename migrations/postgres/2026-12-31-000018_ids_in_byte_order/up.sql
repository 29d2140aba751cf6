-- Issue 18: ids compare as bytes. Every id is base-62 ASCII, so byte order
-- is the only order any query needs, but a column of the database's
-- default collation compares through the locale (`strcoll`), even under
-- C.UTF-8 on PostgreSQL 15: a profile of a 100,000-ticket pairing round put
-- that machinery at about 7 % of PostgreSQL's time, in the index inserts and
-- key probes of ids (`_bt_compare`, `varstr_cmp`, `strcoll_l`), and more
-- under a locale such as en_US.UTF-8. With `COLLATE "C"` a comparison is a
-- `memcmp`. Every column that holds an id, and every column compared with
-- one, changes together, so that no comparison mixes two collations. The
-- tables are not rewritten; their indexes on these columns are rebuilt
-- (under an exclusive lock: on a large live database, run it in a quiet
-- moment).
ALTER TABLE analyses ALTER COLUMN match_id TYPE text COLLATE "C",
  ALTER COLUMN requested_by TYPE text COLLATE "C";
ALTER TABLE challenges ALTER COLUMN challenged_id TYPE text COLLATE "C",
  ALTER COLUMN challenger_id TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN match_id TYPE text COLLATE "C";
ALTER TABLE match_players ALTER COLUMN match_id TYPE text COLLATE "C",
  ALTER COLUMN player_id TYPE text COLLATE "C";
ALTER TABLE matches ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN o_player_id TYPE text COLLATE "C",
  ALTER COLUMN x_player_id TYPE text COLLATE "C";
ALTER TABLE moves ALTER COLUMN match_id TYPE text COLLATE "C";
ALTER TABLE players ALTER COLUMN id TYPE text COLLATE "C";
ALTER TABLE rating_changes ALTER COLUMN match_id TYPE text COLLATE "C",
  ALTER COLUMN player_id TYPE text COLLATE "C";
ALTER TABLE ratings ALTER COLUMN last_opponent_id TYPE text COLLATE "C",
  ALTER COLUMN player_id TYPE text COLLATE "C";
ALTER TABLE refresh_tokens ALTER COLUMN family_id TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN player_id TYPE text COLLATE "C";
ALTER TABLE rooms ALTER COLUMN guest_id TYPE text COLLATE "C",
  ALTER COLUMN host_id TYPE text COLLATE "C",
  ALTER COLUMN match_id TYPE text COLLATE "C";
ALTER TABLE tickets ALTER COLUMN id TYPE text COLLATE "C",
  ALTER COLUMN match_id TYPE text COLLATE "C",
  ALTER COLUMN player_id TYPE text COLLATE "C";
ALTER TABLE tournament_games ALTER COLUMN match_id TYPE text COLLATE "C",
  ALTER COLUMN o_player_id TYPE text COLLATE "C",
  ALTER COLUMN tournament_id TYPE text COLLATE "C",
  ALTER COLUMN x_player_id TYPE text COLLATE "C";
ALTER TABLE tournament_players ALTER COLUMN last_opponent_id TYPE text COLLATE "C",
  ALTER COLUMN player_id TYPE text COLLATE "C",
  ALTER COLUMN tournament_id TYPE text COLLATE "C";
ALTER TABLE tournament_rounds ALTER COLUMN bye_player_id TYPE text COLLATE "C",
  ALTER COLUMN tournament_id TYPE text COLLATE "C";
ALTER TABLE tournaments ALTER COLUMN director_id TYPE text COLLATE "C",
  ALTER COLUMN id TYPE text COLLATE "C";
