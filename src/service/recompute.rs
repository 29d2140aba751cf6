//! `uttt admin recompute-ratings`: replays every rated match of a ladder in
//! the order its result was applied, from the initial rating, and lists
//! every stored rating change and rating that differs from the replay.
//! A consistent database gives none.

use std::collections::HashMap;

use crate::rating::ledger::Ledger;
use crate::rating::{Growth, Rating, Score};
use crate::rules::Seat;
use crate::store::DbConnection;
use crate::store::kinds::StoredSeat;
use crate::store::ratings::{self, RatingChangeRow, RatingRow};

use super::Result;

/// Matches read per query.
const BATCH: i64 = 2_000;

/// Stored and replayed values closer than this are the same (both are the
/// same float arithmetic; the margin only absorbs a backend's rounding).
const TOLERANCE: f64 = 1e-6;

/// What a recomputation found.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Recomputed {
    /// Rated matches replayed.
    pub matches: usize,
    /// Players with a rating on the ladder (stored or replayed).
    pub players: usize,
    /// One line per value that differs.
    pub differences: Vec<String>,
}

fn differ(a: f64, b: f64) -> bool {
    (a - b).abs() > TOLERANCE * a.abs().max(1.0)
}

fn compare_rating(out: &mut Vec<String>, what: &str, stored: Rating, replayed: Rating) {
    for (field, s, r) in [
        ("rating", stored.rating, replayed.rating),
        ("deviation", stored.deviation, replayed.deviation),
        ("volatility", stored.volatility, replayed.volatility),
    ] {
        if differ(s, r) {
            out.push(format!("{what} {field}: stored {s}, replayed {r}"));
        }
    }
}

fn change_ratings(c: &RatingChangeRow) -> (Rating, Rating) {
    (
        Rating {
            rating: c.rating_before,
            deviation: c.deviation_before,
            volatility: c.volatility_before,
        },
        Rating {
            rating: c.rating_after,
            deviation: c.deviation_after,
            volatility: c.volatility_after,
        },
    )
}

/// Replays the ladder's rated matches and compares.
///
/// # Errors
/// Store failures.
pub fn recompute(conn: &mut DbConnection, ladder: &str, growth: Growth) -> Result<Recomputed> {
    let mut ledger = Ledger::new(growth);
    let mut found = Recomputed::default();
    let mut after = None;
    loop {
        let batch = ratings::rated_results(conn, ladder, after.clone(), BATCH)?;
        let ids: Vec<String> = batch.iter().map(|r| r.0.to_string()).collect();
        let mut changes: HashMap<(String, String), RatingChangeRow> = HashMap::new();
        for c in ratings::changes_of_matches(conn, &ids)? {
            changes.insert((c.match_id.clone(), c.seat.clone()), c);
        }
        for (id, x, o, winner, finished_at) in &batch {
            let out = &mut found.differences;
            let (Some(x), Some(o), Some(at)) = (x, o, finished_at) else {
                out.push(format!(
                    "match {id}: rated but lacks a player or an end time"
                ));
                continue;
            };
            let x_score = match winner {
                Some(StoredSeat(Seat::X)) => Score::Win,
                Some(StoredSeat(Seat::O)) => Score::Loss,
                None => Score::Draw,
            };
            let game = ledger.play(x, o, x_score, *at);
            found.matches += 1;
            for (seat, player, score, before, after) in [
                ("x", x, x_score, game.x_before, game.x_after),
                ("o", o, x_score.opposite(), game.o_before, game.o_after),
            ] {
                let Some(c) = changes.remove(&(id.to_string(), seat.to_owned())) else {
                    out.push(format!("match {id} seat {seat}: no rating change recorded"));
                    continue;
                };
                let what = format!("match {id} seat {seat}");
                if c.player_id != *player {
                    out.push(format!(
                        "{what}: change recorded for {}, seated {player}",
                        c.player_id
                    ));
                }
                if differ(c.score, score.value()) {
                    out.push(format!(
                        "{what} score: stored {}, result gives {}",
                        c.score,
                        score.value()
                    ));
                }
                let (stored_before, stored_after) = change_ratings(&c);
                compare_rating(out, &format!("{what} before"), stored_before, before);
                compare_rating(out, &format!("{what} after"), stored_after, after);
            }
        }
        after = batch.last().map(|r| (r.4.unwrap_or(0), r.0.to_string()));
        if (batch.len() as i64) < BATCH {
            break;
        }
    }
    let rows: HashMap<String, RatingRow> = ratings::ladder_rows(conn, ladder)?
        .into_iter()
        .map(|r| (r.player_id.clone(), r))
        .collect();
    for (player, entry) in ledger.entries() {
        let out = &mut found.differences;
        let what = format!("player {player}");
        let Some(row) = rows.get(player) else {
            out.push(format!(
                "{what}: played rated matches but has no rating row"
            ));
            continue;
        };
        let stored = super::ladders::standing(row);
        compare_rating(out, &what, stored.rating, entry.standing.rating);
        let counts = |r: &RatingRow| (r.games, r.wins, r.losses, r.draws);
        let replayed = (entry.games, entry.wins, entry.losses, entry.draws);
        if counts(row)
            != (
                replayed.0 as i32,
                replayed.1 as i32,
                replayed.2 as i32,
                replayed.3 as i32,
            )
        {
            out.push(format!(
                "{what} games/wins/losses/draws: stored {:?}, replayed {replayed:?}",
                counts(row)
            ));
        }
        if stored.rated_at != entry.standing.rated_at {
            out.push(format!(
                "{what} last rated game: stored {:?}, replayed {:?}",
                stored.rated_at, entry.standing.rated_at
            ));
        }
        let until = entry
            .standing
            .rated_at
            .and_then(|at| growth.established_until(entry.standing.rating, at));
        // Within a second: rows migrated from before this column were filled in SQL.
        let close = match (row.established_until, until) {
            (Some(a), Some(b)) => (a - b).abs() <= 1_000,
            (a, b) => a == b,
        };
        if !close {
            out.push(format!(
                "{what} established until: stored {:?}, replayed {until:?}",
                row.established_until
            ));
        }
    }
    for (player, row) in &rows {
        if row.games > 0 && ledger.get(player).is_none() {
            found.differences.push(format!(
                "player {player}: {} games stored, no rated match",
                row.games
            ));
        }
    }
    found.players = rows
        .keys()
        .filter(|p| ledger.get(p).is_some() || rows[*p].games > 0)
        .count()
        + ledger
            .entries()
            .filter(|(p, _)| !rows.contains_key(*p))
            .count();
    Ok(found)
}
