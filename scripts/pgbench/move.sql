-- The database work of one move as uttt does it (service/matches/play.rs):
-- lock the match row, write the move, write the match; one transaction.
-- Each client plays on its own match, like one game per HTTP client.
\set m :client_id + 1
BEGIN;
SELECT id, ply, position, version, status FROM matches WHERE id = 'pgb' || :m FOR UPDATE;
INSERT INTO moves (match_id, ply, seat, square, played_at, clock_ms, by_cpu)
  SELECT id, ply, to_move, 40, 1, NULL, false FROM matches WHERE id = 'pgb' || :m;
UPDATE matches SET ply = ply + 1, version = version + 1, position = position || '\x28'::bytea,
  to_move = CASE to_move WHEN 'x' THEN 'o' ELSE 'x' END, turn_started_at = 1
  WHERE id = 'pgb' || :m;
COMMIT;
