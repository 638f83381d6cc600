//! Signed download links: `<export_id>.<expires_at_ms>.<hex HMAC-SHA256 of "<export_id>.<expires_at_ms>">`
//! under `REDLINE_SECRET`. The link is the capability; a changed character anywhere fails
//! the MAC (compared in constant time).

use hmac::{Hmac, Mac};
use redline_domain::time_util::Millis;
use sha2::Sha256;

/// The path of a download: `GET {DOWNLOAD_PATH}{token}`.
pub const DOWNLOAD_PATH: &str = "/v1/documents/export/download/";

/// Signs and checks download tokens.
#[derive(Clone)]
pub struct LinkSigner {
    key: Vec<u8>,
}

impl std::fmt::Debug for LinkSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkSigner(..)")
    }
}

/// What a valid token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedLink {
    pub export_id: String,
    pub expires_at: Millis,
}

impl LinkSigner {
    /// A signer with `key` (the bytes of `REDLINE_SECRET`).
    pub fn new(key: impl Into<Vec<u8>>) -> Self {
        Self { key: key.into() }
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC accepts keys of any length.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
    }

    /// The token of `export_id` valid until `expires_at`.
    pub fn token(&self, export_id: &str, expires_at: Millis) -> String {
        let payload = format!("{export_id}.{expires_at}");
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        format!("{payload}.{}", hex::encode(mac.finalize().into_bytes()))
    }

    /// The full download URL.
    pub fn link(&self, public_base_url: &str, export_id: &str, expires_at: Millis) -> String {
        format!("{}{DOWNLOAD_PATH}{}", public_base_url.trim_end_matches('/'), self.token(export_id, expires_at))
    }

    /// What `token` says when its MAC is right (its expiry is the caller's to check).
    pub fn verify(&self, token: &str) -> Option<SignedLink> {
        let (payload, signature) = token.rsplit_once('.')?;
        let (export_id, expires) = payload.rsplit_once('.')?;
        // Lower-case hex only: `A` for `a` must not pass as the same signature.
        let canonical = signature.len() == 64 && signature.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if export_id.is_empty() || !canonical {
            return None;
        }
        let signature = hex::decode(signature).ok()?;
        let mut mac = self.mac();
        mac.update(payload.as_bytes());
        mac.verify_slice(&signature).ok()?;
        let expires_at: Millis = expires.parse().ok()?;
        Some(SignedLink { export_id: export_id.to_owned(), expires_at })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_refuse_any_change() {
        let signer = LinkSigner::new(b"k".repeat(32));
        let token = signer.token("exp_0123", 1_800_000_000_000);
        assert_eq!(
            signer.verify(&token),
            Some(SignedLink { export_id: "exp_0123".into(), expires_at: 1_800_000_000_000 })
        );
        for i in 0..token.len() {
            let mut bytes = token.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            if changed != token {
                assert_eq!(signer.verify(&changed), None, "{changed}");
            }
        }
        assert_eq!(LinkSigner::new(b"other".to_vec()).verify(&token), None, "another secret");
        for junk in ["", ".", "..", "a.b.c", &format!("{token}.x")] {
            assert_eq!(signer.verify(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn links_are_absolute() {
        let signer = LinkSigner::new(b"secret".to_vec());
        let link = signer.link("https://r.example/", "exp_1", 5);
        assert!(link.starts_with("https://r.example/v1/documents/export/download/exp_1.5."), "{link}");
    }
}
