-- Arena tournaments (issue 21). A game's berserks live here, not on
-- `matches` (at diesel's 32-column limit); the points are recomputed from
-- the games by the pure core, so nothing else is stored per game.
ALTER TABLE tournament_games ADD COLUMN x_berserk BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE tournament_games ADD COLUMN o_berserk BOOLEAN NOT NULL DEFAULT FALSE;
-- An arena player who withdrew (paused) may come back while it runs: when
-- they last did, their place in the pool's arrival order. A player the
-- director removed may not come back.
ALTER TABLE tournament_players ADD COLUMN back_at BIGINT;
ALTER TABLE tournament_players ADD COLUMN removed BOOLEAN NOT NULL DEFAULT FALSE;
-- `GET /tournaments/{id}/games`: oldest first, by keyset.
CREATE INDEX tournament_games_by_start ON tournament_games (tournament_id, created_at, match_id);
