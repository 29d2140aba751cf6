-- Engine analysis of finished matches (issue 22): one row per match, queued
-- by a seated player or an admin, claimed by one instance's analysis worker
-- at a time through a lease (claimed_by, claimed_at: another instance takes
-- over a running analysis whose lease lapsed), computed once. `result` holds
-- the evaluations of the positions done so far as JSON text, so progress
-- survives a crash and a finished analysis is never recomputed.
CREATE TABLE analyses (
    match_id      TEXT PRIMARY KEY REFERENCES matches (id) ON DELETE CASCADE,
    status        TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done')),
    plies_done    INTEGER NOT NULL,
    plies_total   INTEGER NOT NULL,
    result        TEXT NOT NULL,
    requested_by  TEXT,
    claimed_by    TEXT,
    claimed_at    BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX analyses_waiting ON analyses (created_at) WHERE status <> 'done';
