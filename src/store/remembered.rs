//! Match rows as this instance last wrote them over the pipeline, so that
//! the next move of a match may be judged without reading its row again.
//!
//! Why it is safe: a remembered row is only a guess. The move judged on it
//! is written by the pipeline's guarded statement (`store::pipelined`),
//! which writes only onto a row whose version and unversioned columns are
//! those remembered; every other change of a match raises its version, so
//! such a row is the one remembered, column for column. When the guess is
//! wrong nothing is written and the move is judged again on a fresh read.
//!
//! Bounded: two generations of at most [`GENERATION`] rows each. When the
//! newer one is full it becomes the older and the older is let go, so a row
//! recalled once in every [`GENERATION`] remembers is kept, and memory stays
//! under two generations of rows.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use super::matches::MatchRow;

/// How many rows a generation holds: about 1 KiB each, so at most some
/// 8 MiB in all, and a match is kept through 4,096 other matches' moves.
pub const GENERATION: usize = 4096;

/// Rows remembered by match id (see the module's comment).
#[derive(Debug, Default)]
pub struct Remembered {
    generations: Mutex<Generations>,
}

#[derive(Debug, Default)]
struct Generations {
    newer: HashMap<String, MatchRow>,
    older: HashMap<String, MatchRow>,
}

impl Remembered {
    /// Takes the row remembered for match `id`, if any: a row is used by
    /// one move at most, and remembered again only once written.
    pub fn take(&self, id: &str) -> Option<MatchRow> {
        let mut g = self
            .generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        g.newer.remove(id).or_else(|| g.older.remove(id))
    }

    /// Remembers `row` as its match's latest, in place of any earlier one.
    pub fn put(&self, row: MatchRow) {
        let mut g = self
            .generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let id = row.id.as_str().to_owned();
        g.older.remove(&id);
        if g.newer.len() >= GENERATION && !g.newer.contains_key(&id) {
            g.older = std::mem::take(&mut g.newer);
        }
        g.newer.insert(id, row);
    }

    /// Forgets match `id`'s row.
    pub fn forget(&self, id: &str) {
        drop(self.take(id));
    }

    /// How many rows are remembered.
    pub fn len(&self) -> usize {
        let g = self
            .generations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
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
    fn a_row_is_taken_once_and_the_latest_put_wins() {
        let r = Remembered::default();
        r.put(row("a", 1));
        r.put(row("a", 2));
        assert_eq!(r.len(), 1);
        assert_eq!(r.take("a").unwrap().version, 2);
        assert!(r.take("a").is_none(), "taken twice");
        r.put(row("b", 1));
        r.forget("b");
        assert!(r.is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Over any sequence of puts and takes: a take returns the latest
        /// row put for its id since its last take, or nothing when that row
        /// was let go; rows are let go only after a whole generation of
        /// other puts; and never more than two generations are held.
        #[test]
        fn takes_return_the_latest_put_and_memory_stays_bounded(
            ops in proptest::collection::vec((any::<bool>(), 0u16..6000), 1..12_000),
        ) {
            let r = Remembered::default();
            // The model: each id's latest version and the put count when it was put.
            let mut latest: HashMap<String, (i32, usize)> = HashMap::new();
            let mut puts = 0usize;
            for (i, (put, key)) in ops.into_iter().enumerate() {
                let id = key.to_string();
                let version = i32::try_from(i).unwrap();
                if put {
                    puts += 1;
                    r.put(row(&id, version));
                    latest.insert(id, (version, puts));
                } else {
                    let got = r.take(&id).map(|row| row.version);
                    match latest.remove(&id) {
                        None => prop_assert_eq!(got, None),
                        Some((version, at)) => {
                            if puts - at < GENERATION {
                                prop_assert_eq!(got, Some(version), "let go too soon");
                            } else {
                                prop_assert!(got.is_none() || got == Some(version));
                            }
                        }
                    }
                }
                prop_assert!(r.len() <= 2 * GENERATION);
            }
        }
    }
}
