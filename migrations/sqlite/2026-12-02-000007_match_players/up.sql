-- Who played in which match, one row per seated player, so a player's
-- matches come newest first from one index scan (an OR over the two seat
-- columns cannot walk an index in order).
CREATE TABLE match_players (
    match_id   TEXT NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat       TEXT NOT NULL CHECK (seat IN ('x', 'o')),
    player_id  TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX match_players_newest ON match_players (player_id, created_at DESC, match_id DESC);
INSERT INTO match_players (match_id, seat, player_id, created_at)
    SELECT id, 'x', x_player_id, created_at FROM matches WHERE x_player_id IS NOT NULL;
INSERT INTO match_players (match_id, seat, player_id, created_at)
    SELECT id, 'o', o_player_id, created_at FROM matches WHERE o_player_id IS NOT NULL;
DROP INDEX matches_x_player;
DROP INDEX matches_o_player;
