-- Fair seats (issue 15): each seat's lag-compensation quota (ms); NULL is the
-- time control's starting quota.
ALTER TABLE matches ADD COLUMN x_lag_quota_ms BIGINT;
ALTER TABLE matches ADD COLUMN o_lag_quota_ms BIGINT;
