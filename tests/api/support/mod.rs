//! The test harness: a real server on port 0 with a fresh database per test.
//!
//! SQLite: a temporary file, always. PostgreSQL: when `TEST_DATABASE_URL` is
//! set, a database created for the test and dropped after it, with Redis
//! (when `TEST_REDIS_URL` is set) under a key prefix of its own. When a
//! variable is set and its server cannot be reached, the test fails loudly.

#![allow(dead_code, reason = "shared by every test module; each uses a part")]

mod app;
mod client;
mod game;
mod ranked;
mod sse;
mod wait;

pub use crate::common::http::{Player, Reply};
pub use crate::common::sse::EventStream;
pub use app::{Backend, SECRET, TestApp, TestConfig};
pub use game::{addr, legal_of};
pub use wait::eventually;
