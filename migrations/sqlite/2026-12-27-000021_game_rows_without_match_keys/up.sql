-- Issue 21: the games are listed by round and board, which the unique
-- constraint `(tournament_id, round, board)` indexes (see the PostgreSQL
-- migration). SQLite keeps the `match_id` keys of `match_players` and
-- `tournament_games`: dropping a key means rebuilding the table, and its
-- writes are not the arena benchmark's. They never fire (a match is never
-- deleted, and its seats and games are written after it).
DROP INDEX tournament_games_by_start;
