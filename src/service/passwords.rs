//! Password hashing with Argon2id at the OWASP parameters (m = 19 MiB, t = 2,
//! p = 1). Hashing takes tens of milliseconds, so it runs on the blocking pool,
//! never on the async threads.

use std::sync::Arc;

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

fn verify_blocking(password: &str, phc: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    // The parameters come from the stored hash, so old hashes keep verifying.
    Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok()
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("password task failed: {e}")))
}

impl Passwords {
    /// Prepares the hasher (computes the dummy hash once).
    ///
    /// # Errors
    /// Argon2 refuses its parameters (never with the fixed ones).
    pub fn new() -> Result<Passwords> {
        let dummy = hash_blocking(&crate::ids::secret(24))?;
        Ok(Passwords {
            dummy_hash: dummy.into(),
        })
    }

    /// Hashes a new password into a PHC string.
    ///
    /// # Errors
    /// Only on internal failure.
    pub async fn hash(&self, password: String) -> Result<String> {
        blocking(move || hash_blocking(&password)).await?
    }

    /// Verifies `password` against `phc`, or against the dummy hash when
    /// there is no such player, so both cases cost the same.
    ///
    /// # Errors
    /// Only on internal failure.
    pub async fn verify(&self, password: String, phc: Option<String>) -> Result<bool> {
        let known = phc.is_some();
        let phc = phc.unwrap_or_else(|| self.dummy_hash.to_string());
        let ok = blocking(move || verify_blocking(&password, &phc)).await?;
        Ok(ok && known)
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
}
