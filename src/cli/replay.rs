//! `uttt replay FILE`: re-plays an admin export (NDJSON, one match per line)
//! through the rules core and reports every record whose stored result does
//! not follow from its moves.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use crate::service::admin::ExportRecord;
use crate::service::audit::{StoredMatch, audit};

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

/// Checks one record with the match audit: its moves are legal and its
/// result follows from them.
///
/// # Errors
/// What is inconsistent, every discrepancy joined by `; `.
pub fn check(record: &ExportRecord) -> Result<(), String> {
    let found = audit(&StoredMatch::from_export(record));
    if found.is_empty() {
        return Ok(());
    }
    Err(found
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; "))
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
