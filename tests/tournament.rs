//! The tournament core (RULES.md, "Tournaments"): worked examples for Swiss
//! and arena tournaments, and property tests over random tournaments checked
//! by independent recomputation (brute force on small fields, the Tutte
//! matrix on large ones).

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "tournament/arena_examples.rs"]
mod arena_examples;
#[path = "tournament/arena_properties.rs"]
mod arena_properties;
#[path = "tournament/support.rs"]
mod support;
#[path = "tournament/swiss_examples.rs"]
mod swiss_examples;
#[path = "tournament/swiss_properties.rs"]
mod swiss_properties;
