//! The CPU mover: plays the CPU's turns (practice opponents and substitutes
//! for dropped players) through the same transactional move path as players,
//! on the CPU side's clock.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::cpu::{self, Level};
use crate::rules::Seat;
use crate::service::matches::record::MatchRecord;
use crate::service::matches::{self};
use crate::service::{Context, Error, Result};
use crate::store::matches::{self as store, MatchRow};

/// How long a claim keeps other workers off a match (longer than any think).
const CLAIM_MS: i64 = 15_000;

/// Claims matches waiting for a CPU move, thinks and plays; returns how many moves were made.
///
/// # Errors
/// Store failures while claiming.
pub async fn tick(ctx: &Context) -> Result<usize> {
    let now = ctx.time.now_ms();
    let (claimed, waiting) = ctx
        .db
        .write(move |conn| -> Result<(Vec<MatchRow>, usize)> {
            // Fair order: substitutes, then clocks, then the oldest; a few per player.
            let (ids, waiting) = super::cpu_order::claim(conn, now, now + CLAIM_MS)?;
            let mut rows = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(row) = store::get(conn, &id)? {
                    rows.push(row);
                }
            }
            Ok((rows, waiting))
        })
        .await?;
    let mut played = 0;
    let tasks: Vec<_> = claimed
        .into_iter()
        .map(|row| {
            let ctx = ctx.clone();
            tokio::spawn(async move { think_and_play(&ctx, row, waiting).await })
        })
        .collect();
    for task in tasks {
        match task.await {
            Ok(Ok(true)) => played += 1,
            Ok(Ok(false)) => {}
            Ok(Err(err)) => tracing::warn!(error = %err, "CPU move failed"),
            Err(err) => tracing::error!(error = %err, "CPU task panicked"),
        }
    }
    Ok(played)
}

fn level_of(row: &MatchRow, seat: Seat) -> Level {
    let practice = row.player(seat).is_none();
    if !practice {
        return Level::SUBSTITUTE;
    }
    let level = row
        .cpu_level
        .and_then(|l| u8::try_from(l).ok())
        .unwrap_or(1);
    Level::new(level).unwrap_or(Level::MAX)
}

/// The search seed of `ply` of match `id`.
pub(crate) fn seed(id: &str, ply: i32) -> u64 {
    // FNV-1a: a fixed seed per match and ply makes CPU games replayable.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes().chain(ply.to_le_bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Counts a live CPU move in [`Signals::cpu_searches`](crate::service::Signals) while it lives.
struct Searching(std::sync::Arc<crate::service::Signals>);

impl Searching {
    fn start(signals: std::sync::Arc<crate::service::Signals>) -> Searching {
        signals.cpu_searches.fetch_add(1, Ordering::SeqCst);
        Searching(signals)
    }
}

impl Drop for Searching {
    fn drop(&mut self) {
        self.0.cpu_searches.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn think_and_play(ctx: &Context, row: MatchRow, waiting: usize) -> Result<bool> {
    // The analysis worker yields to live moves while this lives.
    let _searching = Searching::start(ctx.signals.clone());
    let Some(seat) = row.to_move_seat() else {
        return Ok(false);
    };
    let (position, _) = row.decode()?;
    let level = level_of(&row, seat);
    let tc = row.time_control()?;
    let clock_left = tc
        .left_to_move(row.turn_started_at, row.bank(seat), ctx.time.now_ms())
        .map(|ms| Duration::from_millis(u64::try_from(ms).unwrap_or(0)));
    let seed = seed(&row.id, row.ply);
    // A practice move's allowance shrinks with the CPU moves waiting.
    let load = row.player(seat).is_none().then_some(waiting);
    let settings = super::cpu_order::settings(&position, level, clock_left, load);
    let square = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        cpu::think(&position, &settings, seed, &started).square
    })
    .await
    .map_err(|e| Error::Internal(format!("CPU search failed: {e}")))?;
    let Some(square) = square else {
        return Ok(false);
    };
    let ply = u32::try_from(row.ply).unwrap_or(0);
    Ok(
        matches::play_cpu_move(ctx, row.id.into_string(), seat, ply, square)
            .await?
            .is_some(),
    )
}
