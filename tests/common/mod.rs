//! What the API tests (`tests/api`) and the multi-process tests
//! (`tests/reliability.rs`) share: HTTP calls and event streams to a server
//! by address, and PostgreSQL databases made for one test.

#![allow(dead_code, reason = "shared by two test crates; each uses a part")]

pub mod db;
pub mod http;
pub mod sse;
