//! A per-address cooldown (agent signup). Kept in memory per replica: it is an abuse brake,
//! not an accounting rule, so a client that alternates replicas at most doubles its rate.
//! Bounded: stale entries are swept when the map grows.

use std::collections::HashMap;
use std::sync::Mutex;

use redline_domain::time_util::Millis;

pub struct Cooldown {
    period_ms: Millis,
    last: Mutex<HashMap<String, Millis>>,
}

const SWEEP_AT: usize = 50_000;

impl Cooldown {
    pub fn new(period_ms: Millis) -> Self {
        Self { period_ms, last: Mutex::new(HashMap::new()) }
    }

    /// Records an attempt from `addr` at `now`; `Err(seconds)` (at least 1) when the previous
    /// admitted attempt was less than one period ago.
    pub fn admit(&self, addr: &str, now: Millis) -> Result<(), u64> {
        if self.period_ms <= 0 {
            return Ok(());
        }
        let mut map = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&at) = map.get(addr) {
            let wait = at + self.period_ms - now;
            if wait > 0 {
                return Err(u64::try_from(wait).unwrap_or(u64::MAX).div_ceil(1000).max(1));
            }
        }
        if map.len() >= SWEEP_AT {
            let period = self.period_ms;
            map.retain(|_, at| *at + period > now);
        }
        map.insert(addr.to_owned(), now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooldown() {
        let c = Cooldown::new(10_000);
        assert_eq!(c.admit("a", 0), Ok(()));
        assert_eq!(c.admit("a", 1), Err(10));
        assert_eq!(c.admit("a", 9_500), Err(1));
        assert_eq!(c.admit("b", 1), Ok(()));
        assert_eq!(c.admit("a", 10_000), Ok(()));
        let off = Cooldown::new(0);
        assert_eq!(off.admit("a", 0), Ok(()));
        assert_eq!(off.admit("a", 0), Ok(()));
    }
}
