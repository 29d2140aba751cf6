-- The database work of one move as uttt did it when issue 18 was filed, and
-- still does on its locked path (service/matches/play.rs: SQLite, a move
-- that ends a rated or tournament game, UTTT_DB_PIPELINE_SIZE=0): lock the match row, write
-- the move, write the match; one transaction.
-- Each client plays on its own match, like one game per HTTP client.
-- turn_started_at changes with every move, as the server's does (the time
-- the next turn began): the column is indexed (matches_active_turns,
-- matches_awaiting_cpu), so the UPDATE writes new index entries instead of
-- being a HOT update. Until 2026-12-05 this script set it to 1 every time,
-- which left the indexed columns unchanged and let PostgreSQL skip that
-- work the server's moves do.
\set m :client_id + 1
BEGIN;
SELECT id, ply, position, version, status FROM matches WHERE id = 'pgb' || :m FOR UPDATE;
INSERT INTO moves (match_id, ply, seat, square, played_at, clock_ms, by_cpu)
  SELECT id, ply, to_move, 40, 1, NULL, false FROM matches WHERE id = 'pgb' || :m;
UPDATE matches SET ply = ply + 1, version = version + 1, position = position || '\x28'::bytea,
  to_move = CASE to_move WHEN 'x' THEN 'o' ELSE 'x' END, turn_started_at = turn_started_at + 1
  WHERE id = 'pgb' || :m;
COMMIT;
