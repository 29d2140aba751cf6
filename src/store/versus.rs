//! Head-to-head queries: the finished matches between two players, walked
//! from the first player's own index (`match_players_newest`).

use diesel::prelude::*;

use super::kinds::{MatchStatus, StoredSeat};
use super::matches::MatchRow;
use super::schema::{match_players, matches};
use super::{DbConnection, StoreError};

/// `a`'s seats in finished matches whose other seat `b` held.
macro_rules! head_to_head {
    ($a:expr, $b:expr) => {
        match_players::table
            .inner_join(matches::table)
            .filter(match_players::player_id.eq($a.to_owned()))
            .filter(matches::status.eq(MatchStatus::Finished))
            .filter(
                matches::x_player_id
                    .eq($b.to_owned())
                    .or(matches::o_player_id.eq($b.to_owned())),
            )
    };
}

/// Finished matches of `a` in which `b` held the other seat, newest first,
/// strictly after the keyset `(created_at, match id)`.
///
/// # Errors
/// Database errors.
pub fn between(
    conn: &mut DbConnection,
    a: &str,
    b: &str,
    after: Option<(i64, String)>,
    limit: i64,
) -> Result<Vec<MatchRow>, StoreError> {
    let mut query = head_to_head!(a, b)
        .select(MatchRow::as_select())
        .order((
            match_players::created_at.desc(),
            match_players::match_id.desc(),
        ))
        .limit(limit)
        .into_boxed();
    if let Some((created_at, id)) = after {
        query = query.filter(
            match_players::created_at
                .lt(created_at)
                .or(match_players::created_at
                    .eq(created_at)
                    .and(match_players::match_id.lt(id))),
        );
    }
    Ok(query.load(conn)?)
}

/// `a`'s seat and the winner (`None`: a draw) of every finished match
/// between `a` and `b`.
///
/// # Errors
/// Database errors.
pub fn results(
    conn: &mut DbConnection,
    a: &str,
    b: &str,
) -> Result<Vec<(String, Option<StoredSeat>)>, StoreError> {
    Ok(head_to_head!(a, b)
        .select((match_players::seat, matches::winner))
        .load(conn)?)
}
