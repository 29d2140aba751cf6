//! Password hashing with Argon2id at the OWASP parameters (m = 19 MiB, t = 2,
//! p = 1). Hashing takes tens of milliseconds, so it runs on the blocking pool,
//! never on the async threads, and at most one hash per core runs at once:
//! a burst of logins waits its turn instead of claiming 19 MiB apiece.

use std::sync::Arc;

use tokio::sync::Semaphore;

use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use argon2::{Algorithm, Argon2, Params, Version};

use super::error::{Error, Result};

/// Hashes and verifies passwords.
#[derive(Clone)]
pub struct Passwords {
    /// A hash of a random password: an unknown user is verified against it so
    /// that the response time does not tell which names exist.
    dummy_hash: Arc<str>,
    /// One permit per hash allowed to run at once.
    running: Arc<Semaphore>,
}

impl std::fmt::Debug for Passwords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Passwords")
    }
}

fn argon2() -> Result<Argon2<'static>> {
    let params = Params::new(19 * 1024, 2, 1, None).map_err(|e| Error::Internal(e.to_string()))?;
    Ok(Argon2::new(Algorithm::Argon2id, Version::V0x13, params))
}

fn hash_blocking(password: &str) -> Result<String> {
    let hash: PasswordHash = argon2()?
        .hash_password(password.as_bytes())
        .map_err(|e| Error::Internal(format!("hashing failed: {e}")))?;
    Ok(hash.to_string())
}

/// The hash to verify against, and whether a match may let the player in:
/// `stored` when it parses; else (no such player, or an account made
/// unusable on purpose, as `uttt seed` makes them) the dummy, so that every
/// refusal costs one Argon2 verification and the time tells nothing.
fn hash_to_verify(stored: Option<&str>, dummy: &str) -> Option<(PasswordHash, bool)> {
    match stored.map(PasswordHash::new) {
        Some(Ok(parsed)) => Some((parsed, true)),
        _ => PasswordHash::new(dummy).ok().map(|parsed| (parsed, false)),
    }
}

fn verify_blocking(password: &str, stored: Option<&str>, dummy: &str) -> bool {
    let Some((parsed, usable)) = hash_to_verify(stored, dummy) else {
        return false;
    };
    // The parameters come from the stored hash, so old hashes keep verifying.
    let matches = Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok();
    matches && usable
}

impl Passwords {
    /// Prepares the hasher (computes the dummy hash once).
    ///
    /// # Errors
    /// Argon2 refuses its parameters (never with the fixed ones).
    pub fn new() -> Result<Passwords> {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Passwords::with_parallelism(cores)
    }

    /// Prepares a hasher that runs at most `hashes` hashes at once (at least one).
    ///
    /// # Errors
    /// Argon2 refuses its parameters (never with the fixed ones).
    pub fn with_parallelism(hashes: usize) -> Result<Passwords> {
        let dummy = hash_blocking(&crate::ids::secret(24))?;
        Ok(Passwords {
            dummy_hash: dummy.into(),
            running: Arc::new(Semaphore::new(hashes.max(1))),
        })
    }

    /// Runs `f` on the blocking pool once a permit is free.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        let permit = Arc::clone(&self.running)
            .acquire_owned()
            .await
            .map_err(|e| Error::Internal(format!("password hasher closed: {e}")))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            f()
        })
        .await
        .map_err(|e| Error::Internal(format!("password task failed: {e}")))
    }

    /// Hashes a new password into a PHC string.
    ///
    /// # Errors
    /// Only on internal failure.
    pub async fn hash(&self, password: String) -> Result<String> {
        self.blocking(move || hash_blocking(&password)).await?
    }

    /// Verifies `password` against `phc`, or against the dummy hash when
    /// there is no such player or `phc` does not parse, so every case costs
    /// the same.
    ///
    /// # Errors
    /// Only on internal failure.
    pub async fn verify(&self, password: String, phc: Option<String>) -> Result<bool> {
        let dummy = Arc::clone(&self.dummy_hash);
        self.blocking(move || verify_blocking(&password, phc.as_deref(), &dummy))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_verifies_its_password_only() {
        let passwords = Passwords::new().unwrap();
        let phc = passwords.hash("correct horse".into()).await.unwrap();
        assert!(phc.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{phc}");
        assert!(
            passwords
                .verify("correct horse".into(), Some(phc.clone()))
                .await
                .unwrap()
        );
        assert!(
            !passwords
                .verify("wrong horse".into(), Some(phc))
                .await
                .unwrap()
        );
        assert!(!passwords.verify("anything".into(), None).await.unwrap());
    }

    #[test]
    fn a_refusal_without_a_usable_hash_still_verifies_the_dummy() {
        let dummy = hash_blocking("dummy password").unwrap();
        let stored = hash_blocking("correct horse").unwrap();
        // As `uttt seed` stores them: the right shape, a hash too short to parse.
        let seeded = "$argon2id$v=19$m=19456,t=2,p=1$c2VlZHNlZWQ$unusable";
        for (hash, usable) in [(None, false), (Some(seeded), false), (Some(&*stored), true)] {
            let (verified, may_enter) = hash_to_verify(hash, &dummy).expect("a hash to verify");
            assert_eq!(may_enter, usable, "{hash:?}");
            let expected = if usable { &stored } else { &dummy };
            assert_eq!(verified.to_string(), *expected, "{hash:?}");
        }
        // The dummy's own password never lets anyone in.
        assert!(!verify_blocking("dummy password", Some(seeded), &dummy));
        assert!(!verify_blocking("dummy password", None, &dummy));
        assert!(verify_blocking("correct horse", Some(&stored), &dummy));
    }

    #[tokio::test]
    async fn a_burst_of_logins_waits_for_one_hasher_and_every_answer_is_right() {
        let passwords = Passwords::with_parallelism(1).unwrap();
        let phc = passwords.hash("correct horse".into()).await.unwrap();
        let attempts = (0..6).map(|i| {
            let passwords = passwords.clone();
            let phc = phc.clone();
            let password = if i % 2 == 0 {
                "correct horse"
            } else {
                "wrong horse"
            };
            tokio::spawn(async move { passwords.verify(password.into(), Some(phc)).await })
        });
        let mut answers = Vec::new();
        for attempt in attempts.collect::<Vec<_>>() {
            answers.push(attempt.await.unwrap().unwrap());
        }
        assert_eq!(answers, [true, false, true, false, true, false]);
        // Every permit is back once the burst is over.
        assert_eq!(passwords.running.available_permits(), 1);
    }
}
