//! Match rows as this instance last wrote (or read) them, so that the next
//! move of a match may be judged over the pipeline without reading its row
//! again.
//!
//! Why it is safe: a remembered row is only a guess. The move judged on it
//! is written by the pipeline's guarded statement (`store::pipelined`),
//! which writes only onto a row whose version and unversioned columns are
//! those remembered; every other change of a match raises its version
//! (a rule for every writer of `matches`, migrations included: see
//! `store::pipelined::Guard`), so such a row is the one remembered, column
//! for column. When the guess is wrong nothing is written and the move is
//! judged again on a fresh read.
//!
//! Bounded: two generations, each of at most [`GENERATION`] rows and
//! [`GENERATION_BYTES`] of them. When the newer one is full it becomes the
//! older and the older is let go, so a row is kept through at least a full
//! generation of other rows, and memory stays under two generations.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::matches::MatchRow;

/// How many rows a generation holds at most: a match is kept through
/// 4,096 other matches' moves.
pub const GENERATION: usize = 4096;

/// How many bytes of rows a generation holds at most (a depth-2 row is
/// under 1 KiB, a depth-4 one up to some 11 KiB): at most 8 MiB in all.
pub const GENERATION_BYTES: usize = 4 << 20;

/// Rows remembered by match id (see the module's comment).
#[derive(Debug)]
pub struct Remembered {
    rows: usize,
    bytes: usize,
    generations: Mutex<Generations>,
}

#[derive(Debug, Default)]
struct Generations {
    newer: HashMap<String, MatchRow>,
    newer_bytes: usize,
    older: HashMap<String, MatchRow>,
}

impl Default for Remembered {
    fn default() -> Self {
        Remembered::with_generation(GENERATION, GENERATION_BYTES)
    }
}

/// About what a row takes in memory.
fn size_of_row(row: &MatchRow) -> usize {
    std::mem::size_of::<MatchRow>() + row.position.capacity() + 128
}

impl Remembered {
    /// Generations of at most `rows` rows and `bytes` bytes each.
    #[must_use]
    pub fn with_generation(rows: usize, bytes: usize) -> Remembered {
        Remembered {
            rows,
            bytes,
            generations: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        self.generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes the row remembered for match `id`, if any: a row is used by
    /// one move at most, and remembered again once written or read.
    pub fn take(&self, id: &str) -> Option<MatchRow> {
        let mut g = self.lock();
        match g.newer.remove(id) {
            Some(row) => {
                g.newer_bytes = g.newer_bytes.saturating_sub(size_of_row(&row));
                Some(row)
            }
            None => g.older.remove(id),
        }
    }

    /// Remembers `row` as its match's latest, unless a later version of it
    /// is remembered already.
    pub fn put(&self, row: MatchRow) {
        let size = size_of_row(&row);
        let let_go = {
            let mut g = self.lock();
            let id = row.id.as_str();
            let kept = g.newer.get(id).or_else(|| g.older.get(id));
            if kept.is_some_and(|kept| kept.version > row.version) {
                return;
            }
            g.older.remove(id);
            if let Some(earlier) = g.newer.remove(id) {
                g.newer_bytes = g.newer_bytes.saturating_sub(size_of_row(&earlier));
            }
            let full = g.newer.len() >= self.rows || g.newer_bytes + size > self.bytes;
            let let_go = if full && !g.newer.is_empty() {
                let newer = std::mem::take(&mut g.newer);
                g.newer_bytes = 0;
                Some(std::mem::replace(&mut g.older, newer))
            } else {
                None
            };
            g.newer_bytes += size;
            g.newer.insert(id.to_owned(), row);
            let_go
        };
        // Freed after the lock is let go: thousands of rows.
        drop(let_go);
    }

    /// How many rows are remembered.
    pub fn len(&self) -> usize {
        let g = self.lock();
        g.newer.len() + g.older.len()
    }

    /// Whether no row is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::*;

    use crate::store::kinds::{Controller, MatchStatus, Mode};

    fn row(id: &str, version: i32) -> MatchRow {
        MatchRow {
            id: id.into(),
            mode: Mode::Casual,
            ladder: None,
            rated: false,
            depth: 2,
            tc_kind: "none".into(),
            tc_initial_ms: None,
            tc_increment_ms: None,
            tc_turn_ms: None,
            x_player_id: Some("p1".into()),
            o_player_id: Some("p2".into()),
            x_controller: Controller::Human,
            o_controller: Controller::Human,
            cpu_level: None,
            position: Vec::new(),
            ply: 0,
            to_move: None,
            x_bank_ms: None,
            o_bank_ms: None,
            turn_started_at: 0,
            deadline_at: None,
            awaiting_cpu: false,
            cpu_claimed_until: None,
            status: MatchStatus::Active,
            winner: None,
            reason: None,
            room_code: None,
            version,
            created_at: 0,
            finished_at: None,
            x_lag_quota_ms: None,
            o_lag_quota_ms: None,
        }
    }

    #[test]
    fn a_row_is_taken_once_and_only_a_later_version_replaces_it() {
        let r = Remembered::default();
        r.put(row("a", 1));
        r.put(row("a", 3));
        r.put(row("a", 2));
        assert_eq!(r.len(), 1);
        assert_eq!(r.take("a").unwrap().version, 3);
        assert!(r.take("a").is_none(), "taken twice");
        assert!(r.is_empty());
    }

    #[test]
    fn a_row_is_kept_through_a_generation_and_let_go_after_two() {
        let r = Remembered::with_generation(4, usize::MAX);
        r.put(row("a", 1));
        for (i, id) in ["b", "c", "d", "e"].into_iter().enumerate() {
            r.put(row(id, 1));
            assert!(r.len() <= 8, "after {i} more");
        }
        assert_eq!(
            r.take("a").map(|row| row.version),
            Some(1),
            "kept through 4 more"
        );
        r.put(row("a", 2));
        for id in ["f", "g", "h", "i", "j", "k", "l", "m"] {
            r.put(row(id, 1));
        }
        assert!(r.take("a").is_none(), "kept through 8 more");
        assert!(r.len() <= 8);
    }

    #[test]
    fn a_generation_holds_its_bytes_at_most() {
        let size = size_of_row(&row("a", 1));
        let r = Remembered::with_generation(1000, 3 * size);
        for i in 0..100 {
            r.put(row(&i.to_string(), 1));
            assert!(r.len() <= 6, "{} rows held", r.len());
        }
        assert!(r.take("99").is_some() && r.take("97").is_some());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Over any sequence of puts and takes in generations of `n` rows:
        /// a take returns the latest row put for its id since its last
        /// take, or nothing when that row was let go; a row is let go only
        /// after `n` later puts; and never more than `2 n` rows are held.
        #[test]
        fn takes_return_the_latest_put_and_memory_stays_bounded(
            n in 2usize..32,
            ops in proptest::collection::vec((prop::bool::weighted(0.75), 0usize..128), 1..3000),
        ) {
            let r = Remembered::with_generation(n, usize::MAX);
            // The model: each id's latest version and the put count when it was put.
            let mut latest: HashMap<String, (i32, usize)> = HashMap::new();
            let mut puts = 0usize;
            for (i, (put, key)) in ops.into_iter().enumerate() {
                let id = (key % (4 * n)).to_string();
                let version = i32::try_from(i).unwrap();
                if put {
                    puts += 1;
                    r.put(row(&id, version));
                    latest.insert(id, (version, puts));
                } else {
                    let got = r.take(&id).map(|row| row.version);
                    match latest.remove(&id) {
                        None => prop_assert_eq!(got, None),
                        Some((version, at)) if puts - at <= n => {
                            prop_assert_eq!(got, Some(version), "let go too soon");
                        }
                        Some((version, _)) => prop_assert!(got.is_none() || got == Some(version)),
                    }
                }
                prop_assert!(r.len() <= 2 * n);
            }
        }
    }
}
