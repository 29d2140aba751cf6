//! Making a pairing round's matches in a few large chunks: per chunk, one
//! broker call claims every pair, one transaction writes every match, one
//! pipeline tells every player, and chunks overlap. A round of 5,000 pairs
//! costs a handful of round trips instead of three (claim, transaction,
//! commit) per match.
//!
//! Crash safety (issue 9): a ticket is claimed in the broker first, so no
//! other round can take it; its match and its `matched` record are then
//! committed together with its chunk, or not at all. A failed write puts the claimed
//! tickets back in the queue; a crash between the claim and the commit
//! leaves claims without a match, which `reconcile_claims` puts back.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures_util::{StreamExt, stream};

use crate::broker::{Cancelled, PairClaim, Ticket};
use crate::config::LadderConfig;
use crate::rules::{Depth, Seat};
use crate::store::matches::{self as match_store, MatchRow};
use crate::store::tickets::{self, Seated};
use crate::store::{Backend, key_probes, paired};
use crate::time::Millis;

use super::super::matches::create::{self, NewMatch, SeatSpec};
use super::super::matches::record::{Mode, seat_str};
use super::super::{ConflictCode, Context, Error, Result, events};
use super::pairing;

/// How often a chunk's write is tried when a concurrent pairing (another
/// ladder's, on another instance) seats one of its players first: each try
/// sees the other's commit and leaves that pair out.
const WRITE_ATTEMPTS: usize = 3;

/// A claimed pair and the match it becomes.
#[derive(Debug)]
struct Planned {
    x: Ticket,
    o: Ticket,
    row: MatchRow,
}

/// What a chunk's transaction did with its claimed pairs (indexes).
#[derive(Debug, Default)]
struct Outcome {
    /// Written.
    made: Vec<usize>,
    /// Left out: a player sits in an unfinished ranked match (or twice in the round).
    busy: Vec<usize>,
    /// Left out: a ticket's durable record is no longer queued.
    gone: Vec<usize>,
    /// The tickets of left-out pairs to put back in the queue (not the gone ones).
    requeue: Vec<String>,
}

/// Chunks of a round in flight at once on PostgreSQL (SQLite has one
/// writer, so there they go one after the other). While one chunk's
/// transaction runs in the database the next is claimed in the broker, and
/// the database runs several transactions on its cores instead of one (a
/// round of 10,000 tickets spent two thirds of its time in one transaction
/// on one core). Each holds one pooled connection while it writes.
const CHUNKS_AT_ONCE: usize = 4;

/// The ladder's pairing lock a round holds while it makes its matches.
#[derive(Debug, Clone, Copy)]
pub struct HeldLock<'a> {
    /// The lock's name in the broker.
    pub name: &'a str,
    /// How long a renewal keeps it.
    pub ttl: std::time::Duration,
}

/// Turns the planned pairs of a round on `ladder` into ranked matches, in
/// chunks of `chunk_pairs` pairs (`UTTT_MM_CHUNK_PAIRS`): each chunk is claimed in the broker in one
/// call, its claimed pairs are written in one transaction, and its
/// `match_found` events go out in one pipeline. Returns the matches made.
///
/// Every chunk is claimed before it is written and written in one
/// transaction, as a whole round once was, so the crash safety of issue 9
/// holds chunk by chunk: a crash leaves some chunks committed and others
/// claimed without a match, which `reconcile_claims` puts back.
///
/// With `lock`, the round's pairing lock is renewed before each chunk is
/// claimed. A chunk that finds the lock held by another instance (the round
/// outlived it) is not claimed: its tickets stay queued for the instance
/// that pairs the ladder now, whose round would otherwise meet them claimed.
///
/// A player already seated in an unfinished ranked match is never paired
/// again: the transaction checks every player of its chunk, and the unique
/// index on unfinished ranked seats refuses a second match even when two
/// chunks or two instances write at once (the write is then tried again,
/// and sees it). Such a player's ticket is cancelled (`in_active_match`)
/// and the other one goes back to the queue.
///
/// # Errors
/// Broker or store failures of a chunk. Its claimed tickets are put back in
/// the queue (or, if that fails too, by `reconcile_claims` once stale); the
/// matches of the other chunks stand and are announced.
pub async fn make_matches(
    ctx: &Context,
    ladder: &LadderConfig,
    pairs: &[(&Ticket, &Ticket)],
    lock: Option<HeldLock<'_>>,
) -> Result<Vec<String>> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let started = std::time::Instant::now();
    let now = ctx.time.now_ms();
    // Planned straight into their chunks: a round of 100,000 tickets moved
    // 50,000 planned pairs once more, from one list into the chunks.
    let size = ctx.config.matchmaking.chunk_pairs.max(1);
    let mut chunks: Vec<Vec<Planned>> = Vec::with_capacity(pairs.len().div_ceil(size));
    for group in pairs.chunks(size) {
        let mut chunk = Vec::with_capacity(group.len());
        for &(a, b) in group {
            let (x, o) = if pairing::x_first(a, b) {
                (a, b)
            } else {
                (b, a)
            };
            chunk.push(Planned {
                row: ranked_row(ladder, &x.player_id, &o.player_id, now)?,
                x: x.clone(),
                o: o.clone(),
            });
        }
        chunks.push(chunk);
    }
    let count = chunks.len();
    // A quarter of the pool at most, so that a large round leaves
    // connections to the requests meanwhile.
    let at_once = match ctx.db.backend() {
        Backend::Postgres => {
            CHUNKS_AT_ONCE.min(usize::try_from(ctx.config.db_pool_size / 4).unwrap_or(1))
        }
        Backend::Sqlite => 1,
    }
    .max(1);
    let results: Vec<Result<Vec<String>>> = stream::iter(
        chunks
            .into_iter()
            .map(|chunk| make_chunk(ctx, ladder, chunk, now, lock)),
    )
    .buffer_unordered(at_once)
    .collect()
    .await;
    let mut made = Vec::new();
    let mut failed = None;
    for result in results {
        match result {
            Ok(ids) => made.extend(ids),
            Err(err) => {
                tracing::warn!(error = %err, "a chunk of a pairing round failed");
                failed.get_or_insert(err);
            }
        }
    }
    tracing::info!(
        ladder = %ladder.id,
        matches = made.len(),
        chunks = count,
        make_ms = started.elapsed().as_secs_f64() * 1000.0,
        "ranked matches made"
    );
    match failed {
        Some(err) => Err(err),
        None => Ok(made),
    }
}

/// One chunk of a round: renews the round's lock, claims its pairs, writes
/// the claimed ones in one transaction and announces the matches made.
/// Returns their ids.
async fn make_chunk(
    ctx: &Context,
    ladder: &LadderConfig,
    mut planned: Vec<Planned>,
    now: Millis,
    lock: Option<HeldLock<'_>>,
) -> Result<Vec<String>> {
    if let Some(lock) = lock
        && !ctx
            .broker
            .try_lock(lock.name, &ctx.instance, lock.ttl)
            .await?
    {
        tracing::warn!(
            ladder = %ladder.id,
            pairs = planned.len(),
            "pairing lock taken by another instance mid-round: this chunk's tickets stay queued"
        );
        return Ok(Vec::new());
    }
    let claims: Vec<PairClaim> = planned
        .iter()
        .map(|p| PairClaim {
            a: p.x.id.clone(),
            b: p.o.id.clone(),
            match_id: p.row.id.to_string(),
        })
        .collect();
    let started = std::time::Instant::now();
    let claimed = ctx.broker.claim_pairs(&ladder.id, &claims).await?;
    let claim_ms = started.elapsed().as_secs_f64() * 1000.0;
    // In place: when every pair was claimed, as nearly always, nothing moves.
    let mut claimed = claimed.into_iter();
    planned.retain(|_| claimed.next().unwrap_or(false));
    let planned = Arc::new(planned);
    if planned.is_empty() {
        return Ok(Vec::new());
    }
    let written = std::time::Instant::now();
    let outcome = match write(ctx, &planned, now).await {
        Ok(outcome) => outcome,
        Err(err) => {
            let all: Vec<String> = planned
                .iter()
                .flat_map(|p| [p.x.id.clone(), p.o.id.clone()])
                .collect();
            ctx.broker.release_tickets(&ladder.id, &all).await?;
            return Err(err);
        }
    };
    let write_ms = written.elapsed().as_secs_f64() * 1000.0;
    // The committed matches are announced first: a failure to put the
    // left-out tickets back must not keep their players from hearing of them.
    let announced = std::time::Instant::now();
    announce(ctx, ladder, &planned, &outcome.made).await;
    let announce_ms = announced.elapsed().as_secs_f64() * 1000.0;
    if !outcome.requeue.is_empty() {
        ctx.broker
            .release_tickets(&ladder.id, &outcome.requeue)
            .await?;
    }
    if !outcome.busy.is_empty() {
        let busy: Vec<&Ticket> = outcome
            .busy
            .iter()
            .flat_map(|&i| [&planned[i].x, &planned[i].o])
            .collect();
        cancel_busy(ctx, &busy).await?;
    }
    for &i in &outcome.gone {
        tracing::warn!(
            ticket.x = %planned[i].x.id, ticket.o = %planned[i].o.id,
            "pair left out: a ticket is no longer queued in the database"
        );
    }
    tracing::debug!(
        ladder = %ladder.id,
        matches = outcome.made.len(),
        claim_ms,
        write_ms,
        announce_ms,
        "chunk of ranked matches made"
    );
    Ok(outcome
        .made
        .iter()
        .map(|&i| planned[i].row.id.to_string())
        .collect())
}

/// Writes a chunk's claimed pairs in one transaction, leaving out the
/// pairs it must not make; tries again when a concurrent pairing wins a race
/// for one of its players.
///
/// The first try assumes every pair can be made, as nearly always: it skips
/// reading which tickets are still queued and which players are seated, and
/// lets the writes refuse otherwise (the unique index on unfinished ranked
/// seats, the count of tickets marked for their players). A
/// refusal rolls it back, and the careful tries follow, which read both and
/// leave such pairs out (a deleted player's tickets are gone with them).
async fn write(ctx: &Context, planned: &Arc<Vec<Planned>>, now: Millis) -> Result<Outcome> {
    let all = Arc::clone(planned);
    match ctx
        .db
        .write(move |conn| write_round(conn, &all, now, Check::Assume))
        .await
    {
        Err(Error::Conflict {
            code: ConflictCode::InActiveMatch | ConflictCode::TicketGone,
            ..
        }) => {
            tracing::debug!("a chunk's pair cannot be made as claimed; writing it with checks");
        }
        other => return other,
    }
    let mut attempt = 0;
    loop {
        attempt += 1;
        let all = Arc::clone(planned);
        match ctx
            .db
            .write(move |conn| write_round(conn, &all, now, Check::Read))
            .await
        {
            Err(Error::Conflict {
                code: ConflictCode::InActiveMatch,
                ..
            }) if attempt < WRITE_ATTEMPTS => {
                tracing::info!(
                    attempt,
                    "a round's player was seated elsewhere meanwhile; writing again"
                );
            }
            other => return other,
        }
    }
}

/// Whether a chunk's transaction reads first which pairs can be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Every pair, or a conflict that rolls the transaction back.
    Assume,
    /// Reads which tickets are queued and which players seated, and leaves
    /// out the pairs that cannot be made.
    Read,
}

/// The round's transaction: which pairs can be made, then their matches,
/// seats and tickets, each in a few multi-row statements. No rating row is
/// written: who last sat X and whom one last played are read from the seats
/// when a player queues ([`match_store::last_ranked`]).
fn write_round(
    conn: &mut crate::store::DbConnection,
    planned: &[Planned],
    now: Millis,
    check: Check,
) -> Result<Outcome> {
    // Every statement below looks up the chunk's own rows by key; planned
    // by cost, a chunk read all players and tickets (see `key_probes`).
    key_probes::key_probes_only(conn)?;
    let out = match check {
        Check::Assume => Outcome {
            made: (0..planned.len()).collect(),
            ..Outcome::default()
        },
        Check::Read => makeable(conn, planned)?,
    };
    let rows: Vec<MatchRow> = out.made.iter().map(|&i| planned[i].row.clone()).collect();
    let seated: Vec<Seated<'_>> = out
        .made
        .iter()
        .zip(&rows)
        .flat_map(|(&i, row)| {
            [&planned[i].x, &planned[i].o].map(|t| Seated {
                ticket: t.id.as_str(),
                player: t.player_id.as_str(),
                match_id: row.id.as_str(),
            })
        })
        .collect();
    paired::insert_with_tickets(conn, &rows, &seated, now).map_err(|e| {
        if e.is_unique_violation() {
            Error::conflict(
                ConflictCode::InActiveMatch,
                "a player is in a ranked match",
                None,
            )
        } else if e.is_foreign_key_violation() {
            // A ticket left the queue, or its player was deleted (and the
            // ticket with them).
            Error::conflict(ConflictCode::TicketGone, "a ticket left the queue", None)
        } else {
            e.into()
        }
    })?;
    Ok(out)
}

/// Which of a chunk's pairs can be made: both tickets still queued for the
/// players the match seats (as the tickets are then marked), and neither
/// player seated in an unfinished ranked match (nor twice in it).
fn makeable(conn: &mut crate::store::DbConnection, planned: &[Planned]) -> Result<Outcome> {
    let players: Vec<&str> = planned
        .iter()
        .flat_map(|p| [p.x.player_id.as_str(), p.o.player_id.as_str()])
        .collect();
    let mut seated: HashSet<String> = match_store::active_ranked_among(conn, &players)?
        .into_iter()
        .collect();
    let ids: Vec<&str> = planned
        .iter()
        .flat_map(|p| [p.x.id.as_str(), p.o.id.as_str()])
        .collect();
    let queued: HashMap<String, String> = tickets::queued_among(conn, &ids)?.into_iter().collect();
    let is_queued = |t: &Ticket| queued.get(&t.id) == Some(&t.player_id);
    let mut out = Outcome::default();
    for (i, p) in planned.iter().enumerate() {
        let pair = [&p.x, &p.o];
        if !pair.iter().all(|t| is_queued(t)) {
            out.gone.push(i);
            out.requeue
                .extend(pair.iter().filter(|t| is_queued(t)).map(|t| t.id.clone()));
        } else if pair.iter().any(|t| seated.contains(&t.player_id)) {
            out.busy.push(i);
            out.requeue.extend(pair.iter().map(|t| t.id.clone()));
        } else {
            // Seated from now on: a second pair of the same player in this
            // round is left out like any other.
            seated.extend(pair.iter().map(|t| t.player_id.clone()));
            out.made.push(i);
        }
    }
    Ok(out)
}

/// Counts the matches made and tells both players of each, in one pipeline.
/// A new match's state is not published: nobody can have subscribed to a
/// match before it was committed, and a stream opened since reads it whole.
async fn announce(ctx: &Context, ladder: &LadderConfig, planned: &[Planned], made: &[usize]) {
    let mut messages = Vec::with_capacity(2 * made.len());
    for &i in made {
        let p = &planned[i];
        let match_id = p.row.id.to_string();
        tracing::debug!(match.id = %match_id, ladder = %ladder.id, "ranked match made");
        ctx.metrics.count("ranked_matches");
        for (ticket, seat) in [(&p.x, Seat::X), (&p.o, Seat::O)] {
            messages.extend(events::player_message(
                &ticket.player_id,
                "match_found",
                &serde_json::json!({
                    "match_id": match_id,
                    "ladder": ladder.id,
                    "seat": seat_str(seat),
                    "ticket_id": ticket.id,
                }),
            ));
        }
    }
    events::notify_players(ctx, &messages).await;
}

fn ranked_row(ladder: &LadderConfig, x: &str, o: &str, now: Millis) -> Result<MatchRow> {
    let depth = Depth::new(ladder.depth).map_err(|_| Error::Internal("ladder depth".into()))?;
    create::new_row(
        NewMatch {
            mode: Mode::Ranked,
            ladder: Some(ladder.id.clone()),
            rated: ladder.rated,
            depth,
            time_control: ladder.time_control,
            x: SeatSpec::player(x),
            o: SeatSpec::player(o),
            cpu_level: None,
            room_code: None,
        },
        now,
    )
}

/// Cancels, as `in_active_match`, the tickets among `tickets` whose players
/// sit in an unfinished ranked match (their pairing was refused).
async fn cancel_busy(ctx: &Context, tickets: &[&Ticket]) -> Result<()> {
    let now = ctx.time.now_ms();
    for ticket in tickets {
        let pid = ticket.player_id.clone();
        let busy = ctx
            .db
            .run(move |conn| match_store::active_ranked(conn, &pid))
            .await?;
        let Some(match_id) = busy else { continue };
        if ctx.broker.cancel(&ticket.id, "in_active_match").await? == Cancelled::Cancelled {
            let tid = ticket.id.clone();
            ctx.db
                .run(move |conn| tickets::mark_cancelled(conn, &tid, "in_active_match", now))
                .await?;
            tracing::warn!(
                ticket.id = %ticket.id, player.id = %ticket.player_id, match.id = %match_id,
                "ticket of a player in a ranked match cancelled"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    // A failed unwrap in a test is a failed test.
    #![allow(clippy::unwrap_used)]

    use diesel::connection::SimpleConnection;

    use super::*;
    use crate::broker::TicketStatus;
    use crate::config::Config;
    use crate::store::scratch_pg::{with_scratch_sqlite, with_scratch_url, xact_seq_scans};
    use crate::store::{DbConnection, connect_pg, migrate, write_transaction};

    fn queued(n: usize, ladder: &str) -> Ticket {
        Ticket {
            id: format!("t{n}"),
            player_id: format!("p{n}"),
            ladder: ladder.to_owned(),
            rating: 1500.0,
            created_at: 1,
            seen_at: 1,
            status: TicketStatus::Queued,
            match_id: None,
            reason: None,
            last_x_at: None,
            last_opponent: None,
        }
    }

    /// Runs `test` on a migrated scratch SQLite database, then on a
    /// scratch PostgreSQL database when `TEST_DATABASE_URL` is set.
    fn on_both_backends(test: impl Fn(&mut DbConnection)) {
        with_scratch_sqlite(|conn| {
            migrate(conn).unwrap();
            test(conn);
        });
        with_scratch_url("chunk_reads", |url| {
            let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
            migrate(&mut conn).unwrap();
            test(&mut conn);
        });
    }

    /// A chunk that reads first which pairs it can make (the write tried
    /// again after a conflict) leaves out a pair whose ticket is queued for
    /// another player than the broker's ticket names, and puts its partner
    /// back: the other pairs are made, where the tickets' update would
    /// otherwise refuse the whole chunk.
    #[test]
    fn a_read_chunk_leaves_out_a_ticket_queued_for_another_player() {
        on_both_backends(|conn| {
            let config = Config::from_lookup(|_| None).unwrap();
            let ladder = config.ladders[0].clone();
            conn.batch_execute(&format!(
                "INSERT INTO players (id, username, username_key, password_hash, created_at)
                     VALUES ('p1', 'u1', 'u1', 'h', 1), ('p2', 'u2', 'u2', 'h', 1),
                            ('p3', 'u3', 'u3', 'h', 1), ('p4', 'u4', 'u4', 'h', 1),
                            ('p9', 'u9', 'u9', 'h', 1);
                 INSERT INTO tickets (id, player_id, ladder, rating, status, created_at, updated_at)
                     VALUES ('t1', 'p1', '{l}', 1500, 'queued', 1, 1),
                            ('t2', 'p2', '{l}', 1500, 'queued', 1, 1),
                            ('t3', 'p9', '{l}', 1500, 'queued', 1, 1),
                            ('t4', 'p4', '{l}', 1500, 'queued', 1, 1);",
                l = ladder.id
            ))
            .unwrap();
            let planned: Vec<Planned> = [(1, 2), (3, 4)]
                .into_iter()
                .map(|(a, b)| {
                    let (x, o) = (queued(a, &ladder.id), queued(b, &ladder.id));
                    Planned {
                        row: ranked_row(&ladder, &x.player_id, &o.player_id, 5).unwrap(),
                        x,
                        o,
                    }
                })
                .collect();
            let outcome =
                write_transaction(conn, |conn| write_round(conn, &planned, 5, Check::Read))
                    .unwrap();
            assert_eq!(outcome.made, [0]);
            assert_eq!(outcome.gone, [1]);
            assert_eq!(outcome.requeue, ["t4"]);
            let t3 = tickets::get(conn, "t3").unwrap().unwrap();
            assert_eq!(
                t3.status, "queued",
                "the other player's ticket is untouched"
            );
            assert_eq!(tickets::get(conn, "t1").unwrap().unwrap().status, "matched");
        });
    }

    /// Both kinds of a chunk's write (assuming every pair can be made, and
    /// reading first which can) look the chunk's players, tickets and seats
    /// up by key in tables ten times its size, on PostgreSQL (see
    /// `store::key_probes`). Runs when `TEST_DATABASE_URL` is set.
    #[test]
    fn a_chunks_write_reads_no_table_whole() {
        with_scratch_url("chunk_writes", |url| {
            let config = Config::from_lookup(|_| None).unwrap();
            let ladder = config.ladders[0].clone();
            let mut conn = DbConnection::Pg(connect_pg(url).unwrap());
            migrate(&mut conn).unwrap();
            conn.batch_execute(&format!(
                "INSERT INTO players (id, username, username_key, password_hash, created_at)
                     SELECT 'p' || g, 'u' || g, 'u' || g, 'h', 1 FROM generate_series(1, 5000) g;
                 INSERT INTO tickets (id, player_id, ladder, rating, status, created_at, updated_at)
                     SELECT 't' || g, 'p' || g, '{}', 1500, 'queued', 1, 1
                     FROM generate_series(1, 5000) g;
                 ANALYZE players; ANALYZE tickets; ANALYZE match_players;",
                ladder.id
            ))
            .unwrap();
            for (check, first) in [(Check::Assume, 1), (Check::Read, 1001)] {
                let planned: Vec<Planned> = (0..250)
                    .map(|i| {
                        let (x, o) = (
                            queued(first + 2 * i, &ladder.id),
                            queued(first + 2 * i + 1, &ladder.id),
                        );
                        Planned {
                            row: ranked_row(&ladder, &x.player_id, &o.player_id, 5).unwrap(),
                            x,
                            o,
                        }
                    })
                    .collect();
                let outcome = write_transaction(&mut conn, |conn| -> Result<Outcome> {
                    let tables = ["players", "tickets", "match_players"];
                    let before: Vec<i64> = tables.iter().map(|t| xact_seq_scans(conn, t)).collect();
                    let outcome = write_round(conn, &planned, 5, check)?;
                    let after: Vec<i64> = tables.iter().map(|t| xact_seq_scans(conn, t)).collect();
                    assert_eq!(
                        before, after,
                        "{check:?}: a table of {tables:?} was read whole"
                    );
                    Ok(outcome)
                })
                .unwrap();
                assert_eq!(outcome.made.len(), 250, "{check:?}");
            }
        });
    }
}
