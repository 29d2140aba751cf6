//! Ladders and ratings: the configured ladders, Glicko-2 results applied in
//! the transaction of a rated match's final move, profiles and leaderboards.
//!
//! Over 400 lines: ratings, profiles and leaderboards read the same rating
//! rows; the rating arithmetic itself is the pure `rating` module.

use serde::Serialize;
use utoipa::ToSchema;

use crate::config::LadderConfig;
use crate::rating::{self, Growth, Rating, Score, Standing};
use crate::rules::Seat;
use crate::store::ratings::{self, RatingChangeRow, RatingRow};
use crate::store::{DbConnection, players};
use crate::time::{Millis, rfc3339};

use super::cursor;
use super::matches::record::seat_str;
use super::matches::state::{RatingChange, RatingChanges, TimeControlBody};
use super::{Context, Error, Result};

/// A ladder as clients see it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LadderInfo {
    /// Stable id.
    #[schema(example = "ultimate-10m")]
    pub id: String,
    /// Display name.
    pub name: String,
    /// Board depth.
    pub depth: u8,
    /// Time control of its matches.
    pub time_control: TimeControlBody,
    /// Whether results change ratings.
    pub rated: bool,
    /// Whether bot accounts may play on it.
    pub bots: bool,
}

impl From<&LadderConfig> for LadderInfo {
    fn from(l: &LadderConfig) -> Self {
        LadderInfo {
            id: l.id.clone(),
            name: l.name.clone(),
            depth: l.depth,
            time_control: l.time_control.into(),
            rated: l.rated,
            bots: l.bots,
        }
    }
}

/// A player's standing on one ladder.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LadderRating {
    /// The ladder.
    pub ladder: String,
    /// Glicko-2 rating (1500 to start).
    pub rating: f64,
    /// Rating deviation (350 to start).
    pub deviation: f64,
    /// While the deviation is above 110.
    pub provisional: bool,
    /// Rated games played.
    pub games: u32,
    /// Won.
    pub wins: u32,
    /// Lost.
    pub losses: u32,
    /// Drawn.
    pub draws: u32,
}

fn count(n: i32) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// Rounds to 2 decimals for display; stored values keep full precision.
fn shown(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// A stored rating as of `now`: the deviation grown since the last rated
/// game, and whether that makes it provisional (RULES.md, "Ratings over time").
pub fn as_of_row(row: &RatingRow, growth: Growth, now: Millis) -> (Rating, bool) {
    let stored = as_rating(row);
    (
        growth.as_of(stored, row.rated_at, now),
        growth.provisional_at(stored, row.rated_at, now),
    )
}

fn ladder_rating(row: &RatingRow, growth: Growth, now: Millis) -> LadderRating {
    let (current, provisional) = as_of_row(row, growth, now);
    LadderRating {
        ladder: row.ladder.clone(),
        rating: shown(current.rating),
        deviation: shown(current.deviation),
        provisional,
        games: count(row.games),
        wins: count(row.wins),
        losses: count(row.losses),
        draws: count(row.draws),
    }
}

/// The configured ladders.
pub fn list(ctx: &Context) -> Vec<LadderInfo> {
    ctx.config.ladders.iter().map(LadderInfo::from).collect()
}

/// A new player's rating row.
pub fn initial_row(player_id: &str, ladder: &str, now: Millis) -> RatingRow {
    RatingRow {
        player_id: player_id.to_owned(),
        ladder: ladder.to_owned(),
        rating: rating::INITIAL.rating,
        deviation: rating::INITIAL.deviation,
        volatility: rating::INITIAL.volatility,
        established: !rating::INITIAL.provisional(),
        games: 0,
        wins: 0,
        losses: 0,
        draws: 0,
        last_x_at: None,
        last_opponent_id: None,
        updated_at: now,
        rated_at: None,
        established_until: None,
    }
}

/// The player's rating row on `ladder`, made on first use.
///
/// # Errors
/// Store failures.
pub fn ensure(
    conn: &mut DbConnection,
    player_id: &str,
    ladder: &str,
    now: Millis,
) -> Result<RatingRow> {
    ratings::insert_if_missing(conn, &initial_row(player_id, ladder, now))?;
    ratings::get(conn, player_id, ladder)?.ok_or(Error::Internal("rating row vanished".into()))
}

/// The player's standing on every configured ladder as of now (the initial
/// rating where they have not played).
///
/// # Errors
/// Store failures.
pub async fn ratings_of(ctx: &Context, player_id: String) -> Result<Vec<LadderRating>> {
    let rows = ctx
        .db
        .read(move |conn| ratings::for_player(conn, &player_id))
        .await?;
    let (growth, now) = (ctx.config.rating_growth, ctx.time.now_ms());
    Ok(ctx
        .config
        .ladders
        .iter()
        .map(|l| match rows.iter().find(|r| r.ladder == l.id) {
            Some(row) => ladder_rating(row, growth, now),
            None => ladder_rating(&initial_row("", &l.id, 0), growth, now),
        })
        .collect())
}

fn as_rating(row: &RatingRow) -> Rating {
    Rating {
        rating: row.rating,
        deviation: row.deviation,
        volatility: row.volatility,
    }
}

/// Stores `rating` as the result of a rated game that ended at `at`: the
/// deviation grows from then, and the leaderboard lists the player until
/// the grown deviation passes 110.
pub fn restate(row: &mut RatingRow, rating: Rating, at: Millis, growth: Growth) {
    row.rating = rating.rating;
    row.deviation = rating.deviation;
    row.volatility = rating.volatility;
    row.established = !rating.provisional();
    row.rated_at = Some(at);
    row.established_until = growth.established_until(rating, at);
    row.updated_at = at;
}

/// The stored rating and the time its deviation grows from.
pub fn standing(row: &RatingRow) -> Standing {
    Standing {
        rating: as_rating(row),
        rated_at: row.rated_at,
    }
}

fn apply(row: &mut RatingRow, after: Rating, score: Score, now: Millis, growth: Growth) {
    restate(row, after, now, growth);
    row.games += 1;
    match score {
        Score::Win => row.wins += 1,
        Score::Loss => row.losses += 1,
        Score::Draw => row.draws += 1,
    }
}

/// Applies the result of a finished rated match to both players' ratings,
/// inside the transaction that finished it. Each update starts from the
/// ratings as of `now` (deviations grown since each player's last game).
/// Rows are locked in player-id order so two results never deadlock; the
/// changes are recorded (and the record's primary key refuses a second
/// application).
///
/// # Errors
/// Store failures.
pub fn apply_result(
    conn: &mut DbConnection,
    game: &FinishedMatch<'_>,
    now: Millis,
    growth: Growth,
) -> Result<()> {
    let FinishedMatch {
        id,
        ladder,
        x,
        o,
        winner,
    } = *game;
    let (first, second) = if x <= o { (x, o) } else { (o, x) };
    for id in [first, second] {
        ratings::insert_if_missing(conn, &initial_row(id, ladder, now))?;
    }
    let mut locked = Vec::with_capacity(2);
    for id in [first, second] {
        locked.push(
            ratings::lock(conn, id, ladder)?
                .ok_or(Error::Internal("rating row vanished".into()))?,
        );
    }
    let (mut x_row, mut o_row) = if locked[0].player_id == x {
        (locked.remove(0), locked.remove(0))
    } else {
        let o_row = locked.remove(0);
        (locked.remove(0), o_row)
    };
    let x_score = match winner {
        Some(Seat::X) => Score::Win,
        Some(Seat::O) => Score::Loss,
        None => Score::Draw,
    };
    let game = rating::rated_game(standing(&x_row), standing(&o_row), x_score, now, growth);
    let (x_before, o_before, x_after, o_after) =
        (game.x_before, game.o_before, game.x_after, game.o_after);
    for (seat, rating_row, before, after, score) in [
        (Seat::X, &x_row, x_before, x_after, x_score),
        (Seat::O, &o_row, o_before, o_after, x_score.opposite()),
    ] {
        ratings::insert_change(
            conn,
            &RatingChangeRow {
                match_id: id.to_owned(),
                seat: seat_str(seat).to_owned(),
                player_id: rating_row.player_id.clone(),
                ladder: ladder.to_owned(),
                score: score.value(),
                rating_before: before.rating,
                rating_after: after.rating,
                deviation_before: before.deviation,
                deviation_after: after.deviation,
                volatility_before: before.volatility,
                volatility_after: after.volatility,
                created_at: now,
            },
        )?;
    }
    apply(&mut x_row, x_after, x_score, now, growth);
    apply(&mut o_row, o_after, x_score.opposite(), now, growth);
    ratings::save(conn, &x_row)?;
    ratings::save(conn, &o_row)?;
    tracing::info!(match.id = %id, ladder, x.after = x_after.rating, o.after = o_after.rating, "ratings updated");
    Ok(())
}

/// A player's public profile.
#[derive(Debug, Serialize, ToSchema)]
pub struct Profile {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// When they registered.
    pub created_at: String,
    /// Whether the account is a bot.
    pub bot: bool,
    /// Standing on every ladder (the initial rating where they have not played).
    pub ratings: Vec<LadderRating>,
}

/// The public profile of the player named `username` (any case).
///
/// # Errors
/// `NotFound`, store failures.
pub async fn profile(ctx: &Context, username: String) -> Result<Profile> {
    let player = ctx
        .db
        .run(move |conn| players::by_username(conn, &username))
        .await?
        .ok_or(Error::NotFound("player"))?;
    let ratings = ratings_of(ctx, player.id.clone()).await?;
    Ok(Profile {
        id: player.id,
        username: player.username,
        created_at: rfc3339(player.created_at),
        bot: player.bot,
        ratings,
    })
}

/// What a rating update reads of a finished rated match.
#[derive(Debug, Clone, Copy)]
pub struct FinishedMatch<'a> {
    /// The match.
    pub id: &'a str,
    /// Its ladder.
    pub ladder: &'a str,
    /// Seat X's player.
    pub x: &'a str,
    /// Seat O's player.
    pub o: &'a str,
    /// The winner; `None` for a draw.
    pub winner: Option<Seat>,
}

/// The rating changes of a match, when it has them.
///
/// # Errors
/// Store failures.
pub fn changes_of(conn: &mut DbConnection, match_id: &str) -> Result<Option<RatingChanges>> {
    let rows = ratings::changes(conn, match_id)?;
    let find = |seat: &str| rows.iter().find(|r| r.seat == seat);
    Ok(match (find("x"), find("o")) {
        (Some(x), Some(o)) => Some(RatingChanges {
            x: RatingChange {
                before: shown(x.rating_before),
                after: shown(x.rating_after),
            },
            o: RatingChange {
                before: shown(o.rating_before),
                after: shown(o.rating_after),
            },
        }),
        _ => None,
    })
}

/// One rated game in a player's rating history.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HistoryPoint {
    /// When the game ended (RFC 3339).
    pub at: String,
    /// The rating after it.
    pub rating: f64,
    /// The deviation after it.
    pub deviation: f64,
    /// The match.
    pub match_id: String,
}

/// A player's rating on one ladder as of now, and how it got there.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct RatingHistory {
    /// Rating now.
    pub rating: f64,
    /// Deviation now (grown since the last rated game).
    pub deviation: f64,
    /// While the deviation now is above 110.
    pub provisional: bool,
    /// Rated games played.
    pub games: u32,
    /// Every rated game, oldest first.
    pub history: Vec<HistoryPoint>,
}

/// The rating history of the player called `username` (any case) on `ladder`.
///
/// # Errors
/// `NotFound` for an unknown player or ladder; store failures.
pub async fn history(ctx: &Context, username: String, ladder: String) -> Result<RatingHistory> {
    if ctx.config.ladder(&ladder).is_none() {
        return Err(Error::NotFound("ladder"));
    }
    let (row, changes) = ctx
        .db
        .run(move |conn| -> Result<_> {
            let player = players::by_username(conn, &username)?.ok_or(Error::NotFound("player"))?;
            let row = ratings::get(conn, &player.id, &ladder)?
                .unwrap_or_else(|| initial_row(&player.id, &ladder, 0));
            Ok((row, ratings::history(conn, &player.id, &ladder)?))
        })
        .await?;
    let now = ctx.time.now_ms();
    let current = ladder_rating(&row, ctx.config.rating_growth, now);
    Ok(RatingHistory {
        rating: current.rating,
        deviation: current.deviation,
        provisional: current.provisional,
        games: current.games,
        history: changes
            .into_iter()
            .map(|c| HistoryPoint {
                at: rfc3339(c.created_at),
                rating: shown(c.rating_after),
                deviation: shown(c.deviation_after),
                match_id: c.match_id,
            })
            .collect(),
    })
}

/// A player as a leaderboard lists them.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LeaderPlayer {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// Whether the account is a bot.
    pub bot: bool,
}

/// One leaderboard row: an established player, their rating as of the board's `as_of`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LeaderEntry {
    /// 1-based position on the board.
    pub rank: u32,
    /// Who.
    pub player: LeaderPlayer,
    /// Rating.
    pub rating: f64,
    /// Rating deviation as of `as_of` (grown since the last rated game), at most 110.
    pub deviation: f64,
    /// Always `false`: only established players are ranked.
    pub provisional: bool,
    /// Rated games.
    pub games: u32,
    /// Won.
    pub wins: u32,
    /// Lost.
    pub losses: u32,
    /// Drawn.
    pub draws: u32,
}

/// A page of a leaderboard.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Leaderboard {
    /// The ranked players.
    pub items: Vec<LeaderEntry>,
    /// Pass as `cursor` for the next page; `null` on the last one. Later
    /// pages keep the first page's `as_of`, so a board reads consistently.
    pub next_cursor: Option<String>,
    /// The time the board is computed for: who is established, and every
    /// deviation, as of then.
    pub as_of: String,
}

/// A leaderboard cursor: the keyset of the last row, its rank and the board's time.
pub type LeaderCursor = (f64, String, u32, Millis);

/// Encodes a leaderboard cursor.
pub fn encode_leader_cursor(c: &LeaderCursor) -> String {
    cursor::encode(&[
        &c.0.to_bits().to_string(),
        &c.1,
        &c.2.to_string(),
        &c.3.to_string(),
    ])
}

/// The largest rank a cursor may carry: far past any ladder, and far enough
/// from `u32::MAX` that the ranks of a page after it cannot overflow.
const MAX_CURSOR_RANK: u32 = 1_000_000_000;

/// The latest `as_of` a cursor may carry (the end of year 9999, in epoch ms).
const MAX_CURSOR_AS_OF: i64 = 253_402_300_799_999;

/// Decodes a leaderboard cursor; `None` for one no page ever gave (a cursor
/// is only base64 text, so it is checked like any other input).
pub fn decode_leader_cursor(text: &str) -> Option<LeaderCursor> {
    let parts = cursor::decode(text, 4)?;
    let rating = f64::from_bits(parts[0].parse().ok()?);
    let rank: u32 = parts[2].parse().ok()?;
    let as_of: i64 = parts[3].parse().ok()?;
    let in_range =
        rating.is_finite() && rank <= MAX_CURSOR_RANK && (0..=MAX_CURSOR_AS_OF).contains(&as_of);
    in_range.then(|| (rating, parts[1].clone(), rank, as_of))
}

/// A page of a ladder's leaderboard: players established now (deviation,
/// grown by inactivity, at most 110) by rating; provisional players and
/// players without a rated game are not listed.
///
/// # Errors
/// `NotFound` for an unknown ladder; store failures.
pub async fn leaderboard(
    ctx: &Context,
    ladder: String,
    after: Option<LeaderCursor>,
    bots: Option<bool>,
    limit: u32,
) -> Result<Leaderboard> {
    if ctx.config.ladder(&ladder).is_none() {
        return Err(Error::NotFound("ladder"));
    }
    let growth = ctx.config.rating_growth;
    let as_of = after.as_ref().map_or_else(|| ctx.time.now_ms(), |c| c.3);
    let start_rank = after.as_ref().map_or(0, |c| c.2);
    let keyset = after.map(|c| (c.0, c.1));
    let fetch = i64::from(limit) + 1;
    let mut rows = ctx
        .db
        .run(move |conn| ratings::leaderboard(conn, &ladder, as_of, keyset, bots, fetch))
        .await?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let items: Vec<LeaderEntry> = rows
        .iter()
        .zip(start_rank + 1..)
        .map(|((r, username, bot), rank)| {
            let (current, provisional) = as_of_row(r, growth, as_of);
            LeaderEntry {
                rank,
                player: LeaderPlayer {
                    id: r.player_id.clone(),
                    username: username.clone(),
                    bot: *bot,
                },
                rating: shown(current.rating),
                deviation: shown(current.deviation),
                provisional,
                games: count(r.games),
                wins: count(r.wins),
                losses: count(r.losses),
                draws: count(r.draws),
            }
        })
        .collect();
    let next_cursor = more
        .then(|| {
            rows.last().map(|(r, _, _)| {
                encode_leader_cursor(&(r.rating, r.player_id.clone(), start_rank + limit, as_of))
            })
        })
        .flatten();
    Ok(Leaderboard {
        items,
        next_cursor,
        as_of: rfc3339(as_of),
    })
}
