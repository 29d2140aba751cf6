-- Issue 18: PostgreSQL trades `tickets_queued` for HOT updates of matched
-- tickets (see its migration). SQLite updates rows in place anyway; it only
-- gains the index the pruning of finished tickets walks.
CREATE INDEX tickets_created ON tickets (created_at);
