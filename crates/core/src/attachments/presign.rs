//! Pre-signed upload URLs: `PUT {UPLOAD_PATH}<attachment_id>.<expires_at_ms>[.k<key_id>].<hex
//! HMAC-SHA256>` under `REDLINE_SECRET`, the same scheme as export download links, with the
//! MAC taken over `"redline-upload\n" + payload` so that no other signed token of the service
//! (an export link) can ever pass for an upload URL. The URL is the capability: no
//! Authorization. The key that asked for the URL is signed into it, so that the URL dies with
//! the key (a URL a web session asked for names none).

use hmac::{Hmac, Mac};
use redline_domain::time_util::Millis;
use redline_domain::KeyId;
use sha2::Sha256;

/// The path of a pre-signed upload: `PUT {UPLOAD_PATH}{token}`.
pub const UPLOAD_PATH: &str = "/v1/attachments/upload/";

/// What separates upload MACs from every other MAC made with the same key.
const PURPOSE: &[u8] = b"redline-upload\n";

/// Signs and checks upload tokens.
#[derive(Clone)]
pub struct UploadSigner {
    key: Vec<u8>,
}

impl std::fmt::Debug for UploadSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UploadSigner(..)")
    }
}

/// What a valid token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedUpload {
    pub attachment_id: String,
    pub expires_at: Millis,
    /// The API key that asked for the URL.
    pub key_id: Option<KeyId>,
}

impl UploadSigner {
    /// A signer with `key` (the bytes of `REDLINE_SECRET`).
    pub fn new(key: impl Into<Vec<u8>>) -> Self {
        Self { key: key.into() }
    }

    fn mac(&self, payload: &str) -> Hmac<Sha256> {
        // HMAC accepts keys of any length.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(PURPOSE);
        mac.update(payload.as_bytes());
        mac
    }

    /// The token of `attachment_id` valid until `expires_at`, for the URL `key` asked for.
    pub fn token(&self, attachment_id: &str, expires_at: Millis, key: Option<KeyId>) -> String {
        let payload = match key {
            Some(key) => format!("{attachment_id}.{expires_at}.k{}", key.as_uuid().simple()),
            None => format!("{attachment_id}.{expires_at}"),
        };
        let signature = hex::encode(self.mac(&payload).finalize().into_bytes());
        format!("{payload}.{signature}")
    }

    /// The full upload URL.
    pub fn url(&self, public_base_url: &str, attachment_id: &str, expires_at: Millis, key: Option<KeyId>) -> String {
        format!("{}{UPLOAD_PATH}{}", public_base_url.trim_end_matches('/'), self.token(attachment_id, expires_at, key))
    }

    /// What `token` says when its MAC is right (its expiry is the caller's to check).
    pub fn verify(&self, token: &str) -> Option<SignedUpload> {
        let (payload, signature) = token.rsplit_once('.')?;
        let (rest, key) = match payload.rsplit_once('.') {
            Some((rest, last)) if last.starts_with('k') => (rest, Some(KeyId::parse(&last[1..])?)),
            _ => (payload, None),
        };
        let (attachment_id, expires) = rest.rsplit_once('.')?;
        // Lower-case hex only: `A` for `a` must not pass as the same signature.
        let canonical = signature.len() == 64 && signature.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if attachment_id.is_empty() || !canonical {
            return None;
        }
        let signature = hex::decode(signature).ok()?;
        self.mac(payload).verify_slice(&signature).ok()?;
        let expires_at: Millis = expires.parse().ok()?;
        Some(SignedUpload { attachment_id: attachment_id.to_owned(), expires_at, key_id: key })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_refuse_any_change() {
        let signer = UploadSigner::new(b"k".repeat(32));
        let key = KeyId::new();
        let keyed = signer.token("att_0123", 1_800_000_000_000, Some(key));
        assert_eq!(
            signer.verify(&keyed),
            Some(SignedUpload { attachment_id: "att_0123".into(), expires_at: 1_800_000_000_000, key_id: Some(key) })
        );
        let token = signer.token("att_0123", 1_800_000_000_000, None);
        assert_eq!(
            signer.verify(&token),
            Some(SignedUpload { attachment_id: "att_0123".into(), expires_at: 1_800_000_000_000, key_id: None })
        );
        // The key cannot be dropped from, or put into, a signed token.
        let (payload, signature) = keyed.rsplit_once('.').unwrap();
        let (unkeyed, _) = payload.rsplit_once('.').unwrap();
        assert_eq!(signer.verify(&format!("{unkeyed}.{signature}")), None);
        let (payload, signature) = token.rsplit_once('.').unwrap();
        assert_eq!(signer.verify(&format!("{payload}.k{}.{signature}", key.as_uuid().simple())), None);
        for i in 0..token.len() {
            let mut bytes = token.clone().into_bytes();
            bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes).unwrap();
            if changed != token {
                assert_eq!(signer.verify(&changed), None, "{changed}");
            }
        }
        assert_eq!(UploadSigner::new(b"other".to_vec()).verify(&token), None, "another secret");
        for junk in ["", ".", "..", "a.b.c", &format!("{token}.x")] {
            assert_eq!(signer.verify(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn an_export_link_is_not_an_upload_url() {
        let key = b"shared secret".to_vec();
        let export = crate::exports::LinkSigner::new(key.clone()).token("att_0123", 5);
        assert_eq!(UploadSigner::new(key.clone()).verify(&export), None);
        let upload = UploadSigner::new(key.clone()).token("att_0123", 5, None);
        assert_eq!(crate::exports::LinkSigner::new(key).verify(&upload), None);
    }

    #[test]
    fn urls_are_absolute() {
        let url = UploadSigner::new(b"s".to_vec()).url("https://r.example/", "att_1", 5, None);
        assert!(url.starts_with("https://r.example/v1/attachments/upload/att_1.5."), "{url}");
    }
}
