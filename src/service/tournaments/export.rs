//! Exporting a tournament: its standings and every game (and bye), as CSV or
//! NDJSON, for the director's records.

use std::fmt::Write as _;

use crate::store::tournaments as store;

use super::super::{Context, Error, Result};
use super::read::{RoundView, StandingView, rounds_of, standings_of};

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

fn csv(standings: &[StandingView], rounds: &[RoundView]) -> String {
    let mut out = String::from(
        "rank,player_id,username,rating,score,games,wins,draws,losses,byes,withdrawn,buchholz,sonneborn_berger\n",
    );
    for s in standings {
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
            s.tiebreaks.buchholz,
            s.tiebreaks.sonneborn_berger
        );
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

fn ndjson(standings: &[StandingView], rounds: &[RoundView]) -> Result<String> {
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
    let (standings, rounds) = ctx
        .db
        .run(move |conn| {
            store::get(conn, &id)?.ok_or(Error::NotFound("tournament"))?;
            Ok::<_, Error>((standings_of(conn, &id)?, rounds_of(conn, &id)?))
        })
        .await?;
    match format {
        Format::Csv => Ok(csv(&standings, &rounds)),
        Format::Ndjson => ndjson(&standings, &rounds),
    }
}
