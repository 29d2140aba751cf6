DROP TABLE tournament_games;
DROP TABLE tournament_rounds;
DROP TABLE tournament_players;
DROP TABLE tournaments;
