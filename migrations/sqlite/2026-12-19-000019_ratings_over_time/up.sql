-- Ratings over time (RULES.md): a deviation grows with the time since the
-- player's last rated game on the ladder, so the row keeps that time, and the
-- last instant at which the grown deviation is still at most 110 (computed
-- from deviation, volatility and UTTT_RATING_PERIODS_PER_DAY when a game is
-- recorded). "Established now" is then `established_until >= now`: a range
-- condition on an indexed column.
ALTER TABLE ratings ADD COLUMN rated_at BIGINT;
ALTER TABLE ratings ADD COLUMN established_until BIGINT;

UPDATE ratings SET rated_at = (
    SELECT MAX(c.created_at) FROM rating_changes c
    WHERE c.player_id = ratings.player_id AND c.ladder = ratings.ladder
) WHERE games > 0;
UPDATE ratings SET rated_at = updated_at WHERE games > 0 AND rated_at IS NULL;
-- The default 0.21436 periods a day; span = ((110/S)^2 - (deviation/S)^2) / volatility^2 periods.
UPDATE ratings SET established_until = rated_at + CAST(
    ((110.0 * 110.0 - deviation * deviation) / (173.7178 * 173.7178))
    / (volatility * volatility) / 0.21436 * 86400000.0 AS BIGINT)
WHERE rated_at IS NOT NULL AND deviation <= 110 AND volatility > 0;

-- Leaderboards list established players by rating: walk the rating order and
-- test established_until inside the index.
DROP INDEX ratings_leaderboard;
CREATE INDEX ratings_leaderboard ON ratings (ladder, rating DESC, player_id, established_until) WHERE games > 0;
-- A player's rating history on one ladder, oldest first.
CREATE INDEX rating_changes_history ON rating_changes (player_id, ladder, created_at);
