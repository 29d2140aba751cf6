//! `uttt admin bench-leaderboard`: times a ladder's leaderboard query (one
//! page of players established as of a time, as the endpoint runs it) and
//! prints p50/p95. `--seed N` first adds N rated players straight in SQL
//! (PostgreSQL only: one `generate_series` insert), with ratings, deviations,
//! volatilities and last-game times spread as on a live ladder.

use std::io::Write;
use std::time::Instant;

use diesel::prelude::*;

use crate::rating::growth::DAY_MS;
use crate::store::ratings;
use crate::store::schema::ratings as ratings_table;
use crate::store::{Db, DbConnection};

/// Arguments of `uttt admin bench-leaderboard`.
#[derive(Debug, clap::Args)]
pub struct BenchLeaderboardArgs {
    /// The ladder.
    #[arg(long, default_value = "ultimate-10m")]
    pub ladder: String,
    /// Rated players to add first (PostgreSQL only).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Timed runs per case.
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

/// Adds `n` rated players to `ladder`: ratings around 1500 (sd ≈ 200),
/// stored deviations 45–135, volatility 0.055–0.065, last games over the
/// past two years; `established_until` as the server computes it.
fn seed(
    conn: &mut DbConnection,
    ladder: &str,
    n: u64,
    growth: crate::rating::Growth,
    now: i64,
) -> anyhow::Result<()> {
    let DbConnection::Pg(pg) = conn else {
        anyhow::bail!("--seed needs PostgreSQL (DATABASE_URL=postgres://…)");
    };
    anyhow::ensure!(
        !ladder.contains('\''),
        "a ladder id with a quote cannot be seeded"
    );
    let tag = crate::ids::record_id()[..6].to_lowercase();
    let ppd = growth.periods_per_day();
    diesel::sql_query(format!(
        "INSERT INTO players (id, username, username_key, password_hash, role, created_at) \
         SELECT 'lb{tag}' || g, 'lb{tag}' || g, 'lb{tag}' || g, \
                '$argon2id$v=19$m=19456,t=2,p=1$c2VlZHNlZWQ$unusable', 'player', {now} \
         FROM generate_series(1, {n}) g"
    ))
    .execute(pg)?;
    diesel::sql_query(format!(
        "INSERT INTO ratings (player_id, ladder, rating, deviation, volatility, established, \
                              games, wins, losses, draws, updated_at, rated_at, established_until) \
         SELECT id, '{ladder}', r, d, v, d <= 110, games, games / 2, games - games / 2, 0, at, at, \
                CASE WHEN d <= 110 AND {ppd} > 0 THEN at + CAST( \
                    ((110.0 * 110.0 - d * d) / (173.7178 * 173.7178)) / (v * v) / {ppd} * {DAY_MS} \
                    AS BIGINT) END \
         FROM (SELECT 'lb{tag}' || g AS id, \
                      1500 + (random() + random() + random() - 1.5) * 400 AS r, \
                      45 + random() * 90 AS d, 0.055 + random() * 0.01 AS v, \
                      1 + floor(random() * 300)::int AS games, \
                      {now} - floor(random() * 730 * {DAY_MS})::bigint AS at \
               FROM generate_series(1, {n}) g) s"
    ))
    .execute(pg)?;
    diesel::sql_query("ANALYZE players").execute(pg)?;
    diesel::sql_query("ANALYZE ratings").execute(pg)?;
    Ok(())
}

/// Runs the command.
///
/// # Errors
/// Database failures; `--seed` on SQLite.
pub fn run(
    db: &Db,
    growth: crate::rating::Growth,
    args: &BenchLeaderboardArgs,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let mut conn = db.get()?;
    let now = chrono::Utc::now().timestamp_millis();
    if let Some(n) = args.seed {
        let t = Instant::now();
        seed(&mut conn, &args.ladder, n, growth, now)?;
        writeln!(
            out,
            "seeded {n} rated players in {:.1} s",
            t.elapsed().as_secs_f64()
        )?;
    }
    let rated: i64 = ratings_table::table
        .filter(ratings_table::ladder.eq(&args.ladder))
        .filter(ratings_table::games.gt(0))
        .count()
        .get_result(&mut *conn)?;
    let established: i64 = ratings_table::table
        .filter(ratings_table::ladder.eq(&args.ladder))
        .filter(ratings_table::games.gt(0))
        .filter(ratings_table::established_until.ge(now))
        .count()
        .get_result(&mut *conn)?;
    writeln!(
        out,
        "ladder {}: {rated} rated players, {established} established now",
        args.ladder
    )?;
    // The keyset after `rank` players of the board as of `as_of`.
    let mut keyset_at = |as_of: i64, rank: i64| -> anyhow::Result<Option<(f64, String)>> {
        let row: Option<(f64, String)> = ratings_table::table
            .filter(ratings_table::ladder.eq(&args.ladder))
            .filter(ratings_table::games.gt(0))
            .filter(ratings_table::established_until.ge(as_of))
            .order((ratings_table::rating.desc(), ratings_table::player_id.asc()))
            .select((ratings_table::rating, ratings_table::player_id))
            .offset(rank - 1)
            .first(&mut *conn)
            .optional()?;
        Ok(row)
    };
    let later = now + 180 * DAY_MS as i64;
    let cases = [
        ("first page, now", now, None),
        ("after rank 10,000, now", now, keyset_at(now, 10_000)?),
        ("after rank 100,000, now", now, keyset_at(now, 100_000)?),
        ("first page, in 180 days", later, None),
        (
            "after rank 10,000, in 180 days",
            later,
            keyset_at(later, 10_000)?,
        ),
    ];
    writeln!(
        out,
        "{:<32} {:>9} {:>9} {:>5}",
        "case", "p50 ms", "p95 ms", "rows"
    )?;
    for (name, as_of, after) in cases {
        let mut times = Vec::with_capacity(args.runs);
        let mut rows = 0;
        for _ in 0..args.runs {
            let t = Instant::now();
            let page = ratings::leaderboard(
                &mut conn,
                &args.ladder,
                as_of,
                after.clone(),
                None,
                args.limit + 1,
            )?;
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            rows = page.len();
        }
        times.sort_by(f64::total_cmp);
        writeln!(
            out,
            "{name:<32} {:>9.2} {:>9.2} {rows:>5}",
            percentile(&times, 0.5),
            percentile(&times, 0.95)
        )?;
    }
    if matches!(&*conn, DbConnection::Sqlite(_)) {
        writeln!(out, "(SQLite; the README's figures are on PostgreSQL)")?;
    }
    Ok(())
}
