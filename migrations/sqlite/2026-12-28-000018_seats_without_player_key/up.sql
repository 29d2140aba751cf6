-- Issue 18: PostgreSQL drops the key of `match_players.player_id` to
-- `players` for store::seat_guard's one check per transaction (see its
-- migration). SQLite keeps it: one writer at a time, and dropping a
-- constraint would rebuild the table. The guard's check and the explicit
-- deletion of a deleted player's seats agree with it. No change.
SELECT 1;
