//! Access tokens (HS256 JWTs carrying `sub`, `role`, `sid`, `iss`, `aud`,
//! `exp`, `iat`) and refresh tokens (random, stored only as SHA-256 hashes).
//!
//! An access token is accepted only with this server's issuer and audience,
//! a lifetime no longer than the configured one, and an issue time not in
//! the future; `sid` names the session (the refresh-token family) it was
//! issued for, so event streams can end when that session is revoked.
//! An instance checks a token's signature on its first use there and keeps
//! it, so later uses check only its times.
//!
//! Token lifetimes are measured on the wall clock, not on the injected game
//! clock: they are about security, and tests that fast-forward a match clock
//! should not log their players out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
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
/// How many verified tokens [`Tokens`] keeps: one or two per player in
/// play on an instance, a few MiB at most.
const VERIFIED_KEPT: usize = 4096;

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
    /// Tokens verified here lately, whole, with their claims. A player's
    /// every request carries the same token, and its signature, base64 and
    /// JSON cost 3 % of the server's CPU a move (issue 18); a token found
    /// here is the same signed bytes, so only its times are checked again.
    /// Shared by clones: they have the same key. The map's hasher is keyed
    /// at random (std's), so look-ups of chosen tokens reveal nothing by
    /// their timing nor pile into one bucket: keep it so.
    verified: Arc<Mutex<HashMap<Box<str>, Arc<Claims>>>>,
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
            verified: Arc::default(),
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
    /// The signature, issuer and audience of a token verified here before
    /// are not checked again (it is the same bytes); its lifetime, expiry
    /// and issue time are.
    ///
    /// # Errors
    /// `Unauthorized` for any token that is not good.
    pub fn verify(&self, token: &str) -> Result<Claims> {
        self.verify_at(token, wall_clock_secs())
    }

    /// [`Tokens::verify`] at `now` (seconds since the epoch). The signature
    /// is checked on a token's first use here; its lifetime and times on
    /// every use.
    fn verify_at(&self, token: &str, now: u64) -> Result<Claims> {
        let known = self
            .verified
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(token)
            .cloned();
        if let Some(claims) = known {
            self.check_times(&claims, now)?;
            return Ok(Claims::clone(&claims));
        }
        let claims = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|e| match e.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    Error::Unauthorized("the access token has expired")
                }
                _ => Error::Unauthorized("the access token is not valid"),
            })?;
        self.check_times(&claims, now)?;
        let mut verified = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        if verified.len() >= VERIFIED_KEPT {
            // The expired go first; when all are live (more players than
            // the map holds), all go: only speed is lost, and no order of
            // use has to be kept on every request.
            verified.retain(|_, c| c.exp > now);
            if verified.len() >= VERIFIED_KEPT {
                verified.clear();
            }
        }
        verified.insert(token.into(), Arc::new(claims.clone()));
        Ok(claims)
    }

    /// Refuses a token's claims whose lifetime is longer than this server
    /// gives, or that are expired or issued in the future at `now`.
    fn check_times(&self, claims: &Claims, now: u64) -> Result<()> {
        if claims.exp.saturating_sub(claims.iat) > self.access_ttl.as_secs() {
            return Err(Error::Unauthorized(
                "the access token lives longer than this server issues them",
            ));
        }
        // Expired from the second `exp` itself (the library allows all of
        // it), so a stream that ends at `exp` cannot be reopened with the token.
        if claims.exp <= now {
            return Err(Error::Unauthorized("the access token has expired"));
        }
        if claims.iat > now + CLOCK_SKEW_SECS {
            return Err(Error::Unauthorized("the access token is not valid"));
        }
        Ok(())
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

    /// Tokens signed with another secret than [`tokens`]'s.
    fn other_secret() -> Tokens {
        Tokens::new(
            b"another secret of sufficient size",
            Duration::from_secs(900),
        )
        .unwrap()
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
        let other = other_secret();
        assert!(
            tokens()
                .verify(&other.issue("p1", "player", "s1").unwrap())
                .is_err()
        );
    }

    fn kept(t: &Tokens) -> usize {
        t.verified.lock().unwrap().len()
    }

    #[test]
    fn a_token_verified_before_has_its_times_checked_again() {
        let t = tokens();
        let token = t.issue("p1", "player", "s1").unwrap();
        let now = wall_clock_secs();
        let claims = t.verify_at(&token, now).unwrap();
        assert_eq!(claims.sub, "p1");
        assert_eq!(kept(&t), 1);
        // Found among the verified, its expiry and issue time still count.
        assert!(matches!(
            t.verify_at(&token, claims.exp),
            Err(Error::Unauthorized("the access token has expired"))
        ));
        assert!(t.verify_at(&token, claims.exp - 1).is_ok());
        assert!(matches!(
            t.verify_at(&token, claims.iat - CLOCK_SKEW_SECS - 1),
            Err(Error::Unauthorized("the access token is not valid"))
        ));
        assert_eq!(kept(&t), 1);
    }

    #[test]
    fn only_good_tokens_are_kept_and_a_changed_one_is_checked_in_full() {
        let t = tokens();
        let token = t.issue("p1", "player", "s1").unwrap();
        assert!(t.verify(&token).is_ok());
        let (head, signature) = token.rsplit_once('.').unwrap();
        let mut forged = signature.to_owned().into_bytes();
        forged[0] = if forged[0] == b'A' { b'B' } else { b'A' };
        let forged = format!("{head}.{}", String::from_utf8(forged).unwrap());
        assert!(t.verify(&forged).is_err());
        let now = wall_clock_secs();
        let too_long = signed(
            &serde_json::json!({"sub": "p1", "role": "player", "sid": "s", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 901}),
        );
        for _ in 0..2 {
            assert!(t.verify(&too_long).is_err());
        }
        let other = other_secret();
        assert!(
            t.verify(&other.issue("p1", "player", "s1").unwrap())
                .is_err()
        );
        assert_eq!(kept(&t), 1);
        // Clones share what was verified; another secret's tokens do not.
        assert!(
            t.clone()
                .verify(&t.issue("p2", "player", "s2").unwrap())
                .is_ok()
        );
        assert_eq!(kept(&t), 2);
        assert!(other.verify(&token).is_err());
        assert_eq!(kept(&other), 0);
    }

    #[test]
    fn the_verified_tokens_kept_are_bounded_the_expired_going_first() {
        let t = tokens();
        let now = wall_clock_secs();
        let short = |i: usize| {
            signed(
                &serde_json::json!({"sub": format!("p{i}"), "role": "player", "sid": "s", "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + 10}),
            )
        };
        for i in 1..VERIFIED_KEPT {
            assert!(t.verify_at(&short(i), now).is_ok());
        }
        let long = t.issue("long", "player", "s").unwrap();
        assert!(t.verify_at(&long, now).is_ok());
        assert_eq!(kept(&t), VERIFIED_KEPT);
        // Full: the short-lived ones have expired and go, the live one stays.
        let next = t.issue("next", "player", "s").unwrap();
        assert!(t.verify_at(&next, now + 10).is_ok());
        assert_eq!(kept(&t), 2);
        // Full of live tokens: emptied, then the new one kept.
        for i in 0..VERIFIED_KEPT {
            let token = t.issue(&format!("live{i}"), "player", "s").unwrap();
            assert!(t.verify(&token).is_ok());
            assert!(kept(&t) <= VERIFIED_KEPT);
        }
        assert!(kept(&t) < VERIFIED_KEPT);
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
