//! Reading tournaments: the list, the standings and a round's pairings.

use serde::Serialize;
use utoipa::ToSchema;

use crate::store::DbConnection;
use crate::store::tournaments::{self as store, TournamentRow};
use crate::tournament::swiss::Standing;

pub use super::super::page::Page;
use super::super::{Context, Error, Result, cursor};
use super::arena::{self, GameView};
use super::run::load_swiss;
use super::{Kind, PlayerRef, Roster, Status, TournamentView, view};

/// A Swiss player's tiebreaks (RULES.md: Buchholz, then Sonneborn-Berger).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct SwissTiebreaks {
    /// Sum of the opponents' scores; a bye counts as an opponent with the player's own score.
    pub buchholz: f64,
    /// Sum of the scores of the opponents beaten, plus half of those drawn.
    pub sonneborn_berger: f64,
}

/// An arena player's tiebreaks and streak (RULES.md: performance, then rating).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct ArenaTiebreaks {
    /// Average of the opponents' ratings, + 500 for each win and − 500 for
    /// each loss (`null` before the first game counted).
    pub performance: Option<f64>,
    /// On fire: two wins in a row or more, so the next win scores 4.
    pub fire: bool,
    /// Wins in a row now.
    pub streak: u32,
    /// Games in which the player went berserk.
    pub berserks: u32,
}

/// A standing's tiebreaks, by kind of tournament.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
#[serde(untagged)]
pub enum Tiebreaks {
    /// Swiss: Buchholz, Sonneborn-Berger.
    Swiss(SwissTiebreaks),
    /// Arena: performance, fire.
    Arena(ArenaTiebreaks),
}

/// One line of the standings.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq)]
pub struct StandingView {
    /// 1 for the leader; players tied on everything share a rank.
    pub rank: u32,
    /// The player.
    pub player: PlayerRef,
    /// The rating the pairings used (taken at the start).
    pub rating: f64,
    /// Swiss: win 1, draw ½, bye 1. Arena: its points (win 2, draw 1, more on fire or berserk).
    pub score: f64,
    /// Finished games (byes are not games).
    pub games: u32,
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
    /// Byes received.
    pub byes: u32,
    /// Withdrew or was removed.
    pub withdrawn: bool,
    /// The tiebreaks: `{buchholz, sonneborn_berger}` (Swiss) or
    /// `{performance, fire, streak, berserks}` (arena).
    pub tiebreaks: Tiebreaks,
}

/// One board of a round.
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct PairingView {
    /// 1 for the top board.
    pub board: u32,
    /// The player seated X.
    pub x: PlayerRef,
    /// The player seated O.
    pub o: PlayerRef,
    /// The game.
    pub match_id: String,
    /// `x`, `o`, `draw`, or `null` while being played.
    pub result: Option<String>,
}

/// A round's pairings (API.md `GET /tournaments/{id}/rounds/{n}`).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct RoundView {
    /// The round, from 1.
    pub round: u32,
    /// The boards, top first.
    pub pairings: Vec<PairingView>,
    /// The player who sat out with a bye (scores 1).
    pub bye: Option<PlayerRef>,
}

/// Tournaments in list order (soonest first), optionally of one status.
///
/// # Errors
/// Store failures.
pub async fn list(
    ctx: &Context,
    status: Option<Status>,
    after: Option<(i64, String)>,
    limit: u32,
) -> Result<Page<TournamentView>> {
    let fetch = i64::from(limit) + 1;
    ctx.db
        .run(move |conn| {
            let mut rows = store::list(conn, status.map(Status::as_str), after, fetch)?;
            let more = rows.len() > limit as usize;
            rows.truncate(limit as usize);
            let next_cursor = more
                .then(|| rows.last().map(|r| cursor::encode_keyset(r.sort_at, &r.id)))
                .flatten();
            let items = rows.iter().map(|r| view(conn, r)).collect::<Result<_>>()?;
            Ok(Page { items, next_cursor })
        })
        .await
}

/// The standings of a tournament, whole (games still being played do not count yet).
///
/// # Errors
/// Store failures.
pub fn standings_of(conn: &mut DbConnection, id: &str) -> Result<Vec<StandingView>> {
    let names = Roster::of(conn, id)?;
    let row = store::get(conn, id)?.ok_or(Error::NotFound("tournament"))?;
    if Kind::parse(&row.kind) == Some(Kind::Arena) {
        return arena_standings(conn, &row, &names);
    }
    let swiss = load_swiss(conn, id, true)?;
    Ok(swiss
        .standings()
        .into_iter()
        .map(|s: Standing| StandingView {
            rank: s.rank,
            player: names.named(&s.id),
            rating: (s.rating * 100.0).round() / 100.0,
            score: s.score,
            games: s.games,
            wins: s.wins,
            draws: s.draws,
            losses: s.losses,
            byes: s.byes,
            withdrawn: s.withdrawn,
            tiebreaks: Tiebreaks::Swiss(SwissTiebreaks {
                buchholz: s.buchholz,
                sonneborn_berger: s.sonneborn_berger,
            }),
        })
        .collect())
}

/// An arena's standings: points, performance, rating (games being played,
/// or ended after the end time, do not count), from the entrants' totals.
fn arena_standings(
    conn: &mut DbConnection,
    row: &TournamentRow,
    names: &Roster,
) -> Result<Vec<StandingView>> {
    Ok(arena::standings(conn, row)?
        .into_iter()
        .map(|s| StandingView {
            rank: s.rank,
            player: names.named(&s.id),
            rating: (s.rating * 100.0).round() / 100.0,
            score: f64::from(s.points),
            games: s.games,
            wins: s.wins,
            draws: s.draws,
            losses: s.losses,
            byes: 0,
            withdrawn: s.withdrawn,
            tiebreaks: Tiebreaks::Arena(ArenaTiebreaks {
                performance: s.performance.map(|p| (p * 100.0).round() / 100.0),
                fire: s.fire,
                streak: s.streak,
                berserks: s.berserks,
            }),
        })
        .collect())
}

/// A page of the standings; the cursor is the position to continue from.
///
/// # Errors
/// `not_found`; store failures.
pub async fn standings(
    ctx: &Context,
    id: &str,
    from: Option<usize>,
    limit: u32,
) -> Result<Page<StandingView>> {
    let id = id.to_owned();
    let all = ctx
        .db
        .run(move |conn| {
            store::get(conn, &id)?.ok_or(Error::NotFound("tournament"))?;
            standings_of(conn, &id)
        })
        .await?;
    Ok(positional_page(all, from, limit))
}

/// The page of `all` from position `from`; its cursor is the next position.
fn positional_page<T>(mut all: Vec<T>, from: Option<usize>, limit: u32) -> Page<T> {
    let start = from.unwrap_or(0).min(all.len());
    let end = start.saturating_add(limit as usize).min(all.len());
    let next_cursor = (end < all.len()).then(|| cursor::encode(&[&end.to_string()]));
    all.truncate(end);
    Page {
        items: all.split_off(start),
        next_cursor,
    }
}

/// Decodes a standings (or games) cursor.
pub fn decode_standings_cursor(text: &str) -> Option<usize> {
    cursor::decode(text, 1)?.first()?.parse().ok()
}

/// Every paired round of a tournament, with live results.
///
/// # Errors
/// Store failures.
pub fn rounds_of(conn: &mut DbConnection, id: &str) -> Result<Vec<RoundView>> {
    let names = Roster::of(conn, id)?;
    let games = store::games_live(conn, id)?;
    Ok(store::rounds(conn, id)?
        .into_iter()
        .map(|r| RoundView {
            round: u32::try_from(r.round).unwrap_or(0),
            pairings: games
                .iter()
                .filter(|(g, _)| g.round == r.round)
                .map(|(g, outcome)| PairingView {
                    board: u32::try_from(g.board).unwrap_or(0),
                    x: names.named(&g.x_player_id),
                    o: names.named(&g.o_player_id),
                    match_id: g.match_id.clone(),
                    result: outcome.map(|w| w.map_or("draw", |s| s.as_str()).to_owned()),
                })
                .collect(),
            bye: r.bye_player_id.as_deref().map(|b| names.named(b)),
        })
        .collect())
}

/// Round `n` of a tournament.
///
/// # Errors
/// `not_found` for an unknown tournament or a round not paired yet; store failures.
pub async fn round(ctx: &Context, id: &str, n: u32) -> Result<RoundView> {
    let id = id.to_owned();
    ctx.db
        .run(move |conn| {
            store::get(conn, &id)?.ok_or(Error::NotFound("tournament"))?;
            rounds_of(conn, &id)?
                .into_iter()
                .find(|r| r.round == n)
                .ok_or(Error::NotFound("round"))
        })
        .await
}

/// A page of a tournament's games, oldest first (new games come after the
/// last page, so paging never skips one); the cursor is the position to
/// continue from.
///
/// # Errors
/// `not_found`; store failures.
pub async fn games(
    ctx: &Context,
    id: &str,
    from: Option<usize>,
    limit: u32,
) -> Result<Page<GameView>> {
    let id = id.to_owned();
    let all = ctx
        .db
        .run(move |conn| {
            let row = store::get(conn, &id)?.ok_or(Error::NotFound("tournament"))?;
            arena::games_of(conn, &row)
        })
        .await?;
    Ok(positional_page(all, from, limit))
}
