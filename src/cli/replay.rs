//! `uttt replay FILE`: re-plays an admin export (NDJSON, one match per line)
//! through the rules core and reports every record whose stored result does
//! not follow from its moves, or whose rating changes do not follow from the
//! ratings before the game and its result (Glicko-2, one rating period).
//! The chain from one game to a player's next (deviation growth between
//! them) needs the whole ladder: `uttt admin recompute-ratings` checks it.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use crate::rating::{self, Rating, Score};
use crate::rules::Seat;
use crate::service::admin::{AdminRatingChange, ExportRecord};
use crate::service::audit::{StoredMatch, audit};
use crate::service::matches::record::{MatchStatus, StoredSeat};

/// Arguments of `uttt replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The export file (`-` for standard input).
    pub file: PathBuf,
}

/// What a replay found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Lines read.
    pub records: usize,
    /// `(line number, match id, what is wrong)` for each inconsistent record.
    pub problems: Vec<(usize, String, String)>,
}

/// Stored and recomputed ratings closer than this agree.
const TOLERANCE: f64 = 1e-6;

fn ratings_of(c: &AdminRatingChange) -> (Rating, Rating) {
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

fn same(a: Rating, b: Rating) -> bool {
    [
        (a.rating, b.rating),
        (a.deviation, b.deviation),
        (a.volatility, b.volatility),
    ]
    .iter()
    .all(|(p, q)| (p - q).abs() <= TOLERANCE * p.abs().max(1.0))
}

/// Checks a record's rating changes: a finished rated match has one per
/// seat, for the seated players, scoring the result, and each rating after
/// is the Glicko-2 update of both ratings before; other matches have none.
///
/// # Errors
/// What is inconsistent.
pub fn check_ratings(record: &ExportRecord, winner: Option<Seat>) -> Result<(), String> {
    let changes = &record.rating_changes;
    if !(record.rated && MatchStatus::parse(&record.status) == Some(MatchStatus::Finished)) {
        if changes.is_empty() {
            return Ok(());
        }
        return Err("rating changes on a match that changes no rating".into());
    }
    let (Some(x), Some(o)) = (
        changes.iter().find(|c| c.seat == "x"),
        changes.iter().find(|c| c.seat == "o"),
    ) else {
        return Err("a finished rated match without a rating change for each seat".into());
    };
    if changes.len() != 2 {
        return Err(format!("{} rating changes, not 2", changes.len()));
    }
    for (change, seated) in [(x, &record.x), (o, &record.o)] {
        if let Some(p) = seated.as_ref().filter(|p| p.id != change.player_id) {
            return Err(format!(
                "seat {}'s rating change is for {}, not the seated {}",
                change.seat, change.player_id, p.id
            ));
        }
    }
    let x_score = match winner {
        Some(Seat::X) => Score::Win,
        Some(Seat::O) => Score::Loss,
        None => Score::Draw,
    };
    if (x.score - x_score.value()).abs() > TOLERANCE
        || (o.score - x_score.opposite().value()).abs() > TOLERANCE
    {
        return Err(format!(
            "scores {}/{} do not follow from the result",
            x.score, o.score
        ));
    }
    let ((x_before, x_after), (o_before, o_after)) = (ratings_of(x), ratings_of(o));
    let (x_expected, o_expected) = rating::after_game(x_before, o_before, x_score);
    for (seat, stored, expected) in [("x", x_after, x_expected), ("o", o_after, o_expected)] {
        if !same(stored, expected) {
            return Err(format!(
                "seat {seat}'s rating after is {stored:?}, but the ratings before and the result give {expected:?}"
            ));
        }
    }
    Ok(())
}

/// Checks one record with the match audit (its moves are legal and its
/// result follows from them) and its rating changes ([`check_ratings`]).
///
/// # Errors
/// What is inconsistent, every discrepancy joined by `; `.
pub fn check(record: &ExportRecord) -> Result<(), String> {
    let mut found: Vec<String> = audit(&StoredMatch::from_export(record))
        .iter()
        .map(ToString::to_string)
        .collect();
    let winner = record
        .winner
        .as_deref()
        .and_then(StoredSeat::parse)
        .map(|s| s.0);
    if let Err(why) = check_ratings(record, winner) {
        found.push(why);
    }
    if found.is_empty() {
        return Ok(());
    }
    Err(found.join("; "))
}

/// Checks every line of `input`.
///
/// # Errors
/// Reading fails.
pub fn check_all(input: impl BufRead) -> std::io::Result<Report> {
    let mut report = Report::default();
    for (i, line) in input.lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        report.records += 1;
        match serde_json::from_str::<ExportRecord>(&line) {
            Ok(record) => {
                if let Err(why) = check(&record) {
                    report.problems.push((i + 1, record.id, why));
                }
            }
            Err(e) => {
                report
                    .problems
                    .push((i + 1, String::new(), format!("not an export record: {e}")))
            }
        }
    }
    Ok(report)
}

/// Runs the command; returns whether every record was consistent.
///
/// # Errors
/// The file cannot be read.
pub fn run(args: &ReplayArgs, out: &mut impl Write) -> anyhow::Result<bool> {
    let report = if args.file.as_os_str() == "-" {
        check_all(std::io::stdin().lock())?
    } else {
        check_all(std::io::BufReader::new(std::fs::File::open(&args.file)?))?
    };
    for (line, id, why) in &report.problems {
        writeln!(out, "line {line}: match {id}: {why}")?;
    }
    writeln!(
        out,
        "{} record(s), {} consistent, {} inconsistent",
        report.records,
        report.records - report.problems.len(),
        report.problems.len()
    )?;
    Ok(report.problems.is_empty())
}
