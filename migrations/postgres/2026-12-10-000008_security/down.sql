DROP INDEX refresh_tokens_expires;
DROP INDEX rooms_unjoined;
DROP INDEX rooms_open_by_host;
DROP INDEX match_players_active;
DROP INDEX match_players_one_ranked;
ALTER TABLE match_players DROP COLUMN active;
ALTER TABLE match_players DROP COLUMN mode;
