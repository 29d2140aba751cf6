//! Queries on `refresh_tokens`. Only SHA-256 hashes of tokens are stored.

use diesel::prelude::*;

use super::schema::refresh_tokens;
use super::{DbConnection, StoreError};

/// A stored refresh token.
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = refresh_tokens)]
pub struct RefreshTokenRow {
    /// Opaque id.
    pub id: String,
    /// Owner.
    pub player_id: String,
    /// The login session this token belongs to; all rotations share it.
    pub family_id: String,
    /// SHA-256 of the token, hex.
    pub token_hash: String,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub expires_at: i64,
    /// When it was exchanged for a new pair; a second use is a reuse.
    pub used_at: Option<i64>,
    /// When its family was revoked.
    pub revoked_at: Option<i64>,
}

/// A refresh token to insert.
#[derive(Debug, Insertable)]
#[diesel(table_name = refresh_tokens)]
pub struct NewRefreshToken<'a> {
    /// Opaque id.
    pub id: &'a str,
    /// Owner.
    pub player_id: &'a str,
    /// Session family.
    pub family_id: &'a str,
    /// SHA-256 of the token, hex.
    pub token_hash: &'a str,
    /// Epoch ms.
    pub created_at: i64,
    /// Epoch ms.
    pub expires_at: i64,
}

/// Inserts a refresh token.
///
/// # Errors
/// Database errors.
pub fn insert(conn: &mut DbConnection, token: &NewRefreshToken<'_>) -> Result<(), StoreError> {
    diesel::insert_into(refresh_tokens::table)
        .values(token)
        .execute(conn)?;
    Ok(())
}

/// The token with this hash.
///
/// # Errors
/// Database errors.
pub fn by_hash(conn: &mut DbConnection, hash: &str) -> Result<Option<RefreshTokenRow>, StoreError> {
    Ok(refresh_tokens::table
        .filter(refresh_tokens::token_hash.eq(hash))
        .select(RefreshTokenRow::as_select())
        .first(conn)
        .optional()?)
}

/// Marks the token spent if it is still fresh. Returns false when another
/// request spent or revoked it first: the single UPDATE is the arbiter, so two
/// concurrent refreshes with one token cannot both succeed.
///
/// # Errors
/// Database errors.
pub fn spend(conn: &mut DbConnection, id: &str, now: i64) -> Result<bool, StoreError> {
    let updated = diesel::update(
        refresh_tokens::table
            .find(id)
            .filter(refresh_tokens::used_at.is_null())
            .filter(refresh_tokens::revoked_at.is_null()),
    )
    .set(refresh_tokens::used_at.eq(now))
    .execute(conn)?;
    Ok(updated == 1)
}

/// Whether the family (a login session) was revoked: logged out, or a spent
/// token of it was reused.
///
/// # Errors
/// Database errors.
pub fn family_revoked(conn: &mut DbConnection, family_id: &str) -> Result<bool, StoreError> {
    Ok(diesel::select(diesel::dsl::exists(
        refresh_tokens::table
            .filter(refresh_tokens::family_id.eq(family_id))
            .filter(refresh_tokens::revoked_at.is_not_null()),
    ))
    .get_result(conn)?)
}

/// Revokes every token of a family.
///
/// # Errors
/// Database errors.
pub fn revoke_family(
    conn: &mut DbConnection,
    family_id: &str,
    now: i64,
) -> Result<usize, StoreError> {
    Ok(diesel::update(
        refresh_tokens::table
            .filter(refresh_tokens::family_id.eq(family_id))
            .filter(refresh_tokens::revoked_at.is_null()),
    )
    .set(refresh_tokens::revoked_at.eq(now))
    .execute(conn)?)
}

/// Deletes up to `limit` refresh tokens that expired before `now` (spent,
/// revoked or not: none of them can be exchanged any more); returns how many.
///
/// # Errors
/// Database errors.
pub fn delete_expired(conn: &mut DbConnection, now: i64, limit: i64) -> Result<usize, StoreError> {
    let ids: Vec<String> = refresh_tokens::table
        .filter(refresh_tokens::expires_at.lt(now))
        .select(refresh_tokens::id)
        .limit(limit)
        .load(conn)?;
    if ids.is_empty() {
        return Ok(0);
    }
    Ok(
        diesel::delete(refresh_tokens::table.filter(refresh_tokens::id.eq_any(&ids)))
            .execute(conn)?,
    )
}
