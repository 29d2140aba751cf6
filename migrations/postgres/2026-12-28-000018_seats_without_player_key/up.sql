-- Issue 18 (a pairing round of 10,000 tickets): each of a round's 10,000
-- seats checked its `player_id` against `players` (a trigger query and a
-- row lock per seat). In its place every transaction that writes seats
-- (store::matches::insert and insert_many) takes a shared advisory lock and
-- checks all its players in one statement, and store::players::delete takes
-- that lock exclusively and deletes the player's seats itself
-- (store::seat_guard). A seat still never names a player who does not exist.
ALTER TABLE match_players DROP CONSTRAINT match_players_player_id_fkey;
