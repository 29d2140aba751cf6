-- 256 active casual matches on a database migrated by `uttt migrate`; the
-- pgbench move script plays on them, one match per client.
INSERT INTO players (id, username, username_key, password_hash, role, created_at)
VALUES ('pgb_x', 'pgb_x', 'pgb_x', 'x', 'player', 0), ('pgb_o', 'pgb_o', 'pgb_o', 'x', 'player', 0)
ON CONFLICT DO NOTHING;
INSERT INTO matches (id, mode, rated, depth, tc_kind, x_player_id, o_player_id, x_controller, o_controller,
                     position, ply, to_move, turn_started_at, status, version, created_at)
SELECT 'pgb' || g, 'casual', false, 2, 'none', 'pgb_x', 'pgb_o', 'human', 'human',
       decode(repeat('00', 60), 'hex'), 0, 'x', 0, 'active', 1, 0
FROM generate_series(1, 256) AS g
ON CONFLICT DO NOTHING;
