CREATE TABLE matches (
    id                TEXT PRIMARY KEY,
    mode              TEXT NOT NULL CHECK (mode IN ('ranked', 'casual', 'practice')),
    ladder            TEXT,
    rated             BOOLEAN NOT NULL DEFAULT 0,
    depth             SMALLINT NOT NULL CHECK (depth BETWEEN 1 AND 4),
    tc_kind           TEXT NOT NULL CHECK (tc_kind IN ('clock', 'per_turn', 'none')),
    tc_initial_ms     BIGINT,
    tc_increment_ms   BIGINT,
    tc_turn_ms        BIGINT,
    -- NULL for a seat the CPU holds in a practice match.
    x_player_id       TEXT REFERENCES players (id) ON DELETE SET NULL,
    o_player_id       TEXT REFERENCES players (id) ON DELETE SET NULL,
    x_controller      TEXT NOT NULL CHECK (x_controller IN ('human', 'cpu')),
    o_controller      TEXT NOT NULL CHECK (o_controller IN ('human', 'cpu')),
    cpu_level         SMALLINT,
    -- The move record in the rules core's compact encoding; always equals the moves rows.
    position          BLOB NOT NULL,
    ply               INTEGER NOT NULL DEFAULT 0,
    to_move           TEXT CHECK (to_move IN ('x', 'o')),
    -- Clock banks at the start of the current turn (clock control only).
    x_bank_ms         BIGINT,
    o_bank_ms         BIGINT,
    turn_started_at   BIGINT NOT NULL,
    -- When the side to move loses on time; NULL without a limit or once finished.
    deadline_at       BIGINT,
    -- Active, and the side to move is played by the CPU.
    awaiting_cpu      BOOLEAN NOT NULL DEFAULT 0,
    -- A CPU worker is thinking on this ply until then (others leave it alone).
    cpu_claimed_until BIGINT,
    status            TEXT NOT NULL CHECK (status IN ('active', 'finished')),
    winner            TEXT CHECK (winner IN ('x', 'o')),
    reason            TEXT CHECK (reason IN ('three_in_a_row', 'draw', 'timeout', 'resignation')),
    room_code         TEXT,
    version           INTEGER NOT NULL DEFAULT 1,
    created_at        BIGINT NOT NULL,
    finished_at       BIGINT
);
-- The clock sweeper's claim: active matches by deadline.
CREATE INDEX matches_due ON matches (deadline_at) WHERE status = 'active' AND deadline_at IS NOT NULL;
-- The CPU mover's claim.
CREATE INDEX matches_awaiting_cpu ON matches (turn_started_at) WHERE awaiting_cpu;
-- A player's matches, newest first.
CREATE INDEX matches_x_player ON matches (x_player_id, created_at DESC, id DESC);
CREATE INDEX matches_o_player ON matches (o_player_id, created_at DESC, id DESC);

CREATE TABLE moves (
    match_id  TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    ply       INTEGER NOT NULL,
    seat      TEXT NOT NULL CHECK (seat IN ('x', 'o')),
    -- Flat square index; the address follows from the match's depth.
    square    INTEGER NOT NULL,
    played_at BIGINT NOT NULL,
    -- The mover's bank after the move (clock control).
    clock_ms  BIGINT,
    by_cpu    BOOLEAN NOT NULL DEFAULT 0,
    -- One move per ply: the last guard against a double move.
    PRIMARY KEY (match_id, ply)
);

CREATE TABLE rooms (
    code            TEXT PRIMARY KEY,
    host_id         TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    guest_id        TEXT REFERENCES players (id) ON DELETE SET NULL,
    depth           SMALLINT NOT NULL CHECK (depth BETWEEN 1 AND 4),
    tc_kind         TEXT NOT NULL CHECK (tc_kind IN ('clock', 'per_turn', 'none')),
    tc_initial_ms   BIGINT,
    tc_increment_ms BIGINT,
    tc_turn_ms      BIGINT,
    -- The room's current (latest) game.
    match_id        TEXT REFERENCES matches (id) ON DELETE SET NULL,
    games           INTEGER NOT NULL DEFAULT 0,
    created_at      BIGINT NOT NULL
);
