//! Rooms: a casual game between two players who share a six-character code.
//! The host is X in the first game; every rematch swaps the seats (the
//! "alternate first move" house rule).

use serde::Serialize;
use utoipa::ToSchema;

use crate::clock::TimeControl;
use crate::ids;
use crate::rules::{Depth, Seat};
use crate::store::rooms::{self, RoomRow};
use crate::store::{DbConnection, matches as match_store};

use super::accounts::{DELETED_USERNAME, Player};
use super::matches::create::{self, NewMatch, SeatSpec};
use super::matches::play::{self, Snapshot};
use super::matches::record::{MatchRecord, Mode, time_control, time_control_columns};
use super::matches::state::TimeControlBody;
use super::matches::{self, publish};
use super::{ConflictCode, Context, Error, Result, limits};

/// Whether `room` is past its time to live: nobody joined it within `ttl_ms` of opening.
fn expired(room: &RoomRow, now: i64, ttl_ms: i64) -> bool {
    room.guest_id.is_none() && now.saturating_sub(room.created_at) >= ttl_ms
}

fn ttl_ms(ctx: &Context) -> i64 {
    i64::try_from(ctx.config.room_ttl.as_millis()).unwrap_or(i64::MAX)
}

/// Counts a look-up of a room code against the player's and the address's
/// limits: codes are short, so guessing them must be slow.
async fn count_lookup(ctx: &Context, player: &Player, client: &str) -> Result<()> {
    let limits = ctx.config.rate_limits;
    limits::check(
        ctx,
        &format!("room:player:{}", player.id),
        limits.room_lookups_per_player,
    )
    .await?;
    limits::check(
        ctx,
        &format!("room:addr:{client}"),
        limits.room_lookups_per_address,
    )
    .await
}

/// A player in a room.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RoomPlayer {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// Whether the player is a bot account.
    pub bot: bool,
}

/// A room as clients see it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RoomState {
    /// The six-character code to share.
    pub code: String,
    /// Who made the room.
    pub host: RoomPlayer,
    /// Who joined it.
    pub guest: Option<RoomPlayer>,
    /// Depth of its games.
    pub depth: u8,
    /// Time control of its games.
    pub time_control: TimeControlBody,
    /// The current game, once the guest has joined.
    pub match_id: Option<String>,
    /// Games started in this room.
    pub games: u32,
}

/// The room's state, its players' names read in one statement.
fn room_state(conn: &mut DbConnection, room: &RoomRow) -> Result<RoomState> {
    let ids: Vec<&str> = std::iter::once(room.host_id.as_str())
        .chain(room.guest_id.as_deref())
        .collect();
    let names = match_store::names_and_bots(conn, &ids)?;
    room_state_named(room, |id| names.get(id).cloned())
}

/// The state of a room whose new game `snap` seats both its players: their
/// names and bot flags as the game's snapshot read them, without reading
/// them again.
fn started_room_state(room: &RoomRow, snap: &Snapshot) -> Result<RoomState> {
    room_state_named(room, |id| {
        let seat = [Seat::X, Seat::O]
            .into_iter()
            .find(|&seat| snap.row.player(seat).is_some_and(|p| p.as_str() == id))?;
        let (name, bot) = match seat {
            Seat::X => (&snap.names.x, snap.names.bots[0]),
            Seat::O => (&snap.names.o, snap.names.bots[1]),
        };
        name.clone().map(|name| (name, bot))
    })
}

/// The room's state, with `name_of` a player's name and bot flag (`None`:
/// deleted).
fn room_state_named(
    room: &RoomRow,
    name_of: impl Fn(&str) -> Option<(String, bool)>,
) -> Result<RoomState> {
    let player = |id: &str| {
        let (username, bot) = name_of(id).unwrap_or_else(|| (DELETED_USERNAME.to_owned(), false));
        RoomPlayer {
            id: id.to_owned(),
            username,
            bot,
        }
    };
    Ok(RoomState {
        code: room.code.clone(),
        host: player(&room.host_id),
        guest: room.guest_id.as_deref().map(player),
        depth: u8::try_from(room.depth).unwrap_or(2),
        time_control: time_control(
            &room.tc_kind,
            room.tc_initial_ms,
            room.tc_increment_ms,
            room.tc_turn_ms,
        )?
        .into(),
        match_id: room.match_id.clone(),
        games: u32::try_from(room.games).unwrap_or(0),
    })
}

/// Starts the room's next game: the host is X in the first, seats swap after.
fn start_game(conn: &mut DbConnection, room: &mut RoomRow, now: i64) -> Result<Snapshot> {
    let guest = room
        .guest_id
        .clone()
        .ok_or(Error::Internal("a room game needs a guest".into()))?;
    let (x, o) = if room.games % 2 == 0 {
        (room.host_id.clone(), guest)
    } else {
        (guest, room.host_id.clone())
    };
    let depth = u8::try_from(room.depth)
        .ok()
        .and_then(|d| Depth::new(d).ok())
        .ok_or(Error::Internal("room depth".into()))?;
    let spec = NewMatch {
        mode: Mode::Casual,
        ladder: None,
        rated: false,
        depth,
        time_control: time_control(
            &room.tc_kind,
            room.tc_initial_ms,
            room.tc_increment_ms,
            room.tc_turn_ms,
        )?,
        x: SeatSpec::player(&x),
        o: SeatSpec::player(&o),
        cpu_level: None,
        room_code: Some(room.code.clone()),
    };
    let mut row = create::new_row(spec, now)?;
    create::insert_new(conn, &mut row)?;
    room.match_id = Some(row.id.to_string());
    room.games += 1;
    rooms::save(conn, room)?;
    play::snapshot(conn, row)
}

/// Opens a room hosted by `player`.
///
/// # Errors
/// `too_many_open_rooms` when the player already has the most rooms nobody
/// joined yet (`UTTT_OPEN_ROOMS_PER_PLAYER`); store failures.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn create(
    ctx: &Context,
    player: &Player,
    depth: Depth,
    tc: TimeControl,
) -> Result<RoomState> {
    let now = ctx.time.now_ms();
    let host = player.id.clone();
    let (cap, ttl) = (ctx.config.caps.open_rooms, ttl_ms(ctx));
    ctx.db
        .write(move |conn| {
            crate::store::players::lock(conn, &host)?;
            let open = rooms::count_open(conn, &host, now.saturating_sub(ttl).saturating_add(1))?;
            if open >= i64::from(cap) {
                return Err(Error::conflict(
                    ConflictCode::TooManyOpenRooms,
                    format!("you already have {open} rooms nobody has joined (at most {cap}); share one of their codes or wait for them to expire"),
                    None,
                ));
            }
            let (tc_kind, tc_initial_ms, tc_increment_ms, tc_turn_ms) = time_control_columns(tc);
            let mut room = RoomRow {
                code: ids::room_code(),
                host_id: host,
                guest_id: None,
                depth: i16::from(depth.get()),
                tc_kind,
                tc_initial_ms,
                tc_increment_ms,
                tc_turn_ms,
                match_id: None,
                games: 0,
                created_at: now,
            };
            for _ in 0..5 {
                match rooms::insert(conn, &room) {
                    Err(e) if e.is_unique_violation() => room.code = ids::room_code(),
                    other => {
                        other?;
                        return room_state(conn, &room);
                    }
                }
            }
            Err(Error::Unavailable("no free room code".into()))
        })
        .await
}

/// The room with this code, for a player at the address `client`.
///
/// # Errors
/// `RateLimited` past the look-up limits; `NotFound` (also for a room nobody
/// joined within its time to live).
pub async fn get(ctx: &Context, player: &Player, code: &str, client: &str) -> Result<RoomState> {
    count_lookup(ctx, player, client).await?;
    let code = code.to_ascii_uppercase();
    let (now, ttl) = (ctx.time.now_ms(), ttl_ms(ctx));
    ctx.db
        .run(move |conn| {
            let room = rooms::get(conn, &code)?
                .filter(|r| !expired(r, now, ttl))
                .ok_or(Error::NotFound("room"))?;
            room_state(conn, &room)
        })
        .await
}

/// Seats `player` as the room's guest and starts the first game. Joining a
/// room you are already the guest of answers the room as it is.
///
/// # Errors
/// `RateLimited` past the look-up limits; `NotFound` (also for an expired
/// room); `room_full`; `own_room` for the host.
#[tracing::instrument(skip(ctx, player, client), fields(player.id = %player.id))]
pub async fn join(ctx: &Context, player: &Player, code: &str, client: &str) -> Result<RoomState> {
    count_lookup(ctx, player, client).await?;
    let now = ctx.time.now_ms();
    let ttl = ttl_ms(ctx);
    let code = code.to_ascii_uppercase();
    let guest = player.id.clone();
    let (state, started) = ctx
        .db
        .write(move |conn| {
            let mut room = rooms::lock(conn, &code)?
                .filter(|r| !expired(r, now, ttl))
                .ok_or(Error::NotFound("room"))?;
            if room.host_id == guest {
                return Err(Error::conflict(
                    ConflictCode::OwnRoom,
                    "you host this room; share its code with your opponent",
                    room.match_id.clone().map(|id| ("match_id", id)),
                ));
            }
            match room.guest_id.as_deref() {
                Some(g) if g == guest => return Ok((room_state(conn, &room)?, None)),
                Some(_) => {
                    return Err(Error::conflict(
                        ConflictCode::RoomFull,
                        "this room already has two players",
                        None,
                    ));
                }
                None => {}
            }
            room.guest_id = Some(guest);
            let snap = start_game(conn, &mut room, now)?;
            Ok((started_room_state(&room, &snap)?, Some(snap)))
        })
        .await?;
    if let Some(snap) = started {
        announce(ctx, &snap, &player.id).await?;
    }
    Ok(state)
}

/// Deletes up to `limit` rooms nobody joined within their time to live (the
/// pruning worker); returns how many.
///
/// # Errors
/// Store failures.
pub async fn prune_expired(ctx: &Context, limit: i64) -> Result<usize> {
    let before = ctx
        .time
        .now_ms()
        .saturating_sub(ttl_ms(ctx))
        .saturating_add(1);
    Ok(ctx
        .db
        .write(move |conn| rooms::delete_unjoined(conn, before, limit))
        .await?)
}

/// Starts the room's next game with the seats swapped, once the current one
/// is finished. Both players may ask; the second asker gets the same game.
///
/// # Errors
/// `NotFound` (also for outsiders), `room_not_full`, `match_in_progress`.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn rematch(
    ctx: &Context,
    player: &Player,
    code: &str,
    previous: Option<String>,
) -> Result<RoomState> {
    let now = ctx.time.now_ms();
    let code = code.to_ascii_uppercase();
    let me = player.id.clone();
    let (state, started) = ctx
        .db
        .write(move |conn| {
            // An outsider gets what a code nobody holds gets: the code is the
            // room's only secret, and rematches are not counted against the
            // look-up limits, so any other answer would let codes be guessed.
            let mut room = rooms::lock(conn, &code)?
                .filter(|r| r.host_id == me || r.guest_id.as_deref() == Some(me.as_str()))
                .ok_or(Error::NotFound("room"))?;
            if room.guest_id.is_none() {
                return Err(Error::conflict(
                    ConflictCode::RoomNotFull,
                    "the room has no guest yet",
                    None,
                ));
            }
            // The other player already started the next game.
            if previous.is_some() && room.match_id != previous {
                return Ok((room_state(conn, &room)?, None));
            }
            if let Some(current) = room.match_id.as_deref()
                && let Some(row) = match_store::get(conn, current)?
                && row.is_active()
            {
                return Err(Error::conflict(
                    ConflictCode::MatchInProgress,
                    "the room's current game is still being played",
                    Some(("match_id", row.id.into_string())),
                ));
            }
            let snap = start_game(conn, &mut room, now)?;
            Ok((started_room_state(&room, &snap)?, Some(snap)))
        })
        .await?;
    if let Some(snap) = started {
        announce(ctx, &snap, &player.id).await?;
    }
    Ok(state)
}

/// Tells both players of a room's new game, which `maker` started (by
/// joining or asking for it), and publishes its first state, with the
/// maker present.
async fn announce(ctx: &Context, snap: &Snapshot, maker: &str) -> Result<()> {
    matches::remember_started(ctx, &snap.row);
    matches::present_at_start(ctx, &snap.row, maker).await;
    for seat in [Seat::X, Seat::O] {
        if let Some(player) = snap.row.player(seat) {
            super::events::notify_player(
                ctx,
                player,
                "match_found",
                &serde_json::json!({
                    "match_id": snap.row.id,
                    "room_code": snap.row.room_code,
                    "seat": matches::record::seat_str(seat),
                }),
            )
            .await;
        }
    }
    publish(ctx, snap).await.map(|_| ())
}
