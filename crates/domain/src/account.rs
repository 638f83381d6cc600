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

/// Why a password is refused (NIST SP 800-63B §5.1.1.2: a length, no composition rules, and
/// no value that is common, breached or built from the account's own address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PasswordError {
    #[error("String should have at least {PASSWORD_MIN_CHARS} characters")]
    TooShort,
    #[error("String should have at most {PASSWORD_MAX_CHARS} characters")]
    TooLong,
    #[error("Value error, this password is on a list of common or leaked passwords: choose another")]
    Common,
    #[error("Value error, this password is made from the e-mail address: choose another")]
    FromEmail,
}

/// The common and breached passwords refused (`data/common-passwords.txt`, from SecLists;
/// `scripts/common-passwords.sh` regenerates it): lower-cased, 8 to 64 characters, sorted by
/// bytes, one per line.
const COMMON_PASSWORDS: &str = include_str!("../data/common-passwords.txt");

/// Whether `s` is on the list of common passwords, ignoring case. A binary search over the
/// sorted lines of the embedded list: no allocation but the lower-cased value, nothing built
/// at start-up.
pub fn is_common_password(s: &str) -> bool {
    let wanted = s.to_lowercase();
    let list = COMMON_PASSWORDS.as_bytes();
    let (mut lo, mut hi) = (0usize, list.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // The line that holds byte `mid`.
        let start = list[..mid].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let end = list[mid..].iter().position(|&b| b == b'\n').map_or(list.len(), |i| mid + i);
        match list[start..end].cmp(wanted.as_bytes()) {
            std::cmp::Ordering::Equal => return true,
            std::cmp::Ordering::Less => lo = end + 1,
            std::cmp::Ordering::Greater => hi = start,
        }
    }
    false
}

/// Whether the password is the e-mail address, contains its local part (of 4 characters or
/// more), or is a part of the address (its local part or a domain label of 3 characters or
/// more) with only digits and punctuation around it: `ann.smith1990`, `example2024!` for
/// `ann.smith@example.com`.
fn built_from_email(password: &str, email: &Email) -> bool {
    let p = password.to_lowercase();
    let (local, domain) = email.as_str().split_once('@').unwrap_or((email.as_str(), ""));
    if p.contains(email.as_str()) || (local.chars().count() >= 4 && p.contains(local)) {
        return true;
    }
    let core = p.trim_matches(|c: char| !c.is_alphabetic());
    std::iter::once(local).chain(domain.split('.')).any(|part| part.chars().count() >= 3 && core == part)
}

impl Password {
    /// A password's length rule only (the rule of sign-in, which must accept every password
    /// that was ever set).
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

    /// A password being set for the account of `email` (when known): the length rule, then
    /// not common and not built from the address.
    pub fn new_for(s: &str, email: Option<&Email>) -> Result<Self, PasswordError> {
        let password = Self::parse(s)?;
        if is_common_password(s) {
            return Err(PasswordError::Common);
        }
        if email.is_some_and(|email| built_from_email(s, email)) {
            return Err(PasswordError::FromEmail);
        }
        Ok(password)
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

    /// Bytes of attachment files an account may keep; `None` means unlimited (docs/api.md,
    /// "Attachments").
    pub fn attachment_storage_bytes(self) -> Option<u64> {
        const MB: u64 = 1024 * 1024;
        match self {
            Plan::Free => Some(100 * MB),
            Plan::Plus => Some(2 * 1024 * MB),
            Plan::Pro => Some(20 * 1024 * MB),
            Plan::Enterprise => None,
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
    fn common_and_breached_passwords_are_refused_whatever_their_case() {
        let ann = Email::parse("ann.smith@example.com").unwrap();
        for common in ["password", "12345678", "aaaaaaaa", "Password1", "QWERTYUIOP", "iloveyou", "trustno1"] {
            assert_eq!(Password::new_for(common, Some(&ann)), Err(PasswordError::Common), "{common:?}");
        }
        // The first and the last values of the sorted list are found too.
        let first = COMMON_PASSWORDS.lines().next().unwrap();
        let last = COMMON_PASSWORDS.lines().last().unwrap();
        assert!(is_common_password(first) && is_common_password(last));
        assert!(COMMON_PASSWORDS.lines().count() >= 100_000, "at least the 100,000 most common");
        for fine in [
            "correct horse battery",
            "Sturdy-Password-42",
            "Operator-Password-9",
            "zq8#Lm2!vR0",
            "日本語のパスワードです",
        ] {
            assert!(Password::new_for(fine, Some(&ann)).is_ok(), "{fine:?}");
        }
        // No composition rule: eight letters of a sentence are fine when not on the list.
        assert!(Password::new_for("tree frog sunrise", Some(&ann)).is_ok());
    }

    #[test]
    fn passwords_built_from_the_address_are_refused() {
        let ann = Email::parse("ann.smith@example.com").unwrap();
        for built in
            ["ann.smith@example.com", "ann.smith1990", "My-ann.smith-pw", "example2024!", "2024EXAMPLE", "ANN.SMITH!!"]
        {
            assert_eq!(Password::new_for(built, Some(&ann)), Err(PasswordError::FromEmail), "{built:?}");
        }
        // A short local part is only refused whole; other words that merely share letters pass.
        let bo = Email::parse("bo@mail.example").unwrap();
        assert!(Password::new_for("bobcat sunrise", Some(&bo)).is_ok());
        assert!(Password::new_for("examples of things", Some(&ann)).is_ok());
    }

    #[test]
    fn the_common_list_is_sorted_lower_cased_and_in_bounds() {
        let mut previous = "";
        for line in COMMON_PASSWORDS.lines() {
            assert!(previous < line, "{previous:?} before {line:?}");
            assert_eq!(line.to_lowercase(), line);
            assert!((PASSWORD_MIN_CHARS..=64).contains(&line.chars().count()), "{line:?}");
            previous = line;
        }
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
