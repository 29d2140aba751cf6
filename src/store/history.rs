//! Match history queries for administrators: filtered, newest first, keyset paginated.

use diesel::prelude::*;

use super::kinds::{EndReason, MatchStatus, Mode};
use super::matches::{MatchRow, MoveRow};
use super::schema::{match_players, matches, moves};
use super::{DbConnection, StoreError};

/// The filters of the admin match list; `None` means any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MatchFilter {
    /// A seated player's id.
    pub player_id: Option<String>,
    /// Ladder id.
    pub ladder: Option<String>,
    /// How the match was made.
    pub mode: Option<Mode>,
    /// Being played or decided.
    pub status: Option<MatchStatus>,
    /// `x`, `o` or `draw`.
    pub result: Option<String>,
    /// Why it ended.
    pub reason: Option<EndReason>,
    /// Made at or after (epoch ms).
    pub from: Option<i64>,
    /// Made before (epoch ms).
    pub to: Option<i64>,
}

/// Matches passing `filter`, newest first, strictly after the keyset `(created_at, id)`.
/// New matches arrive with later times, so a cursor's pages neither skip nor repeat rows.
///
/// # Errors
/// Database errors.
pub fn search(
    conn: &mut DbConnection,
    filter: &MatchFilter,
    after: Option<(i64, String)>,
    limit: i64,
) -> Result<Vec<MatchRow>, StoreError> {
    // The filters on the match row itself, shared by both query shapes below.
    macro_rules! row_filters {
        ($query:ident) => {
            if let Some(ladder) = &filter.ladder {
                $query = $query.filter(matches::ladder.eq(ladder.clone()));
            }
            if let Some(mode) = filter.mode {
                $query = $query.filter(matches::mode.eq(mode));
            }
            if let Some(status) = filter.status {
                $query = $query.filter(matches::status.eq(status));
            }
            match filter.result.as_deref() {
                Some("draw") => $query = $query.filter(matches::reason.eq(EndReason::Draw)),
                Some(seat) => $query = $query.filter(matches::winner.eq(seat.to_owned())),
                None => {}
            }
            if let Some(reason) = filter.reason {
                $query = $query.filter(matches::reason.eq(reason));
            }
        };
    }
    // The time range and the keyset, on the column the query walks in order.
    macro_rules! keyset {
        ($query:ident, $at:expr, $id:expr) => {
            if let Some(from) = filter.from {
                $query = $query.filter($at.ge(from));
            }
            if let Some(to) = filter.to {
                $query = $query.filter($at.lt(to));
            }
            if let Some((created_at, id)) = after {
                $query = $query.filter($at.lt(created_at).or($at.eq(created_at).and($id.lt(id))));
            }
        };
    }
    Ok(match &filter.player_id {
        // A player's matches come from their own index, newest first.
        Some(player) => {
            let mut query = match_players::table
                .inner_join(matches::table)
                .filter(match_players::player_id.eq(player.clone()))
                .select(MatchRow::as_select())
                .order((
                    match_players::created_at.desc(),
                    match_players::match_id.desc(),
                ))
                .limit(limit)
                .into_boxed();
            row_filters!(query);
            keyset!(query, match_players::created_at, match_players::match_id);
            query.load(conn)?
        }
        None => {
            let mut query = matches::table
                .select(MatchRow::as_select())
                .order((matches::created_at.desc(), matches::id.desc()))
                .limit(limit)
                .into_boxed();
            row_filters!(query);
            keyset!(query, matches::created_at, matches::id);
            query.load(conn)?
        }
    })
}

/// The moves of several matches, grouped in match order then ply order.
///
/// # Errors
/// Database errors.
pub fn moves_of(conn: &mut DbConnection, match_ids: &[String]) -> Result<Vec<MoveRow>, StoreError> {
    if match_ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(moves::table
        .filter(moves::match_id.eq_any(match_ids))
        .order((moves::match_id.asc(), moves::ply.asc()))
        .select(MoveRow::as_select())
        .load(conn)?)
}
