//! Pairing (pure): which queued tickets to pair this round.
//!
//! Each ticket has a rating window that starts narrow and widens with its
//! waiting time until, past a limit, anyone on the ladder will do. Two tickets
//! may be paired when their rating gap is inside both windows. Tickets are
//! served longest-waiting first; each takes the closest rating among those it
//! may be paired with (ties: the longer waiting), avoiding its last opponent
//! when another choice exists.

use crate::broker::Ticket;
use crate::config::MatchmakingConfig;
use crate::time::Millis;

/// The rating gap `ticket` accepts after waiting `waited_ms`; `None` = anyone.
pub fn window(config: &MatchmakingConfig, waited_ms: Millis) -> Option<f64> {
    let waited = waited_ms.max(0);
    if u128::try_from(waited).unwrap_or(0) >= config.unlimited_after.as_millis() {
        return None;
    }
    Some(config.window_start + config.window_growth_per_sec * waited as f64 / 1000.0)
}

fn repeat(a: &Ticket, b: &Ticket) -> bool {
    a.last_opponent.as_deref() == Some(b.player_id.as_str())
        || b.last_opponent.as_deref() == Some(a.player_id.as_str())
}

/// The pairs of this round, as indexes into `tickets`, which must be sorted
/// by rating (as the queue returns them). Tickets of one player are never
/// paired with each other.
pub fn plan(tickets: &[Ticket], now: Millis, config: &MatchmakingConfig) -> Vec<(usize, usize)> {
    let n = tickets.len();
    let windows: Vec<f64> = tickets
        .iter()
        .map(|t| window(config, now - t.created_at).unwrap_or(f64::INFINITY))
        .collect();
    // Unpaired tickets form a doubly linked list in rating order, so a scan
    // skips paired ones in constant time.
    let mut prev: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
    let mut next: Vec<Option<usize>> = (0..n).map(|i| (i + 1 < n).then_some(i + 1)).collect();
    let mut paired = vec![false; n];
    // Longest waiting first, ties by id. Ties are the rule in a large round
    // (tickets queued in the same millisecond), so each ticket's sort key
    // carries its id's first eight bytes, and whole ids are compared only
    // when those agree.
    let keys: Vec<(i64, u64)> = tickets
        .iter()
        .map(|t| (t.created_at, id_prefix(&t.id)))
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| {
        keys[a]
            .cmp(&keys[b])
            .then_with(|| tickets[a].id.cmp(&tickets[b].id))
    });
    let mut pairs = Vec::with_capacity(n / 2);
    for &a in &order {
        if paired[a] {
            continue;
        }
        let ticket = &tickets[a];
        let reach = windows[a];
        let gap = |b: usize| (tickets[b].rating - ticket.rating).abs();
        let mut best: Option<usize> = None;
        let mut fallback: Option<usize> = None;
        let (mut left, mut right) = (prev[a], next[a]);
        // Walk outwards by increasing gap; the first acceptable ticket that
        // is not a rematch is the best one.
        loop {
            let pick_left = match (left, right) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(l), Some(r)) => {
                    let (gl, gr) = (gap(l), gap(r));
                    gl < gr || (gl == gr && tickets[l].created_at <= tickets[r].created_at)
                }
            };
            let b = if pick_left { left } else { right };
            let Some(b) = b else { break };
            if gap(b) > reach {
                if pick_left {
                    left = None
                } else {
                    right = None
                }
                continue;
            }
            if pick_left {
                left = prev[b]
            } else {
                right = next[b]
            }
            let other = &tickets[b];
            if other.player_id == ticket.player_id || gap(b) > windows[b] {
                continue;
            }
            if repeat(ticket, other) {
                fallback.get_or_insert(b);
                continue;
            }
            best = Some(b);
            break;
        }
        let Some(b) = best.or(fallback) else { continue };
        for i in [a, b] {
            paired[i] = true;
            if let Some(p) = prev[i] {
                next[p] = next[i];
            }
            if let Some(nx) = next[i] {
                prev[nx] = prev[i];
            }
        }
        pairs.push((a, b));
    }
    pairs
}

/// The first eight bytes of `id` as a number that orders as they do (a
/// shorter id padded with zero bytes, which no id holds).
fn id_prefix(id: &str) -> u64 {
    let mut bytes = [0u8; 8];
    let n = id.len().min(8);
    bytes[..n].copy_from_slice(&id.as_bytes()[..n]);
    u64::from_be_bytes(bytes)
}

/// Which of a pair plays X: the one who was X less recently (never counts
/// as longest ago); on a tie, the one who waited longer.
pub fn x_first(a: &Ticket, b: &Ticket) -> bool {
    match (a.last_x_at, b.last_x_at) {
        (None, Some(_)) => true,
        (Some(_), None) => false,
        (Some(x), Some(y)) if x != y => x < y,
        _ => (a.created_at, &a.id) <= (b.created_at, &b.id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::broker::TicketStatus;
    use std::time::Duration;

    fn config() -> MatchmakingConfig {
        MatchmakingConfig {
            window_start: 100.0,
            window_growth_per_sec: 10.0,
            unlimited_after: Duration::from_secs(60),
            abandon_after: Duration::from_secs(60),
            round_every: Duration::from_millis(500),
            chunk_pairs: 1_250,
        }
    }

    fn ticket(id: &str, rating: f64, created_at: i64) -> Ticket {
        Ticket {
            id: id.into(),
            player_id: format!("p-{id}"),
            ladder: "l".into(),
            rating,
            created_at,
            seen_at: created_at,
            status: TicketStatus::Queued,
            match_id: None,
            reason: None,
            last_x_at: None,
            last_opponent: None,
        }
    }

    fn sorted(mut t: Vec<Ticket>) -> Vec<Ticket> {
        t.sort_by(|a, b| a.rating.total_cmp(&b.rating));
        t
    }

    fn ids(t: &[Ticket], pairs: &[(usize, usize)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|&(a, b)| (t[a].id.clone(), t[b].id.clone()))
            .collect()
    }

    #[test]
    fn the_window_widens_with_waiting_until_anyone_will_do() {
        let c = config();
        assert_eq!(window(&c, 0), Some(100.0));
        assert_eq!(window(&c, 10_000), Some(200.0));
        assert_eq!(window(&c, 59_999), Some(699.99));
        assert_eq!(window(&c, 60_000), None);
    }

    #[test]
    fn two_close_players_are_paired_at_once() {
        let t = sorted(vec![ticket("a", 1500.0, 0), ticket("b", 1550.0, 0)]);
        assert_eq!(plan(&t, 0, &config()).len(), 1);
    }

    #[test]
    fn far_apart_players_wait_until_both_windows_reach() {
        let t = sorted(vec![ticket("a", 1500.0, 0), ticket("b", 1900.0, 0)]);
        assert!(plan(&t, 0, &config()).is_empty());
        assert!(
            plan(&t, 29_000, &config()).is_empty(),
            "gap 400 > window 390"
        );
        assert_eq!(plan(&t, 30_000, &config()).len(), 1);
        // Nobody waits forever: past the limit any gap is fine.
        let far = sorted(vec![ticket("a", 800.0, 0), ticket("b", 2900.0, 0)]);
        assert!(plan(&far, 59_000, &config()).is_empty());
        assert_eq!(plan(&far, 60_000, &config()).len(), 1);
    }

    #[test]
    fn the_gap_must_be_inside_both_windows() {
        // a waited long (wide window), b just arrived (narrow): no pair yet.
        let t = sorted(vec![ticket("a", 1500.0, 0), ticket("b", 1800.0, 40_000)]);
        assert!(plan(&t, 40_000, &config()).is_empty());
        assert_eq!(plan(&t, 60_000, &config()).len(), 1);
    }

    #[test]
    fn the_longest_waiting_is_served_first_with_the_closest_rating() {
        // c waited longest; b is closest to c; a is then left alone.
        let t = sorted(vec![
            ticket("a", 1400.0, 5),
            ticket("b", 1480.0, 3),
            ticket("c", 1500.0, 1),
        ]);
        let pairs = plan(&t, 10, &config());
        assert_eq!(ids(&t, &pairs), [("c".to_owned(), "b".to_owned())]);
    }

    #[test]
    fn of_equal_waits_the_smaller_id_is_served_first_even_past_eight_shared_bytes() {
        // Served first, "samepref-a" takes c (gap 30) and leaves "samepref-b"
        // alone; served first, "samepref-b" would take c instead.
        let t = sorted(vec![
            ticket("samepref-b", 1500.0, 7),
            ticket("samepref-a", 1560.0, 7),
            ticket("zzz", 1530.0, 7),
        ]);
        let pairs = plan(&t, 10, &config());
        assert_eq!(
            ids(&t, &pairs),
            [("samepref-a".to_owned(), "zzz".to_owned())]
        );
    }

    proptest::proptest! {
        #[test]
        fn an_ids_prefix_key_orders_as_the_id_does(a in "[ab]{0,12}", b in "[ab]{0,12}") {
            let (ka, kb) = (id_prefix(&a), id_prefix(&b));
            if ka < kb {
                proptest::prop_assert!(a < b);
            }
            if a < b {
                proptest::prop_assert!(ka <= kb);
            }
        }
    }

    #[test]
    fn the_same_two_players_are_not_paired_twice_in_a_row_when_another_choice_exists() {
        let mut a = ticket("a", 1500.0, 0);
        let mut b = ticket("b", 1510.0, 1);
        a.last_opponent = Some(b.player_id.clone());
        b.last_opponent = Some(a.player_id.clone());
        let c = ticket("c", 1560.0, 2);
        let t = sorted(vec![a.clone(), b.clone(), c]);
        let pairs = plan(&t, 10, &config());
        assert_eq!(ids(&t, &pairs), [("a".to_owned(), "c".to_owned())]);
        // With no other choice, they do play again.
        let t = sorted(vec![a, b]);
        assert_eq!(plan(&t, 10, &config()).len(), 1);
    }

    #[test]
    fn a_player_is_never_paired_with_themself() {
        let a = ticket("a", 1500.0, 0);
        let mut b = ticket("b", 1500.0, 0);
        b.player_id = a.player_id.clone();
        assert!(plan(&sorted(vec![a, b]), 100_000, &config()).is_empty());
    }

    #[test]
    fn every_ticket_is_in_at_most_one_pair() {
        let t = sorted(
            (0..1001)
                .map(|i| {
                    ticket(
                        &i.to_string(),
                        1000.0 + (i * 37 % 1000) as f64,
                        i64::from(i % 97),
                    )
                })
                .collect(),
        );
        let pairs = plan(&t, 100_000, &config());
        let mut seen = std::collections::HashSet::new();
        for (a, b) in &pairs {
            assert!(seen.insert(*a) && seen.insert(*b));
        }
        assert_eq!(
            pairs.len(),
            500,
            "with unlimited windows everyone but one is paired"
        );
    }

    #[test]
    fn x_goes_to_who_was_x_less_recently() {
        let mut a = ticket("a", 1500.0, 0);
        let mut b = ticket("b", 1500.0, 5);
        assert!(x_first(&a, &b), "tie: the longer waiting");
        a.last_x_at = Some(100);
        assert!(!x_first(&a, &b), "b was never X");
        b.last_x_at = Some(50);
        assert!(!x_first(&a, &b), "b was X longer ago");
        b.last_x_at = Some(200);
        assert!(x_first(&a, &b));
    }
}
