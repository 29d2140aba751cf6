DROP INDEX match_players_practice;
CREATE INDEX match_players_active ON match_players (player_id, mode) WHERE active;
