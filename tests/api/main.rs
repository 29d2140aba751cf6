//! Integration tests: HTTP against a real server on port 0, each test on a
//! fresh database, on SQLite always and on PostgreSQL + Redis when
//! `TEST_DATABASE_URL` / `TEST_REDIS_URL` are set.

mod helpers;

mod accounts;
mod admin;
mod conventions;
mod dropouts;
mod matches;
mod openapi;
mod operations;
mod presence;
mod ranked;
mod ratings;
mod security;
