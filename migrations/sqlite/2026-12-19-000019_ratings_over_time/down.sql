DROP INDEX rating_changes_history;
DROP INDEX ratings_leaderboard;
CREATE INDEX ratings_leaderboard ON ratings (ladder, established DESC, rating DESC, player_id) WHERE games > 0;
ALTER TABLE ratings DROP COLUMN established_until;
ALTER TABLE ratings DROP COLUMN rated_at;
