DROP TABLE tickets;
