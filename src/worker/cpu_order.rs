//! The fair order of CPU work, so that one player's practice matches cannot
//! starve everyone else's, nor a dropped player's clock:
//!
//! 1. moves where the CPU covers a player's seat (ranked, casual and
//!    tournament substitutes: someone's rating or clock depends on them),
//! 2. then practice matches whose clock or turn limit runs,
//! 3. then untimed practice matches;
//!
//! within a class the longest-waiting turn first, and at most
//! [`PER_PLAYER`] matches of one player in a tick. Under load a practice
//! move also thinks less: its time allowance shrinks in proportion to the
//! CPU moves waiting per core (substitutes keep theirs; the clock caps them).

use std::collections::HashMap;
use std::time::Duration;

use crate::cpu::budget::MIN_THINK;
use crate::cpu::{Level, Settings};
use crate::rules::{Position, Seat};
use crate::store::kinds::{Mode, StoredSeat};
use crate::store::matches::{self as store, CpuTurn, CpuTurnKind};
use crate::store::{DbConnection, StoreError};

/// Matches claimed per tick.
pub const BATCH: usize = 8;
/// Matches of one player claimed per tick.
pub const PER_PLAYER: usize = 2;
/// Waiting turns read per class when claiming.
const CANDIDATES: i64 = 64;

/// How urgent a waiting CPU turn is; smaller first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    /// The CPU plays for a dropped player.
    Substitute,
    /// A practice match with a running clock or turn limit.
    Clocked,
    /// A practice match without a time limit.
    Untimed,
}

/// A waiting turn as [`pick`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Class.
    pub priority: Priority,
    /// When the turn began (game time, ms).
    pub since: i64,
    /// The player whose match it is (the human of a practice match, the
    /// covered player of a substitute).
    pub owner: Option<String>,
}

impl Candidate {
    /// Ranks a stored waiting turn.
    pub fn of(turn: &CpuTurn) -> Candidate {
        let priority = if turn.mode != Mode::Practice {
            Priority::Substitute
        } else if turn.deadline_at.is_some() {
            Priority::Clocked
        } else {
            Priority::Untimed
        };
        let owner = if priority == Priority::Substitute {
            match turn.to_move {
                Some(StoredSeat(Seat::O)) => turn.o_player_id.as_ref(),
                _ => turn.x_player_id.as_ref(),
            }
        } else {
            turn.x_player_id.as_ref().or(turn.o_player_id.as_ref())
        }
        .map(|id| id.to_string());
        Candidate {
            priority,
            since: turn.turn_started_at,
            owner,
        }
    }
}

/// Which of `candidates` to claim, as indexes: by priority, then the
/// longest-waiting first, skipping a player's matches past `per_player`,
/// at most `batch` in all.
pub fn pick(candidates: &[Candidate], batch: usize, per_player: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&i| (candidates[i].priority, candidates[i].since, i));
    let mut taken: HashMap<&str, usize> = HashMap::new();
    let mut picked = Vec::with_capacity(batch.min(candidates.len()));
    for i in order {
        if picked.len() == batch {
            break;
        }
        if let Some(owner) = candidates[i].owner.as_deref() {
            let n = taken.entry(owner).or_default();
            if *n >= per_player {
                continue;
            }
            *n += 1;
        }
        picked.push(i);
    }
    picked
}

/// The time a practice move may think when `waiting` CPU moves wait for
/// `cores` cores: its level's `allowance` while there are no more moves
/// than cores, then that share of it (never under [`MIN_THINK`]).
pub fn practice_time(allowance: Duration, waiting: usize, cores: usize) -> Duration {
    let cores = cores.max(1);
    if waiting <= cores {
        return allowance;
    }
    let share = allowance.mul_f64(cores as f64 / waiting as f64);
    share.max(MIN_THINK).min(allowance)
}

/// The search settings of a CPU move: the level's, within the clock; for a
/// practice move (`load` = the CPU moves waiting, when it is one) also
/// within its share of the cores.
pub fn settings(
    position: &Position,
    level: Level,
    clock_left: Option<Duration>,
    load: Option<usize>,
) -> Settings {
    let mut settings = crate::cpu::level_settings(position, level, clock_left);
    if let Some(waiting) = load {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        settings.budget.time = practice_time(settings.budget.time, waiting, cores);
    }
    settings
}

/// Claims this tick's CPU turns in the fair order, marking them claimed
/// until `until`. Returns their ids, most urgent first, and how many turns
/// were waiting (the load, counted up to a limit per class).
///
/// # Errors
/// Database errors.
pub fn claim(
    conn: &mut DbConnection,
    now: i64,
    until: i64,
) -> Result<(Vec<String>, usize), StoreError> {
    let mut turns = Vec::new();
    for kind in [
        CpuTurnKind::Substitute,
        CpuTurnKind::ClockedPractice,
        CpuTurnKind::UntimedPractice,
    ] {
        turns.extend(store::cpu_turns(conn, now, kind, CANDIDATES)?);
    }
    let candidates: Vec<Candidate> = turns.iter().map(Candidate::of).collect();
    let ids: Vec<String> = pick(&candidates, BATCH, PER_PLAYER)
        .into_iter()
        .map(|i| turns[i].id.to_string())
        .collect();
    store::mark_cpu_claimed(conn, &ids, until)?;
    Ok((ids, turns.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c(priority: Priority, since: i64, owner: &str) -> Candidate {
        Candidate {
            priority,
            since,
            owner: Some(owner.into()),
        }
    }

    #[test]
    fn substitutes_then_clocks_then_the_oldest() {
        let cands = vec![
            c(Priority::Untimed, 1, "a"),
            c(Priority::Untimed, 2, "b"),
            c(Priority::Clocked, 9, "c"),
            c(Priority::Substitute, 10, "d"),
        ];
        assert_eq!(pick(&cands, 3, 2), [3, 2, 0]);
    }

    #[test]
    fn one_player_cannot_take_the_whole_batch() {
        let mut cands: Vec<Candidate> = (0..16).map(|i| c(Priority::Untimed, i, "hog")).collect();
        cands.push(c(Priority::Untimed, 100, "other"));
        let picked = pick(&cands, 8, 2);
        assert_eq!(picked, [0, 1, 16]);
    }

    #[test]
    fn the_think_time_shrinks_with_the_queue() {
        let second = Duration::from_secs(1);
        assert_eq!(practice_time(second, 0, 2), second);
        assert_eq!(practice_time(second, 2, 2), second);
        assert_eq!(practice_time(second, 16, 2), Duration::from_millis(125));
        assert_eq!(practice_time(second, 1_000_000, 2), MIN_THINK);
        // Never more than the level allows, even when that is under the floor.
        assert_eq!(
            practice_time(Duration::from_millis(2), 50, 1),
            Duration::from_millis(2)
        );
    }

    fn candidate() -> impl Strategy<Value = Candidate> {
        (0u8..3, 0i64..50, proptest::option::of(0u8..5)).prop_map(|(p, since, owner)| Candidate {
            priority: [Priority::Substitute, Priority::Clocked, Priority::Untimed][usize::from(p)],
            since,
            owner: owner.map(|o| format!("p{o}")),
        })
    }

    proptest! {
        #[test]
        fn picks_respect_the_batch_the_player_cap_and_the_order(
            cands in proptest::collection::vec(candidate(), 0..40),
            batch in 1usize..10,
            per_player in 1usize..4,
        ) {
            let picked = pick(&cands, batch, per_player);
            prop_assert!(picked.len() <= batch);
            let mut per: HashMap<&str, usize> = HashMap::new();
            for &i in &picked {
                if let Some(o) = cands[i].owner.as_deref() {
                    *per.entry(o).or_default() += 1;
                }
            }
            prop_assert!(per.values().all(|&n| n <= per_player));
            // Picked in order, and nothing skipped that was more urgent and allowed.
            let key = |i: usize| (cands[i].priority, cands[i].since, i);
            prop_assert!(picked.windows(2).all(|w| key(w[0]) < key(w[1])));
            if picked.len() < batch {
                for (i, cand) in cands.iter().enumerate() {
                    if picked.contains(&i) { continue; }
                    let owner = cand.owner.as_deref();
                    prop_assert!(owner.is_some_and(|o| per.get(o).copied().unwrap_or(0) >= per_player),
                        "candidate {} left out with room in the batch", i);
                }
            }
        }

        #[test]
        fn more_waiting_never_means_more_thinking(
            allowance_ms in 1u64..2_000, waiting in 0usize..500, cores in 1usize..64,
        ) {
            let allowance = Duration::from_millis(allowance_ms);
            let now = practice_time(allowance, waiting, cores);
            let later = practice_time(allowance, waiting + 1, cores);
            prop_assert!(later <= now && now <= allowance);
            prop_assert!(now >= MIN_THINK.min(allowance));
        }
    }
}
