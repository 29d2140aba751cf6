//! `uttt admin recompute-ratings --ladder ID`: replays every rated match of
//! the ladder in order and prints each stored rating change or rating that
//! differs from the replay (none on a consistent database).

use std::io::Write;

use crate::config::Config;
use crate::service::recompute::{self, Recomputed};
use crate::store::Db;

/// Arguments of `uttt admin recompute-ratings`.
#[derive(Debug, clap::Args)]
pub struct RecomputeArgs {
    /// The ladder's id.
    #[arg(long)]
    pub ladder: String,
}

/// Runs the command; returns what it found (no differences: consistent).
///
/// # Errors
/// An unknown ladder; database failures.
pub fn run(
    db: &Db,
    config: &Config,
    args: &RecomputeArgs,
    out: &mut impl Write,
) -> anyhow::Result<Recomputed> {
    anyhow::ensure!(
        config.ladder(&args.ladder).is_some(),
        "no ladder has the id `{}`",
        args.ladder
    );
    let mut conn = db.get()?;
    let found = recompute::recompute(&mut conn, &args.ladder, config.rating_growth)?;
    for line in &found.differences {
        writeln!(out, "{line}")?;
    }
    writeln!(
        out,
        "ladder {}: {} rated match(es), {} player(s), {} difference(s)",
        args.ladder,
        found.matches,
        found.players,
        found.differences.len()
    )?;
    Ok(found)
}
