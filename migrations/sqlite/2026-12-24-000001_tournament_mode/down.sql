-- Back to the three modes (tournament games become casual again).
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

UPDATE match_players SET mode = 'casual' WHERE mode = 'tournament';
UPDATE matches SET mode = 'casual' WHERE mode = 'tournament';
CREATE TABLE matches_new (
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
, x_lag_quota_ms BIGINT, o_lag_quota_ms BIGINT);
INSERT INTO matches_new SELECT * FROM matches;
DROP TABLE matches;
ALTER TABLE matches_new RENAME TO matches;
CREATE INDEX matches_active_turns ON matches (turn_started_at) WHERE status = 'active';
CREATE INDEX matches_awaiting_cpu ON matches (turn_started_at) WHERE awaiting_cpu;
CREATE INDEX matches_created ON matches (created_at DESC, id DESC);
CREATE INDEX matches_due ON matches (deadline_at) WHERE status = 'active' AND deadline_at IS NOT NULL;
CREATE INDEX matches_ladder_created ON matches (ladder, created_at DESC, id DESC);
CREATE INDEX matches_mode_created ON matches (mode, created_at DESC, id DESC);
CREATE INDEX matches_reason_created ON matches (reason, created_at DESC, id DESC);
CREATE INDEX matches_status_created ON matches (status, created_at DESC, id DESC);
CREATE INDEX matches_winner_created ON matches (winner, created_at DESC, id DESC);
CREATE TABLE match_players_new (
    match_id   TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat       TEXT NOT NULL CHECK (seat IN ('x', 'o')),
    player_id  TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL, mode TEXT NOT NULL DEFAULT 'casual'
    CHECK (mode IN ('ranked', 'casual', 'practice')), active BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (match_id, seat)
);
INSERT INTO match_players_new SELECT * FROM match_players;
DROP TABLE match_players;
ALTER TABLE match_players_new RENAME TO match_players;
CREATE INDEX match_players_active ON match_players (player_id, mode) WHERE active;
CREATE INDEX match_players_newest ON match_players (player_id, created_at DESC, match_id DESC);
CREATE UNIQUE INDEX match_players_one_ranked ON match_players (player_id) WHERE active AND mode = 'ranked';
COMMIT;
PRAGMA foreign_keys = ON;
