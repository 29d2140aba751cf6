//! Head-to-head: one player's wins, draws and losses against another, and
//! their matches (API.md, "Ratings over time").

use std::collections::HashMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::store::{players, versus};

use super::cursor::encode_keyset;
use super::matches::{MatchSummary, summary};
use super::{Context, Error, Result};

/// The record of `a` against `b`, from a's side, with a page of their matches.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Versus {
    /// Matches a won against b (every finished match between them, whatever the mode).
    pub wins: u32,
    /// Drawn matches.
    pub draws: u32,
    /// Matches a lost.
    pub losses: u32,
    /// Their finished matches, newest first (this page); `seat` is a's.
    pub matches: Vec<MatchSummary>,
    /// Pass as `cursor` for the next page of `matches`; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// Wins, draws and losses of `a` against `b` (usernames, any case) and a
/// page of their finished matches.
///
/// # Errors
/// `NotFound` when either player does not exist; store failures.
pub async fn versus(
    ctx: &Context,
    a: String,
    b: String,
    after: Option<(i64, String)>,
    limit: u32,
) -> Result<Versus> {
    let fetch = i64::from(limit) + 1;
    let (a_id, names, results, mut rows) = ctx
        .db
        .run(move |conn| -> Result<_> {
            let a = players::by_username(conn, &a)?.ok_or(Error::NotFound("player"))?;
            let b = players::by_username(conn, &b)?.ok_or(Error::NotFound("player"))?;
            // Their matches seat no one else.
            let names = HashMap::from([
                (a.id.clone(), (a.username.clone(), a.bot)),
                (b.id.clone(), (b.username.clone(), b.bot)),
            ]);
            if a.id == b.id {
                // Nobody plays themselves; the queries below would list all of a's matches.
                return Ok((a.id, names, Vec::new(), Vec::new()));
            }
            let results = versus::results(conn, &a.id, &b.id)?;
            let rows = versus::between(conn, &a.id, &b.id, after, fetch)?;
            Ok((a.id, names, results, rows))
        })
        .await?;
    let (mut wins, mut draws, mut losses) = (0, 0, 0);
    for (seat, winner) in &results {
        match winner {
            None => draws += 1,
            Some(w) if w.as_str() == seat => wins += 1,
            Some(_) => losses += 1,
        }
    }
    let more = rows.len() > limit as usize;
    rows.truncate(limit as usize);
    let next_cursor = more
        .then(|| rows.last().map(|r| encode_keyset(r.created_at, &r.id)))
        .flatten();
    Ok(Versus {
        wins,
        draws,
        losses,
        matches: rows
            .iter()
            .map(|r| summary(r, &a_id, &names))
            .collect::<Result<_>>()?,
        next_cursor,
    })
}
