//! The match use cases: practice against the CPU, reading a match, moves
//! (a player's and the CPU's), resigning, heartbeats, a player's list and the
//! event feed. The parts they are built from are the child modules; none of
//! them imports this one.
//!
//! Over 400 lines: one function per use case, each short; the list types
//! (`MatchSummary`) live with the list that returns them.

pub mod announce;
pub mod create;
pub mod dropout;
pub mod grace;
mod pipelined;
pub mod play;
pub mod presence;
pub mod publish;
pub mod record;
pub mod state;

use std::collections::HashMap;
use std::time::Instant;

use futures_util::StreamExt;
use serde::Serialize;
use utoipa::ToSchema;

use crate::broker::{Notice, PresenceRecord, Subscription};
use crate::clock::TimeControl;
use crate::cpu::Level;
use crate::rules::{Address, Depth, Seat, Square};
use crate::store::SLOW_CALL;
use crate::store::matches as store;
use crate::time::{Millis, ms_of, rfc3339};

use super::accounts::{Player, PlayerRef};
use super::cursor;
pub use super::page::Page;
use super::{Context, Error, Result};
pub use announce::{announce_absences, announce_presence, present_at_start, touch};
use create::{NewMatch, SeatSpec};
use play::{Choice, MoveOutcome, Mover, ResignOutcome, Snapshot};
pub use presence::connected;
pub use publish::{channel, parse_payload, publish, render};
use record::{MatchRecord, MatchStatus, Mode, PlayerId, seat_str};
use state::{MatchState, MoveState, TimeControlBody};

/// What a practice match is made of.
#[derive(Debug, Clone)]
pub struct PracticeRequest {
    /// Board depth.
    pub depth: Depth,
    /// Time control.
    pub time_control: TimeControl,
    /// The CPU's level.
    pub level: Level,
    /// The seat the player takes.
    pub seat: Seat,
}

/// Starts an unrated practice match against the CPU.
///
/// # Errors
/// `too_many_practice_matches` past the per-player cap; store or broker failures.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn create_practice(
    ctx: &Context,
    player: &Player,
    req: PracticeRequest,
) -> Result<MatchState> {
    let now = ctx.time.now_ms();
    let (x, o) = match req.seat {
        Seat::X => (SeatSpec::player(&player.id), SeatSpec::cpu()),
        Seat::O => (SeatSpec::cpu(), SeatSpec::player(&player.id)),
    };
    let spec = NewMatch {
        mode: Mode::Practice,
        ladder: None,
        rated: false,
        depth: req.depth,
        time_control: req.time_control,
        x,
        o,
        cpu_level: Some(req.level.get()),
        room_code: None,
    };
    let mut row = create::new_row(spec, now)?;
    let (player_id, cap) = (player.id.clone(), ctx.config.caps.practice_matches);
    let snap = ctx
        .db
        .write(move |conn| {
            create::check_practice_cap(conn, &player_id, cap)?;
            create::insert_new(conn, &mut row)?;
            play::snapshot(conn, row)
        })
        .await?;
    remember_started(ctx, &snap.row);
    announce::present_at_start(ctx, &snap.row, &player.id).await;
    tracing::info!(match.id = %snap.row.id, "practice match created");
    publish(ctx, &snap).await
}

/// A seated player's request on a match counts as presence, and puts a
/// dropped player back in their seat at once. Returns whether the seat was
/// taken back (the row the caller holds is then stale).
async fn observe(
    ctx: &Context,
    viewer: &str,
    row: &crate::store::matches::MatchRow,
) -> Result<bool> {
    Ok(observe_reading(ctx, viewer, row, false).await?.0)
}

/// [`observe`]; with `read`, a seated viewer's request also reads both
/// seats' presence records in the same broker call (X first), so that the
/// state rendered next needs no call of its own.
async fn observe_reading(
    ctx: &Context,
    viewer: &str,
    row: &crate::store::matches::MatchRow,
    read: bool,
) -> Result<(bool, Option<Vec<PresenceRecord>>)> {
    let Some(seat) = row.seat_of(viewer) else {
        return Ok((false, None));
    };
    let (announced, records) = if read {
        let (announced, records) = announce::touch_reading(ctx, row, seat).await?;
        (announced, Some(records))
    } else {
        (touch(ctx, row, seat).await?, None)
    };
    if row.is_active() && row.controller(seat) == record::Controller::Cpu {
        dropout::reclaim(ctx, &row.id, seat).await?;
        return Ok((true, records));
    }
    Ok((announced, records))
}

/// A move's presence and its publication: the mover recorded as seen and
/// the new state published with both seats' presence as it stands after
/// that, in one broker call ([`publish::publish_seen`], which stands for the
/// announcement of the mover's return unless a newer state overtook it:
/// [`announce::after_seen_published`]); then their seat given back by the
/// CPU, as [`observe`] does.
async fn observe_and_publish(
    ctx: &Context,
    viewer: &str,
    snap: &Snapshot,
) -> Result<publish::Published> {
    let row = &snap.row;
    if let Some(seat) = row.seat_of(viewer)
        && let Some(seen) = publish::publish_seen(ctx, snap, seat).await?
    {
        announce::after_seen_published(ctx, &row.id, row.version, seen.previous, seen.at).await?;
        if row.is_active() && row.controller(seat) == record::Controller::Cpu {
            dropout::reclaim(ctx, &row.id, seat).await?;
        }
        return Ok(seen.published);
    }
    let (_, records) = observe_reading(ctx, viewer, row, true).await?;
    match records {
        Some(records) => publish::publish_read(ctx, snap, &records).await,
        None => publish::publish_rendered(ctx, snap).await,
    }
}

/// The instant by which a deadline counts as passed for whoever ends a
/// match on time without a move of its own (the sweeper, a read): now, less
/// `Config::flag_settle`. A move that arrived before its deadline may still
/// be waiting for a connection or the row's lock; it is judged first, by the
/// time it arrived.
pub fn settled_now(ctx: &Context) -> Millis {
    let settle = Millis::try_from(ctx.config.flag_settle.as_millis()).unwrap_or(Millis::MAX);
    ctx.time.now_ms().saturating_sub(settle)
}

/// Loads a match, ending it on time first if its time ran out (by
/// [`settled_now`]).
async fn load(ctx: &Context, id: String) -> Result<Snapshot> {
    let (now, growth) = (settled_now(ctx), ctx.config.rating_growth);
    let found = ctx
        .db
        .read(move |conn| -> Result<Snapshot> {
            let (row, seating) = store::get_seated(conn, &id)?.ok_or(Error::NotFound("match"))?;
            play::seated_snapshot(conn, row, seating)
        })
        .await?;
    let lapsed = found.row.is_active() && found.row.deadline_at.is_some_and(|d| d <= now);
    if !lapsed {
        return Ok(found);
    }
    let id = found.row.id.clone();
    let snap = ctx
        .db
        .write(move |conn| {
            let (mut row, seating) =
                store::lock_seated(conn, &id)?.ok_or(Error::NotFound("match"))?;
            play::end_if_lapsed(conn, &mut row, now, growth)?;
            play::seated_snapshot(conn, row, seating)
        })
        .await?;
    publish(ctx, &snap).await?;
    Ok(snap)
}

/// The state of a match, for any logged-in player.
///
/// # Errors
/// `NotFound`, store or broker failures.
pub async fn get(ctx: &Context, viewer: &Player, id: String) -> Result<MatchState> {
    let snap = load(ctx, id.clone()).await?;
    match observe_reading(ctx, &viewer.id, &snap.row, true).await? {
        (true, _) => render(ctx, &load(ctx, id).await?).await,
        (false, Some(records)) => publish::render_read(ctx, &snap, &records),
        (false, None) => render(ctx, &snap).await,
    }
}

/// Remembers the row of a match just started on the pool's connections
/// (committed), so that its first move is judged on it and written in one
/// statement instead of being read first (`store::remembered`).
pub fn remember_started(ctx: &Context, row: &store::MatchRow) {
    if let Some(pipeline) = ctx.db.pipeline() {
        pipelined::remember(pipeline, row);
    }
}

/// Plays a move for the player `player_id` at `address` (`None`: the
/// request named no square), whose client reports `lag_ms` of network time;
/// see [`play::play`] for the rules. Returns the new state with the JSON
/// text it was published as.
///
/// The player is taken from a checked token without a look-up: a move is
/// accepted only from a player seated in the match row it is written to, and a seat
/// names an existing player (deleting a player clears their seats in the
/// same transaction, and no seat is written for a missing player:
/// `store::seat_guard`). A refused move looks the player
/// up, so that a deleted player's token is still refused as `unauthorized`
/// before anything else is said.
///
/// # Errors
/// Every refusal of API.md's move rules; `Unauthorized` for a player who no
/// longer exists.
#[tracing::instrument(skip(ctx, address))]
pub async fn play_move(
    ctx: &Context,
    player_id: &str,
    id: String,
    ply: u32,
    address: Option<Address>,
    lag_ms: Option<Millis>,
) -> Result<publish::Published> {
    let (now, growth) = (ctx.time.now_ms(), ctx.config.rating_growth);
    let player = PlayerId::from(player_id);
    let choice = Choice::Address(address);
    let started = Instant::now();
    let match_id = id.clone();
    let quick = match ctx.db.pipeline() {
        Some(pipeline) => {
            let mv = pipelined::Move {
                player: &player,
                ply,
                choice: &choice,
                lag: lag_ms,
                now,
            };
            pipelined::play(pipeline, &ctx.metrics, &id, &mv).await
        }
        None => None,
    };
    let outcome = match quick {
        Some(outcome) => {
            if let Ok(MoveOutcome::Applied(_)) = outcome {
                ctx.metrics.count("moves_pipelined");
            }
            outcome
        }
        None => {
            let mover = Mover::Player(player);
            ctx.db
                .write(move |conn| play::play(conn, &id, &mover, ply, &choice, lag_ms, now, growth))
                .await
        }
    };
    let written = started.elapsed();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(refused) => {
            super::accounts::confirm(ctx, player_id).await?;
            // These answers go to a seated player only: a refused move is
            // still their request on the match, so it counts as presence
            // and gives a dropped player's seat back, as a read would.
            if matches!(
                refused,
                Error::StalePly { .. } | Error::NotYourTurn | Error::IllegalMove(_)
            ) {
                let snap = load(ctx, match_id).await?;
                observe(ctx, player_id, &snap.row).await?;
            }
            return Err(refused);
        }
    };
    match outcome {
        MoveOutcome::Applied(snap) => {
            ctx.metrics.count("moves");
            let state = observe_and_publish(ctx, player_id, &snap).await;
            let total = started.elapsed();
            if total >= SLOW_CALL {
                tracing::warn!(
                    match.id = %snap.row.id,
                    transaction_ms = ms_of(written),
                    presence_and_publish_ms = ms_of(total.saturating_sub(written)),
                    "slow move"
                );
            }
            state
        }
        MoveOutcome::Retried(snap) => {
            // Published again: when the first answer was lost with its
            // connection (`pipelined::play`), nobody published the move.
            // Streams skip versions they have sent. When the retry gave the
            // seat back (or announced the player), the row read is stale,
            // and the answer is the state after that.
            if observe(ctx, player_id, &snap.row).await? {
                let fresh = load(ctx, snap.row.id.to_string()).await?;
                return publish::publish_rendered(ctx, &fresh).await;
            }
            publish::publish_rendered(ctx, &snap).await
        }
        MoveOutcome::Flagged(snap) => {
            publish(ctx, &snap).await?;
            Err(Error::MatchOver(
                "the mover's time ran out; the match ended on time",
            ))
        }
        MoveOutcome::Discarded => Err(Error::Internal("a player's move was discarded".into())),
    }
}

/// Plays a CPU move computed for `seat` at `ply`; dropped when the match moved on meanwhile.
///
/// # Errors
/// Store or broker failures.
pub async fn play_cpu_move(
    ctx: &Context,
    id: String,
    seat: Seat,
    ply: u32,
    square: Square,
) -> Result<Option<MatchState>> {
    let (now, growth) = (ctx.time.now_ms(), ctx.config.rating_growth);
    let choice = Choice::Square(square);
    let outcome = ctx
        .db
        .write(move |conn| {
            play::play(
                conn,
                &id,
                &Mover::Cpu(seat),
                ply,
                &choice,
                None,
                now,
                growth,
            )
        })
        .await;
    match outcome {
        Ok(MoveOutcome::Applied(snap)) => {
            ctx.metrics.count("cpu_moves");
            publish(ctx, &snap).await.map(Some)
        }
        Ok(MoveOutcome::Flagged(snap)) => {
            publish(ctx, &snap).await?;
            Ok(None)
        }
        Ok(MoveOutcome::Retried(_) | MoveOutcome::Discarded)
        | Err(Error::MatchOver(_) | Error::StalePly { .. } | Error::NotYourTurn) => Ok(None),
        Err(err) => Err(err),
    }
}

/// Resigns `player` from a match.
///
/// # Errors
/// `NotFound`, `Forbidden`, `MatchOver`.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn resign(ctx: &Context, player: &Player, id: String) -> Result<MatchState> {
    let times = (ctx.time.now_ms(), settled_now(ctx));
    let (player_id, growth) = (player.id.clone(), ctx.config.rating_growth);
    let outcome = ctx
        .db
        .write(move |conn| play::resign(conn, &id, &player_id, times, growth))
        .await?;
    match outcome {
        ResignOutcome::Resigned(snap) => publish(ctx, &snap).await,
        ResignOutcome::Flagged(snap) => {
            publish(ctx, &snap).await?;
            Err(Error::MatchOver(
                "time had run out; the match ended on time",
            ))
        }
    }
}

/// Records presence of a seated player (and gives a dropped player their seat back).
///
/// # Errors
/// `NotFound`, `Forbidden` for someone not seated.
pub async fn heartbeat(ctx: &Context, player: &Player, id: String) -> Result<()> {
    let row = ctx
        .db
        .run(move |conn| store::get(conn, &id))
        .await?
        .ok_or(Error::NotFound("match"))?;
    if row.seat_of(&player.id).is_none() {
        return Err(Error::Forbidden("only the seated players send heartbeats"));
    }
    observe(ctx, &player.id, &row).await.map(|_| ())
}

/// The moves of a match.
///
/// # Errors
/// `NotFound`, store failures.
pub async fn moves(ctx: &Context, viewer: &Player, id: String) -> Result<Vec<MoveState>> {
    let (row, moves) = ctx
        .db
        .run(move |conn| -> Result<_> {
            let row = store::get(conn, &id)?.ok_or(Error::NotFound("match"))?;
            let moves = store::moves(conn, &id)?;
            Ok((row, moves))
        })
        .await?;
    observe(ctx, &viewer.id, &row).await?;
    Ok(state::render_moves(row.depth()?, &moves))
}

/// A match in a list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MatchSummary {
    /// Id.
    pub id: String,
    /// `ranked`, `casual`, `practice` or `tournament`.
    pub mode: String,
    /// Ladder of a ranked match.
    pub ladder: Option<String>,
    /// Whether it is rated.
    pub rated: bool,
    /// Depth.
    pub depth: u8,
    /// Time control.
    pub time_control: TimeControlBody,
    /// `active` or `finished`.
    pub status: String,
    /// Moves played.
    pub ply: u32,
    /// Side to move.
    pub turn: Option<&'static str>,
    /// The listed player's seat.
    pub seat: Option<&'static str>,
    /// X's player id (`null`: CPU).
    pub x: Option<String>,
    /// O's player id (`null`: CPU).
    pub o: Option<String>,
    /// Both players named, with their bot flags.
    pub players: SummaryPlayers,
    /// `x`, `o` or `null` (draw or unfinished).
    pub winner: Option<String>,
    /// Why it ended.
    pub reason: Option<String>,
    /// When it was made.
    pub created_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
}

/// The players of a listed match.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SummaryPlayers {
    /// X (`null`: the CPU, or an account since deleted).
    pub x: Option<PlayerRef>,
    /// O (`null`: the CPU, or an account since deleted).
    pub o: Option<PlayerRef>,
}

/// A match as lists show it, from `player_id`'s side; `names` has its
/// players' names and bot flags (`store::matches::names_of_rows`).
pub(crate) fn summary(
    row: &crate::store::matches::MatchRow,
    player_id: &str,
    names: &HashMap<String, (String, bool)>,
) -> Result<MatchSummary> {
    let named = |id: &Option<PlayerId>| id.as_deref().map(|id| PlayerRef::of(id, names));
    Ok(MatchSummary {
        id: row.id.to_string(),
        mode: row.mode.as_str().to_owned(),
        ladder: row.ladder.clone(),
        rated: row.rated,
        depth: row.depth()?.get(),
        time_control: row.time_control()?.into(),
        status: row.status.as_str().to_owned(),
        ply: u32::try_from(row.ply).unwrap_or(0),
        turn: row.to_move_seat().map(seat_str),
        seat: row.seat_of(player_id).map(seat_str),
        x: row.x_player_id.as_deref().map(str::to_owned),
        o: row.o_player_id.as_deref().map(str::to_owned),
        players: SummaryPlayers {
            x: named(&row.x_player_id),
            o: named(&row.o_player_id),
        },
        winner: row.winner.map(|w| w.as_str().to_owned()),
        reason: row.reason.map(|r| r.as_str().to_owned()),
        created_at: rfc3339(row.created_at),
        finished_at: row.finished_at.map(rfc3339),
    })
}

/// A player's matches, newest first; `status` filters `active` or `finished`.
///
/// # Errors
/// Store failures.
pub async fn list_for_player(
    ctx: &Context,
    player_id: String,
    status: Option<MatchStatus>,
    after: Option<(i64, String)>,
    limit: u32,
) -> Result<Page<MatchSummary>> {
    let fetch = i64::from(limit) + 1;
    let pid = player_id.clone();
    let page = limit as usize;
    let (mut rows, names) = ctx
        .db
        .run(move |conn| -> Result<_> {
            let rows = store::for_player(conn, &pid, status, after, fetch)?;
            let names = store::names_of_rows(conn, &rows[..rows.len().min(page)])?;
            Ok((rows, names))
        })
        .await?;
    let more = rows.len() > page;
    rows.truncate(page);
    let next_cursor = more
        .then(|| {
            rows.last()
                .map(|r| cursor::encode_keyset(r.created_at, &r.id))
        })
        .flatten();
    let items = rows
        .iter()
        .map(|r| summary(r, &player_id, &names))
        .collect::<Result<_>>()?;
    Ok(Page { items, next_cursor })
}

/// The finished matches of the player named `username` (any case), newest first.
///
/// # Errors
/// `NotFound` for an unknown name; store failures.
pub async fn finished_of(
    ctx: &Context,
    username: String,
    after: Option<(i64, String)>,
    limit: u32,
) -> Result<Page<MatchSummary>> {
    let player = ctx
        .db
        .run(move |conn| crate::store::players::by_username(conn, &username))
        .await?
        .ok_or(Error::NotFound("player"))?;
    list_for_player(ctx, player.id, Some(MatchStatus::Finished), after, limit).await
}

/// The event feed of one match for a stream: the subscription, made before
/// the first state is read so that no change falls between the two.
pub struct Feed {
    /// Messages published after subscribing.
    pub subscription: Subscription,
    /// The state when the stream opened.
    pub initial: MatchState,
    /// The viewer's seat, when they play in the match.
    pub seat: Option<Seat>,
    /// A seated viewer's lease on their seat: present while the stream holds it.
    pub lease: Option<presence::Lease>,
}

/// Opens the event feed of a match for `viewer`; a seated viewer is present while it is open.
///
/// # Errors
/// `NotFound`, store or broker failures.
pub async fn open_feed(ctx: &Context, viewer: &Player, id: String) -> Result<Feed> {
    let subscription = ctx.broker.subscribe(&channel(&id)).await?;
    let mut snap = load(ctx, id.clone()).await?;
    let seat = snap.row.seat_of(&viewer.id);
    // Leased before the seat is observed, so the state it announces already counts the stream.
    let lease = match seat {
        Some(seat) => Some(presence::lease(ctx, &snap.row, seat).await?),
        None => None,
    };
    if observe(ctx, &viewer.id, &snap.row).await? {
        snap = load(ctx, id).await?;
    }
    let initial = render(ctx, &snap).await?;
    Ok(Feed {
        subscription,
        initial,
        seat,
        lease,
    })
}

/// Reads the current state again (after a [`Notice::Resync`]).
///
/// # Errors
/// `NotFound`, store or broker failures.
pub async fn reload(ctx: &Context, viewer: &Player, id: String) -> Result<MatchState> {
    get(ctx, viewer, id).await
}

/// Waits for the next notice on a feed (exposed for the SSE handler).
pub async fn next_notice(sub: &mut Subscription) -> Option<Notice> {
    sub.next().await
}
