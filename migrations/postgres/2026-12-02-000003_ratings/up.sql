-- A player's Glicko-2 rating on one ladder. A row exists once the player has queued there.
CREATE TABLE ratings (
    player_id        TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    ladder           TEXT NOT NULL,
    rating           DOUBLE PRECISION NOT NULL,
    deviation        DOUBLE PRECISION NOT NULL,
    volatility       DOUBLE PRECISION NOT NULL,
    -- deviation <= 110: listed before provisional players on the leaderboard.
    established      BOOLEAN NOT NULL DEFAULT FALSE,
    games            INTEGER NOT NULL DEFAULT 0,
    wins             INTEGER NOT NULL DEFAULT 0,
    losses           INTEGER NOT NULL DEFAULT 0,
    draws            INTEGER NOT NULL DEFAULT 0,
    -- Colour balance: when the player last started a match as X here.
    last_x_at        BIGINT,
    -- The opponent of the player's last pairing here (not paired twice in a row).
    last_opponent_id TEXT,
    updated_at       BIGINT NOT NULL,
    PRIMARY KEY (player_id, ladder)
);
CREATE INDEX ratings_leaderboard ON ratings (ladder, established DESC, rating DESC, player_id) WHERE games > 0;

-- What a rated match did to each player's rating; the primary key makes
-- applying a result twice impossible.
CREATE TABLE rating_changes (
    match_id          TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat              TEXT NOT NULL CHECK (seat IN ('x', 'o')),
    player_id         TEXT NOT NULL,
    ladder            TEXT NOT NULL,
    score             DOUBLE PRECISION NOT NULL,
    rating_before     DOUBLE PRECISION NOT NULL,
    rating_after      DOUBLE PRECISION NOT NULL,
    deviation_before  DOUBLE PRECISION NOT NULL,
    deviation_after   DOUBLE PRECISION NOT NULL,
    volatility_before DOUBLE PRECISION NOT NULL,
    volatility_after  DOUBLE PRECISION NOT NULL,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX rating_changes_player ON rating_changes (player_id, created_at DESC);
