DROP INDEX players_username_key_pattern;
DROP INDEX matches_winner_created;
DROP INDEX matches_reason_created;
DROP INDEX matches_status_created;
DROP INDEX matches_mode_created;
DROP INDEX matches_ladder_created;
DROP INDEX matches_created;
