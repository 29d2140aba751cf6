-- The durable record of matchmaking tickets. The queue itself lives in the
-- broker (Redis); this table lets tickets survive a broker restart (they are
-- put back in the queue) and records the pairing in the match's transaction.
CREATE TABLE tickets (
    id          TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    ladder      TEXT NOT NULL,
    rating      REAL NOT NULL,
    status      TEXT NOT NULL CHECK (status IN ('queued', 'matched', 'cancelled')),
    match_id    TEXT,
    reason      TEXT,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX tickets_queued ON tickets (ladder, created_at) WHERE status = 'queued';
CREATE INDEX tickets_player ON tickets (player_id, created_at DESC);
