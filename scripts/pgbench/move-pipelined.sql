-- move.sql's transaction, the same five statements, sent in three round
-- trips as a pipelining client would send them: BEGIN with the locked read,
-- then the INSERT with the UPDATE (they touch different rows and need only
-- the read's answer), then COMMIT on its own, so that a COMMIT can never
-- overtake a write. What the server sent from 724d070 until it moved to
-- move-served.sql's two statements (README, "Moves against the database's
-- limit"). Needs pgbench 14 or later, with -M extended or prepared.
\set m :client_id + 1
\startpipeline
BEGIN;
SELECT id, ply, position, version, status FROM matches WHERE id = 'pgb' || :m FOR UPDATE;
\endpipeline
\startpipeline
INSERT INTO moves (match_id, ply, seat, square, played_at, clock_ms, by_cpu)
  SELECT id, ply, to_move, 40, 1, NULL, false FROM matches WHERE id = 'pgb' || :m;
UPDATE matches SET ply = ply + 1, version = version + 1, position = position || '\x28'::bytea,
  to_move = CASE to_move WHEN 'x' THEN 'o' ELSE 'x' END, turn_started_at = turn_started_at + 1
  WHERE id = 'pgb' || :m;
\endpipeline
COMMIT;
