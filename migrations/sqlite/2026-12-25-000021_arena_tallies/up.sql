-- Arena totals per entrant (issue 21, pass speed): updated in the
-- transaction that ends each game, so a pairing pass and the standings read
-- the entrants and never replay the arena's games. The games stay the
-- record: GET /tournaments/{id}/games still scores each one from them.
ALTER TABLE tournament_players ADD COLUMN points INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_players ADD COLUMN games INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_players ADD COLUMN wins INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_players ADD COLUMN draws INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_players ADD COLUMN losses INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_players ADD COLUMN berserks INTEGER NOT NULL DEFAULT 0;
-- Wins in a row among the counted games (fire from 2).
ALTER TABLE tournament_players ADD COLUMN streak INTEGER NOT NULL DEFAULT 0;
-- Sum of (opponent's rating ± 500) over the counted games.
ALTER TABLE tournament_players ADD COLUMN performance_sum REAL NOT NULL DEFAULT 0;
-- Seats, last opponent and last end of every finished game (counted or
-- not): the pool's seat and rematch rules and arrival order.
ALTER TABLE tournament_players ADD COLUMN x_games INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_players ADD COLUMN o_games INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournament_players ADD COLUMN last_seat TEXT CHECK (last_seat IN ('x', 'o'));
ALTER TABLE tournament_players ADD COLUMN last_opponent_id TEXT;
ALTER TABLE tournament_players ADD COLUMN last_end_at BIGINT;
-- Whether the entrants' totals are complete. Arenas that had games before
-- this migration are not: the worker rebuilds a running one's totals from
-- its games once, and the standings of the others are replayed from games.
ALTER TABLE tournaments ADD COLUMN tallied BOOLEAN NOT NULL DEFAULT TRUE;
UPDATE tournaments SET tallied = FALSE
    WHERE kind = 'arena'
      AND EXISTS (SELECT 1 FROM tournament_games g WHERE g.tournament_id = tournaments.id);
