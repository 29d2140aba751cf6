-- Issue 18: PostgreSQL compares ids as bytes (COLLATE "C"). SQLite
-- compares text as bytes already (BINARY); nothing changes here.
SELECT 1;
