DROP TABLE refresh_tokens;
DROP TABLE players;
