//! Statements diesel would parse and plan anew on every execution, marked as
//! safe for its prepared-statement cache.
//!
//! Diesel keeps named prepared statements on PostgreSQL only for queries it
//! can prove always produce the same SQL: never for an `UPDATE`, an `INSERT`
//! writing `DEFAULT` for a missing value, or a query holding an SQL literal.
//! The move writes one of each, so PostgreSQL parsed and planned the 32-column
//! `UPDATE` of `matches` on every move (pgbench, with `-M prepared`, does
//! not). A statement wrapped in [`Cached`] is cached by its SQL text and bind
//! types, so it must have few shapes: one per combination of `DEFAULT`s.
//!
//! Only on diesel's load path (`load`, `get_result`: a `SELECT`, or a write
//! with `RETURNING`). Its execute path hands the statement cache a
//! reference, and diesel's `QueryFragment` for `&T` forwards only
//! `walk_ast`, so the cache's safety check walks the wrapped statement and
//! finds it unsafe: an `execute`d `Cached` write is still parsed and planned
//! every time (seen as `execute <unnamed>` in the PostgreSQL log).

use diesel::backend::Backend;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::{QueryResult, RunQueryDsl};

/// A statement whose SQL has a fixed, small set of shapes, for diesel's
/// prepared-statement cache (see the module's comment).
#[derive(Debug, Clone, Copy)]
pub struct Cached<Q>(pub Q);

impl<Q: QueryFragment<DB>, DB: Backend> QueryFragment<DB> for Cached<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &DB) -> QueryResult<bool> {
        Ok(true)
    }
}

/// Cached by its SQL text, not by a type id: the wrapped statement's SQL
/// may take several shapes.
impl<Q> QueryId for Cached<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Cached<Q> {
    type SqlType = Q::SqlType;
}

impl<Q, Conn> RunQueryDsl<Conn> for Cached<Q> {}
