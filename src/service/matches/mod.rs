//! Matches: practice against the CPU, moves in one transaction, resigning,
//! clocks and time forfeits, presence, and the events every change publishes.

pub mod create;
pub mod dropout;
pub mod play;
pub mod presence;
pub mod record;
pub mod state;

use futures_util::StreamExt;
use serde::Serialize;
use utoipa::ToSchema;

use crate::broker::{Notice, Subscription};
use crate::clock::TimeControl;
use crate::cpu::Level;
use crate::rules::{Depth, Seat};
use crate::store::matches as store;
use crate::time::{Millis, rfc3339};

use super::accounts::Player;
use super::{Context, Error, Result};
use create::{NewMatch, SeatSpec};
use play::{MoveOutcome, Mover, ResignOutcome, Snapshot};
pub use presence::{announce_absences, announce_presence, connected, touch};
use record::{MatchRecord, Mode, seat_str};
use state::{MatchState, MoveState, TimeControlBody};

/// The event channel of a match.
pub fn channel(match_id: &str) -> String {
    format!("match:{match_id}")
}

/// Renders a snapshot at the current time with live presence.
///
/// # Errors
/// Broker failures or a corrupt row.
pub async fn render(ctx: &Context, snap: &Snapshot) -> Result<MatchState> {
    let connected = connected(ctx, &snap.row).await?;
    let heartbeat_ms =
        dropout::heartbeat_ms(presence::configured_grace(ctx), snap.row.time_control()?);
    state::render(
        &snap.row,
        &snap.position,
        &snap.names,
        snap.rating_changes.clone(),
        state::Presence {
            connected,
            heartbeat_ms,
        },
        ctx.time.now_ms(),
    )
}

/// Renders a committed change and publishes it to the match's channel.
/// Publishing is best effort: the change is committed, and a stream that
/// misses it resynchronises from the database.
///
/// # Errors
/// Broker failures while rendering presence.
pub async fn publish(ctx: &Context, snap: &Snapshot) -> Result<MatchState> {
    let state = render(ctx, snap).await?;
    match serde_json::to_string(&state) {
        Ok(json) => {
            let payload = format!("{}\n{json}", state.version);
            if let Err(err) = ctx.broker.publish(&channel(&state.id), payload).await {
                tracing::warn!(match.id = %state.id, error = %err, "could not publish match state");
            }
        }
        Err(err) => {
            tracing::error!(match.id = %state.id, error = %err, "could not serialise match state")
        }
    }
    if snap.row.awaiting_cpu {
        ctx.signals.cpu.notify_one();
    }
    Ok(state)
}

/// Splits a published payload into its version and JSON.
pub fn parse_payload(payload: &str) -> Option<(i32, &str)> {
    let (version, json) = payload.split_once('\n')?;
    Some((version.parse().ok()?, json))
}

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
    touch(ctx, &snap.row.id, req.seat).await?;
    tracing::info!(match.id = %snap.row.id, "practice match created");
    publish(ctx, &snap).await
}

/// A seated player's request on a match counts as presence, and puts a
/// dropped player back in their seat at once. Returns whether the seat was
/// taken back (the row the caller holds is then stale).
async fn observe(
    ctx: &Context,
    viewer: &Player,
    row: &crate::store::matches::MatchRow,
) -> Result<bool> {
    let Some(seat) = row.seat_of(&viewer.id) else {
        return Ok(false);
    };
    let announced = touch(ctx, &row.id, seat).await?;
    if row.is_active() && row.controller(seat) == record::Controller::Cpu {
        dropout::reclaim(ctx, &row.id, seat).await?;
        return Ok(true);
    }
    Ok(announced)
}

/// Loads a match, ending it on time first if its time ran out.
async fn load(ctx: &Context, id: String) -> Result<Snapshot> {
    let (now, growth) = (ctx.time.now_ms(), ctx.config.rating_growth);
    let found = ctx
        .db
        .run(move |conn| store::get(conn, &id))
        .await?
        .ok_or(Error::NotFound("match"))?;
    let lapsed = found.is_active() && found.deadline_at.is_some_and(|d| d <= now);
    if lapsed {
        let id = found.id.clone();
        let snap = ctx
            .db
            .write(move |conn| {
                let mut row = store::lock(conn, &id)?.ok_or(Error::NotFound("match"))?;
                play::end_if_lapsed(conn, &mut row, now, growth)?;
                play::snapshot(conn, row)
            })
            .await?;
        publish(ctx, &snap).await?;
        return Ok(snap);
    }
    ctx.db.run(move |conn| play::snapshot(conn, found)).await
}

/// The state of a match, for any logged-in player.
///
/// # Errors
/// `NotFound`, store or broker failures.
pub async fn get(ctx: &Context, viewer: &Player, id: String) -> Result<MatchState> {
    let snap = load(ctx, id.clone()).await?;
    if observe(ctx, viewer, &snap.row).await? {
        return render(ctx, &load(ctx, id).await?).await;
    }
    render(ctx, &snap).await
}

/// Plays a move for `player`, whose client reports `lag_ms` of network time;
/// see [`play::play`] for the rules.
///
/// # Errors
/// Every refusal of API.md's move rules.
#[tracing::instrument(skip(ctx, player, address), fields(player.id = %player.id))]
pub async fn play_move(
    ctx: &Context,
    player: &Player,
    id: String,
    ply: u32,
    address: Vec<i64>,
    lag_ms: Option<Millis>,
) -> Result<MatchState> {
    let (now, growth) = (ctx.time.now_ms(), ctx.config.rating_growth);
    let mover = Mover::Player(player.id.clone());
    let outcome = ctx
        .db
        .write(move |conn| play::play(conn, &id, &mover, ply, &address, lag_ms, now, growth))
        .await?;
    match outcome {
        MoveOutcome::Applied(snap) => {
            observe(ctx, player, &snap.row).await?;
            ctx.metrics.count("moves");
            publish(ctx, &snap).await
        }
        MoveOutcome::Retried(snap) => {
            observe(ctx, player, &snap.row).await?;
            render(ctx, &snap).await
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
    address: Vec<i64>,
) -> Result<Option<MatchState>> {
    let (now, growth) = (ctx.time.now_ms(), ctx.config.rating_growth);
    let outcome = ctx
        .db
        .write(move |conn| {
            play::play(
                conn,
                &id,
                &Mover::Cpu(seat),
                ply,
                &address,
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
    let (now, growth) = (ctx.time.now_ms(), ctx.config.rating_growth);
    let player_id = player.id.clone();
    let outcome = ctx
        .db
        .write(move |conn| play::resign(conn, &id, &player_id, now, growth))
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
    observe(ctx, player, &row).await.map(|_| ())
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
    observe(ctx, viewer, &row).await?;
    Ok(state::render_moves(row.depth()?, &moves))
}

/// A match in a list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MatchSummary {
    /// Id.
    pub id: String,
    /// `ranked`, `casual` or `practice`.
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
    /// `x`, `o` or `null` (draw or unfinished).
    pub winner: Option<String>,
    /// Why it ended.
    pub reason: Option<String>,
    /// When it was made.
    pub created_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
}

/// One page of a list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// A match as lists show it, from `player_id`'s side.
pub(crate) fn summary(
    row: &crate::store::matches::MatchRow,
    player_id: &str,
) -> Result<MatchSummary> {
    Ok(MatchSummary {
        id: row.id.clone(),
        mode: row.mode.clone(),
        ladder: row.ladder.clone(),
        rated: row.rated,
        depth: row.depth()?.get(),
        time_control: row.time_control()?.into(),
        status: row.status.clone(),
        ply: u32::try_from(row.ply).unwrap_or(0),
        turn: row.to_move_seat().map(seat_str),
        seat: row.seat_of(player_id).map(seat_str),
        x: row.x_player_id.clone(),
        o: row.o_player_id.clone(),
        winner: row.winner.clone(),
        reason: row.reason.clone(),
        created_at: rfc3339(row.created_at),
        finished_at: row.finished_at.map(rfc3339),
    })
}

/// Encodes a keyset position as an opaque cursor.
pub fn encode_cursor(created_at: i64, id: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{created_at}:{id}"))
}

/// Decodes a cursor made by [`encode_cursor`].
pub fn decode_cursor(cursor: &str) -> Option<(i64, String)> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (at, id) = text.split_once(':')?;
    Some((at.parse().ok()?, id.to_owned()))
}

/// A player's matches, newest first; `status` filters `active` or `finished`.
///
/// # Errors
/// Store failures.
pub async fn list_for_player(
    ctx: &Context,
    player_id: String,
    status: Option<&'static str>,
    after: Option<(i64, String)>,
    limit: u32,
) -> Result<Page<MatchSummary>> {
    let fetch = i64::from(limit) + 1;
    let pid = player_id.clone();
    let mut rows = ctx
        .db
        .run(move |conn| store::for_player(conn, &pid, status, after, fetch))
        .await?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next_cursor = more
        .then(|| rows.last().map(|r| encode_cursor(r.created_at, &r.id)))
        .flatten();
    let items = rows
        .iter()
        .map(|r| summary(r, &player_id))
        .collect::<Result<_>>()?;
    Ok(Page { items, next_cursor })
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
        Some(seat) => Some(presence::lease(ctx, &id, seat).await?),
        None => None,
    };
    if observe(ctx, viewer, &snap.row).await? {
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
