//! Integration tests: HTTP against a real server on port 0, each test on a
//! fresh database, on SQLite always and on PostgreSQL + Redis when
//! `TEST_DATABASE_URL` / `TEST_REDIS_URL` are set.

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
mod support;

mod accounts;
mod admin;
mod analysis;
mod arena;
mod challenges;
mod cluster;
mod conventions;
mod dropouts;
mod matches;
mod openapi;
mod operations;
mod pairing;
mod pipelined;
mod presence;
mod ranked;
mod ratings;
mod security;
mod tournaments;
mod watched;
