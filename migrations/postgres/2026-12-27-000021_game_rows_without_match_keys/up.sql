-- Issue 21 (arena pass speed). A pass of 2,000 players writes 1,000
-- matches, their 2,000 seats and 1,000 games in one transaction, and each
-- seat and game checked its `match_id` against `matches` (a query and a
-- row lock per row: 13 ms of the seats' 50 ms and 8 ms of the games' 26 ms
-- in psql). Both are written only by the code that writes their match,
-- after it and in its transaction (store::matches::insert and insert_many,
-- store::tournaments::insert_game and insert_games, `uttt admin seed`),
-- and a match is never deleted, so the keys checked what cannot differ and
-- their cascades never ran. The seats keep their key to `players` (players
-- are deleted), and the games theirs to `tournaments`.
ALTER TABLE match_players DROP CONSTRAINT match_players_match_id_fkey;
ALTER TABLE tournament_games DROP CONSTRAINT tournament_games_match_id_fkey;
-- The games are listed by round and board (an arena's boards number its
-- games in the order they were paired), which the unique constraint
-- `(tournament_id, round, board)` already indexes: this index cost each new
-- game 3.5 ms per 1,000.
DROP INDEX tournament_games_by_start;
