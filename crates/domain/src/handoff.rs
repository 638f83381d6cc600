//! Agent handoff: an agent-created account is taken over by a human operator with a link
//! token and a 6-digit code (docs/api.md, "Agents").

/// Wrong codes after which a link is disabled for ever.
pub const MAX_WRONG_CODES: u32 = 5;

/// What a stored handoff looks like to the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandoffState {
    pub expires_at_ms: i64,
    pub wrong_codes: u32,
    pub claimed: bool,
}

/// Why a handoff link cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandoffRefusal {
    /// Unknown, expired or already claimed: 404.
    NotFound,
    /// Disabled after too many wrong codes: 410, for ever.
    Disabled,
}

impl HandoffState {
    /// Whether the link may be looked at or claimed now. A disabled link stays disabled even
    /// after it would have expired.
    pub fn usable(&self, now_ms: i64) -> Result<(), HandoffRefusal> {
        if self.wrong_codes >= MAX_WRONG_CODES {
            Err(HandoffRefusal::Disabled)
        } else if self.claimed || now_ms >= self.expires_at_ms {
            Err(HandoffRefusal::NotFound)
        } else {
            Ok(())
        }
    }

    /// Attempts left after one more wrong code has been recorded in `self`.
    pub fn attempts_left(&self) -> u32 {
        MAX_WRONG_CODES.saturating_sub(self.wrong_codes)
    }
}

/// Whether `code` is a well-formed 6-digit code.
pub fn is_code_shaped(code: &str) -> bool {
    code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(wrong: u32, claimed: bool, expires: i64) -> HandoffState {
        HandoffState { expires_at_ms: expires, wrong_codes: wrong, claimed }
    }

    #[test]
    fn rules() {
        assert_eq!(state(0, false, 100).usable(50), Ok(()));
        assert_eq!(state(4, false, 100).usable(50), Ok(()));
        assert_eq!(state(5, false, 100).usable(50), Err(HandoffRefusal::Disabled));
        assert_eq!(state(5, false, 100).usable(500), Err(HandoffRefusal::Disabled));
        assert_eq!(state(0, false, 100).usable(100), Err(HandoffRefusal::NotFound));
        assert_eq!(state(0, true, 100).usable(50), Err(HandoffRefusal::NotFound));
        assert_eq!(state(1, false, 100).attempts_left(), 4);
        assert_eq!(state(9, false, 100).attempts_left(), 0);
    }

    #[test]
    fn code_shape() {
        assert!(is_code_shaped("012345"));
        assert!(!is_code_shaped("12345"));
        assert!(!is_code_shaped("12345a"));
        assert!(!is_code_shaped("١٢٣٤٥٦"));
    }
}
