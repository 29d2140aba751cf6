//! The access-token secret: refused when anyone could know or guess it.

use super::ConfigError;

/// The fewest bytes a JWT secret may have.
pub const MIN_JWT_SECRET_BYTES: usize = 32;

/// Secrets that are published or guessed first: the one `docker-compose.yml`
/// used to ship, and the usual placeholders. Compared ignoring case and the
/// characters `-`, `_`, `.` and spaces.
const PLACEHOLDER_SECRETS: &[&str] = &[
    "change-me-to-a-long-random-secret-shared-by-all-instances",
    "changeme",
    "secret",
    "jwtsecret",
    "password",
    "yoursecret",
    "mysecret",
    "supersecret",
    "default",
    "example",
    "test",
];

/// Refuses a JWT secret anyone could know or guess: a known placeholder, one
/// that asks to be changed, one shorter than [`MIN_JWT_SECRET_BYTES`], or one
/// made of a handful of distinct bytes.
///
/// # Errors
/// A [`ConfigError`] naming `UTTT_JWT_SECRET` and saying how to make a good one.
pub fn check_jwt_secret(secret: &str) -> Result<(), ConfigError> {
    const HOW: &str = "set it to a long random value shared by every instance, e.g. the output of `openssl rand -base64 48`";
    let bad = |why: String| ConfigError {
        name: "UTTT_JWT_SECRET",
        message: format!("{why}; {HOW}"),
    };
    let normalized: String = secret
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect();
    let placeholder = PLACEHOLDER_SECRETS.iter().any(|p| {
        let p: String = p
            .chars()
            .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
            .collect();
        normalized == p
    }) || ["changeme", "replaceme", "changethis", "yoursecret"]
        .iter()
        .any(|p| normalized.contains(p));
    if placeholder {
        return Err(bad(
            "is a published placeholder value: anyone could sign access tokens with it".into(),
        ));
    }
    if secret.len() < MIN_JWT_SECRET_BYTES {
        return Err(bad(format!(
            "has {} bytes; it needs at least {MIN_JWT_SECRET_BYTES}",
            secret.len()
        )));
    }
    let distinct: std::collections::HashSet<u8> = secret.bytes().collect();
    if distinct.len() < 8 {
        return Err(bad(format!(
            "is made of only {} distinct characters",
            distinct.len()
        )));
    }
    Ok(())
}
