DROP INDEX tickets_created;
