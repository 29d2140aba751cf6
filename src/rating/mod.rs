//! Glicko-2, as in Glickman's "Example of the Glicko-2 system" (2012). Pure.
//!
//! The server treats each match as one rating period for both players, so
//! [`update`] is called with a single game; it accepts any number of games so
//! that the paper's worked example can be checked exactly.

pub mod growth;
pub mod ledger;

pub use growth::Growth;

/// Ratings a new player starts with.
pub const INITIAL: Rating = Rating {
    rating: 1500.0,
    deviation: 350.0,
    volatility: 0.06,
};

/// A rating deviation above this marks the rating provisional.
pub const PROVISIONAL_ABOVE: f64 = 110.0;

/// The system constant τ, which bounds how fast volatility moves (Glickman: 0.3 to 1.2).
pub const TAU: f64 = 0.5;

/// The Glicko scale factor between the Glicko and Glicko-2 scales.
const SCALE: f64 = 173.7178;
/// Convergence tolerance of the volatility iteration.
const EPSILON: f64 = 0.000_001;

/// A player's Glicko-2 rating on the Glicko scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rating {
    /// The rating (1500 to start).
    pub rating: f64,
    /// The rating deviation (350 to start).
    pub deviation: f64,
    /// The volatility (0.06 to start).
    pub volatility: f64,
}

impl Rating {
    /// Whether the rating is still provisional (deviation above 110).
    pub fn provisional(&self) -> bool {
        self.deviation > PROVISIONAL_ABOVE
    }
}

/// The score of a game for the player: win 1, draw ½, loss 0, whatever the
/// ending (line, draw, time, resignation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Score {
    /// A win.
    Win,
    /// A draw: halfway between a win and a loss.
    Draw,
    /// A loss.
    Loss,
}

impl Score {
    /// 1, 0.5 or 0.
    pub fn value(self) -> f64 {
        match self {
            Score::Win => 1.0,
            Score::Draw => 0.5,
            Score::Loss => 0.0,
        }
    }

    /// The opponent's score of the same game.
    pub fn opposite(self) -> Score {
        match self {
            Score::Win => Score::Loss,
            Score::Draw => Score::Draw,
            Score::Loss => Score::Win,
        }
    }
}

fn g(phi: f64) -> f64 {
    1.0 / (1.0 + 3.0 * phi * phi / (std::f64::consts::PI * std::f64::consts::PI)).sqrt()
}

fn expected(mu: f64, mu_j: f64, phi_j: f64) -> f64 {
    1.0 / (1.0 + (-g(phi_j) * (mu - mu_j)).exp())
}

/// The rating after a period in which `player` played `games` (opponent
/// rating as it was before the period, and the player's score). With no
/// games only the deviation grows (step 6 of the paper).
pub fn update(player: Rating, games: &[(Rating, Score)], tau: f64) -> Rating {
    // Step 2: to the Glicko-2 scale.
    let mu = (player.rating - 1500.0) / SCALE;
    let phi = player.deviation / SCALE;
    let sigma = player.volatility;
    if games.is_empty() {
        let phi_star = (phi * phi + sigma * sigma).sqrt();
        return Rating {
            deviation: phi_star * SCALE,
            ..player
        };
    }
    // Steps 3 and 4: estimated variance and improvement.
    let mut v_inv = 0.0;
    let mut delta_sum = 0.0;
    for (opponent, score) in games {
        let mu_j = (opponent.rating - 1500.0) / SCALE;
        let phi_j = opponent.deviation / SCALE;
        let e = expected(mu, mu_j, phi_j);
        let gj = g(phi_j);
        v_inv += gj * gj * e * (1.0 - e);
        delta_sum += gj * (score.value() - e);
    }
    let v = 1.0 / v_inv;
    let delta = v * delta_sum;
    // Step 5: the new volatility, by the Illinois algorithm.
    let a = (sigma * sigma).ln();
    let f = |x: f64| {
        let ex = x.exp();
        let d = phi * phi + v + ex;
        ex * (delta * delta - phi * phi - v - ex) / (2.0 * d * d) - (x - a) / (tau * tau)
    };
    let mut big_a = a;
    let mut big_b = if delta * delta > phi * phi + v {
        (delta * delta - phi * phi - v).ln()
    } else {
        let mut k = 1.0;
        while f(a - k * tau) < 0.0 {
            k += 1.0;
        }
        a - k * tau
    };
    let mut f_a = f(big_a);
    let mut f_b = f(big_b);
    while (big_b - big_a).abs() > EPSILON {
        let big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a);
        let f_c = f(big_c);
        if f_c * f_b <= 0.0 {
            big_a = big_b;
            f_a = f_b;
        } else {
            f_a /= 2.0;
        }
        big_b = big_c;
        f_b = f_c;
    }
    let sigma_new = (big_a / 2.0).exp();
    // Steps 6 and 7: new deviation and rating.
    let phi_star = (phi * phi + sigma_new * sigma_new).sqrt();
    let phi_new = 1.0 / (1.0 / (phi_star * phi_star) + 1.0 / v).sqrt();
    let mu_new = mu + phi_new * phi_new * delta_sum;
    // Step 8: back to the Glicko scale.
    Rating {
        rating: mu_new * SCALE + 1500.0,
        deviation: phi_new * SCALE,
        volatility: sigma_new,
    }
}

/// Both players' ratings after one game, each computed from the other's rating before it.
pub fn after_game(x: Rating, o: Rating, x_score: Score) -> (Rating, Rating) {
    (
        update(x, &[(o, x_score)], TAU),
        update(o, &[(x, x_score.opposite())], TAU),
    )
}

/// A player's rating as stored, with the end of their last rated game on
/// the ladder (`None`: never played), from which the deviation grows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// The rating after the last rated game.
    pub rating: Rating,
    /// When that game ended (epoch ms).
    pub rated_at: Option<i64>,
}

impl Default for Standing {
    fn default() -> Self {
        Standing {
            rating: INITIAL,
            rated_at: None,
        }
    }
}

/// Both players' ratings around one rated game.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatedGame {
    /// X before the game: the stored rating with its deviation grown to the game's end.
    pub x_before: Rating,
    /// O before the game.
    pub o_before: Rating,
    /// X after.
    pub x_after: Rating,
    /// O after.
    pub o_after: Rating,
}

/// One rated game ending at `at` (RULES.md, "Ratings over time"): each
/// player's deviation first grows for the time since their last game, then
/// the game is one Glicko-2 rating period for both.
pub fn rated_game(x: Standing, o: Standing, x_score: Score, at: i64, growth: Growth) -> RatedGame {
    let x_before = growth.as_of(x.rating, x.rated_at, at);
    let o_before = growth.as_of(o.rating, o.rated_at, at);
    let (x_after, o_after) = after_game(x_before, o_before, x_score);
    RatedGame {
        x_before,
        o_before,
        x_after,
        o_after,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(rating: f64, deviation: f64) -> Rating {
        Rating {
            rating,
            deviation,
            volatility: 0.06,
        }
    }

    #[test]
    fn glickmans_worked_example_gives_the_papers_figures() {
        let player = r(1500.0, 200.0);
        let games = [
            (r(1400.0, 30.0), Score::Win),
            (r(1550.0, 100.0), Score::Loss),
            (r(1700.0, 300.0), Score::Loss),
        ];
        let after = update(player, &games, 0.5);
        assert!((after.rating - 1464.06).abs() < 0.01, "{after:?}");
        assert!((after.deviation - 151.52).abs() < 0.01, "{after:?}");
        assert!((after.volatility - 0.05999).abs() < 0.00001, "{after:?}");
    }

    #[test]
    fn a_draw_between_equals_moves_neither_rating_and_shrinks_both_deviations() {
        let (x, o) = after_game(INITIAL, INITIAL, Score::Draw);
        assert!((x.rating - 1500.0).abs() < 1e-9);
        assert!((o.rating - 1500.0).abs() < 1e-9);
        assert!(x.deviation < 350.0);
        assert_eq!(x, o);
    }

    #[test]
    fn a_draw_against_a_stronger_player_gains_rating() {
        let (x, o) = after_game(r(1400.0, 80.0), r(1700.0, 80.0), Score::Draw);
        assert!(x.rating > 1400.0);
        assert!(o.rating < 1700.0);
    }

    #[test]
    fn a_win_and_a_loss_are_mirror_images_between_equals() {
        let (x, o) = after_game(INITIAL, INITIAL, Score::Win);
        assert!(x.rating > 1500.0);
        assert!((x.rating - 1500.0 - (1500.0 - o.rating)).abs() < 1e-9);
        assert_eq!(
            Score::Win.value() + Score::Loss.value(),
            2.0 * Score::Draw.value()
        );
    }

    #[test]
    fn a_period_without_games_only_grows_the_deviation() {
        let before = r(1600.0, 100.0);
        let after = update(before, &[], TAU);
        assert_eq!(after.rating, 1600.0);
        assert!(after.deviation > 100.0);
    }

    #[test]
    fn provisional_means_a_deviation_above_110() {
        assert!(INITIAL.provisional());
        assert!(!r(1500.0, 110.0).provisional());
        assert!(r(1500.0, 110.1).provisional());
    }
}
