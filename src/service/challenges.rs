//! Challenges: a player invites a named player to a match. The challenged
//! player accepts (the match is made in the same transaction) or declines; the
//! challenger may cancel; a challenge nobody answers expires after
//! [`TTL_MS`]. A challenger holds at most `UTTT_PENDING_CHALLENGES_PER_PLAYER`
//! pending challenges at once, so nobody can be flooded.

use serde::Serialize;
use utoipa::ToSchema;

use crate::clock::TimeControl;
use crate::config::LadderConfig;
use crate::ids;
use crate::rules::{Depth, Seat};
use crate::store::challenges::{self as store, ChallengeRow};
use crate::store::{DbConnection, matches as match_store, players};
use crate::time::{Millis, rfc3339};

use super::accounts::Player;
use super::matches::create::{self, NewMatch, SeatSpec};
use super::matches::play::{self, Snapshot};
use super::matches::record::{MatchRecord, Mode, seat_str, time_control, time_control_columns};
use super::matches::state::TimeControlBody;
use super::{ConflictCode, Context, Error, FieldError, Result, events, ladders, matches};

/// How long a challenge waits for an answer.
pub const TTL_MS: Millis = 60_000;
/// Longest decline reason kept.
pub const MAX_REASON_CHARS: usize = 200;

/// The challenger's seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatChoice {
    /// The challenger plays X.
    X,
    /// The challenger plays O.
    O,
    /// Drawn when the challenge is accepted.
    Random,
}

impl SeatChoice {
    /// Parses `x`, `o` or `random`.
    pub fn parse(text: &str) -> Option<SeatChoice> {
        match text {
            "x" => Some(SeatChoice::X),
            "o" => Some(SeatChoice::O),
            "random" => Some(SeatChoice::Random),
            _ => None,
        }
    }

    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            SeatChoice::X => "x",
            SeatChoice::O => "o",
            SeatChoice::Random => "random",
        }
    }
}

/// Where a challenge stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Waiting for an answer.
    Pending,
    /// Accepted: the match exists.
    Accepted,
    /// Declined by the challenged player.
    Declined,
    /// Withdrawn by the challenger.
    Cancelled,
    /// Nobody answered in time.
    Expired,
}

impl Status {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Accepted => "accepted",
            Status::Declined => "declined",
            Status::Cancelled => "cancelled",
            Status::Expired => "expired",
        }
    }
}

/// A new challenge, parsed.
#[derive(Debug, Clone)]
pub struct NewChallenge {
    /// The challenged player's name (any case).
    pub username: String,
    /// Board depth (a ladder's when `ladder` is set and none was given).
    pub depth: Option<Depth>,
    /// Time control (a ladder's when `ladder` is set and none was given).
    pub time_control: Option<TimeControl>,
    /// The challenger's seat.
    pub seat: SeatChoice,
    /// The ladder a rated challenge is played on.
    pub ladder: Option<String>,
}

/// A player in a challenge.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChallengePlayer {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// Whether the account is a bot.
    pub bot: bool,
}

/// A challenge as clients see it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChallengeView {
    /// Opaque id.
    pub id: String,
    /// Who challenged.
    pub challenger: ChallengePlayer,
    /// Who is challenged.
    pub challenged: ChallengePlayer,
    /// Board depth of the match.
    pub depth: u8,
    /// Time control of the match.
    pub time_control: TimeControlBody,
    /// The challenger's seat: `x`, `o` or `random`.
    #[schema(example = "random")]
    pub seat: String,
    /// The ladder the match is rated on, if any.
    pub ladder: Option<String>,
    /// Whether the match changes ratings.
    pub rated: bool,
    /// `pending`, `accepted`, `declined`, `cancelled` or `expired`.
    #[schema(example = "pending")]
    pub status: String,
    /// The challenged player's reason, once declined.
    pub decline_reason: Option<String>,
    /// The match, once accepted.
    pub match_id: Option<String>,
    /// When it was made.
    pub created_at: String,
    /// When a pending challenge expires.
    pub expires_at: String,
}

/// The caller's pending challenges.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MyChallenges {
    /// Challenges to the caller, oldest first.
    pub incoming: Vec<ChallengeView>,
    /// Challenges the caller made, oldest first.
    pub outgoing: Vec<ChallengeView>,
}

/// The answer to an accepted challenge.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Accepted {
    /// The new match.
    pub match_id: String,
}

fn challenge_player(conn: &mut DbConnection, id: &str) -> Result<ChallengePlayer> {
    let row = players::by_id(conn, id)?;
    Ok(match row {
        Some(p) => ChallengePlayer {
            id: p.id,
            username: p.username,
            bot: p.bot,
        },
        None => ChallengePlayer {
            id: id.to_owned(),
            username: "(deleted)".into(),
            bot: false,
        },
    })
}

fn view(conn: &mut DbConnection, row: &ChallengeRow) -> Result<ChallengeView> {
    Ok(ChallengeView {
        id: row.id.clone(),
        challenger: challenge_player(conn, &row.challenger_id)?,
        challenged: challenge_player(conn, &row.challenged_id)?,
        depth: u8::try_from(row.depth).unwrap_or(2),
        time_control: time_control(
            &row.tc_kind,
            row.tc_initial_ms,
            row.tc_increment_ms,
            row.tc_turn_ms,
        )?
        .into(),
        seat: row.seat.clone(),
        ladder: row.ladder.clone(),
        rated: row.ladder.is_some(),
        status: row.status.clone(),
        decline_reason: row.decline_reason.clone(),
        match_id: row.match_id.clone(),
        created_at: rfc3339(row.created_at),
        expires_at: rfc3339(row.expires_at),
    })
}

/// Whether both players may play a rated match on `ladder`: it is rated, and
/// it takes bots when either is one.
fn check_ladder(ladder: &LadderConfig, bots: bool) -> Result<()> {
    if !ladder.rated {
        return Err(Error::Validation(vec![FieldError::new(
            "ladder",
            "this ladder is not rated; leave `ladder` out for a casual challenge",
        )]));
    }
    if bots && !ladder.bots {
        return Err(Error::Forbidden(
            "bot accounts may only play on ladders open to bots",
        ));
    }
    Ok(())
}

/// The depth and time control of the match, from the request and the ladder.
fn settings(spec: &NewChallenge, ladder: Option<&LadderConfig>) -> Result<(Depth, TimeControl)> {
    let Some(ladder) = ladder else {
        return Ok((
            spec.depth.unwrap_or(Depth::TWO),
            spec.time_control.unwrap_or(TimeControl::TOURNAMENT),
        ));
    };
    let depth = Depth::new(ladder.depth).map_err(|_| Error::Internal("ladder depth".into()))?;
    let mut errors = Vec::new();
    if spec.depth.is_some_and(|d| d != depth) {
        errors.push(FieldError::new(
            "depth",
            format!("the ladder `{}` plays depth {}", ladder.id, ladder.depth),
        ));
    }
    if spec
        .time_control
        .is_some_and(|tc| tc != ladder.time_control)
    {
        errors.push(FieldError::new(
            "time_control",
            format!("the ladder `{}` has its own time control", ladder.id),
        ));
    }
    if !errors.is_empty() {
        return Err(Error::Validation(errors));
    }
    Ok((depth, ladder.time_control))
}

/// Challenges a player.
///
/// # Errors
/// `NotFound` for an unknown player; `validation_failed` for a challenge to
/// oneself, an unknown or unrated ladder, or settings that differ from the ladder's; `forbidden` when the challenged
/// player refuses challenges from bots or a bot would play on a ladder closed
/// to bots; `rate_limited` past the pending cap.
#[tracing::instrument(skip(ctx, player, spec), fields(player.id = %player.id))]
pub async fn create(ctx: &Context, player: &Player, spec: NewChallenge) -> Result<ChallengeView> {
    let ladder =
        match spec.ladder.as_deref() {
            None => None,
            Some(id) => Some(ctx.config.ladder(id).cloned().ok_or_else(|| {
                Error::Validation(vec![FieldError::new("ladder", "no such ladder")])
            })?),
        };
    let (depth, tc) = settings(&spec, ladder.as_ref())?;
    let now = ctx.time.now_ms();
    let cap = ctx.config.caps.pending_challenges;
    let me = player.clone();
    let view = ctx
        .db
        .write(move |conn| {
            let them =
                players::by_username(conn, &spec.username)?.ok_or(Error::NotFound("player"))?;
            if them.id == me.id {
                return Err(Error::Validation(vec![FieldError::new(
                    "username",
                    "you cannot challenge yourself",
                )]));
            }
            if me.bot && !them.accept_bot_challenges {
                return Err(Error::Forbidden(
                    "this player does not accept challenges from bots",
                ));
            }
            if let Some(ladder) = &ladder {
                check_ladder(ladder, me.bot || them.bot)?;
            }
            players::lock(conn, &me.id)?;
            let pending = store::pending_from(conn, &me.id, now)?;
            if pending.len() >= usize::try_from(cap).unwrap_or(usize::MAX) {
                let first_free = pending.first().map_or(now, |c| c.expires_at);
                let secs = first_free.saturating_sub(now).max(0) / 1000 + 1;
                return Err(Error::RateLimited {
                    retry_after_secs: u64::try_from(secs).unwrap_or(1),
                });
            }
            let (tc_kind, tc_initial_ms, tc_increment_ms, tc_turn_ms) = time_control_columns(tc);
            let row = ChallengeRow {
                id: ids::record_id(),
                challenger_id: me.id.clone(),
                challenged_id: them.id,
                depth: i16::from(depth.get()),
                tc_kind,
                tc_initial_ms,
                tc_increment_ms,
                tc_turn_ms,
                seat: spec.seat.as_str().to_owned(),
                ladder: ladder.map(|l| l.id),
                status: Status::Pending.as_str().to_owned(),
                decline_reason: None,
                match_id: None,
                created_at: now,
                expires_at: now.saturating_add(TTL_MS),
                updated_at: now,
            };
            store::insert(conn, &row)?;
            view(conn, &row)
        })
        .await?;
    tracing::info!(challenge.id = %view.id, "challenge made");
    events::notify_player(ctx, &view.challenged.id, "challenge", &view).await;
    Ok(view)
}

/// Locks the challenge for `player`, who must be one of its two players;
/// a pending challenge past its time is expired on the spot.
fn lock_for(conn: &mut DbConnection, id: &str, player: &str, now: Millis) -> Result<ChallengeRow> {
    let mut row = store::lock(conn, id)?
        .filter(|c| c.challenger_id == player || c.challenged_id == player)
        .ok_or(Error::NotFound("challenge"))?;
    if row.status == Status::Pending.as_str() && row.expires_at <= now {
        row.status = Status::Expired.as_str().to_owned();
        row.updated_at = now;
        store::save(conn, &row)?;
    }
    Ok(row)
}

fn not_pending(row: &ChallengeRow) -> Error {
    Error::conflict(
        ConflictCode::ChallengeNotPending,
        format!("the challenge is {}", row.status),
        Some(("status", row.status.clone())),
    )
}

/// Makes the challenge's match, X and O as the challenger chose.
fn start_match(
    conn: &mut DbConnection,
    row: &ChallengeRow,
    ctx_ladders: &[LadderConfig],
    now: Millis,
) -> Result<Snapshot> {
    let challenger_x = match SeatChoice::parse(&row.seat) {
        Some(SeatChoice::X) => true,
        Some(SeatChoice::O) => false,
        _ => rand::random::<bool>(),
    };
    let (x, o) = if challenger_x {
        (&row.challenger_id, &row.challenged_id)
    } else {
        (&row.challenged_id, &row.challenger_id)
    };
    let depth = u8::try_from(row.depth)
        .ok()
        .and_then(|d| Depth::new(d).ok())
        .ok_or(Error::Internal("challenge depth".into()))?;
    let tc = time_control(
        &row.tc_kind,
        row.tc_initial_ms,
        row.tc_increment_ms,
        row.tc_turn_ms,
    )?;
    let ladder = row
        .ladder
        .as_deref()
        .map(|id| {
            ctx_ladders.iter().find(|l| l.id == id).ok_or_else(|| {
                Error::Validation(vec![FieldError::new(
                    "ladder",
                    "the ladder is no longer configured",
                )])
            })
        })
        .transpose()?;
    if ladder.is_some() {
        for player in [x, o] {
            if let Some(match_id) = match_store::active_ranked(conn, player)? {
                return Err(Error::conflict(
                    ConflictCode::InActiveMatch,
                    "a player of this challenge is in an unfinished ranked match",
                    Some(("match_id", match_id)),
                ));
            }
        }
    }
    let spec = NewMatch {
        mode: if ladder.is_some() {
            Mode::Ranked
        } else {
            Mode::Casual
        },
        ladder: ladder.map(|l| l.id.clone()),
        rated: ladder.is_some_and(|l| l.rated),
        depth,
        time_control: tc,
        x: SeatSpec::player(x),
        o: SeatSpec::player(o),
        cpu_level: None,
        room_code: None,
    };
    let mut m = create::new_row(spec, now)?;
    if ladder.is_some() {
        // A ranked match made at the same moment elsewhere (matchmaking on
        // another instance) trips the one-ranked-match index: that is the
        // same conflict as the check above, not a server error.
        match_store::insert(conn, &m).map_err(|e| {
            if e.is_unique_violation() {
                Error::conflict(
                    ConflictCode::InActiveMatch,
                    "a player of this challenge is in an unfinished ranked match",
                    None,
                )
            } else {
                e.into()
            }
        })?;
    } else {
        create::insert_new(conn, &mut m)?;
    }
    if let Some(ladder) = ladder {
        for player in [x, o] {
            ladders::ensure(conn, player, &ladder.id, now)?;
        }
    }
    play::snapshot(conn, m)
}

/// Accepts a challenge made to `player`: the match is made in the same
/// transaction, and both players are told (`challenge_accepted` to the
/// challenger, `match_found` to both).
///
/// # Errors
/// `NotFound`; `forbidden` for the challenger; `challenge_not_pending`;
/// `in_active_match` for a rated challenge while either player has an
/// unfinished ranked match.
#[tracing::instrument(skip(ctx, player), fields(player.id = %player.id))]
pub async fn accept(ctx: &Context, player: &Player, id: &str) -> Result<Accepted> {
    let now = ctx.time.now_ms();
    let (cid, me) = (id.to_owned(), player.id.clone());
    let ladders_config = ctx.config.ladders.clone();
    let (row, snap) = ctx
        .db
        .write(move |conn| {
            let mut row = lock_for(conn, &cid, &me, now)?;
            if row.challenged_id != me {
                return Err(Error::Forbidden("only the challenged player may accept"));
            }
            if row.status != Status::Pending.as_str() {
                return Err(not_pending(&row));
            }
            let snap = start_match(conn, &row, &ladders_config, now)?;
            row.status = Status::Accepted.as_str().to_owned();
            row.match_id = Some(snap.row.id.to_string());
            row.updated_at = now;
            store::save(conn, &row)?;
            Ok((row, snap))
        })
        .await?;
    let match_id = snap.row.id.to_string();
    tracing::info!(challenge.id = %row.id, match.id = %match_id, "challenge accepted");
    events::notify_player(
        ctx,
        &row.challenger_id,
        "challenge_accepted",
        &serde_json::json!({"id": row.id, "challenge_id": row.id, "match_id": match_id}),
    )
    .await;
    for seat in [Seat::X, Seat::O] {
        if let Some(p) = snap.row.player(seat) {
            events::notify_player(
                ctx,
                p,
                "match_found",
                &serde_json::json!({
                    "match_id": match_id,
                    "ladder": snap.row.ladder,
                    "seat": seat_str(seat),
                    "challenge_id": row.id,
                }),
            )
            .await;
        }
    }
    matches::publish(ctx, &snap).await?;
    Ok(Accepted { match_id })
}

/// Ends a pending challenge as `status` by `player` (declined by the
/// challenged player, cancelled by the challenger), and tells the other one.
async fn close(
    ctx: &Context,
    player: &Player,
    id: &str,
    status: Status,
    reason: Option<String>,
) -> Result<ChallengeView> {
    let now = ctx.time.now_ms();
    let (cid, me) = (id.to_owned(), player.id.clone());
    let view = ctx
        .db
        .write(move |conn| {
            let mut row = lock_for(conn, &cid, &me, now)?;
            let allowed = match status {
                Status::Declined => row.challenged_id == me,
                _ => row.challenger_id == me,
            };
            if !allowed {
                return Err(Error::Forbidden(match status {
                    Status::Declined => "only the challenged player may decline",
                    _ => "only the challenger may cancel",
                }));
            }
            if row.status != Status::Pending.as_str() {
                return Err(not_pending(&row));
            }
            row.status = status.as_str().to_owned();
            row.decline_reason = reason;
            row.updated_at = now;
            store::save(conn, &row)?;
            view(conn, &row)
        })
        .await?;
    let (other, event) = match status {
        Status::Declined => (&view.challenger.id, "challenge_declined"),
        _ => (&view.challenged.id, "challenge_cancelled"),
    };
    events::notify_player(ctx, other, event, &view).await;
    Ok(view)
}

/// Declines a challenge made to `player`.
///
/// # Errors
/// `NotFound`; `forbidden` for the challenger; `challenge_not_pending`.
pub async fn decline(
    ctx: &Context,
    player: &Player,
    id: &str,
    reason: Option<String>,
) -> Result<ChallengeView> {
    let reason = reason.map(|r| r.chars().take(MAX_REASON_CHARS).collect());
    close(ctx, player, id, Status::Declined, reason).await
}

/// Withdraws a challenge `player` made.
///
/// # Errors
/// `NotFound`; `forbidden` for the challenged player; `challenge_not_pending`.
pub async fn cancel(ctx: &Context, player: &Player, id: &str) -> Result<ChallengeView> {
    close(ctx, player, id, Status::Cancelled, None).await
}

/// A challenge `player` made or received.
///
/// # Errors
/// `NotFound` (also for other players' challenges).
pub async fn get(ctx: &Context, player: &Player, id: &str) -> Result<ChallengeView> {
    let now = ctx.time.now_ms();
    let (cid, me) = (id.to_owned(), player.id.clone());
    ctx.db
        .write(move |conn| {
            let row = lock_for(conn, &cid, &me, now)?;
            view(conn, &row)
        })
        .await
}

/// The player's pending challenges, incoming and outgoing.
///
/// # Errors
/// Store failures.
pub async fn mine(ctx: &Context, player: &Player) -> Result<MyChallenges> {
    let now = ctx.time.now_ms();
    let me = player.id.clone();
    ctx.db
        .run(move |conn| {
            let incoming = store::pending_to(conn, &me, now)?;
            let outgoing = store::pending_from(conn, &me, now)?;
            Ok(MyChallenges {
                incoming: incoming
                    .iter()
                    .map(|r| view(conn, r))
                    .collect::<Result<_>>()?,
                outgoing: outgoing
                    .iter()
                    .map(|r| view(conn, r))
                    .collect::<Result<_>>()?,
            })
        })
        .await
}

/// Expires up to `limit` pending challenges whose time ran out and tells
/// both players (`challenge_expired`); returns how many (the expiry worker).
///
/// # Errors
/// Store failures.
pub async fn expire_due(ctx: &Context, limit: i64) -> Result<usize> {
    let now = ctx.time.now_ms();
    let expired = ctx
        .db
        .write(move |conn| {
            let mut done = Vec::new();
            for id in store::due(conn, now, limit)? {
                let Some(mut row) = store::lock(conn, &id)? else {
                    continue;
                };
                // Answered meanwhile.
                if row.status != Status::Pending.as_str() {
                    continue;
                }
                row.status = Status::Expired.as_str().to_owned();
                row.updated_at = now;
                store::save(conn, &row)?;
                done.push(view(conn, &row)?);
            }
            Ok::<_, Error>(done)
        })
        .await?;
    for view in &expired {
        for player in [&view.challenger.id, &view.challenged.id] {
            events::notify_player(ctx, player, "challenge_expired", view).await;
        }
    }
    Ok(expired.len())
}
