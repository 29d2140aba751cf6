-- Issue 21 (arena pass speed): a new match's seats were checked against
-- `players` twice, once by these two keys on `matches` and again by
-- `match_players.player_id`, written with every seated player in the same
-- transaction (store::matches::insert and insert_many). An arena pass of
-- 2,000 players paid 2,000 of these redundant checks (each a query and a
-- row lock on the player). The seats' key stays and still refuses a match
-- whose player does not exist; what these keys also did, emptying the
-- seats of a deleted player (ON DELETE SET NULL), store::players::delete
-- now does in its own transaction, through `match_players`, before the
-- player (and with them their `match_players` rows) is deleted.
ALTER TABLE matches DROP CONSTRAINT matches_x_player_id_fkey;
ALTER TABLE matches DROP CONSTRAINT matches_o_player_id_fkey;
