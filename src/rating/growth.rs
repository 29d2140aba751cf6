//! Deviation growth between games (RULES.md, "Ratings over time"). Pure: the
//! caller passes the elapsed time.
//!
//! Glicko-2 grows the deviation of a player who plays no game in a rating
//! period by φ' = √(φ² + σ²); over `t` such periods (t need not be whole)
//! that is φ' = √(φ² + t·σ²) on the Glicko-2 scale, capped at the starting
//! deviation. Time is counted in rating periods: elapsed days × periods per day.

use super::{INITIAL, PROVISIONAL_ABOVE, Rating, SCALE};

/// Rating periods per day by default: Lichess's setting, which takes a
/// typical deviation from 60 to 110 in a year without games.
pub const DEFAULT_PERIODS_PER_DAY: f64 = 0.21436;

/// Milliseconds in a day.
pub const DAY_MS: f64 = 86_400_000.0;

/// How fast deviations grow with inactivity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    periods_per_day: f64,
}

impl Default for Growth {
    fn default() -> Self {
        Growth {
            periods_per_day: DEFAULT_PERIODS_PER_DAY,
        }
    }
}

impl Growth {
    /// Growth at `periods_per_day` rating periods a day; `None` unless it is
    /// finite and not negative (0 turns growth off).
    pub fn new(periods_per_day: f64) -> Option<Growth> {
        (periods_per_day.is_finite() && periods_per_day >= 0.0)
            .then_some(Growth { periods_per_day })
    }

    /// Rating periods a day.
    pub fn periods_per_day(&self) -> f64 {
        self.periods_per_day
    }

    /// Rating periods in `elapsed_ms` (none for a negative span: a clock
    /// that went back never shrinks a deviation).
    pub fn periods(&self, elapsed_ms: i64) -> f64 {
        elapsed_ms.max(0) as f64 / DAY_MS * self.periods_per_day
    }

    /// The deviation after `elapsed_ms` without games: √(φ² + t·σ²) on the
    /// Glicko-2 scale, at most the starting 350. A deviation already above
    /// the cap is left as it is.
    pub fn deviation_after(&self, deviation: f64, volatility: f64, elapsed_ms: i64) -> f64 {
        let phi = deviation / SCALE;
        let t = self.periods(elapsed_ms);
        let grown = (phi * phi + t * volatility * volatility).sqrt() * SCALE;
        if deviation >= INITIAL.deviation {
            deviation
        } else {
            grown.min(INITIAL.deviation)
        }
    }

    /// `stored` as of `now`, the player's last rated game on the ladder having
    /// been at `last_game_at` (`None`: never played, so nothing grows).
    pub fn as_of(&self, stored: Rating, last_game_at: Option<i64>, now: i64) -> Rating {
        match last_game_at {
            Some(at) => Rating {
                deviation: self.deviation_after(
                    stored.deviation,
                    stored.volatility,
                    now.saturating_sub(at),
                ),
                ..stored
            },
            None => stored,
        }
    }

    /// The last instant (epoch ms) at which `stored`, last updated by a game
    /// at `last_game_at`, is still established (grown deviation ≤ 110);
    /// `None` when it is provisional already. So "established at `now`" is
    /// `now ≤ established_until`, or equally, as a bound on the last game's
    /// time given the stored deviation and volatility:
    /// `last_game_at ≥ now − span`, with span = (110² − φ²)/σ² periods.
    /// Stored with the row, it makes leaderboard membership a range
    /// condition on one indexed column.
    pub fn established_until(&self, stored: Rating, last_game_at: i64) -> Option<i64> {
        if stored.deviation > PROVISIONAL_ABOVE {
            return None;
        }
        let limit = PROVISIONAL_ABOVE / SCALE;
        let phi = stored.deviation / SCALE;
        let sigma2 = stored.volatility * stored.volatility;
        if sigma2 <= 0.0 || self.periods_per_day <= 0.0 {
            return Some(i64::MAX);
        }
        let periods = (limit * limit - phi * phi) / sigma2;
        let span_ms = (periods / self.periods_per_day * DAY_MS).floor();
        // Beyond about 290 million years the bound is "for ever".
        if span_ms >= (i64::MAX - last_game_at.max(0)) as f64 {
            return Some(i64::MAX);
        }
        Some(last_game_at + span_ms as i64)
    }

    /// Whether `stored` (last game at `last_game_at`) is provisional at `now`.
    /// Agrees with [`Growth::established_until`], which the leaderboard uses.
    pub fn provisional_at(&self, stored: Rating, last_game_at: Option<i64>, now: i64) -> bool {
        match last_game_at {
            Some(at) => self
                .established_until(stored, at)
                .is_none_or(|until| now > until),
            None => stored.provisional(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const DAY: i64 = 86_400_000;

    fn r(deviation: f64, volatility: f64) -> Rating {
        Rating {
            rating: 1700.0,
            deviation,
            volatility,
        }
    }

    /// The rule's formula written out on its own: Glicko scale in and out.
    fn formula(deviation: f64, volatility: f64, days: f64) -> f64 {
        let phi = deviation / 173.7178;
        let t = days * 0.21436;
        ((phi * phi + t * volatility * volatility).sqrt() * 173.7178).min(350.0)
    }

    #[test]
    fn the_deviation_after_0_1_30_and_365_days_follows_the_formula() {
        let g = Growth::default();
        // Figures worked by hand from φ' = √(φ² + t·σ²) for deviation 60, σ 0.06.
        let cases = [
            (0, 60.0),
            (1, 60.193_755),
            (30, 65.564_048),
            (365, 110.000_785),
        ];
        for (days, figure) in cases {
            let got = g.deviation_after(60.0, 0.06, days * DAY);
            assert!(
                (got - figure).abs() < 1e-5,
                "{days} days: {got} vs {figure}"
            );
            assert!((got - formula(60.0, 0.06, days as f64)).abs() < 1e-9);
        }
    }

    #[test]
    fn a_typical_deviation_goes_from_60_to_110_in_a_year() {
        let g = Growth::default();
        let year = g.established_until(r(60.0, 0.06), 0).unwrap();
        assert!((year as f64 / DAY as f64 - 365.0).abs() < 0.1, "{year}");
    }

    #[test]
    fn growth_is_capped_at_350() {
        let g = Growth::default();
        assert_eq!(g.deviation_after(340.0, 0.06, 100_000 * DAY), 350.0);
        assert_eq!(g.deviation_after(350.0, 0.06, 0), 350.0);
    }

    #[test]
    fn a_player_who_never_played_does_not_change() {
        let g = Growth::default();
        assert_eq!(g.as_of(INITIAL, None, 10 * DAY), INITIAL);
        assert!(g.provisional_at(INITIAL, None, 0));
    }

    #[test]
    fn established_until_is_none_for_a_provisional_rating() {
        assert_eq!(Growth::default().established_until(r(110.5, 0.06), 0), None);
    }

    #[test]
    fn zero_periods_a_day_keeps_everyone_where_they_are() {
        let g = Growth::new(0.0).unwrap();
        assert!((g.deviation_after(60.0, 0.06, 1000 * DAY) - 60.0).abs() < 1e-9);
        assert_eq!(g.established_until(r(60.0, 0.06), 5), Some(i64::MAX));
        assert!(Growth::new(-1.0).is_none());
        assert!(Growth::new(f64::NAN).is_none());
    }

    proptest! {
        #[test]
        fn growth_never_shrinks_and_never_passes_the_cap(
            deviation in 30.0f64..350.0,
            volatility in 0.01f64..0.2,
            a in 0i64..(3650 * DAY),
            b in 0i64..(3650 * DAY),
        ) {
            let g = Growth::default();
            let (early, late) = (a.min(b), a.max(b));
            let d1 = g.deviation_after(deviation, volatility, early);
            let d2 = g.deviation_after(deviation, volatility, late);
            prop_assert!(d1 >= deviation - 1e-9);
            prop_assert!(d2 >= d1 - 1e-9);
            prop_assert!(d2 <= 350.0);
            prop_assert!((d2 - formula(deviation, volatility, late as f64 / DAY as f64)).abs() < 1e-6);
        }

        #[test]
        fn growing_in_two_steps_is_growing_once(
            deviation in 30.0f64..300.0,
            volatility in 0.01f64..0.2,
            a in 0i64..(1000 * DAY),
            b in 0i64..(1000 * DAY),
        ) {
            let g = Growth::default();
            let once = g.deviation_after(deviation, volatility, a + b);
            let mid = g.deviation_after(deviation, volatility, a);
            let twice = g.deviation_after(mid, volatility, b);
            // Equal until the cap cuts the first step.
            if once < 350.0 {
                prop_assert!((once - twice).abs() < 1e-6, "{once} vs {twice}");
            }
        }

        #[test]
        fn established_until_is_where_the_grown_deviation_crosses_110(
            deviation in 30.0f64..110.0,
            volatility in 0.02f64..0.2,
            last in 0i64..(1 << 45),
            days in 0.0f64..2000.0,
        ) {
            let g = Growth::default();
            let stored = r(deviation, volatility);
            let until = g.established_until(stored, last).unwrap();
            prop_assert!(until >= last);
            // At the bound the deviation is 110 (within float noise), one
            // millisecond later it is above.
            let at = g.deviation_after(deviation, volatility, until - last);
            prop_assert!(at <= 110.0 + 1e-6, "{at}");
            let now = last + (days * DAY as f64) as i64;
            let grown = g.deviation_after(deviation, volatility, now - last);
            prop_assert_eq!(g.provisional_at(stored, Some(last), now), now > until);
            if now <= until {
                prop_assert!(grown <= 110.0 + 1e-6);
            } else {
                prop_assert!(grown > 110.0 - 1e-6);
            }
        }
    }
}
