-- Issue 18: PostgreSQL trades `match_players_active` for an index of
-- practice seats, to spare a pairing round an index entry per seat. SQLite
-- writes a round in small batches and keeps its index; nothing changes here.
SELECT 1;
