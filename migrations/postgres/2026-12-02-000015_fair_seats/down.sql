ALTER TABLE matches DROP COLUMN o_lag_quota_ms;
ALTER TABLE matches DROP COLUMN x_lag_quota_ms;
