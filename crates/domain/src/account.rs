//! Accounts: e-mail addresses, passwords and plans.

use std::fmt;
use std::str::FromStr;

/// A normalised (trimmed, lower-cased) e-mail address of plausible shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Email(String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EmailError {
    #[error("value is not a valid email address")]
    Invalid,
}

impl Email {
    /// Accepts what a mail server will take: a dot-atom local part (RFC 5322 `atext`, or
    /// letters and digits beyond ASCII) and a domain name of at least two labels of letters,
    /// digits and inner hyphens. Quoted local parts and address literals (`a@[127.0.0.1]`)
    /// are refused: the SMTP client would refuse them later, after a 202.
    pub fn parse(s: &str) -> Result<Self, EmailError> {
        let s = s.trim();
        if s.is_empty() || s.len() > 254 {
            return Err(EmailError::Invalid);
        }
        let (local, domain) = s.split_once('@').ok_or(EmailError::Invalid)?;
        if local.len() > 64 || !dot_separated(local, local_char) || !domain_ok(domain) {
            return Err(EmailError::Invalid);
        }
        Ok(Self(s.to_lowercase()))
    }

    /// An address as it was kept or as a person typed it to sign in: trimmed and
    /// lower-cased, not checked. Accounts made under the looser rules of earlier versions
    /// must still load and sign in.
    pub fn unchecked(s: &str) -> Self {
        Self(s.trim().to_lowercase())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Non-empty parts separated by single dots, each made of `allowed` characters.
fn dot_separated(s: &str, allowed: fn(char) -> bool) -> bool {
    s.split('.').all(|part| !part.is_empty() && part.chars().all(allowed))
}

fn local_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || (!c.is_ascii() && c.is_alphanumeric())
}

fn label_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || (!c.is_ascii() && c.is_alphanumeric())
}

fn domain_ok(domain: &str) -> bool {
    domain.contains('.')
        && dot_separated(domain, label_char)
        && domain
            .split('.')
            .all(|label| label.chars().count() <= 63 && !label.starts_with('-') && !label.ends_with('-'))
}

/// Shortest password accepted.
pub const PASSWORD_MIN_CHARS: usize = 8;
/// Longest password accepted (bounds the hashing work an attacker can ask for).
pub const PASSWORD_MAX_CHARS: usize = 1024;

/// A password as typed. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("String should have at least {PASSWORD_MIN_CHARS} characters")]
    TooShort,
    #[error("String should have at most {PASSWORD_MAX_CHARS} characters")]
    TooLong,
}

impl Password {
    pub fn parse(s: &str) -> Result<Self, PasswordError> {
        let n = s.chars().count();
        if n < PASSWORD_MIN_CHARS {
            return Err(PasswordError::TooShort);
        }
        if n > PASSWORD_MAX_CHARS {
            return Err(PasswordError::TooLong);
        }
        Ok(Self(s.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

/// Subscription tiers (the contract's UsageInfo.subscription_tier).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Plan {
    Free,
    Plus,
    Pro,
    Enterprise,
}

impl Plan {
    pub const ALL: [Plan; 4] = [Plan::Free, Plan::Plus, Plan::Pro, Plan::Enterprise];

    pub fn as_str(self) -> &'static str {
        match self {
            Plan::Free => "free",
            Plan::Plus => "plus",
            Plan::Pro => "pro",
            Plan::Enterprise => "enterprise",
        }
    }

    /// Operations per calendar month; `None` means unlimited (shown as -1).
    pub fn monthly_ops(self) -> Option<u64> {
        match self {
            Plan::Free => Some(500),
            Plan::Plus => Some(3_000),
            Plan::Pro => Some(15_000),
            Plan::Enterprise => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown plan {0:?}: expected one of free, plus, pro, enterprise")]
pub struct UnknownPlan(pub String);

impl FromStr for Plan {
    type Err = UnknownPlan;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Plan::ALL.into_iter().find(|p| p.as_str() == s).ok_or_else(|| UnknownPlan(s.to_owned()))
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name people give and see (an API key's, an organization's): control characters, bidi
/// overrides and zero-width characters removed, surrounding spaces trimmed. What is left may
/// be empty; the caller decides whether that is allowed.
pub fn plain_name(raw: &str) -> String {
    let kept: String = raw.chars().filter(|c| !c.is_control() && !crate::attachment::invisible(*c)).collect();
    kept.trim().to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn plain_names_keep_what_shows() {
        assert_eq!(super::plain_name(" a\u{0}b\u{202e}c\n "), "abc");
        assert_eq!(super::plain_name("Équipe 東京 ✓"), "Équipe 東京 ✓");
        assert_eq!(super::plain_name("\u{200b}\t"), "");
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn emails() {
        assert_eq!(Email::parse(" Ann@Example.COM ").unwrap().as_str(), "ann@example.com");
        for good in ["a.b+tag@mail.example.org", "o'neil@x-y.example", "josé@exämple.de", "a_b!#$%&*/=?^`{|}~@b.co"] {
            assert!(Email::parse(good).is_ok(), "{good:?}");
        }
        for bad in [
            "",
            "a",
            "a@",
            "@b.c",
            "a@b",
            "a b@c.d",
            "a@b..c",
            "a@.b.c",
            "a@b.c.",
            "a@b@c.d",
            "x\u{0}@y.z",
            "\"<script>\"@y.example",
            "<a>@y.example",
            "a@[127.0.0.1]",
            ".a@b.c",
            "a.@b.c",
            "a..b@c.d",
            "a@-b.c",
            "a@b-.c",
            "a@b_c.d",
            "a(comment)@b.c",
        ] {
            assert!(Email::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn passwords() {
        assert!(Password::parse("short").is_err());
        assert!(Password::parse("long enough").is_ok());
        assert!(Password::parse(&"x".repeat(1025)).is_err());
        assert_eq!(format!("{:?}", Password::parse("secret-pass").unwrap()), "Password(***)");
    }

    #[test]
    fn plans() {
        for p in Plan::ALL {
            assert_eq!(p.as_str().parse::<Plan>().unwrap(), p);
        }
        assert!("gold".parse::<Plan>().is_err());
        assert_eq!(Plan::Free.monthly_ops(), Some(500));
        assert_eq!(Plan::Enterprise.monthly_ops(), None);
    }

    proptest! {
        #[test]
        fn email_parse_never_panics(s in "\\PC*") {
            if let Ok(e) = Email::parse(&s) {
                prop_assert_eq!(e.as_str().matches('@').count(), 1);
            }
        }
    }
}
