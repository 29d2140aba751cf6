//! The transactional core of a match: a move, a resignation, a time forfeit.
//! Each function runs inside the caller's write transaction on a match row
//! it has locked, and leaves the row consistent: the stored record is always
//! the replay of the stored moves.
//!
//! Over 400 lines: the three ways a match changes share the lock, the
//! settling of the clock and the finish (result, ratings, record), and
//! splitting them would spread one transaction over several files.

use crate::clock::Settled;
use crate::rating::Growth;
use crate::rules::{self, Address, Depth, IllegalMove, Position, Seat, Square, Status};
use crate::store::DbConnection;
use crate::store::matches::{self, MatchRow, MoveRow, Seating};
use crate::time::Millis;

use super::super::ladders::{self, FinishedMatch};
use super::super::{Error, Result};
use super::record::{
    Controller, EndReason, MatchRecord, MatchStatus, Mode, PlayerId, StoredSeat, seat_str,
};
use super::state::{Names, RatingChanges, TournamentRef};

/// A match row with its decoded position and seated names: all a state needs.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The row as committed.
    pub row: MatchRow,
    /// Its position.
    pub position: Position,
    /// Seated players' names.
    pub names: Names,
    /// What a finished rated match did to the ratings.
    pub rating_changes: Option<RatingChanges>,
    /// The tournament round the match was paired in, if any.
    pub tournament: Option<TournamentRef>,
}

/// Who is making a move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mover {
    /// A player, by id: must be seated, and to move.
    Player(PlayerId),
    /// The CPU, for `seat`: the seat must still be CPU-controlled.
    Cpu(Seat),
}

/// What a move request did.
#[derive(Debug)]
pub enum MoveOutcome {
    /// The move was applied.
    Applied(Snapshot),
    /// The same player resent the move already accepted at that ply: nothing changed.
    Retried(Snapshot),
    /// The mover's time had run out: the match was ended on time, the move refused.
    Flagged(Snapshot),
    /// A CPU move whose seat or ply changed while it was thinking: dropped.
    Discarded,
}

/// What a request on a match found when it checked the clock.
pub enum Lapse {
    /// Time has not run out (or the match is over already).
    InTime,
    /// The side to move had run out of time; the match is now finished on time.
    Ended,
}

/// The snapshot of a row as it stands.
///
/// # Errors
/// A corrupt row, or database errors.
pub fn snapshot(conn: &mut DbConnection, row: MatchRow) -> Result<Snapshot> {
    let seating = matches::seating(conn, &row.id)?;
    seated_snapshot(conn, row, seating)
}

/// The snapshot of a row read with its seating ([`matches::get_seated`],
/// [`matches::lock_seated`]): no further query, but for the rating changes
/// of a finished rated match.
///
/// # Errors
/// A corrupt row, or database errors.
pub fn seated_snapshot(
    conn: &mut DbConnection,
    row: MatchRow,
    seating: Seating,
) -> Result<Snapshot> {
    let rating_changes = if row.rated && !row.is_active() {
        ladders::changes_of(conn, &row.id)?
    } else {
        None
    };
    snapshot_of(row, seating, rating_changes)
}

/// The snapshot of a row read with its seating, which has no rating
/// changes to read (an active match, or an unrated one): nothing more to
/// read.
///
/// # Errors
/// A corrupt row.
pub fn snapshot_without_ratings(row: MatchRow, seating: Seating) -> Result<Snapshot> {
    debug_assert!(
        row.is_active() || !row.rated,
        "a finished rated match has rating changes"
    );
    snapshot_of(row, seating, None)
}

fn snapshot_of(
    row: MatchRow,
    seating: Seating,
    rating_changes: Option<RatingChanges>,
) -> Result<Snapshot> {
    let (position, _) = row.decode()?;
    let Seating {
        names: [x, o],
        bots,
        tournament,
    } = seating;
    Ok(Snapshot {
        row,
        position,
        names: Names { x, o, bots },
        rating_changes,
        tournament: tournament.map(|(id, round)| TournamentRef {
            id,
            // Swiss rounds count from 1; arena games are stored as round 0.
            round: (round > 0).then_some(round),
        }),
    })
}

/// Ends the match: result, timestamps, no one to move. Ratings of a rated
/// match, and the arena totals of an arena game, change in this same
/// transaction.
///
/// # Errors
/// Database errors; `Internal` for a rated match without a ladder or two
/// seated players.
pub fn finish(
    conn: &mut DbConnection,
    row: &mut MatchRow,
    winner: Option<Seat>,
    reason: EndReason,
    now: Millis,
    growth: Growth,
) -> Result<()> {
    settle(row, winner, reason, now)?;
    // What is written here besides the row is what `end_writes_beyond_the_row` names.
    if row.rated {
        let (Some(ladder), Some(x), Some(o)) = (
            row.ladder.as_deref(),
            row.player(Seat::X),
            row.player(Seat::O),
        ) else {
            return Err(Error::Internal(format!(
                "rated match {} lacks a ladder or a player",
                row.id
            )));
        };
        let game = FinishedMatch {
            id: &row.id,
            ladder,
            x,
            o,
            winner,
        };
        ladders::apply_result(conn, &game, now, growth)?;
    }
    if row.mode == Mode::Tournament {
        crate::service::tournaments::tally::record_end(conn, &row.id, winner, now)?;
    }
    Ok(())
}

/// Whether [`finish`] writes more than the row for `row`'s end: a rated
/// match's ratings, a tournament game's standings. Such an end is played
/// under the lock ([`play`]); any other is the row alone ([`settle`]).
fn end_writes_beyond_the_row(row: &MatchRow) -> bool {
    row.rated || row.mode == Mode::Tournament
}

/// The finished match's own columns: its result, and no turn or claim.
/// All of a finish an unrated game outside a tournament needs.
fn settle(row: &mut MatchRow, winner: Option<Seat>, reason: EndReason, now: Millis) -> Result<()> {
    row.status = MatchStatus::Finished;
    row.winner = winner.map(StoredSeat);
    row.reason = Some(reason);
    row.finished_at = Some(now);
    row.to_move = None;
    row.cpu_claimed_until = None;
    row.refresh_derived()
}

/// The winner and the reason of the end a move's `status` brought; `None`
/// while the game goes on.
fn ending(status: Status) -> Option<(Option<Seat>, EndReason)> {
    match status {
        Status::Ongoing => None,
        Status::Won(winner) => Some((Some(winner), EndReason::ThreeInARow)),
        Status::Drawn => Some((None, EndReason::Draw)),
    }
}

/// If the side to move has run out of time at `now`, ends the match on time
/// (the flagged side loses, always) and saves it.
///
/// # Errors
/// Database errors.
pub fn end_if_lapsed(
    conn: &mut DbConnection,
    row: &mut MatchRow,
    now: Millis,
    growth: Growth,
) -> Result<Lapse> {
    let Some(seat) = lapsed_seat(row, now)? else {
        return Ok(Lapse::InTime);
    };
    if row.time_control()?.initial_bank().is_some() {
        row.set_bank(seat, Some(0));
    }
    // The match ends at the moment the flag fell, not when it was noticed.
    let fell_at = row.deadline_at.unwrap_or(now).min(now);
    finish(
        conn,
        row,
        Some(seat.other()),
        EndReason::Timeout,
        fell_at,
        growth,
    )?;
    row.version += 1;
    matches::save(conn, row)?;
    Ok(Lapse::Ended)
}

/// The side to move of an active match, if it has run out of time at `now`.
fn lapsed_seat(row: &MatchRow, now: Millis) -> Result<Option<Seat>> {
    let Some(seat) = row.to_move_seat().filter(|_| row.is_active()) else {
        return Ok(None);
    };
    let tc = row.time_control()?;
    let flagged = tc.settle(row.turn_started_at, row.bank(seat), now) == Settled::Flagged;
    Ok(flagged.then_some(seat))
}

/// A square as stored (flat indexes are below 9^4, so they always fit).
fn square_column(square: rules::Square) -> i32 {
    i32::try_from(square.index()).unwrap_or(i32::MAX)
}

/// The square a move asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// A player's address, parsed at the HTTP boundary; `None` when the body
    /// names no square at all (refused as `bad_address` once the checks that
    /// come first have passed).
    Address(Option<Address>),
    /// The CPU's square, found on this match's position.
    Square(Square),
}

impl Choice {
    /// The square on a board of `depth`.
    fn square(&self, depth: Depth) -> Option<Square> {
        match self {
            Choice::Address(address) => address
                .as_ref()
                .and_then(|a| Square::from_address(depth, a)),
            Choice::Square(square) => Some(*square),
        }
    }
}

/// Plays a move on the locked match `id` at `now`: the whole of API.md's
/// move rules (seat, safe retry, finished, time, ply, turn, legality).
/// `lag` is the network time a player's client reports; it is credited
/// within the player's lag quota (`clock::LagQuota`).
///
/// # Errors
/// `NotFound`, `Forbidden`, `MatchOver`, `StalePly`, `NotYourTurn`, `IllegalMove`.
#[expect(
    clippy::too_many_arguments,
    reason = "one transaction's inputs: the move, its time and the rating growth a finish applies"
)]
pub fn play(
    conn: &mut DbConnection,
    id: &str,
    mover: &Mover,
    ply: u32,
    choice: &Choice,
    lag: Option<Millis>,
    now: Millis,
    growth: Growth,
) -> Result<MoveOutcome> {
    let (mut row, seating) = matches::lock_seated(conn, id)?.ok_or(Error::NotFound("match"))?;
    let seat = match mover {
        Mover::Player(player) => seated(&row, player)?,
        Mover::Cpu(seat) => {
            let stale = !row.is_active()
                || row.to_move_seat() != Some(*seat)
                || row.controller(*seat) != Controller::Cpu
                || u32::try_from(row.ply).ok() != Some(ply);
            if stale {
                return Ok(MoveOutcome::Discarded);
            }
            *seat
        }
    };

    // Safe retry: the same player resending the move accepted at that ply.
    if let (Mover::Player(_), Ok(earlier)) = (mover, i32::try_from(ply))
        && earlier < row.ply
        && let Some(played) = matches::move_at(conn, id, earlier)?
    {
        let same_square = choice
            .square(row.depth()?)
            .is_some_and(|sq| square_column(sq) == played.square);
        if same_square && played.seat == seat_str(seat) && !played.by_cpu {
            return Ok(MoveOutcome::Retried(seated_snapshot(conn, row, seating)?));
        }
    }
    if !row.is_active() {
        return Err(Error::MatchOver(MATCH_OVER));
    }
    if let Lapse::Ended = end_if_lapsed(conn, &mut row, now, growth)? {
        return Ok(MoveOutcome::Flagged(seated_snapshot(conn, row, seating)?));
    }
    check_turn(&row, seat, ply)?;
    let applied = apply(&mut row, seat, mover, choice, lag, now)?;
    matches::insert_move(conn, &applied.stored)?;
    if let Some((winner, reason)) = ending(applied.status) {
        finish(conn, &mut row, winner, reason, now, growth)?;
    }
    row.version += 1;
    matches::save(conn, &row)?;
    Ok(MoveOutcome::Applied(seated_snapshot(conn, row, seating)?))
}

/// What the match row alone says of a player's move (see [`play_quick`]).
#[derive(Debug)]
pub enum Quick {
    /// The move is applied to the row in memory, its version raised (and,
    /// if it ended the game, the result set): write the move and the row,
    /// and, for a finished row, mark its seats finished as
    /// [`matches::save`] does.
    Write(MoveRow),
    /// The move needs more than the row (the stored move of a possible safe
    /// retry, a lapsed clock to end, the ratings or standings of a rated or
    /// tournament game it ends): play it with [`play`] instead.
    Slow,
}

/// A player's move judged on its match row alone, by [`play`]'s rules and
/// in its order, for a caller that writes the result itself, only onto the
/// row as it was read (`store::pipelined`): the same refusals, and
/// [`Quick::Slow`] wherever [`play`] would read or write anything but the
/// move, the row and, when the move ends the game, the seats' flags.
///
/// # Errors
/// `Forbidden`, `MatchOver`, `StalePly`, `NotYourTurn`, `IllegalMove`.
pub fn play_quick(
    row: &mut MatchRow,
    player: &PlayerId,
    ply: u32,
    choice: &Choice,
    lag: Option<Millis>,
    now: Millis,
) -> Result<Quick> {
    let seat = seated(row, player)?;
    if i32::try_from(ply).is_ok_and(|earlier| earlier < row.ply) {
        return Ok(Quick::Slow);
    }
    if !row.is_active() {
        return Err(Error::MatchOver(MATCH_OVER));
    }
    if lapsed_seat(row, now)?.is_some() {
        return Ok(Quick::Slow);
    }
    check_turn(row, seat, ply)?;
    let applied = apply(row, seat, &Mover::Player(player.clone()), choice, lag, now)?;
    if let Some((winner, reason)) = ending(applied.status) {
        if end_writes_beyond_the_row(row) {
            return Ok(Quick::Slow);
        }
        settle(row, winner, reason, now)?;
    }
    row.version += 1;
    Ok(Quick::Write(applied.stored))
}

const MATCH_OVER: &str = "the match is over";

/// The seat of `player`, who must be seated to move.
fn seated(row: &MatchRow, player: &PlayerId) -> Result<Seat> {
    row.seat_of(player)
        .ok_or(Error::Forbidden("only the seated players may move"))
}

/// The ply the mover saw must be the match's, and the turn the mover's.
fn check_turn(row: &MatchRow, seat: Seat, ply: u32) -> Result<()> {
    let current = u32::try_from(row.ply).unwrap_or(0);
    if ply != current {
        return Err(Error::StalePly {
            current_ply: current,
        });
    }
    if row.to_move_seat() != Some(seat) {
        return Err(Error::NotYourTurn);
    }
    Ok(())
}

/// A move applied to its match row in memory.
struct Applied {
    /// The move as stored.
    stored: MoveRow,
    /// The game after it; a game it ended is for [`finish`] to settle (or
    /// [`settle`], in [`play_quick`]).
    status: Status,
}

/// Applies the move of `seat` to `row` in memory, once the checks of its
/// seat, time, ply and turn have passed: a player's seat back to its player,
/// the square's checks, the lag credit, the clock, the position, the ply
/// and, while the game goes on, the turn.
fn apply(
    row: &mut MatchRow,
    seat: Seat,
    mover: &Mover,
    choice: &Choice,
    lag: Option<Millis>,
    now: Millis,
) -> Result<Applied> {
    if let Mover::Player(_) = mover {
        // A seated player who moves is back: the substitute hands the seat over.
        row.set_controller(seat, Controller::Human);
    }
    let depth = row.depth()?;
    let (mut position, mut moves) = row.decode()?;
    let square = choice
        .square(depth)
        .ok_or(Error::IllegalMove(IllegalMove::BadAddress))?;
    position.check_square(square).map_err(Error::IllegalMove)?;
    let tc = row.time_control()?;
    // A player's network time comes back within their quota; the substitute has none.
    let credit = match (mover, tc.lag_quota()) {
        (Mover::Player(_), Some(policy)) => {
            let quota = row.lag_quota(seat).unwrap_or(policy.start);
            let given = policy.credit(quota, lag.unwrap_or(0), now - row.turn_started_at);
            row.set_lag_quota(seat, Some(given.quota));
            given.credit
        }
        _ => 0,
    };
    // The lapse check ran on the same row at the same `now`, so this cannot flag.
    let Settled::InTime(bank) =
        tc.settle_credited(row.turn_started_at, row.bank(seat), now, credit)
    else {
        return Err(Error::Internal(
            "clock flagged after the lapse check".into(),
        ));
    };
    let outcome = position.play_square(square).map_err(Error::IllegalMove)?;
    moves.push(square);
    let stored = MoveRow {
        match_id: row.id.to_string(),
        ply: row.ply,
        seat: seat_str(seat).to_owned(),
        square: square_column(square),
        played_at: now,
        // A per-turn "bank" is only the next turn's allowance.
        clock_ms: bank.filter(|_| tc.initial_bank().is_some()),
        by_cpu: matches!(mover, Mover::Cpu(_)),
    };
    row.position = rules::encode(depth, &moves);
    row.ply += 1;
    row.set_bank(seat, bank);
    row.turn_started_at = now;
    row.cpu_claimed_until = None;
    if let Status::Ongoing = outcome.status {
        row.to_move = Some(StoredSeat(seat.other()));
        row.refresh_derived()?;
    }
    Ok(Applied {
        stored,
        status: outcome.status,
    })
}

/// What a resignation did.
#[derive(Debug)]
pub enum ResignOutcome {
    /// The player resigned; the match is over.
    Resigned(Snapshot),
    /// Time had already run out: the match ended on time instead.
    Flagged(Snapshot),
}

/// Resigns `player` from the locked match `id`: allowed at any time, on either player's turn.
/// Whether time had run out first is judged at `settled` (the flag's settling
/// time before `now`, as the sweeper judges it), so a move of the side to
/// move that arrived in time is not flagged by the other's resignation.
///
/// # Errors
/// `NotFound`, `Forbidden`, `MatchOver`.
pub fn resign(
    conn: &mut DbConnection,
    id: &str,
    player: &str,
    (now, settled): (Millis, Millis),
    growth: Growth,
) -> Result<ResignOutcome> {
    let (mut row, seating) = matches::lock_seated(conn, id)?.ok_or(Error::NotFound("match"))?;
    let seat = row
        .seat_of(player)
        .ok_or(Error::Forbidden("only the seated players may resign"))?;
    if !row.is_active() {
        return Err(Error::MatchOver(MATCH_OVER));
    }
    if let Lapse::Ended = end_if_lapsed(conn, &mut row, settled, growth)? {
        return Ok(ResignOutcome::Flagged(seated_snapshot(conn, row, seating)?));
    }
    // Charge the side to move for the time it used.
    if let Some(mover) = row.to_move_seat() {
        let tc = row.time_control()?;
        if let (Some(left), Some(_)) = (
            tc.left_to_move(row.turn_started_at, row.bank(mover), now),
            tc.initial_bank(),
        ) {
            row.set_bank(mover, Some(left));
        }
    }
    finish(
        conn,
        &mut row,
        Some(seat.other()),
        EndReason::Resignation,
        now,
        growth,
    )?;
    row.version += 1;
    matches::save(conn, &row)?;
    Ok(ResignOutcome::Resigned(seated_snapshot(
        conn, row, seating,
    )?))
}

/// Ends on time every active match whose side to move ran out of time by
/// `now` (at most `limit` of them), claiming them with `FOR UPDATE SKIP
/// LOCKED` so several instances can sweep at once.
///
/// # Errors
/// Database errors.
pub fn sweep_lapsed(
    conn: &mut DbConnection,
    now: Millis,
    limit: i64,
    growth: Growth,
) -> Result<Vec<Snapshot>> {
    let mut ended = Vec::new();
    for id in matches::claim_due(conn, now, limit)? {
        let Some(mut row) = matches::get(conn, &id)? else {
            continue;
        };
        if let Lapse::Ended = end_if_lapsed(conn, &mut row, now, growth)? {
            ended.push(snapshot(conn, row)?);
        }
    }
    Ok(ended)
}
