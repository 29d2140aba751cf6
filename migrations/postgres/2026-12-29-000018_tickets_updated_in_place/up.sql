-- Issue 18 (a pairing round of 10,000 tickets): the round marks each ticket
-- matched, and `status` was in the predicate of `tickets_queued`, so every
-- such update wrote a new tuple and an entry in each of the table's indexes.
-- Without an index over `status`, `match_id` or `updated_at`, and with room
-- left on each page, the update is a HOT update: the new tuple stays on its
-- page and no index is written. The queued tickets are now found through
-- `tickets_created` (restoring a lost queue, and every 30 s the search for
-- claims without a match), which the pruning worker keeps to about a day of
-- tickets by deleting the finished ones (store::tickets).
DROP INDEX tickets_queued;
CREATE INDEX tickets_created ON tickets (created_at);
ALTER TABLE tickets SET (fillfactor = 50);
