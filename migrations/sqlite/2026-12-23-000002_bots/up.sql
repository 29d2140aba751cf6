-- Bot accounts (a player turns their account into a bot for good) and the
-- preference to refuse challenges from bots.
ALTER TABLE players ADD COLUMN bot BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE players ADD COLUMN accept_bot_challenges BOOLEAN NOT NULL DEFAULT TRUE;
