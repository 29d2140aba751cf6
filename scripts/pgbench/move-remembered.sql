-- The database work of one move as uttt sends it since the fourteenth
-- session of 2026-12-06 (store/pipelined.rs, store/remembered.rs): the
-- server remembers the match row its last move wrote, so a move judged on
-- it is one statement, one round trip: the guarded write of the row and
-- the move, which reads the seating the answer shows. The row is read (the
-- row alone) only when none is remembered: here, on a client's first
-- transaction (run.sh starts every client with :version 0).
-- move-served.sql is a move without a remembered row. The names are
-- aliased and set (\gset) only so that a write that found no row ends the
-- run with an error instead of counting a transaction that wrote nothing.
\set m :client_id + 1
\if :version = 0
SELECT "matches"."id", "matches"."mode", "matches"."ladder", "matches"."rated", "matches"."depth",
  "matches"."tc_kind", "matches"."tc_initial_ms", "matches"."tc_increment_ms", "matches"."tc_turn_ms",
  "matches"."x_player_id", "matches"."o_player_id", "matches"."x_controller", "matches"."o_controller",
  "matches"."cpu_level", "matches"."position", "matches"."ply", "matches"."to_move", "matches"."x_bank_ms",
  "matches"."o_bank_ms", "matches"."turn_started_at", "matches"."deadline_at", "matches"."awaiting_cpu",
  "matches"."cpu_claimed_until", "matches"."status", "matches"."winner", "matches"."reason",
  "matches"."room_code", "matches"."version", "matches"."created_at", "matches"."finished_at",
  "matches"."x_lag_quota_ms", "matches"."o_lag_quota_ms"
  FROM "matches" WHERE "matches"."id" = 'pgb' || :m LIMIT 1 \gset
\endif
WITH updated AS (UPDATE "matches" SET "mode" = "mode", "ladder" = "ladder", "rated" = "rated",
    "depth" = "depth", "tc_kind" = "tc_kind", "tc_initial_ms" = "tc_initial_ms",
    "tc_increment_ms" = "tc_increment_ms", "tc_turn_ms" = "tc_turn_ms", "x_player_id" = "x_player_id",
    "o_player_id" = "o_player_id", "x_controller" = "x_controller", "o_controller" = "o_controller",
    "cpu_level" = "cpu_level", "position" = "position" || '\x28'::bytea, "ply" = :ply + 1,
    "to_move" = CASE "to_move" WHEN 'x' THEN 'o' ELSE 'x' END, "x_bank_ms" = "x_bank_ms",
    "o_bank_ms" = "o_bank_ms", "turn_started_at" = "turn_started_at" + 1, "deadline_at" = "deadline_at",
    "awaiting_cpu" = "awaiting_cpu", "cpu_claimed_until" = NULL, "status" = "status",
    "winner" = "winner", "reason" = "reason", "room_code" = "room_code", "version" = :version + 1,
    "created_at" = "created_at", "finished_at" = "finished_at", "x_lag_quota_ms" = "x_lag_quota_ms",
    "o_lag_quota_ms" = "o_lag_quota_ms"
  WHERE "matches"."id" = 'pgb' || :m AND "matches"."version" = :version
    AND "matches"."x_player_id" IS NOT DISTINCT FROM :x_player_id
    AND "matches"."o_player_id" IS NOT DISTINCT FROM :o_player_id
    AND "matches"."cpu_claimed_until" IS NOT DISTINCT FROM NULL
  RETURNING "matches"."id", "matches"."x_player_id", "matches"."o_player_id"),
inserted AS (
INSERT INTO "moves" ("match_id", "ply", "seat", "square", "played_at", "clock_ms", "by_cpu")
  SELECT 'pgb' || :m, :ply, 'x', 40, 1, NULL, false FROM updated)
SELECT (SELECT username FROM players WHERE players.id = matches.x_player_id) AS x_name,
  (SELECT username FROM players WHERE players.id = matches.o_player_id) AS o_name,
  (SELECT bot FROM players WHERE players.id = matches.x_player_id) AS x_bot,
  (SELECT bot FROM players WHERE players.id = matches.o_player_id) AS o_bot,
  (SELECT tournament_id FROM tournament_games WHERE tournament_games.match_id = matches.id) AS tournament,
  (SELECT round FROM tournament_games WHERE tournament_games.match_id = matches.id) AS round
  FROM updated AS "matches" \gset
\set ply :ply + 1
\set version :version + 1
