//! Ladders and ratings: the configured ladders, Glicko-2 results applied in
//! the transaction of a rated match's final move, profiles and leaderboards.
//!
//! Over 400 lines: ratings, profiles and leaderboards read the same rating
//! rows; the rating arithmetic itself is the pure `rating` module.

use serde::Serialize;
use utoipa::ToSchema;

use crate::config::LadderConfig;
use crate::rating::{self, Rating, Score};
use crate::rules::Seat;
use crate::store::ratings::{self, RatingChangeRow, RatingRow};
use crate::store::{DbConnection, players};
use crate::time::{Millis, rfc3339};

use super::cursor;
use super::matches::record::seat_str;
use super::matches::state::{RatingChange, RatingChanges, TimeControlBody};
use super::page::Page;
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

fn ladder_rating(row: &RatingRow) -> LadderRating {
    LadderRating {
        ladder: row.ladder.clone(),
        rating: shown(row.rating),
        deviation: shown(row.deviation),
        provisional: !row.established,
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

/// The player's standing on every configured ladder (the initial rating where they have not played).
///
/// # Errors
/// Store failures.
pub async fn ratings_of(ctx: &Context, player_id: String) -> Result<Vec<LadderRating>> {
    let rows = ctx
        .db
        .run(move |conn| ratings::for_player(conn, &player_id))
        .await?;
    Ok(ctx
        .config
        .ladders
        .iter()
        .map(|l| match rows.iter().find(|r| r.ladder == l.id) {
            Some(row) => ladder_rating(row),
            None => ladder_rating(&initial_row("", &l.id, 0)),
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

fn apply(row: &mut RatingRow, after: Rating, score: Score, now: Millis) {
    row.rating = after.rating;
    row.deviation = after.deviation;
    row.volatility = after.volatility;
    row.established = !after.provisional();
    row.games += 1;
    match score {
        Score::Win => row.wins += 1,
        Score::Loss => row.losses += 1,
        Score::Draw => row.draws += 1,
    }
    row.updated_at = now;
}

/// Applies the result of a finished rated match to both players' ratings,
/// inside the transaction that finished it. Rows are locked in player-id
/// order so two results never deadlock; the changes are recorded (and the
/// record's primary key refuses a second application).
///
/// # Errors
/// Store failures.
pub fn apply_result(conn: &mut DbConnection, game: &FinishedMatch<'_>, now: Millis) -> Result<()> {
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
    let (x_before, o_before) = (as_rating(&x_row), as_rating(&o_row));
    let (x_after, o_after) = rating::after_game(x_before, o_before, x_score);
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
    apply(&mut x_row, x_after, x_score, now);
    apply(&mut o_row, o_after, x_score.opposite(), now);
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

/// One leaderboard row.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct LeaderEntry {
    /// 1-based position on the board.
    pub rank: u32,
    /// Who.
    pub player: LeaderPlayer,
    /// Rating.
    pub rating: f64,
    /// Rating deviation.
    pub deviation: f64,
    /// Deviation above 110: provisional players are listed after all established ones.
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

/// A leaderboard cursor: the keyset of the last row and its rank.
pub type LeaderCursor = (bool, f64, String, u32);

/// Encodes a leaderboard cursor.
pub fn encode_leader_cursor(c: &LeaderCursor) -> String {
    cursor::encode(&[
        if c.0 { "1" } else { "0" },
        &c.1.to_bits().to_string(),
        &c.2,
        &c.3.to_string(),
    ])
}

/// Decodes a leaderboard cursor.
pub fn decode_leader_cursor(text: &str) -> Option<LeaderCursor> {
    let parts = cursor::decode(text, 4)?;
    let established = match parts[0].as_str() {
        "1" => true,
        "0" => false,
        _ => return None,
    };
    let rating = f64::from_bits(parts[1].parse().ok()?);
    Some((
        established,
        rating,
        parts[2].clone(),
        parts[3].parse().ok()?,
    ))
}

/// A page of a ladder's leaderboard: established players first, then
/// provisional ones, each by rating; players without a rated game are not listed.
///
/// # Errors
/// `NotFound` for an unknown ladder; store failures.
pub async fn leaderboard(
    ctx: &Context,
    ladder: String,
    after: Option<LeaderCursor>,
    bots: Option<bool>,
    limit: u32,
) -> Result<Page<LeaderEntry>> {
    if ctx.config.ladder(&ladder).is_none() {
        return Err(Error::NotFound("ladder"));
    }
    let start_rank = after.as_ref().map_or(0, |c| c.3);
    let keyset = after.map(|c| (c.0, c.1, c.2));
    let fetch = i64::from(limit) + 1;
    let mut rows = ctx
        .db
        .run(move |conn| ratings::leaderboard(conn, &ladder, keyset, bots, fetch))
        .await?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let items: Vec<LeaderEntry> = rows
        .iter()
        .zip(start_rank + 1..)
        .map(|((r, username, bot), rank)| LeaderEntry {
            rank,
            player: LeaderPlayer {
                id: r.player_id.clone(),
                username: username.clone(),
                bot: *bot,
            },
            rating: shown(r.rating),
            deviation: shown(r.deviation),
            provisional: !r.established,
            games: count(r.games),
            wins: count(r.wins),
            losses: count(r.losses),
            draws: count(r.draws),
        })
        .collect();
    let next_cursor = more
        .then(|| {
            rows.last().map(|(r, _, _)| {
                encode_leader_cursor(&(
                    r.established,
                    r.rating,
                    r.player_id.clone(),
                    start_rank + limit,
                ))
            })
        })
        .flatten();
    Ok(Page { items, next_cursor })
}
