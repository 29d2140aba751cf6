-- Tournaments (issue 20: Swiss; the arena of issue 21 shares these tables).
-- A tournament's games are ordinary matches; these tables only say who
-- entered, which match belongs to which round and board, and who had a bye.
CREATE TABLE tournaments (
    id              TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL CHECK (kind IN ('swiss', 'arena')),
    status          TEXT NOT NULL CHECK (status IN ('registering', 'running', 'finished', 'cancelled')),
    director_id     TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    depth           SMALLINT NOT NULL CHECK (depth BETWEEN 1 AND 4),
    tc_kind         TEXT NOT NULL CHECK (tc_kind IN ('clock', 'per_turn', 'none')),
    tc_initial_ms   BIGINT,
    tc_increment_ms BIGINT,
    tc_turn_ms      BIGINT,
    -- Rated tournaments: the ladder whose ratings the games change.
    ladder          TEXT,
    rated           BOOLEAN NOT NULL,
    -- Swiss: the number of rounds, and the current one (0 before the start).
    rounds          INTEGER,
    round           INTEGER NOT NULL DEFAULT 0,
    round_pause_ms  BIGINT NOT NULL,
    -- Arena: how long it runs.
    duration_ms     BIGINT,
    -- NULL: the director starts it. Set to the start time once started.
    starts_at       BIGINT,
    ends_at         BIGINT,
    -- When the worker acts next (start, or pair the next round); NULL while a
    -- round is being played or the director starts it.
    next_at         BIGINT,
    max_players     INTEGER,
    entry_code      TEXT,
    min_rating      DOUBLE PRECISION,
    players         INTEGER NOT NULL DEFAULT 0,
    -- The version of the `tournament` event, bumped by every change.
    version         INTEGER NOT NULL DEFAULT 1,
    -- The list order: the start time, or the creation time while unscheduled.
    sort_at         BIGINT NOT NULL,
    created_at      BIGINT NOT NULL,
    finished_at     BIGINT
);
CREATE INDEX tournaments_status_sort ON tournaments (status, sort_at, id);
CREATE INDEX tournaments_sort ON tournaments (sort_at, id);
CREATE INDEX tournaments_due ON tournaments (next_at) WHERE next_at IS NOT NULL;

CREATE TABLE tournament_players (
    tournament_id TEXT NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    player_id     TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    -- The rating pairings and standings use: taken at joining, again at the start.
    rating        DOUBLE PRECISION NOT NULL,
    -- Withdrew or was removed: no further pairings; games played still count.
    withdrawn     BOOLEAN NOT NULL DEFAULT FALSE,
    joined_at     BIGINT NOT NULL,
    PRIMARY KEY (tournament_id, player_id)
);
CREATE INDEX tournament_players_player ON tournament_players (player_id);

-- One row per paired round: its primary key is the guarantee that a round is
-- paired once, whichever instance pairs it.
CREATE TABLE tournament_rounds (
    tournament_id TEXT NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    round         INTEGER NOT NULL,
    bye_player_id TEXT REFERENCES players (id) ON DELETE SET NULL,
    paired_at     BIGINT NOT NULL,
    PRIMARY KEY (tournament_id, round)
);

CREATE TABLE tournament_games (
    match_id      TEXT PRIMARY KEY REFERENCES matches (id) ON DELETE CASCADE,
    tournament_id TEXT NOT NULL REFERENCES tournaments (id) ON DELETE CASCADE,
    round         INTEGER NOT NULL,
    board         INTEGER NOT NULL,
    x_player_id   TEXT NOT NULL,
    o_player_id   TEXT NOT NULL,
    -- `x`, `o` or `draw`, recorded by the tournament worker once the match ended.
    result        TEXT CHECK (result IN ('x', 'o', 'draw')),
    created_at    BIGINT NOT NULL,
    UNIQUE (tournament_id, round, board)
);
CREATE INDEX tournament_games_unrecorded ON tournament_games (tournament_id) WHERE result IS NULL;
