//! Administration: match history with filters at scale, one match in full,
//! player lookup by name prefix, and the NDJSON export that `uttt replay` checks.
//!
//! Over 400 lines: the history, the detail view and the export share the row
//! rendering (`admin_match`); the queries are in `store/history.rs`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::rules::{Depth, Square};
use crate::store::history::{self, MatchFilter};
use crate::store::matches::{self as store, MatchRow, MoveRow};
use crate::store::ratings::RatingChangeRow;
use crate::store::{DbConnection, players, ratings};
use crate::time::rfc3339;

use super::accounts::DELETED_USERNAME;
use super::cursor::encode_keyset;
use super::matches::record::{MatchRecord, PlayerId};
use super::matches::state::{MatchState, TimeControlBody};
use super::matches::{self, Page, play};
use super::{Context, Error, Result};

/// A seated player in admin views.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
pub struct SeatedPlayer {
    /// Id.
    pub id: String,
    /// Name at the time of the query.
    pub username: String,
    /// Whether the player is a bot account.
    pub bot: bool,
}

/// A match in the admin list.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdminMatch {
    /// Id.
    pub id: String,
    /// `ranked`, `casual`, `practice` or `tournament`.
    pub mode: String,
    /// Ladder of a ranked match.
    pub ladder: Option<String>,
    /// Whether rated.
    pub rated: bool,
    /// Depth.
    pub depth: u8,
    /// Time control.
    pub time_control: TimeControlBody,
    /// `active` or `finished`.
    pub status: String,
    /// Moves played.
    pub ply: u32,
    /// Seat X (`null`: the practice CPU).
    pub x: Option<SeatedPlayer>,
    /// Seat O.
    pub o: Option<SeatedPlayer>,
    /// `x`, `o`, or `null` (draw or unfinished).
    pub winner: Option<String>,
    /// Why it ended.
    pub reason: Option<String>,
    /// When it was made.
    pub created_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
}

/// Seated players' names and bot flags, by id.
type Names = HashMap<String, (String, bool)>;

fn names_of(conn: &mut DbConnection, rows: &[MatchRow]) -> Result<Names> {
    Ok(store::names_of_rows(conn, rows)?)
}

fn seated(id: Option<&PlayerId>, names: &Names) -> Option<SeatedPlayer> {
    id.map(|id| {
        let (username, bot) = names
            .get(id.as_str())
            .cloned()
            .unwrap_or_else(|| (DELETED_USERNAME.to_owned(), false));
        SeatedPlayer {
            id: id.to_string(),
            username,
            bot,
        }
    })
}

fn admin_match(row: &MatchRow, names: &Names) -> Result<AdminMatch> {
    Ok(AdminMatch {
        id: row.id.to_string(),
        mode: row.mode.as_str().to_owned(),
        ladder: row.ladder.clone(),
        rated: row.rated,
        depth: row.depth()?.get(),
        time_control: row.time_control()?.into(),
        status: row.status.as_str().to_owned(),
        ply: u32::try_from(row.ply).unwrap_or(0),
        x: seated(row.x_player_id.as_ref(), names),
        o: seated(row.o_player_id.as_ref(), names),
        winner: row.winner.map(|w| w.as_str().to_owned()),
        reason: row.reason.map(|r| r.as_str().to_owned()),
        created_at: rfc3339(row.created_at),
        finished_at: row.finished_at.map(rfc3339),
    })
}

/// The id of the player named `username` (any case), if there is one. The
/// `player` filter takes only usernames and `player_id` only ids, so a
/// player who registers a name equal to another player's id cannot stand
/// in for them.
///
/// # Errors
/// Store failures.
pub async fn resolve_username(ctx: &Context, username: String) -> Result<Option<String>> {
    Ok(ctx
        .db
        .run(move |conn| players::by_username(conn, &username))
        .await?
        .map(|p| p.id))
}

/// The history filters as asked: `player` is a username, resolved by [`resolve`].
#[derive(Debug, Clone, Default)]
pub struct HistoryQuery {
    /// Every filter but the player's name (`player_id` filters by id).
    pub filter: MatchFilter,
    /// The `player` filter: a username, any case.
    pub player_name: Option<String>,
}

/// The filter with the username of `player` resolved to an id: an unknown
/// name matches nobody (no player has an empty id), and so do a name and an
/// id of two different players.
///
/// # Errors
/// Store failures.
pub async fn resolve(ctx: &Context, query: HistoryQuery) -> Result<MatchFilter> {
    let HistoryQuery {
        mut filter,
        player_name,
    } = query;
    let by_name = match player_name {
        Some(name) => Some(resolve_username(ctx, name).await?.unwrap_or_default()),
        None => None,
    };
    filter.player_id = match (by_name, filter.player_id.take()) {
        (Some(a), Some(b)) if a != b => Some(String::new()),
        (a, b) => a.or(b),
    };
    Ok(filter)
}

/// A page of the match history.
///
/// # Errors
/// Store failures.
pub async fn list(
    ctx: &Context,
    query: HistoryQuery,
    after: Option<(i64, String)>,
    limit: u32,
) -> Result<Page<AdminMatch>> {
    let filter = resolve(ctx, query).await?;
    let fetch = i64::from(limit) + 1;
    let (mut rows, names) = ctx
        .db
        .run(move |conn| -> Result<_> {
            let rows = history::search(conn, &filter, after, fetch)?;
            let names = names_of(conn, &rows)?;
            Ok((rows, names))
        })
        .await?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next_cursor = more
        .then(|| rows.last().map(|r| encode_keyset(r.created_at, &r.id)))
        .flatten();
    let items = rows
        .iter()
        .map(|r| admin_match(r, &names))
        .collect::<Result<_>>()?;
    Ok(Page { items, next_cursor })
}

/// A move with everything stored about it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdminMove {
    /// Moves before it.
    pub ply: u32,
    /// `x` or `o`.
    pub seat: String,
    /// Address, root first.
    pub address: Vec<u8>,
    /// When the server accepted it.
    pub played_at: String,
    /// The mover's bank after it (clock control).
    pub clock_ms: Option<i64>,
    /// Whether the CPU played it (practice opponent or substitute).
    pub by_cpu: bool,
}

/// One player's rating change, in full. `before` is the rating as the
/// game found it: the deviation grown since the player's previous rated game.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct AdminRatingChange {
    /// `x` or `o`.
    pub seat: String,
    /// The player.
    pub player_id: String,
    /// 1, 0.5 or 0.
    pub score: f64,
    /// Rating before.
    pub rating_before: f64,
    /// Rating after.
    pub rating_after: f64,
    /// Deviation before.
    pub deviation_before: f64,
    /// Deviation after.
    pub deviation_after: f64,
    /// Volatility before.
    pub volatility_before: f64,
    /// Volatility after.
    pub volatility_after: f64,
}

/// One match in full.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdminMatchDetail {
    /// The match state, with clocks.
    pub state: MatchState,
    /// Every move.
    pub moves: Vec<AdminMove>,
    /// Rating changes (rated matches).
    pub rating_changes: Vec<AdminRatingChange>,
}

fn admin_moves(depth: Depth, rows: &[MoveRow]) -> Vec<AdminMove> {
    rows.iter()
        .map(|m| AdminMove {
            ply: u32::try_from(m.ply).unwrap_or(0),
            seat: m.seat.clone(),
            address: address_of(depth, m.square).unwrap_or_default(),
            played_at: rfc3339(m.played_at),
            clock_ms: m.clock_ms,
            by_cpu: m.by_cpu,
        })
        .collect()
}

fn address_of(depth: Depth, square: i32) -> Option<Vec<u8>> {
    let sq = Square::new(depth, usize::try_from(square).ok()?)?;
    Some(sq.to_address(depth).coords().to_vec())
}

/// A match with its full move list, clocks and rating changes.
///
/// # Errors
/// `NotFound`; store failures.
pub async fn detail(ctx: &Context, id: String) -> Result<AdminMatchDetail> {
    let (snap, moves, changes) = ctx
        .db
        .run(move |conn| -> Result<_> {
            let row = store::get(conn, &id)?.ok_or(Error::NotFound("match"))?;
            let moves = store::moves(conn, &id)?;
            let changes = ratings::changes(conn, &id)?;
            Ok((play::snapshot(conn, row)?, moves, changes))
        })
        .await?;
    let depth = snap.row.depth()?;
    Ok(AdminMatchDetail {
        state: matches::render(ctx, &snap).await?,
        moves: admin_moves(depth, &moves),
        rating_changes: changes.into_iter().map(admin_change).collect(),
    })
}

impl From<RatingChangeRow> for AdminRatingChange {
    fn from(c: RatingChangeRow) -> Self {
        admin_change(c)
    }
}

fn admin_change(c: RatingChangeRow) -> AdminRatingChange {
    AdminRatingChange {
        seat: c.seat,
        player_id: c.player_id,
        score: c.score,
        rating_before: c.rating_before,
        rating_after: c.rating_after,
        deviation_before: c.deviation_before,
        deviation_after: c.deviation_after,
        volatility_before: c.volatility_before,
        volatility_after: c.volatility_after,
    }
}

/// A player found by the admin search.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct AdminPlayer {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// `player` or `admin`.
    pub role: String,
    /// Whether the player is a bot account.
    pub bot: bool,
    /// When they registered.
    pub created_at: String,
}

/// Players whose name starts with `prefix` (ignoring case), by name.
///
/// # Errors
/// Store failures.
pub async fn players(
    ctx: &Context,
    prefix: String,
    after: Option<String>,
    limit: u32,
) -> Result<Page<AdminPlayer>> {
    let fetch = i64::from(limit) + 1;
    let key = prefix.to_ascii_lowercase();
    let mut rows = ctx
        .db
        .run(move |conn| players::by_prefix(conn, &key, after.as_deref(), fetch))
        .await?;
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next_cursor = more
        .then(|| {
            rows.last()
                .map(|r| super::cursor::encode(&[&r.username_key]))
        })
        .flatten();
    Ok(Page {
        items: rows
            .into_iter()
            .map(|r| AdminPlayer {
                id: r.id,
                username: r.username,
                role: r.role,
                bot: r.bot,
                created_at: rfc3339(r.created_at),
            })
            .collect(),
        next_cursor,
    })
}

/// Decodes a player-search cursor.
pub fn decode_player_cursor(text: &str) -> Option<String> {
    super::cursor::decode(text, 1)?.pop()
}

/// One line of the NDJSON export. `moves` is the match's moves in text
/// notation: square addresses, root first, coordinates joined by `.`,
/// separated by single spaces (`"4.4 4.0 0.8"`; depth 1: `"4 0 8"`).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema, PartialEq)]
pub struct ExportRecord {
    /// Match id.
    pub id: String,
    /// `ranked`, `casual`, `practice` or `tournament`.
    pub mode: String,
    /// Ladder.
    pub ladder: Option<String>,
    /// Whether rated.
    pub rated: bool,
    /// Depth.
    pub depth: u8,
    /// Time control.
    pub time_control: TimeControlBody,
    /// Seat X (`null`: CPU).
    pub x: Option<SeatedPlayer>,
    /// Seat O.
    pub o: Option<SeatedPlayer>,
    /// `active` or `finished`.
    pub status: String,
    /// `x`, `o` or `null`.
    pub winner: Option<String>,
    /// Why it ended.
    pub reason: Option<String>,
    /// When it was made.
    pub created_at: String,
    /// When it ended.
    pub finished_at: Option<String>,
    /// The moves in text notation.
    pub moves: String,
    /// What a rated match did to both players' ratings (X's first), so a
    /// ladder's ratings can be recomputed from the history; empty otherwise.
    #[serde(default)]
    pub rating_changes: Vec<AdminRatingChange>,
}

/// The text notation of a move list.
pub fn moves_text(depth: Depth, squares: impl Iterator<Item = i32>) -> String {
    squares
        .map(|sq| {
            address_of(depth, sq)
                .map(|a| a.iter().map(u8::to_string).collect::<Vec<_>>().join("."))
                .unwrap_or_else(|| "?".into())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Rows of the export fetched per query.
pub const EXPORT_BATCH: i64 = 500;

/// The next batch of export lines after `after`; returns the lines and the
/// keyset to continue from (`None` when done).
///
/// # Errors
/// Store failures.
pub async fn export_batch(
    ctx: &Context,
    filter: MatchFilter,
    after: Option<(i64, String)>,
) -> Result<(Vec<String>, Option<(i64, String)>)> {
    ctx.db
        .run(move |conn| -> Result<_> {
            let rows = history::search(conn, &filter, after, EXPORT_BATCH)?;
            let names = names_of(conn, &rows)?;
            let ids: Vec<String> = rows.iter().map(|r| r.id.to_string()).collect();
            let mut moves: HashMap<String, Vec<i32>> = HashMap::new();
            for m in history::moves_of(conn, &ids)? {
                moves.entry(m.match_id).or_default().push(m.square);
            }
            let mut changes: HashMap<String, Vec<AdminRatingChange>> = HashMap::new();
            for c in ratings::changes_of_matches(conn, &ids)? {
                changes
                    .entry(c.match_id.clone())
                    .or_default()
                    .push(admin_change(c));
            }
            let mut lines = Vec::with_capacity(rows.len());
            for row in &rows {
                let m = admin_match(row, &names)?;
                let depth = row.depth()?;
                let mut rating_changes = changes.remove(row.id.as_str()).unwrap_or_default();
                rating_changes.sort_by(|a, b| b.seat.cmp(&a.seat));
                let record = ExportRecord {
                    rating_changes,
                    moves: moves_text(
                        depth,
                        moves
                            .remove(row.id.as_str())
                            .unwrap_or_default()
                            .into_iter(),
                    ),
                    id: m.id,
                    mode: m.mode,
                    ladder: m.ladder,
                    rated: m.rated,
                    depth: m.depth,
                    time_control: m.time_control,
                    x: m.x,
                    o: m.o,
                    status: m.status,
                    winner: m.winner,
                    reason: m.reason,
                    created_at: m.created_at,
                    finished_at: m.finished_at,
                };
                let mut line =
                    serde_json::to_string(&record).map_err(|e| Error::Internal(e.to_string()))?;
                line.push('\n');
                lines.push(line);
            }
            let next = (rows.len() as i64 == EXPORT_BATCH)
                .then(|| rows.last().map(|r| (r.created_at, r.id.to_string())))
                .flatten();
            Ok((lines, next))
        })
        .await
}
