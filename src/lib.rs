//! `uttt`: a ranked Ultimate Tic-Tac-Toe server.
//!
//! Layers, top to bottom (see `docs/ARCHITECTURE.md`): `http` → `service` →
//! `store`, `broker` and the pure game core (`rules`, `cpu`, `rating`,
//! `clock`, `tournament`). `tests/structure.rs` keeps the service layer free
//! of import cycles and the core free of the layers above it.

pub mod alloc;
pub mod broker;
pub mod cli;
pub mod clock;
pub mod config;
pub mod cpu;
pub mod data_dir;
pub mod http;
pub mod ids;
pub mod metrics;
pub mod rating;
pub mod rules;
pub mod server;
pub mod service;
pub mod store;
pub mod telemetry;
pub mod time;
pub mod tournament;
pub mod worker;
