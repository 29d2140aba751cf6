//! Exporting a tournament: its standings and every game (and bye), as CSV or
//! NDJSON, for the director's records.

use std::fmt::Write as _;

use crate::store::tournaments as store;

use super::super::{Context, Error, Result};
use super::Kind;
use super::arena::{GameView, games_of};
use super::read::{RoundView, StandingView, Tiebreaks, rounds_of, standings_of};

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Two CSV tables, standings then games, separated by an empty line.
    Csv,
    /// One JSON object a line: `{"type": "standing", …}` then `{"type": "game", …}` / `{"type": "bye", …}`.
    Ndjson,
}

impl Format {
    /// Parses `csv` or `ndjson`.
    pub fn parse(text: &str) -> Option<Format> {
        match text {
            "csv" => Some(Format::Csv),
            "ndjson" => Some(Format::Ndjson),
            _ => None,
        }
    }

    /// The media type.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv; charset=utf-8",
            Format::Ndjson => "application/x-ndjson",
        }
    }
}

/// Quotes a CSV field when it needs it.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// A standing's two tiebreak columns.
fn tiebreak_fields(t: &Tiebreaks) -> (String, String) {
    match t {
        Tiebreaks::Swiss(t) => (t.buchholz.to_string(), t.sonneborn_berger.to_string()),
        Tiebreaks::Arena(t) => (
            t.performance.map(|p| p.to_string()).unwrap_or_default(),
            t.fire.to_string(),
        ),
    }
}

/// The CSV export; `games` is `Some` for an arena (listed alone, as it has no rounds).
fn csv(standings: &[StandingView], rounds: &[RoundView], games: Option<&[GameView]>) -> String {
    let tiebreaks = if games.is_some() {
        "performance,fire"
    } else {
        "buchholz,sonneborn_berger"
    };
    let mut out = format!(
        "rank,player_id,username,rating,score,games,wins,draws,losses,byes,withdrawn,{tiebreaks}\n"
    );
    for s in standings {
        let (t1, t2) = tiebreak_fields(&s.tiebreaks);
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.rank,
            field(&s.player.id),
            field(&s.player.username),
            s.rating,
            s.score,
            s.games,
            s.wins,
            s.draws,
            s.losses,
            s.byes,
            s.withdrawn,
            t1,
            t2
        );
    }
    if let Some(games) = games {
        out.push_str(
            "\nmatch_id,x_id,x,o_id,o,result,started_at,ended_at,x_berserk,o_berserk,x_points,o_points\n",
        );
        let points = |p: Option<u32>| p.map(|p| p.to_string()).unwrap_or_default();
        for g in games {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                field(&g.match_id),
                field(&g.x.id),
                field(&g.x.username),
                field(&g.o.id),
                field(&g.o.username),
                g.result.as_deref().unwrap_or(""),
                g.started_at,
                g.ended_at.as_deref().unwrap_or(""),
                g.berserk.x,
                g.berserk.o,
                points(g.points.x),
                points(g.points.o)
            );
        }
        return out;
    }
    out.push_str("\nround,board,match_id,x_id,x,o_id,o,result\n");
    for r in rounds {
        for p in &r.pairings {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                r.round,
                p.board,
                field(&p.match_id),
                field(&p.x.id),
                field(&p.x.username),
                field(&p.o.id),
                field(&p.o.username),
                p.result.as_deref().unwrap_or("")
            );
        }
        if let Some(bye) = &r.bye {
            let _ = writeln!(
                out,
                "{},,,{},{},,,bye",
                r.round,
                field(&bye.id),
                field(&bye.username)
            );
        }
    }
    out
}

fn ndjson(
    standings: &[StandingView],
    rounds: &[RoundView],
    games: Option<&[GameView]>,
) -> Result<String> {
    let mut out = String::new();
    let mut line = |value: serde_json::Value| {
        out.push_str(&value.to_string());
        out.push('\n');
    };
    for s in standings {
        let mut value = serde_json::to_value(s).map_err(|e| Error::Internal(e.to_string()))?;
        if let Some(obj) = value.as_object_mut() {
            obj.insert("type".into(), "standing".into());
        }
        line(value);
    }
    for g in games.unwrap_or_default() {
        let mut value = serde_json::to_value(g).map_err(|e| Error::Internal(e.to_string()))?;
        if let Some(obj) = value.as_object_mut() {
            obj.insert("type".into(), "game".into());
        }
        line(value);
    }
    for r in rounds {
        for p in &r.pairings {
            let mut value = serde_json::to_value(p).map_err(|e| Error::Internal(e.to_string()))?;
            if let Some(obj) = value.as_object_mut() {
                obj.insert("type".into(), "game".into());
                obj.insert("round".into(), r.round.into());
            }
            line(value);
        }
        if let Some(bye) = &r.bye {
            line(serde_json::json!({"type": "bye", "round": r.round, "player": bye}));
        }
    }
    Ok(out)
}

/// The tournament's standings and games in `format`.
///
/// # Errors
/// `not_found`; store failures.
pub async fn export(ctx: &Context, id: &str, format: Format) -> Result<String> {
    let id = id.to_owned();
    let (standings, rounds, games) = ctx
        .db
        .run(move |conn| {
            let row = store::get(conn, &id)?.ok_or(Error::NotFound("tournament"))?;
            // An arena has games but no rounds; a Swiss lists its games by round.
            let games = if Kind::parse(&row.kind) == Some(Kind::Arena) {
                Some(games_of(conn, &row)?)
            } else {
                None
            };
            Ok::<_, Error>((standings_of(conn, &id)?, rounds_of(conn, &id)?, games))
        })
        .await?;
    match format {
        Format::Csv => Ok(csv(&standings, &rounds, games.as_deref())),
        Format::Ndjson => ndjson(&standings, &rounds, games.as_deref()),
    }
}
