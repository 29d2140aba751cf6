DROP TABLE rating_changes;
DROP TABLE ratings;
