-- Each seat knows its match's mode and whether the match is still being
-- played, so a player's unfinished matches of a mode come from one index
-- (the in_active_match rule and the practice cap), and the database itself
-- refuses a second unfinished ranked seat for a player, whichever instance
-- pairs them.
ALTER TABLE match_players ADD COLUMN mode TEXT NOT NULL DEFAULT 'casual'
    CHECK (mode IN ('ranked', 'casual', 'practice'));
ALTER TABLE match_players ADD COLUMN active BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE match_players
    SET mode = m.mode, active = (m.status = 'active')
    FROM matches m
    WHERE m.id = match_players.match_id;
-- A player seated in several unfinished ranked matches before this rule keeps
-- only the newest under it (the others still finish normally).
UPDATE match_players SET active = FALSE
    WHERE mode = 'ranked' AND active AND EXISTS (
        SELECT 1 FROM match_players newer
        WHERE newer.player_id = match_players.player_id
          AND newer.mode = 'ranked' AND newer.active
          AND (newer.created_at, newer.match_id) > (match_players.created_at, match_players.match_id));
CREATE UNIQUE INDEX match_players_one_ranked ON match_players (player_id) WHERE active AND mode = 'ranked';
CREATE INDEX match_players_active ON match_players (player_id, mode) WHERE active;

-- Rooms nobody joined: counted per host (the cap) and expired by age.
CREATE INDEX rooms_open_by_host ON rooms (host_id, created_at) WHERE guest_id IS NULL;
CREATE INDEX rooms_unjoined ON rooms (created_at) WHERE guest_id IS NULL;

-- The pruning worker deletes expired refresh tokens.
CREATE INDEX refresh_tokens_expires ON refresh_tokens (expires_at);
