//! Usage metering: monthly cycles, plan limits, promotion grants and how a charge is drawn
//! (the contract's UsageInfo; docs/api.md, "Usage and billing"). Pure arithmetic, exhaustively tested.
//!
//! The rules:
//! - A cycle is a calendar month in UTC.
//! - A billable turn costs `max(1, ceil(sections_edited / 25))` operations.
//! - A request is admitted when the tier has operations left this cycle, or a live (not
//!   expired) promotion grant does. Unlimited plans always admit.
//! - A charge draws from the tier first (up to its limit), then from live grants
//!   oldest-expiring first (grants that never expire last). What is still owed after that
//!   (an admitted turn always completes and is charged in full) goes to the tier, which may
//!   then pass its limit: `monthly_remaining` is shown as 0, never below.

use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time};

use crate::account::Plan;
use crate::time_util::Millis;

/// Sections edited per operation.
pub const SECTIONS_PER_OP: u64 = 25;

/// Operations a turn that edited `sections_edited` sections costs.
pub fn ops_for_sections(sections_edited: u64) -> u64 {
    sections_edited.div_ceil(SECTIONS_PER_OP).max(1)
}

/// A billing cycle: one calendar month in UTC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cycle {
    /// `YYYY-MM`.
    pub id: String,
    pub start_ms: Millis,
    pub end_ms: Millis,
}

fn month_start_ms(year: i32, month: Month) -> Millis {
    let date = Date::from_calendar_date(year, month, 1).unwrap_or(Date::MIN);
    let nanos = PrimitiveDateTime::new(date, Time::MIDNIGHT).assume_utc().unix_timestamp_nanos();
    i64::try_from(nanos / 1_000_000).unwrap_or(0)
}

impl Cycle {
    /// The cycle that contains `now`.
    pub fn containing(now: Millis) -> Cycle {
        let t = OffsetDateTime::from_unix_timestamp_nanos(i128::from(now) * 1_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH);
        let (year, month) = (t.year(), t.month());
        let (next_year, next_month) =
            if month == Month::December { (year + 1, Month::January) } else { (year, month.next()) };
        Cycle {
            id: format!("{year:04}-{:02}", u8::from(month)),
            start_ms: month_start_ms(year, month),
            end_ms: month_start_ms(next_year, next_month),
        }
    }

    /// Whole seconds from `now` until the cycle resets (at least 1).
    pub fn seconds_until_reset(&self, now: Millis) -> u64 {
        u64::try_from((self.end_ms - now).max(0)).unwrap_or(0).div_ceil(1000).max(1)
    }
}

/// Operations per cycle of an account: the override when set (-1 = unlimited), else the
/// plan's. `None` means unlimited.
pub fn effective_limit(plan: Plan, monthly_limit_override: Option<i64>) -> Option<u64> {
    match monthly_limit_override {
        Some(n) if n < 0 => None,
        Some(n) => Some(u64::try_from(n).unwrap_or(0)),
        None => plan.monthly_ops(),
    }
}

/// A promotion grant as the rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub redemption_id: String,
    pub remaining: u64,
    pub expires_at: Option<Millis>,
    pub created_at: Millis,
}

impl Grant {
    pub fn is_live(&self, now: Millis) -> bool {
        self.expires_at.is_none_or(|at| at > now)
    }
}

/// Live grants, oldest-expiring first (never-expiring last; ties by age, then id).
pub fn drawing_order(grants: &[Grant], now: Millis) -> Vec<&Grant> {
    let mut live: Vec<&Grant> = grants.iter().filter(|g| g.is_live(now)).collect();
    live.sort_by(|a, b| {
        let key = |g: &Grant| (g.expires_at.is_none(), g.expires_at.unwrap_or(i64::MAX), g.created_at);
        key(a).cmp(&key(b)).then_with(|| a.redemption_id.cmp(&b.redemption_id))
    });
    live
}

/// Whether a billable request may start now.
pub fn can_admit(limit: Option<u64>, tier_used: u64, grants: &[Grant], now: Millis) -> bool {
    match limit {
        None => true,
        Some(limit) => tier_used < limit || grants.iter().any(|g| g.is_live(now) && g.remaining > 0),
    }
}

/// Where a charge's operations come from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Draw {
    /// Operations charged to the tier (overrun included).
    pub tier: u64,
    /// Operations drawn from each grant, in drawing order.
    pub promos: Vec<(String, u64)>,
}

impl Draw {
    pub fn total(&self) -> u64 {
        self.tier + self.promos.iter().map(|(_, n)| n).sum::<u64>()
    }

    /// Operations drawn from promotion grants.
    pub fn promo_total(&self) -> u64 {
        self.total() - self.tier
    }

    /// The grant the first promotion operation came from.
    pub fn first_grant(&self) -> Option<&str> {
        self.promos.first().map(|(id, _)| id.as_str())
    }
}

/// Draws `ops` operations: tier first, then live grants oldest-expiring first, the rest
/// (overrun) to the tier.
pub fn allocate(ops: u64, limit: Option<u64>, tier_used: u64, grants: &[Grant], now: Millis) -> Draw {
    let Some(limit) = limit else {
        return Draw { tier: ops, promos: Vec::new() };
    };
    let mut owed = ops;
    let mut draw = Draw { tier: owed.min(limit.saturating_sub(tier_used)), promos: Vec::new() };
    owed -= draw.tier;
    for grant in drawing_order(grants, now) {
        if owed == 0 {
            break;
        }
        let take = owed.min(grant.remaining);
        if take > 0 {
            draw.promos.push((grant.redemption_id.clone(), take));
            owed -= take;
        }
    }
    draw.tier += owed;
    draw
}

/// The counters shown to a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    pub used: u64,
    /// -1 when unlimited.
    pub limit: i64,
    /// -1 when unlimited; never below 0.
    pub remaining: i64,
    /// The tier is used up and no live grant has operations left.
    pub quota_exhausted: bool,
}

pub fn standing(limit: Option<u64>, tier_used: u64, grants: &[Grant], now: Millis) -> Standing {
    let used = tier_used;
    match limit {
        None => Standing { used, limit: -1, remaining: -1, quota_exhausted: false },
        Some(limit) => Standing {
            used,
            limit: i64::try_from(limit).unwrap_or(i64::MAX),
            remaining: i64::try_from(limit.saturating_sub(used)).unwrap_or(i64::MAX),
            quota_exhausted: !can_admit(Some(limit), used, grants, now),
        },
    }
}

/// A promotion code as created: trimmed, 1 to 64 characters, each an ASCII letter, digit or
/// punctuation mark (what a user can type back on any keyboard, and what both databases fold
/// alike: PostgreSQL's `lower` folds every script, SQLite's only ASCII). It is kept as written
/// and redeemed without regard to case: `launch1` finds `LAUNCH1`, and a second code differing
/// only in case is taken.
pub fn promo_code(raw: &str) -> Result<String, &'static str> {
    let code = raw.trim();
    if code.is_empty() || code.chars().count() > 64 {
        return Err("a promotion code must be 1 to 64 characters");
    }
    if !code.chars().all(|c| c.is_ascii_graphic()) {
        return Err("a promotion code must be ASCII letters, digits and punctuation, without spaces");
    }
    Ok(code.to_owned())
}

#[cfg(test)]
mod tests {
    #[test]
    fn promotion_codes_are_what_a_user_can_type() {
        assert_eq!(super::promo_code(" launch-1_B ").unwrap(), "launch-1_B");
        assert_eq!(super::promo_code("SPRING-25%!").unwrap(), "SPRING-25%!");
        for bad in ["", "  ", "a b", "a\u{a0}b", "x\u{1}", "x\u{1b}[31m", &"A".repeat(65), "café", "ÄBC", "東京"] {
            assert!(super::promo_code(bad).is_err(), "{bad:?}");
        }
        assert_eq!(super::promo_code(&"z".repeat(64)).unwrap(), "z".repeat(64));
    }

    use super::*;
    use proptest::prelude::*;

    fn grant(id: &str, remaining: u64, expires_at: Option<Millis>, created_at: Millis) -> Grant {
        Grant { redemption_id: id.into(), remaining, expires_at, created_at }
    }

    #[test]
    fn ops_per_sections() {
        assert_eq!(ops_for_sections(0), 1);
        assert_eq!(ops_for_sections(1), 1);
        assert_eq!(ops_for_sections(25), 1);
        assert_eq!(ops_for_sections(26), 2);
        assert_eq!(ops_for_sections(30), 2);
        assert_eq!(ops_for_sections(51), 3);
    }

    #[test]
    fn cycles_are_calendar_months_in_utc() {
        // 2026-11-22T12:00:00Z
        let c = Cycle::containing(1_795_348_800_000);
        assert_eq!(c.id, "2026-11");
        assert_eq!(c.start_ms, 1_793_491_200_000); // 2026-11-01
        assert_eq!(c.end_ms, 1_796_083_200_000); // 2026-12-01
        let dec = Cycle::containing(c.end_ms);
        assert_eq!(dec.id, "2026-12");
        assert_eq!(Cycle::containing(dec.end_ms).id, "2027-01");
        assert_eq!(Cycle::containing(c.end_ms - 1).id, "2026-11");
        assert_eq!(c.seconds_until_reset(c.end_ms - 1), 1);
        assert_eq!(c.seconds_until_reset(c.end_ms - 86_400_000), 86_400);
    }

    #[test]
    fn limits() {
        assert_eq!(effective_limit(Plan::Free, None), Some(500));
        assert_eq!(effective_limit(Plan::Enterprise, None), None);
        assert_eq!(effective_limit(Plan::Free, Some(2)), Some(2));
        assert_eq!(effective_limit(Plan::Pro, Some(-1)), None);
    }

    #[test]
    fn the_worked_example_of_decisions_md() {
        // limit 2, used 1; a turn that edits 30 sections is charged 2.
        let d = allocate(ops_for_sections(30), Some(2), 1, &[], 0);
        assert_eq!(d, Draw { tier: 2, promos: vec![] });
        let s = standing(Some(2), 3, &[], 0);
        assert_eq!((s.used, s.remaining, s.quota_exhausted), (3, 0, true));
        assert!(!can_admit(Some(2), 3, &[], 0));
        // used equals the limit exactly: exhausted too
        assert!(standing(Some(2), 2, &[], 0).quota_exhausted);
    }

    #[test]
    fn tier_then_oldest_expiring_grant_then_overrun() {
        let grants = [grant("late", 5, Some(2_000), 1), grant("never", 5, None, 0), grant("soon", 1, Some(1_000), 2)];
        let d = allocate(4, Some(10), 9, &grants, 0);
        assert_eq!(d, Draw { tier: 1, promos: vec![("soon".into(), 1), ("late".into(), 2)] });
        let d = allocate(20, Some(10), 10, &grants, 0);
        assert_eq!(d.promos, vec![("soon".into(), 1), ("late".into(), 5), ("never".into(), 5)]);
        assert_eq!(d.tier, 9);
        // expired grants are never drawn
        let d = allocate(2, Some(1), 1, &grants, 1_500);
        assert_eq!(d.promos, vec![("late".into(), 2)]);
    }

    #[test]
    fn admission() {
        assert!(can_admit(None, 1_000_000, &[], 0));
        assert!(can_admit(Some(1), 0, &[], 0));
        assert!(!can_admit(Some(1), 1, &[], 0));
        assert!(can_admit(Some(1), 1, &[grant("g", 1, None, 0)], 0));
        assert!(!can_admit(Some(1), 1, &[grant("g", 0, None, 0)], 0));
        assert!(!can_admit(Some(1), 1, &[grant("g", 3, Some(10), 0)], 10));
        assert_eq!(standing(None, 7, &[], 0), Standing { used: 7, limit: -1, remaining: -1, quota_exhausted: false });
    }

    fn arb_grants() -> impl Strategy<Value = Vec<Grant>> {
        prop::collection::vec((0u64..20, prop::option::of(0i64..100), 0i64..100), 0..6)
            .prop_map(|v| v.into_iter().enumerate().map(|(i, (r, e, c))| grant(&format!("g{i}"), r, e, c)).collect())
    }

    proptest! {
        #[test]
        fn a_charge_is_drawn_in_full_and_by_the_rules(
            ops in 1u64..100, limit in prop::option::of(0u64..50), used in 0u64..60, grants in arb_grants(), now in 0i64..100,
        ) {
            let d = allocate(ops, limit, used, &grants, now);
            prop_assert_eq!(d.total(), ops);
            let order: Vec<&str> = drawing_order(&grants, now).iter().map(|g| g.redemption_id.as_str()).collect();
            let mut last_index = 0;
            for (id, n) in &d.promos {
                let g = grants.iter().find(|g| &g.redemption_id == id).unwrap();
                prop_assert!(g.is_live(now), "expired grant drawn");
                prop_assert!(*n <= g.remaining && *n > 0);
                let idx = order.iter().position(|o| o == id).unwrap();
                prop_assert!(idx >= last_index, "grants drawn out of order");
                last_index = idx;
            }
            if let Some(limit) = limit {
                let headroom = limit.saturating_sub(used);
                // promos only once the tier is used up
                if !d.promos.is_empty() { prop_assert!(d.tier >= headroom.min(ops)); }
                // overrun only once every live grant is used up
                if d.tier > headroom {
                    let promo_total: u64 = d.promos.iter().map(|(_, n)| n).sum();
                    let live_total: u64 = grants.iter().filter(|g| g.is_live(now)).map(|g| g.remaining).sum();
                    prop_assert_eq!(promo_total, live_total);
                }
                let s = standing(Some(limit), used + d.tier, &grants, now);
                prop_assert!(s.remaining >= 0);
            } else {
                prop_assert!(d.promos.is_empty());
            }
        }
    }
}
