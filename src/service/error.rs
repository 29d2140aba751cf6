//! The service layer's error: one variant per outcome a client must tell
//! apart. The HTTP layer maps each to a status and a stable `code`.

use crate::broker::BrokerError;
use crate::store::StoreError;

/// One field that failed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's name (a dotted path for nested fields).
    pub field: String,
    /// What is wrong, for a human.
    pub message: String,
}

impl FieldError {
    /// A new field error.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The stable code of every 409 the service answers with. `problem.rs` writes
/// these into problem bodies and the OpenAPI responses name them (a test
/// checks that each one a client can receive is documented).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConflictCode {
    /// Registration with a name that exists, ignoring case.
    UsernameTaken,
    /// The other seat is to move.
    NotYourTurn,
    /// The move was sent for another ply than the current one.
    StalePly,
    /// The match is finished.
    MatchOver,
    /// The player already holds a queued ticket.
    AlreadyQueued,
    /// The player is seated in an unfinished ranked match.
    InActiveMatch,
    /// The ticket was already paired into a match.
    AlreadyMatched,
    /// The player has the most unfinished practice matches allowed.
    TooManyPracticeMatches,
    /// The player has the most rooms nobody joined yet allowed.
    TooManyOpenRooms,
    /// The room already has two players.
    RoomFull,
    /// The host tried to join their own room.
    OwnRoom,
    /// The room's current game is still being played.
    MatchInProgress,
    /// The room has no guest yet.
    RoomNotFull,
    /// The challenge was already answered, cancelled or expired.
    ChallengeNotPending,
    /// The account played rated games as a human, so it cannot become a bot.
    HasRatedGames,
    /// The match is still being played (an analysis waits for its end).
    MatchNotFinished,
    /// A ticket left the queue while the pairing worker wrote its match: rolls
    /// the pairing back. Only the worker sees it, never a client.
    TicketGone,
    /// The player already entered the tournament.
    AlreadyJoined,
    /// The tournament has the most players it takes.
    TournamentFull,
    /// The tournament no longer takes entries or changes (a Swiss after round
    /// 1 started, or finished or cancelled).
    TournamentClosed,
    /// A tournament cannot start with fewer than two players.
    NotEnoughPlayers,
    /// Berserk after the player's first move, without a clock, or outside a running arena.
    BerserkNotAllowed,
}

impl ConflictCode {
    /// Every code, in the order above.
    pub const ALL: [ConflictCode; 22] = [
        ConflictCode::UsernameTaken,
        ConflictCode::NotYourTurn,
        ConflictCode::StalePly,
        ConflictCode::MatchOver,
        ConflictCode::AlreadyQueued,
        ConflictCode::InActiveMatch,
        ConflictCode::AlreadyMatched,
        ConflictCode::TooManyPracticeMatches,
        ConflictCode::TooManyOpenRooms,
        ConflictCode::RoomFull,
        ConflictCode::OwnRoom,
        ConflictCode::MatchInProgress,
        ConflictCode::RoomNotFull,
        ConflictCode::ChallengeNotPending,
        ConflictCode::HasRatedGames,
        ConflictCode::MatchNotFinished,
        ConflictCode::TicketGone,
        ConflictCode::AlreadyJoined,
        ConflictCode::TournamentFull,
        ConflictCode::TournamentClosed,
        ConflictCode::NotEnoughPlayers,
        ConflictCode::BerserkNotAllowed,
    ];

    /// The code as clients read it in a problem body.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictCode::UsernameTaken => "username_taken",
            ConflictCode::NotYourTurn => "not_your_turn",
            ConflictCode::StalePly => "stale_ply",
            ConflictCode::MatchOver => "match_over",
            ConflictCode::AlreadyQueued => "already_queued",
            ConflictCode::InActiveMatch => "in_active_match",
            ConflictCode::AlreadyMatched => "already_matched",
            ConflictCode::TooManyPracticeMatches => "too_many_practice_matches",
            ConflictCode::TooManyOpenRooms => "too_many_open_rooms",
            ConflictCode::RoomFull => "room_full",
            ConflictCode::OwnRoom => "own_room",
            ConflictCode::MatchInProgress => "match_in_progress",
            ConflictCode::RoomNotFull => "room_not_full",
            ConflictCode::ChallengeNotPending => "challenge_not_pending",
            ConflictCode::HasRatedGames => "has_rated_games",
            ConflictCode::MatchNotFinished => "match_not_finished",
            ConflictCode::TicketGone => "ticket_gone",
            ConflictCode::AlreadyJoined => "already_joined",
            ConflictCode::TournamentFull => "tournament_full",
            ConflictCode::TournamentClosed => "tournament_closed",
            ConflictCode::NotEnoughPlayers => "not_enough_players",
            ConflictCode::BerserkNotAllowed => "berserk_not_allowed",
        }
    }

    /// Whether a client can receive it (every other code is documented in OpenAPI).
    pub fn reaches_clients(self) -> bool {
        self != ConflictCode::TicketGone
    }
}

impl std::fmt::Display for ConflictCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a use case did not go through.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request was understood but its values are not acceptable.
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    /// Wrong username or password (never says which).
    #[error("invalid username or password")]
    InvalidCredentials,
    /// No valid access or refresh token.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// Authenticated, but not allowed.
    #[error("{0}")]
    Forbidden(&'static str),
    /// The thing named does not exist (or is not visible to the caller).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// Registration with a name that exists, ignoring case.
    #[error("that username is taken")]
    UsernameTaken,
    /// Too many requests.
    #[error("too many requests")]
    RateLimited {
        /// Seconds until a retry may succeed.
        retry_after_secs: u64,
    },
    /// The match is running but the other seat is to move.
    #[error("it is not your turn")]
    NotYourTurn,
    /// The move was sent for another ply than the current one.
    #[error("the match is at ply {current_ply}")]
    StalePly {
        /// Moves already played.
        current_ply: u32,
    },
    /// The match is finished.
    #[error("{0}")]
    MatchOver(&'static str),
    /// The rules refuse the move.
    #[error("illegal move: {0}")]
    IllegalMove(crate::rules::IllegalMove),
    /// Another conflict with the current state, with its own stable code.
    #[error("{detail}")]
    Conflict {
        /// The stable code (`room_full`, `already_queued`, …).
        code: ConflictCode,
        /// What is in the way.
        detail: String,
        /// A related resource for the client, as a body member: `("match_id", id)`, `("ticket_id", id)`.
        related: Option<(&'static str, String)>,
    },
    /// The database or broker cannot be reached.
    #[error("service unavailable: {0}")]
    Unavailable(String),
    /// A bug or an unexpected failure; logged, never shown to the client.
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for Error {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Unavailable(msg) => Error::Unavailable(msg),
            other => Error::Internal(other.to_string()),
        }
    }
}

impl From<BrokerError> for Error {
    fn from(err: BrokerError) -> Self {
        match err {
            BrokerError::Unavailable(msg) => Error::Unavailable(msg),
        }
    }
}

impl Error {
    /// A 409 with its own stable code, naming a related resource when there is one.
    pub fn conflict(
        code: ConflictCode,
        detail: impl Into<String>,
        related: Option<(&'static str, String)>,
    ) -> Error {
        Error::Conflict {
            code,
            detail: detail.into(),
            related,
        }
    }
}

/// Result of a use case.
pub type Result<T, E = Error> = std::result::Result<T, E>;
