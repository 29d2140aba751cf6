//! Swiss standings: score, then Buchholz, then Sonneborn-Berger, then rating.

use std::cmp::Ordering;

use super::{Outcome, Swiss};
use crate::tournament::PlayerId;

/// One line of the Swiss standings (API.md `GET /tournaments/{id}/standings`).
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// 1 for the leader; players tied on score, both tiebreaks and rating
    /// share a rank (1, 2, 2, 4).
    pub rank: u32,
    /// The player.
    pub id: PlayerId,
    /// The entrant's rating, as given.
    pub rating: f64,
    /// Points: win 1, draw ½, bye 1.
    pub score: f64,
    /// Finished games played (byes are not games).
    pub games: u32,
    /// Games won.
    pub wins: u32,
    /// Games drawn.
    pub draws: u32,
    /// Games lost.
    pub losses: u32,
    /// Byes received (each scored 1).
    pub byes: u32,
    /// Withdrew or was removed.
    pub withdrawn: bool,
    /// Sum of the opponents' scores; a bye counts as an opponent with the
    /// player's own score.
    pub buchholz: f64,
    /// Sum of the scores of the opponents beaten, plus half the scores of
    /// those drawn (byes add nothing).
    pub sonneborn_berger: f64,
}

/// Tiebreaks in exact units: half points, and quarter points for
/// Sonneborn-Berger (half of a half-point score).
struct Line {
    entrant: usize,
    half_points: u32,
    buchholz_halves: u32,
    sb_quarters: u32,
}

pub(super) fn standings(swiss: &Swiss) -> Vec<Standing> {
    let records = &swiss.records;
    let mut lines: Vec<Line> = records
        .iter()
        .enumerate()
        .map(|(i, rec)| {
            let mut buchholz = rec.byes * rec.half_points;
            let mut sb = 0;
            for g in &rec.games {
                let theirs = records[g.opponent].half_points;
                match g.outcome {
                    Some(Outcome::Win) => {
                        buchholz += theirs;
                        sb += 2 * theirs;
                    }
                    Some(Outcome::Draw) => {
                        buchholz += theirs;
                        sb += theirs;
                    }
                    Some(Outcome::Loss) => buchholz += theirs,
                    None => {}
                }
            }
            Line {
                entrant: i,
                half_points: rec.half_points,
                buchholz_halves: buchholz,
                sb_quarters: sb,
            }
        })
        .collect();
    let entrants = &swiss.entrants;
    let key = |a: &Line, b: &Line| -> Ordering {
        b.half_points
            .cmp(&a.half_points)
            .then(b.buchholz_halves.cmp(&a.buchholz_halves))
            .then(b.sb_quarters.cmp(&a.sb_quarters))
            .then(
                entrants[b.entrant]
                    .rating
                    .total_cmp(&entrants[a.entrant].rating),
            )
    };
    lines.sort_by(|a, b| {
        key(a, b).then_with(|| entrants[a.entrant].id.cmp(&entrants[b.entrant].id))
    });

    let mut out: Vec<Standing> = Vec::with_capacity(lines.len());
    for (pos, line) in lines.iter().enumerate() {
        let rank = match pos {
            0 => 1,
            _ if key(&lines[pos - 1], line) == Ordering::Equal => out[pos - 1].rank,
            _ => pos as u32 + 1,
        };
        let e = &entrants[line.entrant];
        let rec = &records[line.entrant];
        let count = |o: Outcome| rec.games.iter().filter(|g| g.outcome == Some(o)).count() as u32;
        let (wins, draws, losses) = (
            count(Outcome::Win),
            count(Outcome::Draw),
            count(Outcome::Loss),
        );
        out.push(Standing {
            rank,
            id: e.id.clone(),
            rating: e.rating,
            score: f64::from(line.half_points) / 2.0,
            games: wins + draws + losses,
            wins,
            draws,
            losses,
            byes: rec.byes,
            withdrawn: e.withdrawn,
            buchholz: f64::from(line.buchholz_halves) / 2.0,
            sonneborn_berger: f64::from(line.sb_quarters) / 4.0,
        });
    }
    out
}
