//! The rules core: a test for every line of RULES.md's rules of play, the
//! seed's worked examples, perft counts, a second and deliberately simple
//! implementation to check the fast one against, and property tests.

// A failed unwrap in a test or its helpers is a failed test (clippy.toml
// covers `#[test]` functions; this covers the helpers they call).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "rules/board_tree.rs"]
mod board_tree;
#[path = "rules/claiming.rs"]
mod claiming;
#[path = "rules/deep.rs"]
mod deep;
#[path = "rules/encoding.rs"]
mod encoding;
#[path = "rules/examples.rs"]
mod examples;
#[path = "rules/perft.rs"]
mod perft;
#[path = "rules/properties.rs"]
mod properties;
#[path = "rules/simple.rs"]
mod simple;
#[path = "rules/support.rs"]
mod support;
#[path = "rules/turns.rs"]
mod turns;
