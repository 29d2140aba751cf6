-- Challenges: one player invites a named player to a match. A pending
-- challenge becomes accepted (with its match), declined, cancelled by the
-- challenger, or expired when nobody answered before `expires_at`.
CREATE TABLE challenges (
    id              TEXT PRIMARY KEY,
    challenger_id   TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    challenged_id   TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    depth           SMALLINT NOT NULL,
    tc_kind         TEXT NOT NULL,
    tc_initial_ms   BIGINT,
    tc_increment_ms BIGINT,
    tc_turn_ms      BIGINT,
    seat            TEXT NOT NULL CHECK (seat IN ('x', 'o', 'random')),
    ladder          TEXT,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'cancelled', 'expired')),
    decline_reason  TEXT,
    match_id        TEXT,
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX challenges_pending_challenger ON challenges (challenger_id) WHERE status = 'pending';
CREATE INDEX challenges_pending_challenged ON challenges (challenged_id) WHERE status = 'pending';
CREATE INDEX challenges_pending_expiry ON challenges (expires_at) WHERE status = 'pending';
