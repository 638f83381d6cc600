//! API keys: `sk_` + 32 lowercase hex for users, `lce_` + 32 lowercase hex for organizations.
//!
//! A key is shown once. What is stored is its lookup prefix (indexed, not secret enough to
//! use the key) and an argon2id hash of the whole key.

use std::fmt;

use crate::account::Plan;

/// Hex characters after the `sk_`/`lce_` marker that are stored in clear as the lookup prefix.
pub const LOOKUP_HEX_CHARS: usize = 8;
const SECRET_HEX_LEN: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// `sk_…`: acts for a user.
    User,
    /// `lce_…`: acts for an organization.
    Org,
}

impl KeyKind {
    pub fn marker(self) -> &'static str {
        match self {
            KeyKind::User => "sk_",
            KeyKind::Org => "lce_",
        }
    }
}

/// A syntactically valid API key. Its `Debug` form is redacted so it never reaches a log.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey {
    kind: KeyKind,
    text: String,
}

impl ApiKey {
    /// Parses a presented key; `None` for anything not of the two formats.
    pub fn parse(s: &str) -> Option<Self> {
        let (kind, hex) = if let Some(rest) = s.strip_prefix("sk_") {
            (KeyKind::User, rest)
        } else if let Some(rest) = s.strip_prefix("lce_") {
            (KeyKind::Org, rest)
        } else {
            return None;
        };
        let valid =
            hex.len() == SECRET_HEX_LEN && hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        valid.then(|| Self { kind, text: s.to_owned() })
    }

    /// Builds a key from 16 random bytes (the caller supplies the randomness).
    pub fn from_random(kind: KeyKind, bytes: [u8; 16]) -> Self {
        let mut text = String::with_capacity(36);
        text.push_str(kind.marker());
        for b in bytes {
            text.push_str(&format!("{b:02x}"));
        }
        Self { kind, text }
    }

    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The indexed lookup prefix, e.g. `sk_1a2b3c4d`.
    pub fn lookup_prefix(&self) -> &str {
        &self.text[..self.kind.marker().len() + LOOKUP_HEX_CHARS]
    }

    /// The redacted form shown in listings, e.g. `sk_1a2b3c4d…` (never the secret part).
    pub fn redacted(&self) -> String {
        redact_prefix(self.lookup_prefix())
    }

    /// The whole key. Only for showing it once at creation and for hashing.
    pub fn expose(&self) -> &str {
        &self.text
    }
}

/// The redacted display of a stored lookup prefix.
pub fn redact_prefix(prefix: &str) -> String {
    format!("{prefix}…")
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ApiKey({})", self.redacted())
    }
}

/// How many live (not revoked) keys an account may hold (the contract (docs/api.md), Limits).
pub fn max_keys(plan: Plan) -> u32 {
    match plan {
        Plan::Free => 5,
        Plan::Plus | Plan::Pro | Plan::Enterprise => 25,
    }
}

/// What a key may do. Every API-key endpoint names the one scope it needs (its OpenAPI
/// `security` requirement); a key without scopes named at creation holds them all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Reading: sessions, documents, jobs and their events, history, versions, attachments,
    /// templates, usage, and exports (an export changes nothing).
    Read,
    /// Changing: chat, approvals, uploads, saves, restores, deletions, cancels. Grants `read`.
    Edit,
    /// The account itself: handing an agent's account over to a person.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Edit, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Edit => "edit",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    fn bit(self) -> u8 {
        match self {
            Scope::Read => 1,
            Scope::Edit => 2,
            Scope::Admin => 4,
        }
    }
}

/// The scopes a key holds. `edit` brings `read` with it, so a set never holds edit alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scopes(u8);

impl Scopes {
    /// Every scope: keys made without naming any, and web-app sessions.
    pub const FULL: Scopes = Scopes(7);

    pub fn of(scopes: impl IntoIterator<Item = Scope>) -> Self {
        let mut bits = 0;
        for scope in scopes {
            bits |= scope.bit();
            if scope == Scope::Edit {
                bits |= Scope::Read.bit();
            }
        }
        Scopes(bits)
    }

    pub fn allows(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    pub fn is_full(self) -> bool {
        self == Self::FULL
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The scopes held, in the order of [`Scope::ALL`].
    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL.into_iter().filter(move |s| self.allows(*s))
    }

    /// The stored form: the names joined by spaces (`"read edit"`).
    pub fn to_words(self) -> String {
        self.iter().map(Scope::as_str).collect::<Vec<_>>().join(" ")
    }

    /// Reads the stored form; `None` when a word is not a scope.
    pub fn from_words(words: &str) -> Option<Self> {
        words.split_whitespace().map(Scope::parse).collect::<Option<Vec<_>>>().map(Self::of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn formats() {
        assert_eq!(ApiKey::parse(&format!("sk_{}", "a".repeat(32))).unwrap().kind(), KeyKind::User);
        assert_eq!(ApiKey::parse(&format!("lce_{}", "0".repeat(32))).unwrap().kind(), KeyKind::Org);
        for bad in [
            "",
            "nonsense",
            "sk_",
            &format!("sk_{}", "g".repeat(32)),
            &format!("sk_{}", "A".repeat(32)),
            &format!("sk_{}", "a".repeat(31)),
            &format!("sk_{}", "a".repeat(33)),
            &format!("pk_{}", "a".repeat(32)),
        ] {
            assert!(ApiKey::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let key = ApiKey::from_random(KeyKind::User, [0xab; 16]);
        let shown = format!("{key:?}");
        assert!(!shown.contains(key.expose()));
        assert!(shown.contains("sk_abababab"));
    }

    #[test]
    fn scopes_edit_brings_read_and_words_round_trip() {
        let edit = Scopes::of([Scope::Edit]);
        assert!(edit.allows(Scope::Read) && edit.allows(Scope::Edit) && !edit.allows(Scope::Admin));
        let read = Scopes::of([Scope::Read]);
        assert!(read.allows(Scope::Read) && !read.allows(Scope::Edit));
        let admin = Scopes::of([Scope::Admin]);
        assert!(!admin.allows(Scope::Read) && admin.allows(Scope::Admin));
        assert!(Scopes::of(Scope::ALL).is_full());
        assert!(Scopes::of([]).is_empty());
        for set in [edit, read, admin, Scopes::FULL] {
            assert_eq!(Scopes::from_words(&set.to_words()), Some(set));
        }
        assert_eq!(edit.to_words(), "read edit");
        assert_eq!(Scopes::from_words("read write"), None);
    }

    #[test]
    fn limits_per_plan() {
        assert_eq!(max_keys(Plan::Free), 5);
        for p in [Plan::Plus, Plan::Pro, Plan::Enterprise] {
            assert_eq!(max_keys(p), 25);
        }
    }

    proptest! {
        #[test]
        fn generated_keys_parse(bytes in any::<[u8; 16]>(), org in any::<bool>()) {
            let kind = if org { KeyKind::Org } else { KeyKind::User };
            let key = ApiKey::from_random(kind, bytes);
            let parsed = ApiKey::parse(key.expose()).unwrap();
            prop_assert_eq!(parsed.kind(), kind);
            prop_assert_eq!(parsed.lookup_prefix().len(), kind.marker().len() + LOOKUP_HEX_CHARS);
        }

        #[test]
        fn parse_never_panics(s in "\\PC*") {
            let _ = ApiKey::parse(&s);
        }
    }
}
