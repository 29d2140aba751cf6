DROP INDEX matches_active_turns;
