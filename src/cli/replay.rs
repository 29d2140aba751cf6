//! `uttt replay FILE`: re-plays an admin export (NDJSON, one match per line)
//! through the rules core and reports every record whose stored result does
//! not follow from its moves.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use crate::rules::{Address, Depth, Position, Seat, Square, Status};
use crate::service::admin::ExportRecord;

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

fn seat(text: &str) -> Option<Seat> {
    match text {
        "x" => Some(Seat::X),
        "o" => Some(Seat::O),
        _ => None,
    }
}

/// Parses the text notation of moves (`"4.4 4.0"`) at `depth`.
///
/// # Errors
/// The first token that is not a square address of that depth.
pub fn parse_moves(depth: Depth, text: &str) -> Result<Vec<Square>, String> {
    text.split_whitespace()
        .enumerate()
        .map(|(ply, token)| {
            token
                .parse::<Address>()
                .ok()
                .and_then(|a| Square::from_address(depth, &a))
                .ok_or_else(|| {
                    format!(
                        "move {ply} `{token}` is not a square of depth {}",
                        depth.get()
                    )
                })
        })
        .collect()
}

/// Checks one record: its moves are legal and its result follows from them.
///
/// # Errors
/// What is inconsistent.
pub fn check(record: &ExportRecord) -> Result<(), String> {
    let depth =
        Depth::new(record.depth).map_err(|_| format!("depth {} is not 1 to 4", record.depth))?;
    let moves = parse_moves(depth, &record.moves)?;
    let position = Position::replay(depth, &moves).map_err(|e| format!("{e}"))?;
    let winner = record
        .winner
        .as_deref()
        .map(|w| seat(w).ok_or(format!("winner `{w}` is not x or o")))
        .transpose()?;
    match (
        record.status.as_str(),
        record.reason.as_deref(),
        position.status(),
    ) {
        ("active", None, Status::Ongoing) if winner.is_none() => Ok(()),
        ("active", _, status) => Err(format!("stored as active, but the moves give {status:?}")),
        ("finished", Some("three_in_a_row"), Status::Won(w)) if winner == Some(w) => Ok(()),
        ("finished", Some("draw"), Status::Drawn) if winner.is_none() => Ok(()),
        ("finished", Some("timeout" | "resignation"), Status::Ongoing) if winner.is_some() => {
            Ok(())
        }
        ("finished", reason, status) => Err(format!(
            "stored result {:?} by {:?} does not follow from the moves, which give {status:?}",
            record.winner, reason
        )),
        (other, _, _) => Err(format!("unknown status `{other}`")),
    }
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
