-- Times are epoch milliseconds (BIGINT) on both backends, so one set of queries serves both.
CREATE TABLE players (
    id            TEXT PRIMARY KEY,
    username      TEXT NOT NULL,
    -- The lower-cased name: uniqueness ignores case, and prefix search uses its index.
    username_key  TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL DEFAULT 'player' CHECK (role IN ('player', 'admin')),
    created_at    BIGINT NOT NULL
);

CREATE TABLE refresh_tokens (
    id          TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players (id) ON DELETE CASCADE,
    family_id   TEXT NOT NULL,
    -- SHA-256 of the token; the token itself is never stored.
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT,
    revoked_at  BIGINT
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_player ON refresh_tokens (player_id);
