//! Generation, hashing and comparison of secrets.
//!
//! - API keys and passwords: argon2id (PHC strings), verified on the blocking pool.
//! - Session tokens and handoff link tokens are 256-bit random values: a SHA-256 of them is
//!   as safe as a slow hash and lets us look them up by hash.
//! - Comparisons of secrets are constant-time.

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::{Rng, RngCore};
use redline_domain::{ApiKey, KeyKind};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A fresh API key of the given kind.
pub fn new_api_key(kind: KeyKind) -> ApiKey {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    ApiKey::from_random(kind, bytes)
}

/// `prefix` + 43 base64url characters (32 random bytes).
pub fn new_token(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// A password the operator's `reset-password` makes when none is given: 20 characters of
/// base64url (120 bits).
pub fn new_password() -> String {
    new_token("").chars().take(20).collect()
}

/// A uniformly random 6-digit code.
pub fn new_code() -> String {
    format!("{:06}", rand::rngs::OsRng.gen_range(0..1_000_000u32))
}

/// Lower-case hex SHA-256.
pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// Raw SHA-256.
pub fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// Raw SHA-256 of `parts` one after the other, without joining them.
pub fn sha256_of_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// Constant-time equality of two strings (length is not secret).
pub fn ct_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// argon2id hash of a secret, as a PHC string. Runs on the blocking pool.
pub async fn hash_secret(secret: String) -> Result<String, String> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default().hash_password(secret.as_bytes(), &salt).map(|h| h.to_string()).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())?
}

/// Verifies a secret against a PHC string. A malformed hash verifies nothing. Runs on the
/// blocking pool.
pub async fn verify_secret(secret: String, phc: String) -> bool {
    tokio::task::spawn_blocking(move || match PasswordHash::new(&phc) {
        Ok(parsed) => Argon2::default().verify_password(secret.as_bytes(), &parsed).is_ok(),
        Err(_) => false,
    })
    .await
    .unwrap_or(false)
}

/// Verifies against a real argon2id hash of a throwaway secret and answers `false`: used
/// when an account does not exist, so that a failed login costs the same time whether or not
/// the e-mail is known.
pub async fn verify_nothing(secret: String) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    tokio::task::spawn_blocking(move || {
        let phc = DUMMY.get_or_init(|| {
            let salt = SaltString::generate(&mut OsRng);
            Argon2::default().hash_password(b"redline-dummy-secret", &salt).map(|h| h.to_string()).unwrap_or_default()
        });
        if let Ok(parsed) = PasswordHash::new(phc) {
            let _ = Argon2::default().verify_password(secret.as_bytes(), &parsed);
        }
        false
    })
    .await
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_shapes() {
        let t = new_token("ws_");
        assert_eq!(t.len(), 3 + 43);
        assert!(t[3..].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        let c = new_code();
        assert!(redline_domain::handoff::is_code_shaped(&c));
        assert_ne!(new_token("x"), new_token("x"));
    }

    #[test]
    fn constant_time_eq() {
        assert!(ct_eq("abc", "abc"));
        assert!(!ct_eq("abc", "abd"));
        assert!(!ct_eq("abc", "abcd"));
    }

    #[tokio::test]
    async fn hash_and_verify() {
        let h = hash_secret("correct horse".into()).await.unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_secret("correct horse".into(), h.clone()).await);
        assert!(!verify_secret("wrong horse".into(), h).await);
        assert!(!verify_secret("x".into(), "not a hash".into()).await);
        assert!(!verify_nothing("redline-dummy-secret".into()).await);
    }
}
