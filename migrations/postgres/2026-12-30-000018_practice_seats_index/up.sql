-- Issue 18 (a pairing round of 10,000 tickets): every seat a round writes
-- was entered in `match_players_active (player_id, mode) WHERE active`,
-- though ranked seats are found through `match_players_one_ranked` alone.
-- The only other probe of unfinished seats counts a player's practice
-- matches; it gets an index of practice seats, which ranked seats skip.
-- The probes write the mode as text (store::matches::unfinished_seats_of),
-- so prepared statements' generic plans still match these partial indexes.
DROP INDEX match_players_active;
CREATE INDEX match_players_practice ON match_players (player_id) WHERE active AND mode = 'practice';
