DROP TABLE rooms;
DROP TABLE moves;
DROP TABLE matches;
