//! `uttt admin bench-history`: times every filter of the admin match history
//! on the configured database (the query and the row loading of one page,
//! as the endpoint runs them) and prints p50/p95 per filter.

use std::io::Write;
use std::time::Instant;

use diesel::prelude::*;

use crate::store::history::{self, MatchFilter};
use crate::store::kinds::{EndReason, MatchStatus, Mode};
use crate::store::schema::players;
use crate::store::{Db, DbConnection};

/// Arguments of `uttt admin bench-history`.
#[derive(Debug, clap::Args)]
pub struct BenchHistoryArgs {
    /// Timed runs per filter.
    #[arg(long, default_value_t = 200)]
    pub runs: usize,
    /// Page size.
    #[arg(long, default_value_t = 20)]
    pub limit: i64,
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

/// Runs the command.
///
/// # Errors
/// Database failures.
pub fn run(db: &Db, args: &BenchHistoryArgs, out: &mut impl Write) -> anyhow::Result<()> {
    let mut conn = db.get()?;
    let sample: Vec<String> = players::table
        .select(players::id)
        .limit(500)
        .load(&mut *conn)?;
    anyhow::ensure!(
        !sample.is_empty(),
        "the database has no players; run `uttt admin seed` first"
    );
    let day = 24 * 3600 * 1000;
    let now = chrono::Utc::now().timestamp_millis();
    type Case = (&'static str, Box<dyn Fn(usize) -> MatchFilter>);
    let sample = std::sync::Arc::new(sample);
    let pick = |sample: std::sync::Arc<Vec<String>>| {
        move |i: usize| sample[i * 7919 % sample.len()].clone()
    };
    let (pick1, pick2) = (pick(sample.clone()), pick(sample));
    let cases: Vec<Case> = vec![
        ("no filter", Box::new(|_| MatchFilter::default())),
        (
            "player",
            Box::new(move |i| MatchFilter {
                player_id: Some(pick1(i)),
                ..Default::default()
            }),
        ),
        (
            "ladder",
            Box::new(|_| MatchFilter {
                ladder: Some("ultimate-10m".into()),
                ..Default::default()
            }),
        ),
        (
            "mode=practice",
            Box::new(|_| MatchFilter {
                mode: Some(Mode::Practice),
                ..Default::default()
            }),
        ),
        (
            "status=finished",
            Box::new(|_| MatchFilter {
                status: Some(MatchStatus::Finished),
                ..Default::default()
            }),
        ),
        (
            "result=draw",
            Box::new(|_| MatchFilter {
                result: Some("draw".into()),
                ..Default::default()
            }),
        ),
        (
            "result=o",
            Box::new(|_| MatchFilter {
                result: Some("o".into()),
                ..Default::default()
            }),
        ),
        (
            "reason=timeout",
            Box::new(|_| MatchFilter {
                reason: Some(EndReason::Timeout),
                ..Default::default()
            }),
        ),
        (
            "from/to (one week)",
            Box::new(move |i| MatchFilter {
                from: Some(now - (10 + i as i64 % 300) * day),
                to: Some(now - (3 + i as i64 % 300) * day),
                ..Default::default()
            }),
        ),
        (
            "ladder+reason+result",
            Box::new(|_| MatchFilter {
                ladder: Some("advanced-10m".into()),
                reason: Some(EndReason::Resignation),
                result: Some("x".into()),
                ..Default::default()
            }),
        ),
        (
            "player+mode+range",
            Box::new(move |i| MatchFilter {
                player_id: Some(pick2(i)),
                mode: Some(Mode::Ranked),
                from: Some(now - 200 * day),
                to: Some(now - 20 * day),
                ..Default::default()
            }),
        ),
    ];
    writeln!(
        out,
        "{:<24} {:>9} {:>9} {:>7}",
        "filter", "p50 ms", "p95 ms", "rows"
    )?;
    for (name, filter) in &cases {
        let mut times = Vec::with_capacity(args.runs);
        let mut rows = 0;
        for i in 0..args.runs {
            let f = filter(i);
            let t = Instant::now();
            let page = history::search(&mut conn, &f, None, args.limit)?;
            // The second page too: keyset continuation must be as cheap.
            if let Some(last) = page.last() {
                let next = history::search(
                    &mut conn,
                    &f,
                    Some((last.created_at, last.id.to_string())),
                    args.limit,
                )?;
                rows = page.len() + next.len();
            }
            times.push(t.elapsed().as_secs_f64() * 1000.0 / 2.0);
        }
        times.sort_by(f64::total_cmp);
        writeln!(
            out,
            "{name:<24} {:>9.2} {:>9.2} {rows:>7}",
            percentile(&times, 0.5),
            percentile(&times, 0.95)
        )?;
    }
    if matches!(&*conn, DbConnection::Sqlite(_)) {
        writeln!(out, "(SQLite; the README's figures are on PostgreSQL)")?;
    }
    Ok(())
}
