//! Throttling of guesses (sign-in passwords, API keys): a few free failures per scope, then
//! delays that double with each failure up to a cap, forgotten a day after the last failure
//! (docs/api.md, "Sign-in throttling").
//!
//! An attempt is *taken* before its secret is checked (so a burst of parallel guesses is
//! counted as it arrives, not after its hashes) and *given back* when the secret was right.
//! A refused attempt changes nothing: it neither counts nor pushes the wait further, so an
//! attacker cannot keep a victim out for longer than one cap after they stop.

use crate::time_util::Millis;

/// How much guessing one scope tolerates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThrottlePolicy {
    /// Failures answered without any wait.
    pub free: u32,
    /// The wait after the first failure past `free`; it doubles with each further one.
    pub base_ms: Millis,
    /// The longest wait.
    pub cap_ms: Millis,
    /// Failures older than this are forgotten.
    pub window_ms: Millis,
}

/// One e-mail address being guessed: 5 free failures, then 1 s, 2 s, 4 s … up to 15 minutes.
pub const ACCOUNT: ThrottlePolicy = ThrottlePolicy { free: 5, base_ms: 1_000, cap_ms: 15 * 60_000, window_ms: DAY };

/// One client address: more free failures than an account (many people can share one address
/// behind a NAT), the same growth and cap. It also brakes spraying one password over many
/// accounts.
pub const ADDRESS: ThrottlePolicy = ThrottlePolicy { free: 20, base_ms: 1_000, cap_ms: 15 * 60_000, window_ms: DAY };

/// One API-key lookup prefix from one client address: a wrong key that shares a real key's
/// prefix costs a slow hash. Scoped by address too, so that strangers cannot slow down the
/// owner's own key.
pub const KEY_PREFIX: ThrottlePolicy = ThrottlePolicy { free: 5, base_ms: 1_000, cap_ms: 15 * 60_000, window_ms: DAY };

/// Password-reset mails to one account: 3 free, then a minute, doubling up to an hour (each
/// request counts: a reset mail is sent whether or not the last one was used).
pub const RESET_ACCOUNT: ThrottlePolicy =
    ThrottlePolicy { free: 3, base_ms: 60_000, cap_ms: 3_600_000, window_ms: DAY };

/// Password-reset requests from one client address, whatever the addresses asked for.
pub const RESET_ADDRESS: ThrottlePolicy =
    ThrottlePolicy { free: 10, base_ms: 60_000, cap_ms: 3_600_000, window_ms: DAY };

/// Verification mails one account asks for: as password-reset mails to one account.
pub const VERIFICATION_MAIL: ThrottlePolicy = RESET_ACCOUNT;

const DAY: Millis = 24 * 3600 * 1000;

/// What is stored of one scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThrottleState {
    /// Attempts taken and not given back within the window.
    pub failures: u32,
    /// When the last attempt was taken.
    pub last_at: Millis,
}

impl ThrottlePolicy {
    /// The wait owed after `failures` failures, the last of which was at `last_at`.
    pub fn wait_ms(&self, state: ThrottleState, now: Millis) -> Millis {
        let state = self.current(state, now);
        if state.failures < self.free {
            return 0;
        }
        let doublings = (state.failures - self.free).min(40);
        let delay = self.base_ms.saturating_mul(1_i64 << doublings).min(self.cap_ms);
        (state.last_at + delay - now).max(0)
    }

    /// Takes one attempt at `now`: `Ok` with the state to store, or `Err` with the wait in
    /// milliseconds (at least 1) when the scope is still waiting.
    pub fn take(&self, state: ThrottleState, now: Millis) -> Result<ThrottleState, Millis> {
        match self.wait_ms(state, now) {
            0 => Ok(ThrottleState { failures: self.current(state, now).failures.saturating_add(1), last_at: now }),
            wait => Err(wait),
        }
    }

    /// The state with failures outside the window forgotten.
    fn current(&self, state: ThrottleState, now: Millis) -> ThrottleState {
        if now - state.last_at >= self.window_ms {
            ThrottleState::default()
        } else {
            state
        }
    }
}

/// Whole seconds to announce in `Retry-After` for a wait in milliseconds (at least 1).
pub fn retry_after_secs(wait_ms: Millis) -> u64 {
    u64::try_from(wait_ms).unwrap_or(0).div_ceil(1000).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fail(policy: &ThrottlePolicy, state: ThrottleState, now: Millis) -> ThrottleState {
        policy.take(state, now).expect("not waiting")
    }

    #[test]
    fn free_failures_then_doubling_waits_up_to_the_cap() {
        let p = ACCOUNT;
        let mut s = ThrottleState::default();
        for _ in 0..5 {
            s = fail(&p, s, 0);
        }
        assert_eq!(p.take(s, 0), Err(1_000));
        s = fail(&p, s, 1_000);
        assert_eq!(p.take(s, 1_000), Err(2_000));
        s = fail(&p, s, 3_000);
        assert_eq!(p.take(s, 3_000), Err(4_000));
        let s = ThrottleState { failures: 40, last_at: 0 };
        assert_eq!(p.take(s, 0), Err(15 * 60_000));
        assert_eq!(p.take(s, 15 * 60_000).map(|s| s.failures), Ok(41));
    }

    #[test]
    fn a_refused_attempt_changes_nothing_and_old_failures_are_forgotten() {
        let p = ACCOUNT;
        let s = ThrottleState { failures: 30, last_at: 1_000 };
        assert!(p.take(s, 2_000).is_err());
        assert_eq!(p.wait_ms(s, 2_000), 15 * 60_000 - 1_000);
        assert_eq!(p.take(s, 1_000 + DAY), Ok(ThrottleState { failures: 1, last_at: 1_000 + DAY }));
    }

    #[test]
    fn retry_after_rounds_up() {
        assert_eq!(retry_after_secs(1), 1);
        assert_eq!(retry_after_secs(1_000), 1);
        assert_eq!(retry_after_secs(1_001), 2);
        assert_eq!(retry_after_secs(0), 1);
    }

    proptest! {
        /// The wait never exceeds the cap, whatever the history: no permanent lockout.
        #[test]
        fn the_wait_is_bounded_by_the_cap(failures in 0u32..u32::MAX, last_at in -1_000_000i64..1_000_000, now in -1_000_000i64..2_000_000) {
            for p in [ACCOUNT, ADDRESS, KEY_PREFIX] {
                let w = p.wait_ms(ThrottleState { failures, last_at }, now);
                // A last attempt "in the future" (clock skew between replicas) adds its lead.
                prop_assert!((0..=p.cap_ms + (last_at - now).max(0)).contains(&w));
            }
        }
    }
}
