//! Accounts: register, log in, rotate refresh tokens, log out, and resolve an
//! access token to the player behind it.
//!
//! Over 400 lines: registration, login, refresh and logout share the token and
//! rate-limit handling; the rest is in `sessions.rs`, `tokens.rs` and
//! `passwords.rs`.

use serde::Serialize;

use crate::ids;
use crate::store::{self, DbConnection, StoreError, players, refresh_tokens};

use super::tokens::{Claims, new_refresh_token, refresh_token_hash};
use super::{Context, Error, FieldError, Result, limits, sessions};

/// Longest login name considered when keying the per-username rate limit.
const MAX_KEYED_NAME: usize = 64;

/// A valid username: 3..=24 of `[A-Za-z0-9_-]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Username(String);

impl Username {
    /// Checks the shape of a username.
    ///
    /// # Errors
    /// A field error saying what is wrong.
    pub fn parse(text: &str) -> Result<Username, FieldError> {
        let len = text.chars().count();
        if !(3..=24).contains(&len) {
            return Err(FieldError::new(
                "username",
                "must be 3 to 24 characters long",
            ));
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return Err(FieldError::new(
                "username",
                "may contain only letters A-Z and a-z, digits, '_' and '-'",
            ));
        }
        Ok(Username(text.to_owned()))
    }

    /// The name as typed.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A valid new password: 8..=128 characters.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(..)")
    }
}

impl Password {
    /// Checks the length of a new password (counted in characters, not bytes).
    ///
    /// # Errors
    /// A field error saying what is wrong.
    pub fn parse(text: &str) -> Result<Password, FieldError> {
        let len = text.chars().count();
        if len < 8 {
            return Err(FieldError::new(
                "password",
                "must be at least 8 characters long",
            ));
        }
        if len > 128 {
            return Err(FieldError::new(
                "password",
                "must be at most 128 characters long",
            ));
        }
        Ok(Password(text.to_owned()))
    }
}

/// A player's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Plays.
    Player,
    /// Plays and administers.
    Admin,
}

impl Role {
    /// The stored form.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Player => "player",
            Role::Admin => "admin",
        }
    }

    fn from_stored(text: &str) -> Role {
        if text == "admin" {
            Role::Admin
        } else {
            Role::Player
        }
    }
}

/// A player as the account endpoints show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// Opaque id.
    pub id: String,
    /// Display name.
    pub username: String,
    /// Role.
    pub role: Role,
    /// Epoch ms.
    pub created_at: i64,
    /// A bot account.
    pub bot: bool,
    /// Whether challenges from bots reach this player.
    pub accept_bot_challenges: bool,
}

impl From<players::PlayerRow> for Player {
    fn from(row: players::PlayerRow) -> Self {
        Player {
            bot: row.bot,
            accept_bot_challenges: row.accept_bot_challenges,
            role: Role::from_stored(&row.role),
            id: row.id,
            username: row.username,
            created_at: row.created_at,
        }
    }
}

/// A logged-in session: the player and a token pair.
#[derive(Debug, Clone)]
pub struct Session {
    /// Who.
    pub player: Player,
    /// Short-lived bearer token.
    pub access_token: String,
    /// Long-lived, single-use token for `refresh`.
    pub refresh_token: String,
    /// Seconds until the access token expires.
    pub expires_in: u64,
}

fn wall_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Stores a new refresh token in `family` and returns it.
fn insert_refresh_token(
    conn: &mut DbConnection,
    ctx_refresh_ttl_ms: i64,
    player_id: &str,
    family_id: &str,
) -> Result<String, StoreError> {
    let token = new_refresh_token();
    let now = wall_ms();
    refresh_tokens::insert(
        conn,
        &refresh_tokens::NewRefreshToken {
            id: &ids::record_id(),
            player_id,
            family_id,
            token_hash: &refresh_token_hash(&token),
            created_at: now,
            expires_at: now.saturating_add(ctx_refresh_ttl_ms),
        },
    )?;
    Ok(token)
}

fn session(
    ctx: &Context,
    player: Player,
    refresh_token: String,
    family_id: &str,
) -> Result<Session> {
    Ok(Session {
        access_token: ctx
            .tokens
            .issue(&player.id, player.role.as_str(), family_id)?,
        expires_in: ctx.tokens.access_ttl().as_secs(),
        refresh_token,
        player,
    })
}

fn refresh_ttl_ms(ctx: &Context) -> i64 {
    i64::try_from(ctx.config.refresh_token_ttl.as_millis()).unwrap_or(i64::MAX)
}

/// Creates an account and logs it in.
///
/// # Errors
/// `RateLimited`, `UsernameTaken`, or store failures.
#[tracing::instrument(skip(ctx, password), fields(player.username = %username.as_str()))]
pub async fn register(
    ctx: &Context,
    username: Username,
    password: Password,
    client: &str,
) -> Result<Session> {
    limits::check(
        ctx,
        &format!("register:addr:{client}"),
        ctx.config.rate_limits.register_per_address,
    )
    .await?;
    let hash = ctx.passwords.hash(password.0).await?;
    let row = players::PlayerRow {
        id: ids::player_id(),
        username_key: username.0.to_ascii_lowercase(),
        username: username.0,
        password_hash: hash,
        role: Role::Player.as_str().to_owned(),
        bot: false,
        accept_bot_challenges: true,
        created_at: ctx.time.now_ms(),
    };
    let ttl = refresh_ttl_ms(ctx);
    let stored = row.clone();
    let family = ids::record_id();
    let family_id = family.clone();
    let refresh = ctx
        .db
        .write(move |conn| {
            players::insert(
                conn,
                &players::NewPlayer {
                    id: &stored.id,
                    username: &stored.username,
                    username_key: &stored.username_key,
                    password_hash: &stored.password_hash,
                    role: &stored.role,
                    created_at: stored.created_at,
                },
            )?;
            insert_refresh_token(conn, ttl, &stored.id, &family_id)
        })
        .await
        .map_err(|e: StoreError| {
            if e.is_unique_violation() {
                Error::UsernameTaken
            } else {
                e.into()
            }
        })?;
    tracing::info!(player.id = %row.id, "player registered");
    session(ctx, row.into(), refresh, &family)
}

/// Logs in with a username and password. A wrong password and an unknown
/// name give the same answer in about the same time.
///
/// Guessing is slowed without letting a stranger lock the owner out:
/// - every attempt counts against the client address (`login_per_address`);
/// - failures count per (name, address): past `login_per_username` that
///   address waits for the window, whatever password it sends;
/// - failures also count per name from all addresses: past the much higher
///   `login_ceiling_per_username`, only addresses with no failure for that
///   name in the window may try — so the owner, from their own address,
///   still logs in while guesses from anywhere else are refused.
///
/// # Errors
/// `RateLimited`, `InvalidCredentials`, or store failures.
#[tracing::instrument(skip(ctx, username, password))]
pub async fn login(
    ctx: &Context,
    username: String,
    password: String,
    client: &str,
) -> Result<Session> {
    let limits = ctx.config.rate_limits;
    limits::check(
        ctx,
        &format!("login:addr:{client}"),
        limits.login_per_address,
    )
    .await?;
    let key: String = username
        .to_ascii_lowercase()
        .chars()
        .take(MAX_KEYED_NAME)
        .collect();
    let pair_key = format!("login:fail:{key}:{client}");
    let name_key = format!("login:fail:{key}");
    let (pair_failures, pair_left) = limits::count(ctx, &pair_key).await?;
    if pair_failures >= limits.login_per_username.limit {
        return Err(limits::limited(pair_left));
    }
    let (name_failures, name_left) = limits::count(ctx, &name_key).await?;
    if name_failures >= limits.login_ceiling_per_username.limit && pair_failures > 0 {
        return Err(limits::limited(name_left));
    }

    let lookup = username.clone();
    let found = ctx
        .db
        .run(move |conn| players::by_username(conn, &lookup))
        .await?;
    let plausible = Password::parse(&password).is_ok() && Username::parse(&username).is_ok();
    let ok = ctx
        .passwords
        .verify(password, found.as_ref().map(|p| p.password_hash.clone()))
        .await?;
    let Some(row) = found.filter(|_| ok && plausible) else {
        limits::record(ctx, &pair_key, limits.login_per_username).await?;
        limits::record(ctx, &name_key, limits.login_ceiling_per_username).await?;
        return Err(Error::InvalidCredentials);
    };
    let ttl = refresh_ttl_ms(ctx);
    let player_id = row.id.clone();
    let family = ids::record_id();
    let family_id = family.clone();
    let refresh = ctx
        .db
        .write(move |conn| insert_refresh_token(conn, ttl, &player_id, &family_id))
        .await?;
    tracing::info!(player.id = %row.id, "player logged in");
    session(ctx, row.into(), refresh, &family)
}

enum Rotation {
    /// The player, the new refresh token, its family.
    Rotated(players::PlayerRow, String, String),
    Refused(&'static str),
    /// A reused token revoked this family.
    Revoked(String),
}

/// Exchanges a refresh token for a new pair. Each refresh token works once;
/// presenting a spent one again revokes its whole family (a stolen token and
/// its legitimate owner cannot both keep the session).
///
/// # Errors
/// `Unauthorized` for an unknown, expired, revoked or reused token.
#[tracing::instrument(skip_all)]
pub async fn refresh(ctx: &Context, token: String) -> Result<Session> {
    let hash = refresh_token_hash(&token);
    let ttl = refresh_ttl_ms(ctx);
    let rotation = ctx
        .db
        .write(move |conn| -> Result<Rotation, StoreError> {
            let now = wall_ms();
            let Some(row) = refresh_tokens::by_hash(conn, &hash)? else {
                return Ok(Rotation::Refused("the refresh token is not valid"));
            };
            if row.revoked_at.is_some() {
                return Ok(Rotation::Refused("the refresh token was revoked"));
            }
            if row.used_at.is_some() || !refresh_tokens::spend(conn, &row.id, now)? {
                refresh_tokens::revoke_family(conn, &row.family_id, now)?;
                tracing::warn!(player.id = %row.player_id, "refresh token reused; session revoked");
                return Ok(Rotation::Revoked(row.family_id));
            }
            if row.expires_at <= now {
                return Ok(Rotation::Refused("the refresh token has expired"));
            }
            let Some(player) = players::by_id(conn, &row.player_id)? else {
                return Ok(Rotation::Refused("the refresh token is not valid"));
            };
            let next = insert_refresh_token(conn, ttl, &player.id, &row.family_id)?;
            Ok(Rotation::Rotated(player, next, row.family_id))
        })
        .await?;
    match rotation {
        Rotation::Rotated(player, next, family) => session(ctx, player.into(), next, &family),
        Rotation::Refused(why) => Err(Error::Unauthorized(why)),
        Rotation::Revoked(family) => {
            sessions::announce_revoked(ctx, &family).await;
            Err(Error::Unauthorized(
                "the refresh token was already used; the session is revoked",
            ))
        }
    }
}

/// Ends the session of a refresh token (its whole family). Unknown tokens are
/// ignored, so logging out twice is harmless.
///
/// # Errors
/// Store failures.
#[tracing::instrument(skip_all)]
pub async fn logout(ctx: &Context, token: String) -> Result<()> {
    let hash = refresh_token_hash(&token);
    let family = ctx
        .db
        .write(move |conn| -> Result<Option<String>, StoreError> {
            let Some(row) = refresh_tokens::by_hash(conn, &hash)? else {
                return Ok(None);
            };
            refresh_tokens::revoke_family(conn, &row.family_id, wall_ms())?;
            Ok(Some(row.family_id))
        })
        .await?;
    // Open event streams of the session end now, on every instance.
    if let Some(family) = family {
        sessions::announce_revoked(ctx, &family).await;
    }
    Ok(())
}

/// The player behind an access token, with their current role. A token of a
/// deleted player is refused.
///
/// # Errors
/// `Unauthorized` for a bad token or a player who no longer exists.
pub async fn authenticate(ctx: &Context, access_token: &str) -> Result<Player> {
    authenticate_session(ctx, access_token)
        .await
        .map(|(player, _)| player)
}

/// The player behind an access token and the token's claims (its session
/// and expiry), for event streams that must end with either.
///
/// # Errors
/// `Unauthorized` for a bad token or a player who no longer exists.
pub async fn authenticate_session(ctx: &Context, access_token: &str) -> Result<(Player, Claims)> {
    let claims = ctx.tokens.verify(access_token)?;
    let sub = claims.sub.clone();
    let found = ctx.db.read(move |conn| players::by_id(conn, &sub)).await?;
    let player = found.map(Player::from).ok_or(Error::Unauthorized(
        "the player of this token no longer exists",
    ))?;
    Ok((player, claims))
}

/// The player id an access token names, the token checked but the player
/// not looked up: the caller confirms the player some other way, or with
/// [`confirm`].
///
/// # Errors
/// `Unauthorized` for a bad token.
pub fn token_subject(ctx: &Context, access_token: &str) -> Result<String> {
    Ok(ctx.tokens.verify(access_token)?.sub)
}

/// Checks that the player of a token taken by [`token_subject`] still exists.
///
/// # Errors
/// `Unauthorized` when they do not, as [`authenticate`]; store failures.
pub async fn confirm(ctx: &Context, id: &str) -> Result<()> {
    let id = id.to_owned();
    let found = ctx.db.read(move |conn| players::exists(conn, &id)).await?;
    if found {
        Ok(())
    } else {
        Err(Error::Unauthorized(
            "the player of this token no longer exists",
        ))
    }
}

/// The player with this id.
///
/// # Errors
/// `NotFound`, or store failures.
pub async fn player(ctx: &Context, id: String) -> Result<Player> {
    ctx.db
        .run(move |conn| players::by_id(conn, &id))
        .await?
        .map(Player::from)
        .ok_or(Error::NotFound("player"))
}

/// Sets a player's role (the `uttt admin promote|demote` commands).
///
/// # Errors
/// `NotFound` when no player has that name.
pub fn set_role(conn: &mut DbConnection, username: &str, role: Role) -> Result<()> {
    if store::players::set_role(conn, username, role.as_str())? {
        Ok(())
    } else {
        Err(Error::NotFound("player"))
    }
}

/// The name views show for a player whose account is gone.
pub const DELETED_USERNAME: &str = "(deleted)";

/// A player as lists and views name them (tournaments, match summaries).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema, PartialEq, Eq)]
pub struct PlayerRef {
    /// Id.
    pub id: String,
    /// Name.
    pub username: String,
    /// Whether the player is a bot account.
    pub bot: bool,
}

impl PlayerRef {
    /// Player `id` as `names` (ids to names and bot flags, as
    /// `store::matches::names_and_bots` reads them) has them; `(deleted)`
    /// once the account is gone.
    pub fn of(id: &str, names: &std::collections::HashMap<String, (String, bool)>) -> PlayerRef {
        let (username, bot) = names
            .get(id)
            .cloned()
            .unwrap_or_else(|| (DELETED_USERNAME.to_owned(), false));
        PlayerRef {
            id: id.to_owned(),
            username,
            bot,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_are_three_to_twenty_four_safe_characters() {
        assert!(Username::parse("abc").is_ok());
        assert!(Username::parse("A_b-9").is_ok());
        assert!(Username::parse(&"x".repeat(24)).is_ok());
        assert!(Username::parse("ab").is_err());
        assert!(Username::parse(&"x".repeat(25)).is_err());
        assert!(Username::parse("bad name").is_err());
        assert!(Username::parse("émile").is_err());
        assert!(Username::parse("a.b").is_err());
    }

    #[test]
    fn passwords_are_counted_in_characters() {
        assert!(Password::parse("12345678").is_ok());
        assert!(Password::parse("1234567").is_err());
        assert!(Password::parse(&"é".repeat(128)).is_ok());
        assert!(Password::parse(&"é".repeat(129)).is_err());
    }
}
