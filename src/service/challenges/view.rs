//! What a challenge is and how clients see it: its seat choice, status,
//! views, and the limits on it (shared by making and answering one).

use serde::Serialize;
use utoipa::ToSchema;

use crate::clock::TimeControl;
use crate::rules::Depth;
use crate::store::challenges::ChallengeRow;
use crate::store::{DbConnection, players};
use crate::time::{Millis, rfc3339};

use super::super::Result;
use super::super::accounts::DELETED_USERNAME;
use super::super::matches::record::time_control;
use super::super::matches::state::TimeControlBody;

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
            username: DELETED_USERNAME.to_owned(),
            bot: false,
        },
    })
}

pub(super) fn view(conn: &mut DbConnection, row: &ChallengeRow) -> Result<ChallengeView> {
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
