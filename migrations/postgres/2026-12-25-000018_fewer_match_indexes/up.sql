-- Issue 18: every index on `matches` is written by every new match (a
-- pairing round writes thousands at once) and by every move (a move changes
-- indexed columns, so its update is never HOT and touches every index). The
-- admin history keeps `matches_created` (newest first) and the player
-- filter's `match_players_newest`; its filters on ladder, mode, status,
-- result and reason are low-cardinality columns, so a page walks
-- `matches_created` and skips the rows that do not pass, instead of five
-- more indexes paid for on every write.
DROP INDEX matches_ladder_created;
DROP INDEX matches_mode_created;
DROP INDEX matches_status_created;
DROP INDEX matches_reason_created;
DROP INDEX matches_winner_created;
-- The filters are correlated (a draw has no winner, ranked matches have a
-- ladder): without joint statistics the planner multiplies their
-- selectivities, expects no row for a combination such as ladder + reason +
-- result, and sorts the whole table instead of walking `matches_created`.
-- Statistics cost nothing on writes (ANALYZE gathers them).
CREATE STATISTICS matches_filters (mcv) ON ladder, mode, status, winner, reason FROM matches;
