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
use crate::rules::Depth;
use crate::store::challenges::{self as store, ChallengeRow};
use crate::store::{DbConnection, players};
use crate::time::{Millis, rfc3339};

use super::accounts::Player;
use super::matches::record::{time_control, time_control_columns};
use super::matches::state::TimeControlBody;
use super::{Context, Error, FieldError, Result, events};

mod answer;

use answer::lock_for;
pub use answer::{accept, cancel, decline, expire_due};

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
