//! Batch statements that look their rows up by key, whatever the size of
//! the tables they look in.
//!
//! A pairing chunk marks 2,500 tickets by id. With PostgreSQL's default
//! costs (`random_page_cost = 4`, an index probe priced as a read from
//! disk) the planner judged 2,500 probes of `tickets_pkey` dearer than
//! reading the whole table: each chunk of a 100,000-ticket round scanned all
//! 100,000 tickets into a hash (59 ms against 25 ms by key), forty chunks
//! over, and the cost grows with the table (a day's tickets), not with the
//! chunk. The chunk's check of its players read all of them the same way
//! (16 ms against 3 ms) until the marked tickets took its place
//! (`store::paired`); a chunk that reads first which pairs it can make
//! probes `tickets` and `match_players` the same way.

use diesel::connection::SimpleConnection;

use super::{DbConnection, StoreError};

/// For the rest of the current transaction, has PostgreSQL plan by key
/// probes (index scans in nested loops) wherever an index serves, instead
/// of sequential scans, hash joins and merge joins. Only for transactions
/// whose every statement looks its rows up by a key; nothing on SQLite,
/// whose planner takes the key for `IN` lists of any length. Tested where a
/// pairing chunk calls it (`service::matchmaking::batch`).
///
/// # Errors
/// Database errors.
pub fn key_probes_only(conn: &mut DbConnection) -> Result<(), StoreError> {
    if let DbConnection::Pg(pg) = conn {
        // `SET LOCAL` ends with the transaction: the pooled connection
        // goes back with the planner's defaults.
        pg.batch_execute(
            "SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off; \
             SET LOCAL enable_mergejoin = off",
        )?;
    }
    Ok(())
}
