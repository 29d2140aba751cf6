//! Access tokens (HS256 JWTs carrying `sub`, `role`, `sid`, `iss`, `aud`,
//! `exp`, `iat`) and refresh tokens (random, stored only as SHA-256 hashes).
//!
//! An access token is accepted only with this server's issuer and audience,
//! a lifetime no longer than the configured one, and an issue time not in
//! the future; `sid` names the session (the refresh-token family) it was
//! issued for, so event streams can end when that session is revoked.
//!
//! Token lifetimes are measured on the wall clock, not on the injected game
//! clock: they are about security, and tests that fast-forward a match clock
//! should not log their players out.

use std::time::Duration;

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{Error, Result};

/// The `iss` of every access token this server issues.
pub const ISSUER: &str = "uttt";
/// The `aud` of every access token this server issues: its API.
pub const AUDIENCE: &str = "uttt-api";
/// How far in the future an `iat` may lie (clocks of instances differ a little).
const CLOCK_SKEW_SECS: u64 = 5;

/// Claims of an access token.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Claims {
    /// The player's id.
    pub sub: String,
    /// `player` or `admin` when issued (the database's current role is what counts).
    pub role: String,
    /// The session: the family of refresh tokens the login started.
    pub sid: String,
    /// Issuer: [`ISSUER`].
    pub iss: String,
    /// Audience: [`AUDIENCE`].
    pub aud: String,
    /// Expiry, seconds since the epoch.
    pub exp: u64,
    /// Issue time, seconds since the epoch.
    pub iat: u64,
}

/// Signs and checks access tokens.
#[derive(Clone)]
pub struct Tokens {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    access_ttl: Duration,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("access_ttl", &self.access_ttl)
            .finish_non_exhaustive()
    }
}

/// Seconds since the Unix epoch on the wall clock.
pub fn wall_clock_secs() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

impl Tokens {
    /// Keys from the shared secret.
    ///
    /// # Errors
    /// An empty secret.
    pub fn new(secret: &[u8], access_ttl: Duration) -> Result<Tokens> {
        if secret.len() < crate::config::MIN_JWT_SECRET_BYTES {
            return Err(Error::Internal(format!(
                "the JWT secret must have at least {} bytes",
                crate::config::MIN_JWT_SECRET_BYTES
            )));
        }
        let bad = |e: jsonwebtoken::errors::Error| Error::Internal(e.to_string());
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "iat", "sub", "iss", "aud"]);
        validation.set_issuer(&[ISSUER]);
        validation.set_audience(&[AUDIENCE]);
        Ok(Tokens {
            encoding: EncodingKey::from_secret(secret).map_err(bad)?,
            decoding: DecodingKey::from_secret(secret).map_err(bad)?,
            validation,
            access_ttl,
        })
    }

    /// Lifetime of an access token.
    pub fn access_ttl(&self) -> Duration {
        self.access_ttl
    }

    /// Signs an access token for the player in session `session_id`.
    ///
    /// # Errors
    /// Only on internal failure.
    pub fn issue(&self, player_id: &str, role: &str, session_id: &str) -> Result<String> {
        let iat = wall_clock_secs();
        let claims = Claims {
            sub: player_id.to_owned(),
            role: role.to_owned(),
            sid: session_id.to_owned(),
            iss: ISSUER.to_owned(),
            aud: AUDIENCE.to_owned(),
            exp: iat + self.access_ttl.as_secs(),
            iat,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| Error::Internal(e.to_string()))
    }

    /// Checks a token's signature, algorithm (HS256 only, so `alg: none` and
    /// key-confusion tricks fail), issuer, audience, expiry, and that its
    /// lifetime is no longer than this server gives (a token signed with a
    /// leaked secret for a year is refused) and it was not issued in the future.
    ///
    /// # Errors
    /// `Unauthorized` for any token that is not good.
    pub fn verify(&self, token: &str) -> Result<Claims> {
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    Error::Unauthorized("the access token has expired")
                }
                _ => Error::Unauthorized("the access token is not valid"),
            })?;
        if claims.exp.saturating_sub(claims.iat) > self.access_ttl.as_secs() {
            return Err(Error::Unauthorized(
                "the access token lives longer than this server issues them",
            ));
        }
        let now = wall_clock_secs();
        // Expired from the second `exp` itself (the library allows all of
        // it), so a stream that ends at `exp` cannot be reopened with the token.
        if claims.exp <= now {
            return Err(Error::Unauthorized("the access token has expired"));
        }
        if claims.iat > now + CLOCK_SKEW_SECS {
            return Err(Error::Unauthorized("the access token is not valid"));
        }
        Ok(claims)
    }
}

/// A new refresh token: 32 random bytes, base64url.
pub fn new_refresh_token() -> String {
    crate::ids::secret(32)
}

/// The stored form of a refresh token.
pub fn refresh_token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> Tokens {
        Tokens::new(
            b"0123456789abcdef0123456789abcdef",
            Duration::from_secs(900),
        )
        .unwrap()
    }

    #[test]
    fn an_issued_token_verifies_with_its_claims() {
        let t = tokens();
        let claims = t.verify(&t.issue("p1", "admin", "s1").unwrap()).unwrap();
        assert_eq!(claims.sub, "p1");
        assert_eq!(claims.role, "admin");
        assert_eq!(claims.sid, "s1");
        assert_eq!(
            (claims.iss.as_str(), claims.aud.as_str()),
            (ISSUER, AUDIENCE)
        );
        assert_eq!(claims.exp - claims.iat, 900);
    }

    fn signed(claims: &serde_json::Value) -> String {
        let key = EncodingKey::from_secret(b"0123456789abcdef0123456789abcdef").unwrap();
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), claims, &key).unwrap()
    }

    #[test]
    fn issuer_audience_and_lifetime_are_checked() {
        let t = tokens();
        let now = wall_clock_secs();
        let good = serde_json::json!({"sub": "p1", "role": "player", "sid": "s", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 900});
        assert!(t.verify(&signed(&good)).is_ok());
        for (key, value) in [
            ("iss", serde_json::json!("someone-else")),
            ("aud", serde_json::json!("another-api")),
            ("exp", serde_json::json!(now + 901)),
            ("exp", serde_json::json!(now + 365 * 86_400)),
            ("iat", serde_json::json!(now + 3_600)),
        ] {
            let mut bad = good.clone();
            bad[key] = value.clone();
            if key == "iat" {
                bad["exp"] = serde_json::json!(now + 3_600 + 60);
            }
            assert!(t.verify(&signed(&bad)).is_err(), "{key} = {value}");
        }
        for missing in ["iss", "aud", "sid", "iat"] {
            let mut bad = good.clone();
            bad.as_object_mut().unwrap().remove(missing);
            assert!(t.verify(&signed(&bad)).is_err(), "without {missing}");
        }
    }

    #[test]
    fn a_token_signed_with_another_secret_is_refused() {
        let other = Tokens::new(
            b"another secret of sufficient size",
            Duration::from_secs(900),
        )
        .unwrap();
        assert!(
            tokens()
                .verify(&other.issue("p1", "player", "s1").unwrap())
                .is_err()
        );
    }

    #[test]
    fn refresh_hashes_are_stable_hex() {
        let h = refresh_token_hash("abc");
        assert_eq!(
            h,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_ne!(new_refresh_token(), new_refresh_token());
    }
}
