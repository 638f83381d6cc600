//! Session identifiers: chosen by the caller, one per document.

use std::fmt;

/// The longest session id accepted (the contract (docs/api.md), Limits).
pub const SESSION_ID_MAX_LEN: usize = 256;
/// The pattern the contract states, as reported in validation errors.
pub const SESSION_ID_PATTERN: &str = "^[A-Za-z0-9_.-]+$";

/// A caller-chosen session id: letters, digits, `_`, `-` and `.` only, 1 to 256 characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

/// Why a session id was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SessionIdError {
    #[error("String should have at least 1 character")]
    Empty,
    #[error("String should have at most {SESSION_ID_MAX_LEN} characters")]
    TooLong,
    #[error("String should match pattern '{SESSION_ID_PATTERN}'")]
    Pattern,
}

impl SessionId {
    pub fn parse(s: &str) -> Result<Self, SessionIdError> {
        if s.is_empty() {
            return Err(SessionIdError::Empty);
        }
        if s.chars().count() > SESSION_ID_MAX_LEN {
            return Err(SessionIdError::TooLong);
        }
        if !s.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')) {
            return Err(SessionIdError::Pattern);
        }
        Ok(Self(s.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn contract_examples() {
        assert!(SessionId::parse("Ab_9-x.Y").is_ok());
        assert_eq!(SessionId::parse(""), Err(SessionIdError::Empty));
        for bad in ["has space", "slash/inside", "semi;colon", "quote'", "star*", "percent%20", "é"] {
            assert_eq!(SessionId::parse(bad), Err(SessionIdError::Pattern), "{bad}");
        }
        assert!(SessionId::parse(&"a".repeat(256)).is_ok());
        assert_eq!(SessionId::parse(&"a".repeat(257)), Err(SessionIdError::TooLong));
    }

    proptest! {
        #[test]
        fn accepts_exactly_the_pattern(s in "\\PC{0,300}") {
            let ok = !s.is_empty()
                && s.chars().count() <= 256
                && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
            prop_assert_eq!(SessionId::parse(&s).is_ok(), ok);
        }

        #[test]
        fn valid_ids_round_trip(s in "[A-Za-z0-9_.-]{1,256}") {
            let id = SessionId::parse(&s).unwrap();
            prop_assert_eq!(id.as_str(), s.as_str());
        }
    }
}
