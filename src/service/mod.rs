//! Use cases. Each runs in one database transaction and publishes its events
//! to the broker only after the commit. Inputs are parsed domain types, never
//! raw request bodies.

pub mod accounts;
pub mod admin;
pub mod analysis;
pub mod audit;
pub mod bots;
pub mod challenges;
pub mod context;
pub mod cursor;
pub mod error;
pub mod events;
pub mod ladders;
pub mod limits;
pub mod matches;
pub mod matchmaking;
pub mod page;
pub mod passwords;
pub mod recompute;
pub mod rooms;
pub mod sessions;
pub mod streams;
pub mod tokens;
pub mod tournaments;
pub mod versus;

pub use context::{Context, Shutdown, Signals};
pub use error::{ConflictCode, Error, FieldError, Result};
