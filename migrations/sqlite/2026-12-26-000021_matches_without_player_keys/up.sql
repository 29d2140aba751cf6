-- Issue 21: PostgreSQL drops the keys of `matches.x_player_id` and
-- `o_player_id` to `players` (see its migration). SQLite keeps them: it
-- cannot drop a constraint without rebuilding the 32-column `matches`
-- table, and its writes are not the arena benchmark's. They agree with the
-- explicit emptying of a deleted player's seats in store::players::delete
-- (which runs first and leaves the keys nothing to do). No change.
SELECT 1;
