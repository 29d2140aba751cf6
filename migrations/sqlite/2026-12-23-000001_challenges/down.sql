DROP TABLE challenges;
