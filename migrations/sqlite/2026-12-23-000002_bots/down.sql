ALTER TABLE players DROP COLUMN accept_bot_challenges;
ALTER TABLE players DROP COLUMN bot;
