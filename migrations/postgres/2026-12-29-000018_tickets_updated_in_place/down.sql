ALTER TABLE tickets RESET (fillfactor);
DROP INDEX tickets_created;
CREATE INDEX tickets_queued ON tickets (ladder, created_at) WHERE status = 'queued';
