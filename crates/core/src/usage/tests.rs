use std::sync::Arc;

use redline_domain::{OrgId, UserId};
use redline_ports::clock::MockClock;
use redline_ports::identity::MockIdentityStore;
use redline_ports::usage::{LedgerStatus, MockUsageStore, UsageSnapshot};

use super::*;

/// 2026-11-22T12:00:00Z: 8.5 days before the cycle resets.
const NOV: Millis = 1_795_348_800_000;
/// 2026-12-01T00:00:00Z.
const DEC_1: Millis = 1_796_083_200_000;
const DAY: Millis = 86_400_000;

fn clock(now: Millis) -> Arc<MockClock> {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(now);
    Arc::new(c)
}

fn accounts(plan: Plan, monthly_limit_override: Option<i64>) -> MockIdentityStore {
    let mut store = MockIdentityStore::new();
    store.expect_plan_of().returning(move |_| Ok(PlanSettings { plan, monthly_limit_override }));
    store
}

fn usage(accounts: MockIdentityStore, ledger: MockUsageStore, now: Millis) -> Usage {
    Usage::new(Arc::new(accounts), Arc::new(ledger), clock(now))
}

fn owner() -> Owner {
    Owner::User(UserId::new())
}

fn entry(owner: Owner, request_id: &str, tier_ops: i64, promo_ops: i64, first: Option<&str>) -> LedgerEntry {
    LedgerEntry {
        request_id: request_id.to_owned(),
        owner,
        cycle: "2026-11".to_owned(),
        status: LedgerStatus::Charged,
        tier_ops,
        promo_ops,
        first_redemption: first.map(str::to_owned),
        created_at: NOV,
        settled_at: Some(NOV + 1_000),
    }
}

fn grant(id: &str, owner: Owner, remaining: i64, expires_at: Option<Millis>) -> PromoGrantRecord {
    PromoGrantRecord {
        redemption_id: id.to_owned(),
        owner,
        name: format!("Promotion {id}"),
        code: Some(id.to_uppercase()),
        ops_granted: 10,
        ops_remaining: remaining,
        expires_at,
        created_at: NOV - 30 * DAY,
    }
}

fn snapshot_returns(ledger: &mut MockUsageStore, expected_cycle: &'static str, snapshot: UsageSnapshot) {
    ledger.expect_snapshot().withf(move |_, cycle| cycle == expected_cycle).returning(move |_, _| Ok(snapshot.clone()));
}

fn admission(owner: Owner, request_id: &str) -> Admission {
    Admission { owner, request_id: request_id.to_owned(), cycle: "2026-11".to_owned() }
}

// ---------------------------------------------------------------------------------------------
// admit.

#[tokio::test]
async fn admit_holds_in_the_current_cycle_with_the_effective_limit() {
    let who = owner();
    for (plan, limit_override, limit) in [
        (Plan::Free, None, Some(500)),
        (Plan::Pro, Some(7), Some(7)),
        (Plan::Enterprise, None, None),
        (Plan::Free, Some(-1), None),
    ] {
        let mut ledger = MockUsageStore::new();
        ledger
            .expect_hold()
            .withf(move |o, id, cycle, l, now| {
                *o == who && id == "req-1" && cycle == "2026-11" && *l == limit && *now == NOV
            })
            .times(1)
            .returning(move |o, id, cycle, _, now| {
                Ok(HoldOutcome::Admitted(LedgerEntry {
                    request_id: id.to_owned(),
                    owner: o,
                    cycle: cycle.to_owned(),
                    status: LedgerStatus::Held,
                    tier_ops: 1,
                    promo_ops: 0,
                    first_redemption: None,
                    created_at: now,
                    settled_at: None,
                }))
            });
        let u = usage(accounts(plan, limit_override), ledger, NOV);
        let a = u.admit(who, "req-1").await.unwrap_or_else(|e| panic!("{plan:?} {limit_override:?}: {e:?}"));
        assert_eq!(a, admission(who, "req-1"));
    }
}

#[tokio::test]
async fn admit_refused_is_exhausted_with_the_limit_used_and_seconds_to_the_end_of_the_month() {
    let who = owner();
    // (now, tier_used, retry_after_secs): 8.5 days before December; an overrun shows as used;
    // one millisecond before the reset still waits one second.
    for (now, used, retry_after) in [(NOV, 2, 734_400), (NOV, 3, 734_400), (DEC_1 - 1, 2, 1), (DEC_1 - 1_500, 2, 2)] {
        let mut ledger = MockUsageStore::new();
        ledger
            .expect_hold()
            .withf(|_, _, cycle, limit, _| cycle == "2026-11" && *limit == Some(2))
            .times(1)
            .returning(|_, _, _, _, _| Ok(HoldOutcome::Refused));
        // An expired grant with operations left does not make the account "not exhausted".
        snapshot_returns(
            &mut ledger,
            "2026-11",
            UsageSnapshot { tier_used: used, grants: vec![grant("old", who, 5, Some(NOV - DAY))] },
        );
        let u = usage(accounts(Plan::Free, Some(2)), ledger, now);
        match u.admit(who, "req-1").await {
            Err(UsageError::Exhausted { limit, used: shown, retry_after_secs }) => {
                assert_eq!((limit, shown, retry_after_secs), (2, used, retry_after), "at {now}");
            }
            other => panic!("expected Exhausted, got {other:?}"),
        }
    }
    assert_eq!(Cycle::containing(NOV).seconds_until_reset(NOV), 734_400);
}

#[tokio::test]
async fn admit_of_an_unknown_account() {
    let mut accounts = MockIdentityStore::new();
    accounts.expect_plan_of().returning(|_| Err(StoreError::NotFound));
    let u = usage(accounts, MockUsageStore::new(), NOV);
    assert!(matches!(u.admit(owner(), "req-1").await, Err(UsageError::UnknownAccount)));

    let mut accounts = MockIdentityStore::new();
    accounts.expect_plan_of().returning(|_| Err(StoreError::Unavailable("down".into())));
    let u = usage(accounts, MockUsageStore::new(), NOV);
    assert!(matches!(u.admit(owner(), "req-1").await, Err(UsageError::Store(StoreError::Unavailable(_)))));
}

#[tokio::test]
async fn admit_store_errors_pass_through() {
    let mut ledger = MockUsageStore::new();
    ledger.expect_hold().returning(|_, _, _, _, _| Err(StoreError::Unavailable("busy".into())));
    let u = usage(accounts(Plan::Free, None), ledger, NOV);
    assert!(matches!(u.admit(owner(), "req-1").await, Err(UsageError::Store(StoreError::Unavailable(_)))));
}

// ---------------------------------------------------------------------------------------------
// charge.

#[tokio::test]
async fn charge_settles_ops_for_the_sections_edited() {
    let who = owner();
    for (sections, ops) in [(0, 1), (1, 1), (25, 1), (26, 2), (30, 2), (51, 3)] {
        let mut ledger = MockUsageStore::new();
        ledger
            .expect_settle()
            .withf(move |id, total, limit, now| id == "req-1" && *total == ops && *limit == Some(500) && *now == NOV)
            .times(1)
            .returning(move |id, total, _, _| Ok(entry(who, id, i64::try_from(total).unwrap(), 0, None)));
        snapshot_returns(&mut ledger, "2026-11", UsageSnapshot { tier_used: 12, grants: vec![] });
        let u = usage(accounts(Plan::Free, None), ledger, NOV);
        let info = u.charge(&admission(who, "req-1"), sections).await.unwrap();
        assert_eq!(
            info,
            UsageInfo {
                monthly_used: 12,
                monthly_limit: 500,
                monthly_remaining: 488,
                was_billable: true,
                ops_charged: i64::try_from(ops).unwrap(),
                quota_exhausted: false,
                subscription_tier: Plan::Free,
                bucket_used: Some(Bucket::Tier),
                redemption_id: None,
                promotions: vec![],
                resets_at: Cycle::containing(NOV).end_ms,
            },
            "{sections} sections"
        );
    }
}

#[tokio::test]
async fn charge_paid_by_a_grant_reports_the_promo_bucket_and_the_first_grant() {
    let who = owner();
    let mut ledger = MockUsageStore::new();
    // 30 sections = 2 operations: one from the tier, one from a grant (the tier is used up).
    ledger
        .expect_settle()
        .withf(|id, total, limit, _| id == "req-1" && *total == 2 && *limit == Some(2))
        .times(1)
        .returning(move |id, _, _, _| Ok(entry(who, id, 1, 1, Some("red-1"))));
    let g = grant("red-1", who, 4, None);
    snapshot_returns(&mut ledger, "2026-11", UsageSnapshot { tier_used: 2, grants: vec![g.clone()] });
    let u = usage(accounts(Plan::Free, Some(2)), ledger, NOV);
    let info = u.charge(&admission(who, "req-1"), 30).await.unwrap();
    assert!(info.was_billable);
    assert_eq!(info.ops_charged, 2);
    assert_eq!(info.bucket_used, Some(Bucket::Promo));
    assert_eq!(info.bucket_used.map(Bucket::as_str), Some("promo"));
    assert_eq!(info.redemption_id.as_deref(), Some("red-1"));
    assert_eq!((info.monthly_used, info.monthly_limit, info.monthly_remaining), (2, 2, 0));
    assert!(!info.quota_exhausted, "the grant still has operations");
    assert_eq!(
        info.promotions,
        vec![PromotionInfo {
            redemption_id: "red-1".into(),
            name: g.name,
            ops_remaining: 4,
            ops_granted: 10,
            expires_at: None
        }]
    );
    assert_eq!(Bucket::Tier.as_str(), "tier");
}

#[tokio::test]
async fn charge_shows_the_cycle_the_caller_is_in_now() {
    let who = owner();
    let now = DEC_1 + DAY;
    let mut ledger = MockUsageStore::new();
    ledger.expect_settle().withf(move |_, _, _, n| *n == now).times(1).returning(move |id, _, _, _| {
        Ok(entry(who, id, 3, 0, None)) // admitted (and charged) in November
    });
    // The usage shown is December's, not the admission's November.
    snapshot_returns(&mut ledger, "2026-12", UsageSnapshot { tier_used: 1, grants: vec![] });
    let u = usage(accounts(Plan::Plus, None), ledger, now);
    let info = u.charge(&admission(who, "req-1"), 60).await.unwrap();
    assert_eq!((info.ops_charged, info.monthly_used, info.monthly_remaining), (3, 1, 2_999));
}

#[tokio::test]
async fn charge_of_an_unknown_or_released_request_is_not_admitted() {
    let mut ledger = MockUsageStore::new();
    ledger.expect_settle().times(1).returning(|_, _, _, _| Err(StoreError::NotFound));
    let u = usage(accounts(Plan::Free, None), ledger, NOV);
    match u.charge(&admission(owner(), "req-404"), 3).await {
        Err(UsageError::NotAdmitted(id)) => assert_eq!(id, "req-404"),
        other => panic!("expected NotAdmitted, got {other:?}"),
    }

    let mut ledger = MockUsageStore::new();
    ledger.expect_settle().returning(|_, _, _, _| Err(StoreError::Other("boom".into())));
    let u = usage(accounts(Plan::Free, None), ledger, NOV);
    assert!(matches!(u.charge(&admission(owner(), "req-1"), 3).await, Err(UsageError::Store(StoreError::Other(_)))));
}

// ---------------------------------------------------------------------------------------------
// release.

#[tokio::test]
async fn release_swallows_not_found_and_passes_other_errors() {
    let who = owner();
    let mut ledger = MockUsageStore::new();
    ledger
        .expect_release()
        .withf(|id, now| id == "req-1" && *now == NOV)
        .times(1)
        .returning(move |id, _| Ok(LedgerEntry { status: LedgerStatus::Released, ..entry(who, id, 1, 0, None) }));
    ledger.expect_release().withf(|id, _| id == "req-404").times(1).returning(|_, _| Err(StoreError::NotFound));
    ledger
        .expect_release()
        .withf(|id, _| id == "req-down")
        .times(1)
        .returning(|_, _| Err(StoreError::Unavailable("down".into())));
    let u = usage(MockIdentityStore::new(), ledger, NOV);
    u.release(&admission(who, "req-1")).await.expect("released");
    u.release(&admission(who, "req-404")).await.expect("NotFound is swallowed");
    assert!(matches!(u.release(&admission(who, "req-down")).await, Err(UsageError::Store(StoreError::Unavailable(_)))));
}

// ---------------------------------------------------------------------------------------------
// redeem.

#[tokio::test]
async fn redeem_maps_the_store_answers() {
    let who = owner();
    let mut ledger = MockUsageStore::new();
    ledger
        .expect_redeem_code()
        .withf(move |o, code, redemption, now| {
            *o == who && code == "LAUNCH" && redemption.starts_with("red_") && redemption.len() > 4 && *now == NOV
        })
        .times(1)
        .returning(|o, code, redemption, now| {
            Ok(PromoGrantRecord {
                redemption_id: redemption.to_owned(),
                owner: o,
                name: "Launch week".into(),
                code: Some(code.to_owned()),
                ops_granted: 100,
                ops_remaining: 100,
                expires_at: Some(now + DAY),
                created_at: now,
            })
        });
    ledger.expect_redeem_code().withf(|_, code, _, _| code == "NOPE").returning(|_, _, _, _| Err(StoreError::NotFound));
    ledger
        .expect_redeem_code()
        .withf(|_, code, _, _| code == "TWICE")
        .returning(|_, _, _, _| Err(StoreError::Duplicate("promo_grants_owner_code".into())));
    ledger
        .expect_redeem_code()
        .withf(|_, code, _, _| code == "DOWN")
        .returning(|_, _, _, _| Err(StoreError::Unavailable("down".into())));
    let u = usage(MockIdentityStore::new(), ledger, NOV);

    // The code is trimmed.
    let p = u.redeem(who, "  LAUNCH \n").await.unwrap();
    assert!(p.redemption_id.starts_with("red_"), "{}", p.redemption_id);
    assert_eq!(
        p,
        PromotionInfo {
            redemption_id: p.redemption_id.clone(),
            name: "Launch week".into(),
            ops_remaining: 100,
            ops_granted: 100,
            expires_at: Some(NOV + DAY),
        }
    );
    assert!(matches!(u.redeem(who, "NOPE").await, Err(UsageError::UnknownCode)));
    assert!(matches!(u.redeem(who, "TWICE").await, Err(UsageError::AlreadyRedeemed)));
    assert!(matches!(u.redeem(who, "DOWN").await, Err(UsageError::Store(StoreError::Unavailable(_)))));
}

#[tokio::test]
async fn each_redemption_gets_a_fresh_id() {
    let ids = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = ids.clone();
    let mut ledger = MockUsageStore::new();
    ledger.expect_redeem_code().times(2).returning(move |o, _, redemption, now| {
        seen.lock().unwrap().push(redemption.to_owned());
        Ok(PromoGrantRecord { redemption_id: redemption.to_owned(), ..grant("x", o, 1, Some(now + DAY)) })
    });
    let u = usage(MockIdentityStore::new(), ledger, NOV);
    u.redeem(owner(), "A").await.unwrap();
    u.redeem(owner(), "B").await.unwrap();
    let ids = ids.lock().unwrap();
    assert_ne!(ids[0], ids[1]);
}

// ---------------------------------------------------------------------------------------------
// current.

#[tokio::test]
async fn current_lists_live_grants_with_operations_left_oldest_expiring_first() {
    let who = Owner::Org(OrgId::new());
    let grants = vec![
        grant("never", who, 3, None),
        grant("expired", who, 5, Some(NOV - 1)),
        grant("at-now", who, 5, Some(NOV)),
        grant("later", who, 2, Some(NOV + 20 * DAY)),
        grant("used-up", who, 0, Some(NOV + DAY)),
        grant("sooner", who, 1, Some(NOV + 10 * DAY)),
    ];
    let mut ledger = MockUsageStore::new();
    snapshot_returns(&mut ledger, "2026-11", UsageSnapshot { tier_used: 40, grants });
    let u = usage(accounts(Plan::Free, Some(50)), ledger, NOV);
    let info = u.current(who).await.unwrap();
    let listed: Vec<(&str, i64, Option<Millis>)> =
        info.promotions.iter().map(|p| (p.redemption_id.as_str(), p.ops_remaining, p.expires_at)).collect();
    assert_eq!(
        listed,
        vec![("sooner", 1, Some(NOV + 10 * DAY)), ("later", 2, Some(NOV + 20 * DAY)), ("never", 3, None)]
    );
    assert!(info.promotions.iter().all(|p| p.ops_granted == 10 && p.name == format!("Promotion {}", p.redemption_id)));
    assert_eq!(
        (info.monthly_used, info.monthly_limit, info.monthly_remaining, info.quota_exhausted),
        (40, 50, 10, false)
    );
    assert_eq!(info.subscription_tier, Plan::Free);
    assert!(!info.was_billable);
    assert_eq!((info.ops_charged, info.bucket_used, info.redemption_id), (0, None, None));
}

#[tokio::test]
async fn current_over_the_limit_shows_zero_remaining_and_exhaustion() {
    let who = owner();
    let mut ledger = MockUsageStore::new();
    snapshot_returns(
        &mut ledger,
        "2026-11",
        UsageSnapshot {
            tier_used: 503,
            grants: vec![grant("expired", who, 5, Some(NOV - DAY)), grant("used-up", who, 0, None)],
        },
    );
    let u = usage(accounts(Plan::Free, None), ledger, NOV);
    let info = u.current(who).await.unwrap();
    assert_eq!((info.monthly_used, info.monthly_limit, info.monthly_remaining), (503, 500, 0));
    assert!(info.quota_exhausted);
    assert!(info.promotions.is_empty());
}

#[tokio::test]
async fn current_of_an_unlimited_account() {
    let who = owner();
    for (plan, limit_override) in [(Plan::Enterprise, None), (Plan::Pro, Some(-1))] {
        let mut ledger = MockUsageStore::new();
        snapshot_returns(&mut ledger, "2026-11", UsageSnapshot { tier_used: 123_456, grants: vec![] });
        let u = usage(accounts(plan, limit_override), ledger, NOV);
        let info = u.current(who).await.unwrap();
        assert_eq!(
            (info.monthly_used, info.monthly_limit, info.monthly_remaining, info.quota_exhausted),
            (123_456, -1, -1, false),
            "{plan:?} {limit_override:?}"
        );
        assert_eq!(info.subscription_tier, plan);
    }
}

#[tokio::test]
async fn current_of_an_unknown_account() {
    let mut accounts = MockIdentityStore::new();
    accounts.expect_plan_of().returning(|_| Err(StoreError::NotFound));
    let u = usage(accounts, MockUsageStore::new(), NOV);
    assert!(matches!(u.current(owner()).await, Err(UsageError::UnknownAccount)));
}
