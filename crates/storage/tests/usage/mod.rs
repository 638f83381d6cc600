//! The `UsageStore` part of the contract suite: holds, settlements, releases, promotion codes,
//! admission under concurrency, and the ledger rows agreeing with the counters. The bodies are
//! registered in `contract_tests!` of `contract.rs` like every other body.

use std::collections::BTreeMap;
use std::sync::Arc;

use redline_domain::usage::{allocate, can_admit, Cycle, Grant};
use redline_ports::usage::{HoldOutcome, LedgerEntry, LedgerStatus, UsageSnapshot};
use redline_ports::UsageStore;
use tokio::sync::Barrier;

use super::*;

// ---------------------------------------------------------------------------------------------
// Fixtures.

const DAY: Millis = 86_400_000;
/// 2026-11-22T12:00:00Z.
const NOV: Millis = 1_795_348_800_000;
/// 2026-12-02T00:00:00Z.
const DEC: Millis = 1_796_083_200_000 + DAY;

fn cycle(now: Millis) -> String {
    Cycle::containing(now).id
}

async fn account(db: &Db, address: &str) -> Owner {
    Owner::User(new_user(db, web_user(address, T0)).await.id)
}

/// A grant of `ops` operations, none used yet.
fn grant(id: &str, owner: Owner, ops: i64, expires_at: Option<Millis>, created_at: Millis) -> PromoGrantRecord {
    PromoGrantRecord {
        redemption_id: id.to_owned(),
        owner,
        name: format!("Promotion {id}"),
        code: None,
        ops_granted: ops,
        ops_remaining: ops,
        expires_at,
        created_at,
    }
}

async fn give(db: &Db, g: PromoGrantRecord) -> PromoGrantRecord {
    db.insert_promo_grant(&g).await.unwrap_or_else(|e| panic!("insert grant {}: {e}", g.redemption_id));
    g
}

#[track_caller]
fn admitted(outcome: Result<HoldOutcome, StoreError>, what: &str) -> LedgerEntry {
    match outcome {
        Ok(HoldOutcome::Admitted(entry)) => entry,
        other => panic!("{what}: expected Admitted, got {other:?}"),
    }
}

#[track_caller]
fn refused(outcome: Result<HoldOutcome, StoreError>, what: &str) {
    assert!(matches!(outcome, Ok(HoldOutcome::Refused)), "{what}: expected Refused, got {outcome:?}");
}

/// The row a hold of one operation writes.
fn held(request_id: &str, owner: Owner, cycle: &str, now: Millis, from: Option<&str>) -> LedgerEntry {
    LedgerEntry {
        request_id: request_id.to_owned(),
        owner,
        cycle: cycle.to_owned(),
        status: LedgerStatus::Held,
        tier_ops: i64::from(from.is_none()),
        promo_ops: i64::from(from.is_some()),
        first_redemption: from.map(str::to_owned),
        created_at: now,
        settled_at: None,
    }
}

async fn tier_used(db: &Db, owner: Owner, cycle: &str) -> i64 {
    db.snapshot(owner, cycle).await.expect("snapshot").tier_used
}

/// `redemption_id → ops_remaining` of every grant of the owner.
async fn remaining(db: &Db, owner: Owner) -> BTreeMap<String, i64> {
    let snapshot = db.snapshot(owner, &cycle(NOV)).await.expect("snapshot");
    snapshot.grants.into_iter().map(|g| (g.redemption_id, g.ops_remaining)).collect()
}

fn balances(expected: &[(&str, i64)]) -> BTreeMap<String, i64> {
    expected.iter().map(|(id, n)| ((*id).to_owned(), *n)).collect()
}

fn sorted(mut grants: Vec<PromoGrantRecord>) -> Vec<PromoGrantRecord> {
    grants.sort_by(|a, b| a.redemption_id.cmp(&b.redemption_id));
    grants
}

fn domain_grants(records: &[PromoGrantRecord]) -> Vec<Grant> {
    records
        .iter()
        .map(|g| Grant {
            redemption_id: g.redemption_id.clone(),
            remaining: u64::try_from(g.ops_remaining.max(0)).unwrap_or(0),
            expires_at: g.expires_at,
            created_at: g.created_at,
        })
        .collect()
}

/// The ledger, the draws, the counters and the grants of `owner` agree, read with raw SQL:
/// - `usage_counters.tier_used` of each cycle is the sum of `tier_ops` of its non-released rows;
/// - each row's draws add up to its `promo_ops`, and its `first_redemption` is one of them;
/// - each grant's used operations (`ops_granted - ops_remaining`, never below 0 left) are the
///   draws of non-released rows from it.
///
/// Only for owners whose grants were inserted unused (`ops_remaining == ops_granted`).
async fn assert_ledger_agrees(db: &Db, raw: &mut RawConn, owner: Owner, cycles: &[&str], what: &str) {
    let rows = raw.ledger_rows(owner).await;
    let live: Vec<&LedgerEntry> = rows.iter().filter(|r| r.status != LedgerStatus::Released).collect();
    for r in &rows {
        assert!(cycles.contains(&r.cycle.as_str()), "{what}: row {} in an unexpected cycle {}", r.request_id, r.cycle);
        assert!(r.tier_ops >= 0 && r.promo_ops >= 0 && r.ops() >= 1, "{what}: row {r:?}");
    }
    for cycle in cycles {
        let expected: i64 = live.iter().filter(|r| r.cycle == *cycle).map(|r| r.tier_ops).sum();
        let counter = raw.usage_counter(owner, cycle).await;
        assert_eq!(
            counter.unwrap_or(0),
            expected,
            "{what}: usage_counters.tier_used of {cycle} is the tier_ops of its non-released rows"
        );
        assert_eq!(tier_used(db, owner, cycle).await, expected, "{what}: snapshot of {cycle}");
    }

    let draws = raw.usage_draws(owner).await;
    for r in &rows {
        let mine: Vec<_> = draws.iter().filter(|d| d.request_id == r.request_id).collect();
        assert_eq!(mine.iter().map(|d| d.draw_ops).sum::<i64>(), r.promo_ops, "{what}: draws of {}", r.request_id);
        match &r.first_redemption {
            None => assert_eq!(r.promo_ops, 0, "{what}: promotion operations without a first grant: {r:?}"),
            Some(first) => assert!(
                mine.iter().any(|d| &d.redemption_id == first),
                "{what}: first_redemption {first} of {} is not among its draws {mine:?}",
                r.request_id
            ),
        }
    }

    let grants = db.snapshot(owner, cycles[0]).await.expect("snapshot").grants;
    for d in &draws {
        assert!(
            grants.iter().any(|g| g.redemption_id == d.redemption_id),
            "{what}: a draw from a grant that is not the owner's: {d:?}"
        );
    }
    for g in &grants {
        assert!(g.ops_remaining >= 0, "{what}: grant {} below zero: {g:?}", g.redemption_id);
        let drawn: i64 = draws
            .iter()
            .filter(|d| d.redemption_id == g.redemption_id && live.iter().any(|r| r.request_id == d.request_id))
            .map(|d| d.draw_ops)
            .sum();
        assert_eq!(
            g.ops_granted - g.ops_remaining,
            drawn,
            "{what}: grant {} used exactly the draws of non-released rows",
            g.redemption_id
        );
    }
}

// ---------------------------------------------------------------------------------------------
// hold.

pub(crate) async fn hold_admits_once_per_request(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let ann = account(db, "ann@example.com").await;
    let bob = account(db, "bob@example.com").await;
    let nov = cycle(NOV);
    assert_eq!(nov, "2026-11");
    assert_eq!(db.snapshot(ann, &nov).await.unwrap(), UsageSnapshot { tier_used: 0, grants: vec![] });
    assert_eq!(db.ledger_entry("req-1").await.unwrap(), None);

    let first = admitted(db.hold(ann, "req-1", &nov, Some(5), NOV).await, "first hold");
    assert_eq!(first, held("req-1", ann, &nov, NOV, None));
    assert_eq!(first.tier_ops, 1);
    assert_eq!(db.ledger_entry("req-1").await.unwrap(), Some(first.clone()));
    assert_eq!(raw.ledger_rows(ann).await, vec![first.clone()]);
    assert_eq!(db.snapshot(ann, &nov).await.unwrap(), UsageSnapshot { tier_used: 1, grants: vec![] });
    assert_eq!(raw.usage_counter(ann, &nov).await, Some(1));

    // The same request again, later: the same row, nothing drawn; even once the limit no
    // longer admits anything new.
    for (limit, now) in [(Some(5), NOV + 1_000), (Some(1), NOV + 2_000), (Some(0), NOV + 3_000), (None, NOV + 4_000)] {
        let again = admitted(db.hold(ann, "req-1", &nov, limit, now).await, "hold of a known request");
        assert_eq!(again, first, "hold of a known request with limit {limit:?} returns the stored row");
        assert_eq!(tier_used(db, ann, &nov).await, 1, "still one operation used");
    }
    assert_eq!(raw.ledger_rows(ann).await, vec![first.clone()], "no second row");

    // Another request is another operation; another owner counts on its own.
    let second = admitted(db.hold(ann, "req-2", &nov, Some(5), NOV + 5_000).await, "second request");
    assert_eq!(second, held("req-2", ann, &nov, NOV + 5_000, None));
    assert_eq!(tier_used(db, ann, &nov).await, 2);
    let bobs = admitted(db.hold(bob, "req-3", &nov, Some(1), NOV).await, "another owner");
    assert_eq!(bobs, held("req-3", bob, &nov, NOV, None));
    assert_eq!(tier_used(db, bob, &nov).await, 1);
    assert_eq!(tier_used(db, ann, &nov).await, 2);
    assert_eq!(raw.ledger_rows(ann).await, vec![first, second]);
    assert_ledger_agrees(db, &mut raw, ann, &[&nov], "ann").await;
    assert_ledger_agrees(db, &mut raw, bob, &[&nov], "bob").await;
}

pub(crate) async fn hold_refused_writes_nothing(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);

    // The tier is used up.
    let ann = account(db, "ann@example.com").await;
    let first = admitted(db.hold(ann, "req-1", &nov, Some(1), NOV).await, "within the limit");
    let before = db.snapshot(ann, &nov).await.unwrap();
    assert_eq!(before.tier_used, 1);
    refused(db.hold(ann, "req-2", &nov, Some(1), NOV + 1).await, "over the limit");
    assert_eq!(db.snapshot(ann, &nov).await.unwrap(), before, "snapshot unchanged");
    assert_eq!(db.ledger_entry("req-2").await.unwrap(), None, "no ledger row");
    assert_eq!(raw.ledger_rows(ann).await, vec![first]);
    assert!(raw.usage_draws(ann).await.is_empty());
    // A refused request id stays free: it is admitted once the limit allows it.
    let later = admitted(db.hold(ann, "req-2", &nov, Some(2), NOV + 2).await, "a refused id, admitted later");
    assert_eq!(later, held("req-2", ann, &nov, NOV + 2, None));

    // A limit of zero on a fresh owner: not even the counter row is written.
    let bob = account(db, "bob@example.com").await;
    refused(db.hold(bob, "req-3", &nov, Some(0), NOV).await, "limit 0");
    assert_eq!(raw.usage_counter(bob, &nov).await, None, "no counter row");
    assert!(raw.ledger_rows(bob).await.is_empty());
    assert_eq!(db.snapshot(bob, &nov).await.unwrap(), UsageSnapshot { tier_used: 0, grants: vec![] });

    // Grants that are used up, expired, or expire exactly now admit nothing and are untouched.
    let carl = account(db, "carl@example.com").await;
    let used_up = give(db, PromoGrantRecord { ops_remaining: 0, ..grant("carl-used", carl, 5, None, NOV - DAY) }).await;
    let expired = give(db, grant("carl-expired", carl, 5, Some(NOV - 1), NOV - DAY)).await;
    let edge = give(db, grant("carl-edge", carl, 5, Some(NOV), NOV - DAY)).await;
    let before = db.snapshot(carl, &nov).await.unwrap();
    assert_eq!(sorted(before.grants.clone()), sorted(vec![used_up, expired, edge]), "snapshot lists every grant");
    refused(db.hold(carl, "req-4", &nov, Some(0), NOV).await, "no live grant with operations left");
    assert_eq!(db.snapshot(carl, &nov).await.unwrap(), before, "grants unchanged");
    assert!(raw.ledger_rows(carl).await.is_empty());
    assert_eq!(raw.usage_counter(carl, &nov).await, None);

    // Unlimited admits everything, on the tier.
    let dave = account(db, "dave@example.com").await;
    for i in 0..3 {
        let id = format!("req-unlimited-{i}");
        let e = admitted(db.hold(dave, &id, &nov, None, NOV).await, "unlimited");
        assert_eq!(e, held(&id, dave, &nov, NOV, None));
    }
    assert_eq!(tier_used(db, dave, &nov).await, 3);
    assert_ledger_agrees(db, &mut raw, ann, &[&nov], "ann").await;
    assert_ledger_agrees(db, &mut raw, dave, &[&nov], "dave").await;
}

pub(crate) async fn holds_draw_the_soonest_expiring_grant_first(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let ann = account(db, "ann@example.com").await;
    let bob = account(db, "bob@example.com").await;
    // Inserted in no particular order.
    let never = give(db, grant("ann-never", ann, 2, None, NOV - 3 * DAY)).await;
    let later = give(db, grant("ann-later", ann, 2, Some(NOV + 20 * DAY), NOV - 2 * DAY)).await;
    let expired = give(db, grant("ann-expired", ann, 5, Some(NOV - DAY), NOV - 10 * DAY)).await;
    let sooner = give(db, grant("ann-sooner", ann, 1, Some(NOV + 10 * DAY), NOV - DAY)).await;
    // Another owner's grant expires soonest of all and is never drawn.
    give(db, grant("bob-soonest", bob, 9, Some(NOV + DAY), NOV - DAY)).await;

    let snapshot = db.snapshot(ann, &nov).await.unwrap();
    assert_eq!(snapshot.tier_used, 0);
    assert_eq!(
        sorted(snapshot.grants),
        sorted(vec![never, later, expired.clone(), sooner.clone()]),
        "the snapshot lists all of the owner's grants, the expired one included"
    );

    // The tier first, then soonest-expiring, then later, then never-expiring; the expired
    // grant never.
    let expected = [
        (None, [("ann-expired", 5), ("ann-later", 2), ("ann-never", 2), ("ann-sooner", 1)]),
        (Some("ann-sooner"), [("ann-expired", 5), ("ann-later", 2), ("ann-never", 2), ("ann-sooner", 0)]),
        (Some("ann-later"), [("ann-expired", 5), ("ann-later", 1), ("ann-never", 2), ("ann-sooner", 0)]),
        (Some("ann-later"), [("ann-expired", 5), ("ann-later", 0), ("ann-never", 2), ("ann-sooner", 0)]),
        (Some("ann-never"), [("ann-expired", 5), ("ann-later", 0), ("ann-never", 1), ("ann-sooner", 0)]),
        (Some("ann-never"), [("ann-expired", 5), ("ann-later", 0), ("ann-never", 0), ("ann-sooner", 0)]),
    ];
    for (i, (from, after)) in expected.iter().enumerate() {
        let id = format!("req-{i}");
        let e = admitted(db.hold(ann, &id, &nov, Some(1), NOV + i as i64).await, &id);
        assert_eq!(e, held(&id, ann, &nov, NOV + i as i64, *from), "{id} drawn from {from:?}");
        assert_eq!(remaining(db, ann).await, balances(after), "grant balances after {id}");
        assert_eq!(tier_used(db, ann, &nov).await, 1, "the tier is not charged past its limit by a hold");
    }
    let draws = raw.usage_draws(ann).await;
    assert_eq!(draws.len(), 5, "one draw row per promotion hold: {draws:?}");

    // Only the expired grant has operations left: refused.
    let before = db.snapshot(ann, &nov).await.unwrap();
    refused(db.hold(ann, "req-6", &nov, Some(1), NOV + 6).await, "only an expired grant left");
    assert_eq!(db.snapshot(ann, &nov).await.unwrap(), before);
    assert_eq!(raw.promo_grant("ann-expired").await, Some(expired));
    assert_eq!(remaining(db, bob).await, balances(&[("bob-soonest", 9)]), "another owner's grant untouched");
    assert_ledger_agrees(db, &mut raw, ann, &[&nov], "ann").await;
}

// ---------------------------------------------------------------------------------------------
// settle.

pub(crate) async fn settle_charges_the_rest_once(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);

    // limit 2, nothing used: held 1 on the tier, settled to 3 → 2 within the limit, 1 overrun.
    let ann = account(db, "ann@example.com").await;
    let h = admitted(db.hold(ann, "req-1", &nov, Some(2), NOV).await, "hold");
    assert_eq!(h, held("req-1", ann, &nov, NOV, None));
    assert_eq!(tier_used(db, ann, &nov).await, 1);
    let s = db.settle("req-1", 3, Some(2), NOV + 1_000).await.unwrap();
    let charged = LedgerEntry { status: LedgerStatus::Charged, tier_ops: 3, settled_at: Some(NOV + 1_000), ..h };
    assert_eq!(s, charged);
    assert_eq!(tier_used(db, ann, &nov).await, 3, "two within the limit and one overrun");
    assert_eq!(db.ledger_entry("req-1").await.unwrap(), Some(charged.clone()));
    // Settling again changes nothing, whatever the total, the limit or the time.
    for (total, limit) in [(3, Some(2)), (10, Some(100)), (1, None)] {
        let again = db.settle("req-1", total, limit, NOV + 5_000).await.unwrap();
        assert_eq!(again, charged, "settle of a charged row (total {total}, limit {limit:?}) is unchanged");
        assert_eq!(tier_used(db, ann, &nov).await, 3, "counters unchanged");
    }
    assert_eq!(raw.ledger_rows(ann).await, vec![charged]);

    // The same with a grant: the tier's last operation, then the grant.
    let bob = account(db, "bob@example.com").await;
    give(db, grant("bob-g", bob, 1, None, NOV - DAY)).await;
    let h = admitted(db.hold(bob, "req-2", &nov, Some(2), NOV).await, "hold");
    assert_eq!(h, held("req-2", bob, &nov, NOV, None));
    let s = db.settle("req-2", 3, Some(2), NOV + 1_000).await.unwrap();
    let charged = LedgerEntry {
        status: LedgerStatus::Charged,
        tier_ops: 2,
        promo_ops: 1,
        first_redemption: Some("bob-g".to_owned()),
        settled_at: Some(NOV + 1_000),
        ..h
    };
    assert_eq!(s, charged);
    assert_eq!(tier_used(db, bob, &nov).await, 2, "the tier up to its limit, no overrun");
    assert_eq!(remaining(db, bob).await, balances(&[("bob-g", 0)]));
    assert_eq!(db.settle("req-2", 3, Some(2), NOV + 2_000).await.unwrap(), charged);
    assert_eq!(tier_used(db, bob, &nov).await, 2);
    assert_eq!(remaining(db, bob).await, balances(&[("bob-g", 0)]), "the grant is not drawn twice");

    // Held on a grant: the first grant stays the one of the hold; the rest skips the used-up
    // grant and takes the next.
    let erin = account(db, "erin@example.com").await;
    give(db, grant("erin-soon", erin, 1, Some(NOV + DAY), NOV - DAY)).await;
    give(db, grant("erin-never", erin, 5, None, NOV - DAY)).await;
    let h = admitted(db.hold(erin, "req-3", &nov, Some(0), NOV).await, "hold on a grant");
    assert_eq!(h, held("req-3", erin, &nov, NOV, Some("erin-soon")));
    let s = db.settle("req-3", 4, Some(0), NOV + 1_000).await.unwrap();
    assert_eq!(s, LedgerEntry { status: LedgerStatus::Charged, promo_ops: 4, settled_at: Some(NOV + 1_000), ..h });
    assert_eq!(remaining(db, erin).await, balances(&[("erin-never", 2), ("erin-soon", 0)]));
    assert_eq!(tier_used(db, erin, &nov).await, 0);

    // Every grant used up: the rest is overrun on the tier.
    let fred = account(db, "fred@example.com").await;
    give(db, grant("fred-g", fred, 1, None, NOV - DAY)).await;
    let h = admitted(db.hold(fred, "req-4", &nov, Some(0), NOV).await, "hold on a grant");
    let s = db.settle("req-4", 3, Some(0), NOV + 1_000).await.unwrap();
    assert_eq!(s, LedgerEntry { status: LedgerStatus::Charged, tier_ops: 2, settled_at: Some(NOV + 1_000), ..h });
    assert_eq!(tier_used(db, fred, &nov).await, 2);
    assert_eq!(remaining(db, fred).await, balances(&[("fred-g", 0)]));

    // A total below the held operations charges what was held; unlimited charges the tier.
    let carl = account(db, "carl@example.com").await;
    let h = admitted(db.hold(carl, "req-5", &nov, Some(5), NOV).await, "hold");
    let s = db.settle("req-5", 0, Some(5), NOV + 1_000).await.unwrap();
    assert_eq!(s, LedgerEntry { status: LedgerStatus::Charged, settled_at: Some(NOV + 1_000), ..h });
    let h = admitted(db.hold(carl, "req-6", &nov, None, NOV).await, "unlimited hold");
    let s = db.settle("req-6", 4, None, NOV + 1_000).await.unwrap();
    assert_eq!(s, LedgerEntry { status: LedgerStatus::Charged, tier_ops: 4, settled_at: Some(NOV + 1_000), ..h });
    assert_eq!(tier_used(db, carl, &nov).await, 5);

    // Unknown and released rows cannot be charged.
    assert_not_found(db.settle("unknown", 2, Some(5), NOV).await, "settle of an unknown request");
    admitted(db.hold(carl, "req-7", &nov, Some(10), NOV).await, "hold");
    let released = db.release("req-7", NOV + 1_000).await.unwrap();
    assert_eq!(released.status, LedgerStatus::Released);
    assert_eq!(tier_used(db, carl, &nov).await, 5);
    assert_not_found(db.settle("req-7", 2, Some(10), NOV + 2_000).await, "settle of a released request");
    assert_eq!(db.ledger_entry("req-7").await.unwrap(), Some(released), "the released row is unchanged");
    assert_eq!(tier_used(db, carl, &nov).await, 5, "counters unchanged");

    for (owner, name) in [(ann, "ann"), (bob, "bob"), (erin, "erin"), (fred, "fred"), (carl, "carl")] {
        assert_ledger_agrees(db, &mut raw, owner, &[&nov], name).await;
    }
}

// ---------------------------------------------------------------------------------------------
// release.

pub(crate) async fn release_gives_back_exactly_once(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let ann = account(db, "ann@example.com").await;
    give(db, grant("ann-g", ann, 3, None, NOV - DAY)).await;

    let r1 = admitted(db.hold(ann, "req-1", &nov, Some(1), NOV).await, "req-1");
    let r2 = admitted(db.hold(ann, "req-2", &nov, Some(1), NOV).await, "req-2");
    let r3 = admitted(db.hold(ann, "req-3", &nov, Some(1), NOV).await, "req-3");
    assert_eq!(r1, held("req-1", ann, &nov, NOV, None));
    assert_eq!(r2, held("req-2", ann, &nov, NOV, Some("ann-g")));
    assert_eq!(r3, held("req-3", ann, &nov, NOV, Some("ann-g")));
    assert_eq!(tier_used(db, ann, &nov).await, 1);
    assert_eq!(remaining(db, ann).await, balances(&[("ann-g", 1)]));

    // A promotion operation goes back to its grant.
    let rel2 = db.release("req-2", NOV + 1_000).await.unwrap();
    assert_eq!(rel2, LedgerEntry { status: LedgerStatus::Released, settled_at: Some(NOV + 1_000), ..r2 });
    assert_eq!(remaining(db, ann).await, balances(&[("ann-g", 2)]));
    assert_eq!(tier_used(db, ann, &nov).await, 1);
    let again = db.release("req-2", NOV + 2_000).await.unwrap();
    assert_eq!(again, rel2, "a released row is returned unchanged");
    assert_eq!(remaining(db, ann).await, balances(&[("ann-g", 2)]), "not given back twice");
    assert_eq!(tier_used(db, ann, &nov).await, 1);

    // A tier operation goes back to the tier.
    let rel1 = db.release("req-1", NOV + 3_000).await.unwrap();
    assert_eq!(rel1, LedgerEntry { status: LedgerStatus::Released, settled_at: Some(NOV + 3_000), ..r1 });
    assert_eq!(tier_used(db, ann, &nov).await, 0);
    assert_eq!(db.release("req-1", NOV + 4_000).await.unwrap(), rel1);
    assert_eq!(tier_used(db, ann, &nov).await, 0, "not given back twice");
    assert_eq!(remaining(db, ann).await, balances(&[("ann-g", 2)]));

    // A charged row is returned unchanged.
    let charged = db.settle("req-3", 2, Some(1), NOV + 5_000).await.unwrap();
    assert_eq!(
        charged,
        LedgerEntry { status: LedgerStatus::Charged, tier_ops: 1, settled_at: Some(NOV + 5_000), ..r3 },
        "the extra operation from the tier freed by req-1"
    );
    assert_eq!(tier_used(db, ann, &nov).await, 1);
    assert_eq!(db.release("req-3", NOV + 6_000).await.unwrap(), charged, "release of a charged row");
    assert_eq!(tier_used(db, ann, &nov).await, 1, "counters unchanged");
    assert_eq!(remaining(db, ann).await, balances(&[("ann-g", 2)]), "grants unchanged");

    assert_not_found(db.release("unknown", NOV).await, "release of an unknown request");
    assert_eq!(raw.ledger_rows(ann).await, vec![rel1, rel2, charged]);
    assert_ledger_agrees(db, &mut raw, ann, &[&nov], "ann").await;
}

// ---------------------------------------------------------------------------------------------
// Cycles.

pub(crate) async fn the_charge_goes_to_the_cycle_of_the_hold(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let (nov, dec) = (cycle(NOV), cycle(DEC));
    assert_eq!((nov.as_str(), dec.as_str()), ("2026-11", "2026-12"));

    // Held in November, settled in December: the extra operations count in November.
    let bob = account(db, "bob@example.com").await;
    let h = admitted(db.hold(bob, "req-b", &nov, Some(5), NOV).await, "November hold");
    let s = db.settle("req-b", 4, Some(5), DEC).await.unwrap();
    assert_eq!(s, LedgerEntry { status: LedgerStatus::Charged, tier_ops: 4, settled_at: Some(DEC), ..h });
    assert_eq!(s.cycle, "2026-11");
    assert_eq!(tier_used(db, bob, &nov).await, 4);
    assert_eq!(tier_used(db, bob, &dec).await, 0);
    assert_eq!(raw.usage_counter(bob, &dec).await, None, "nothing written for December");

    // The settlement is drawn against November's counter, not December's: with two of three
    // November operations used and one December operation, a charge of two more takes the
    // last November tier operation and then a grant.
    let ann = account(db, "ann@example.com").await;
    give(db, grant("ann-g", ann, 5, None, NOV - DAY)).await;
    let r0 = admitted(db.hold(ann, "req-0", &nov, Some(3), NOV).await, "req-0");
    let r1 = admitted(db.hold(ann, "req-1", &nov, Some(3), NOV).await, "req-1");
    let rd = admitted(db.hold(ann, "req-d", &dec, Some(3), DEC).await, "December hold");
    assert_eq!(rd, held("req-d", ann, &dec, DEC, None));
    assert_eq!((tier_used(db, ann, &nov).await, tier_used(db, ann, &dec).await), (2, 1));

    let s = db.settle("req-1", 3, Some(3), DEC + 1_000).await.unwrap();
    assert_eq!(
        s,
        LedgerEntry {
            status: LedgerStatus::Charged,
            tier_ops: 2,
            promo_ops: 1,
            first_redemption: Some("ann-g".to_owned()),
            settled_at: Some(DEC + 1_000),
            ..r1
        }
    );
    assert_eq!(tier_used(db, ann, &nov).await, 3);
    assert_eq!(tier_used(db, ann, &dec).await, 1, "December unchanged");
    assert_eq!(remaining(db, ann).await, balances(&[("ann-g", 4)]));

    // A release in December gives back to November.
    let rel = db.release("req-0", DEC + 2_000).await.unwrap();
    assert_eq!(rel, LedgerEntry { status: LedgerStatus::Released, settled_at: Some(DEC + 2_000), ..r0 });
    assert_eq!((tier_used(db, ann, &nov).await, tier_used(db, ann, &dec).await), (2, 1));
    assert_ledger_agrees(db, &mut raw, ann, &[&nov, &dec], "ann").await;
    assert_ledger_agrees(db, &mut raw, bob, &[&nov, &dec], "bob").await;
}

// ---------------------------------------------------------------------------------------------
// Promotion codes.

pub(crate) async fn redeem_code_grants_once_per_owner(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let ann = account(db, "ann@example.com").await;
    let bob = account(db, "bob@example.com").await;
    let code = |code: &str, ops: i64, expires_at: Option<Millis>| PromoCodeRecord {
        code: code.to_owned(),
        name: format!("Campaign {code}"),
        ops,
        expires_at,
        created_at: NOV - 10 * DAY,
    };
    for c in [
        code("LAUNCH", 10, Some(NOV + DAY)),
        code("FOREVER", 3, None),
        code("OLD", 7, Some(NOV - 1)),
        code("EDGE", 7, Some(NOV)),
    ] {
        db.create_promo_code(&c).await.unwrap();
    }

    assert_not_found(db.redeem_code(ann, "NOPE", "red-0", NOV).await, "redeem an unknown code");
    assert_not_found(db.redeem_code(ann, "OLD", "red-0", NOV).await, "redeem an expired code");
    assert_not_found(db.redeem_code(ann, "EDGE", "red-0", NOV).await, "redeem a code at its expiry");
    assert_eq!(raw.count_owned("promo_grants", ann).await, 0, "nothing granted");

    let g = db.redeem_code(ann, "LAUNCH", "red-1", NOV).await.unwrap();
    let expected = PromoGrantRecord {
        redemption_id: "red-1".to_owned(),
        owner: ann,
        name: "Campaign LAUNCH".to_owned(),
        code: Some("LAUNCH".to_owned()),
        ops_granted: 10,
        ops_remaining: 10,
        expires_at: Some(NOV + DAY),
        created_at: NOV,
    };
    assert_eq!(g, expected);
    assert_eq!(raw.promo_grant("red-1").await, Some(expected.clone()));
    assert_eq!(db.snapshot(ann, &nov).await.unwrap().grants, vec![expected]);

    // Once per owner, used or not.
    assert_duplicate(db.redeem_code(ann, "LAUNCH", "red-2", NOV + 1).await, "redeem the same code twice");
    assert_eq!(raw.promo_grant("red-2").await, None);
    let e = admitted(db.hold(ann, "req-1", &nov, Some(0), NOV + 2).await, "hold on the redeemed grant");
    assert_eq!(e.first_redemption.as_deref(), Some("red-1"));
    assert_duplicate(db.redeem_code(ann, "LAUNCH", "red-3", NOV + 3).await, "redeem a partly used code again");
    assert_eq!(raw.count_owned("promo_grants", ann).await, 1);
    assert_eq!(remaining(db, ann).await, balances(&[("red-1", 9)]));

    // Another owner redeems the same code; another code for the same owner is fine.
    let bobs = db.redeem_code(bob, "LAUNCH", "red-4", NOV + 4).await.unwrap();
    assert_eq!((bobs.owner, bobs.ops_remaining, bobs.created_at), (bob, 10, NOV + 4));
    let forever = db.redeem_code(ann, "FOREVER", "red-5", NOV + 5).await.unwrap();
    assert_eq!((forever.ops_granted, forever.expires_at, forever.name.as_str()), (3, None, "Campaign FOREVER"));
    assert_eq!(remaining(db, ann).await, balances(&[("red-1", 9), ("red-5", 3)]));
    assert_eq!(remaining(db, bob).await, balances(&[("red-4", 10)]));

    // Codes match without regard to ASCII case: the grant names the code as it was created,
    // and it is still once per owner. A code differing only in case cannot be created.
    let cat = account(db, "cat@example.com").await;
    let g = db.redeem_code(cat, "launch", "red-6", NOV + 6).await.unwrap();
    assert_eq!((g.code.as_deref(), g.ops_granted), (Some("LAUNCH"), 10));
    assert_duplicate(db.redeem_code(cat, "Launch", "red-7", NOV + 7).await, "redeem the code in another case");
    assert_not_found(db.redeem_code(cat, "old", "red-8", NOV + 8).await, "an expired code in another case");
    assert_duplicate(db.create_promo_code(&code("Launch", 1, None)).await, "a code differing only in case");
    db.create_promo_code(&code("mixedCase", 2, None)).await.unwrap();
    assert_eq!(db.redeem_code(cat, "MIXEDCASE", "red-9", NOV + 9).await.unwrap().code.as_deref(), Some("mixedCase"));
}

// ---------------------------------------------------------------------------------------------
// Concurrency.

const CALLS: usize = 50;
const LEFT: usize = 5;

/// `ids.len()` concurrent holds released together by a barrier.
async fn hold_concurrently(
    db: &Db,
    owner: Owner,
    cycle: &str,
    limit: Option<u64>,
    now: Millis,
    ids: Vec<String>,
) -> Vec<(String, Result<HoldOutcome, StoreError>)> {
    let shared = common::shared(db);
    let barrier = Arc::new(Barrier::new(ids.len()));
    let tasks: Vec<_> = ids
        .into_iter()
        .map(|id| {
            let db = shared.clone();
            let barrier = barrier.clone();
            let cycle = cycle.to_owned();
            tokio::spawn(async move {
                barrier.wait().await;
                let r = db.hold(owner, &id, &cycle, limit, now).await;
                (id, r)
            })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.expect("task panicked"));
    }
    out
}

/// `CALLS` concurrent holds with distinct ids on an owner with exactly `LEFT` operations left:
/// exactly `LEFT` are admitted, one operation each, and the rest refused without a trace.
async fn admit_exactly_what_is_left(db: &Db, owner: Owner, cycle: &str, limit: Option<u64>) -> Vec<LedgerEntry> {
    let ids: Vec<String> = (0..CALLS).map(|i| format!("conc-{i:02}")).collect();
    let mut winners = Vec::new();
    let mut losers = Vec::new();
    for (id, outcome) in hold_concurrently(db, owner, cycle, limit, NOV, ids).await {
        match outcome {
            Ok(HoldOutcome::Admitted(e)) => {
                assert_eq!(e.request_id, id);
                winners.push(e);
            }
            Ok(HoldOutcome::Refused) => losers.push(id),
            Err(e) => panic!("hold under concurrency must be Admitted or Refused, got {e:?}"),
        }
    }
    assert_eq!(winners.len(), LEFT, "exactly the operations left are admitted: {winners:?}");
    assert_eq!(losers.len(), CALLS - LEFT);
    for e in &winners {
        assert_eq!((e.status, e.ops(), e.cycle.as_str(), e.owner), (LedgerStatus::Held, 1, cycle, owner), "{e:?}");
        assert_eq!(db.ledger_entry(&e.request_id).await.unwrap().as_ref(), Some(e));
    }
    for id in &losers {
        assert_eq!(db.ledger_entry(id).await.unwrap(), None, "a refused hold leaves no row");
    }
    winners
}

pub(crate) async fn concurrent_holds_admit_exactly_the_operations_left(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let ann = account(db, "ann@example.com").await;
    let bob = account(db, "bob@example.com").await;
    admitted(db.hold(bob, "bob-1", &nov, Some(5), NOV).await, "another owner");

    let winners = admit_exactly_what_is_left(db, ann, &nov, Some(LEFT as u64)).await;
    assert!(winners.iter().all(|e| e.tier_ops == 1 && e.first_redemption.is_none()));
    assert_eq!(tier_used(db, ann, &nov).await, LEFT as i64);
    assert_eq!(raw.ledger_rows(ann).await.len(), LEFT);
    assert_eq!(tier_used(db, bob, &nov).await, 1, "another owner untouched");
    refused(db.hold(ann, "late", &nov, Some(LEFT as u64), NOV).await, "nothing left");
    assert_ledger_agrees(db, &mut raw, ann, &[&nov], "ann").await;
}

pub(crate) async fn concurrent_holds_admit_exactly_the_operations_left_with_grants(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let acme = Owner::Org(new_org(db, org(ann.id, "Acme", T0)).await.id);
    // Limit 3 with 2 used: 1 tier operation, plus 3 + 1 in live grants = 5 left; the expired
    // grant's 10 do not count.
    admitted(db.hold(acme, "pre-0", &nov, Some(3), NOV - 2).await, "pre-0");
    admitted(db.hold(acme, "pre-1", &nov, Some(3), NOV - 1).await, "pre-1");
    give(db, grant("acme-soon", acme, 3, Some(NOV + 10 * DAY), NOV - DAY)).await;
    give(db, grant("acme-never", acme, 1, None, NOV - DAY)).await;
    give(db, grant("acme-expired", acme, 10, Some(NOV - DAY), NOV - 2 * DAY)).await;

    let winners = admit_exactly_what_is_left(db, acme, &nov, Some(3)).await;
    let tier: i64 = winners.iter().map(|e| e.tier_ops).sum();
    let promo: i64 = winners.iter().map(|e| e.promo_ops).sum();
    assert_eq!((tier, promo), (1, 4), "one tier operation and four promotion operations: {winners:?}");
    let mut by_grant = BTreeMap::new();
    for e in winners.iter().filter(|e| e.promo_ops > 0) {
        *by_grant.entry(e.first_redemption.clone().expect("a promotion hold names its grant")).or_insert(0) += 1;
    }
    assert_eq!(by_grant, balances(&[("acme-never", 1), ("acme-soon", 3)]));
    let snapshot = db.snapshot(acme, &nov).await.unwrap();
    assert_eq!(snapshot.tier_used, 3);
    assert_eq!(snapshot.tier_used - 2 + promo, LEFT as i64, "tier_used + promotion draws == 5");
    assert_eq!(remaining(db, acme).await, balances(&[("acme-expired", 10), ("acme-never", 0), ("acme-soon", 0)]));
    assert_eq!(raw.ledger_rows(acme).await.len(), 2 + LEFT);
    refused(db.hold(acme, "late", &nov, Some(3), NOV).await, "nothing left");
    assert_ledger_agrees(db, &mut raw, acme, &[&nov], "acme").await;
}

pub(crate) async fn concurrent_holds_of_one_request_admit_it_once(db: &Db) {
    const SAME: usize = 20;
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let ann = account(db, "ann@example.com").await;
    let outcomes = hold_concurrently(db, ann, &nov, Some(5), NOV, vec!["same".to_owned(); SAME]).await;
    let entries: Vec<LedgerEntry> =
        outcomes.into_iter().map(|(_, r)| admitted(r, "concurrent hold of one id")).collect();
    assert_eq!(entries.len(), SAME);
    assert!(entries.iter().all(|e| *e == held("same", ann, &nov, NOV, None)), "{entries:?}");
    assert_eq!(tier_used(db, ann, &nov).await, 1, "one operation held");
    assert_eq!(raw.ledger_rows(ann).await.len(), 1);
    assert_ledger_agrees(db, &mut raw, ann, &[&nov], "ann").await;
}

#[derive(Clone, Copy, Debug)]
enum Finish {
    Settle(u64),
    Release,
}

/// Settles and releases `request_id` concurrently, one call per entry of `calls`, each with
/// its own `now`.
async fn finish_concurrently(
    db: &Db,
    request_id: &str,
    limit: Option<u64>,
    calls: &[Finish],
) -> Vec<(Finish, Result<LedgerEntry, StoreError>)> {
    let shared = common::shared(db);
    let barrier = Arc::new(Barrier::new(calls.len()));
    let tasks: Vec<_> = calls
        .iter()
        .enumerate()
        .map(|(i, &call)| {
            let db = shared.clone();
            let barrier = barrier.clone();
            let id = request_id.to_owned();
            let now = NOV + 1_000 + i as i64;
            tokio::spawn(async move {
                barrier.wait().await;
                let r = match call {
                    Finish::Settle(total) => db.settle(&id, total, limit, now).await,
                    Finish::Release => db.release(&id, now).await,
                };
                (call, r)
            })
        })
        .collect();
    let mut out = Vec::new();
    for task in tasks {
        out.push(task.await.expect("task panicked"));
    }
    out
}

const RACERS: usize = 16;

pub(crate) async fn concurrent_settles_of_one_request_charge_once(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let ann = account(db, "ann@example.com").await;
    admitted(db.hold(ann, "settle-me", &nov, Some(10), NOV).await, "hold");
    let results = finish_concurrently(db, "settle-me", Some(10), &[Finish::Settle(3); RACERS]).await;
    assert_eq!(tier_used(db, ann, &nov).await, 3, "charged once: 1 held + 2 extra");
    assert_ledger_agrees(db, &mut raw, ann, &[&nov], "ann").await;
    let stored = db.ledger_entry("settle-me").await.unwrap().expect("row");
    assert_eq!((stored.status, stored.tier_ops), (LedgerStatus::Charged, 3));
    for (call, r) in results {
        assert_eq!(r.as_ref().ok(), Some(&stored), "{call:?} returns the one charge (as stored), got {r:?}");
    }
}

pub(crate) async fn concurrent_releases_of_one_request_give_back_once(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let bob = account(db, "bob@example.com").await;
    give(db, grant("bob-g", bob, 5, None, NOV - DAY)).await;
    admitted(db.hold(bob, "tier-hold", &nov, Some(1), NOV).await, "hold on the tier");
    admitted(db.hold(bob, "promo-hold", &nov, Some(1), NOV).await, "hold on the grant");
    assert_eq!(remaining(db, bob).await, balances(&[("bob-g", 4)]));
    for id in ["tier-hold", "promo-hold"] {
        let results = finish_concurrently(db, id, Some(1), &[Finish::Release; RACERS]).await;
        assert_ledger_agrees(db, &mut raw, bob, &[&nov], id).await;
        let stored = db.ledger_entry(id).await.unwrap().expect("row");
        assert_eq!(stored.status, LedgerStatus::Released);
        for (call, r) in results {
            assert_eq!(r.as_ref().ok(), Some(&stored), "{id}: {call:?} returns the one release (as stored), got {r:?}");
        }
    }
    assert_eq!(remaining(db, bob).await, balances(&[("bob-g", 5)]), "given back once");
    assert_eq!(tier_used(db, bob, &nov).await, 0, "given back once");
}

pub(crate) async fn concurrent_settles_and_releases_of_one_request_apply_once(db: &Db) {
    let mut raw = RawConn::open(db).await;
    let nov = cycle(NOV);
    let carl = account(db, "carl@example.com").await;
    admitted(db.hold(carl, "race", &nov, Some(10), NOV).await, "hold");
    let calls: Vec<Finish> =
        (0..RACERS).map(|i| if i % 2 == 0 { Finish::Settle(4) } else { Finish::Release }).collect();
    let results = finish_concurrently(db, "race", Some(10), &calls).await;
    assert_ledger_agrees(db, &mut raw, carl, &[&nov], "carl").await;
    let stored = db.ledger_entry("race").await.unwrap().expect("row");
    let expected_used = match stored.status {
        LedgerStatus::Charged => 4,
        LedgerStatus::Released => 0,
        LedgerStatus::Held => panic!("the row was neither settled nor released: {stored:?}"),
    };
    assert_eq!(tier_used(db, carl, &nov).await, expected_used);
    // Whichever came first won; the others saw its result.
    for (call, r) in results {
        match (&r, call, stored.status) {
            (Ok(e), _, _) if *e == stored => {}
            (Err(StoreError::NotFound), Finish::Settle(_), LedgerStatus::Released) => {}
            _ => panic!("{call:?} racing on a row that ended {stored:?}: got {r:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The ledger and the counters agree.

/// A small deterministic generator (PCG-style LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

pub(crate) async fn ledger_and_counters_agree_after_a_random_mix(db: &Db) {
    const STEPS: usize = 120;
    const LIMIT: Option<u64> = Some(6);
    let mut raw = RawConn::open(db).await;
    let (nov, dec) = (cycle(NOV), cycle(DEC));
    let ann = account(db, "ann@example.com").await;
    let nov_end = Cycle::containing(NOV).end_ms;
    // Live in November only, live throughout, expired throughout.
    give(db, grant("g-nov", ann, 3, Some(nov_end), NOV - DAY)).await;
    give(db, grant("g-never", ann, 4, None, NOV - DAY)).await;
    give(db, grant("g-old", ann, 5, Some(NOV - DAY), NOV - 2 * DAY)).await;

    let mut rng = Lcg(0x5eed_1234);
    let mut known: Vec<String> = Vec::new();
    let (mut admits, mut refusals, mut charges, mut releases, mut unchanged, mut not_found) = (0, 0, 0, 0, 0, 0);
    for step in 0..STEPS {
        let what = format!("step {step}");
        let offset = step as i64 * 1_000;
        let later = DEC + DAY + offset;
        match rng.below(10) {
            // A new request, in November or December.
            0..=4 => {
                let (cycle_id, now) = if rng.below(2) == 0 { (&nov, NOV + offset) } else { (&dec, DEC + offset) };
                let id = format!("req-{step:03}");
                let before = db.snapshot(ann, cycle_id).await.unwrap();
                let grants = domain_grants(&before.grants);
                let used = u64::try_from(before.tier_used).unwrap();
                let outcome = db.hold(ann, &id, cycle_id, LIMIT, now).await;
                if can_admit(LIMIT, used, &grants, now) {
                    let e = admitted(outcome, &what);
                    let draw = allocate(1, LIMIT, used, &grants, now);
                    assert_eq!(e, held(&id, ann, cycle_id, now, draw.first_grant()), "{what}: drawn by the rules");
                    known.push(id);
                    admits += 1;
                } else {
                    refused(outcome, &what);
                    assert_eq!(db.snapshot(ann, cycle_id).await.unwrap(), before, "{what}: refusal writes nothing");
                    refusals += 1;
                }
            }
            // A known request again: its row, unchanged.
            5 if !known.is_empty() => {
                let id = &known[rng.below(known.len() as u64) as usize];
                let before = db.ledger_entry(id).await.unwrap().expect("known row");
                let again = admitted(db.hold(ann, id, &before.cycle, LIMIT, later).await, &what);
                assert_eq!(again, before, "{what}: hold of a known request");
            }
            6..=7 if !known.is_empty() => {
                let id = &known[rng.below(known.len() as u64) as usize];
                let total = 1 + rng.below(4);
                let before = db.ledger_entry(id).await.unwrap().expect("known row");
                let snapshot = db.snapshot(ann, &before.cycle).await.unwrap();
                let result = db.settle(id, total, LIMIT, later).await;
                match before.status {
                    LedgerStatus::Held => {
                        let extra = total.saturating_sub(u64::try_from(before.ops()).unwrap());
                        let grants = domain_grants(&snapshot.grants);
                        let draw = allocate(extra, LIMIT, u64::try_from(snapshot.tier_used).unwrap(), &grants, later);
                        let expected = LedgerEntry {
                            status: LedgerStatus::Charged,
                            tier_ops: before.tier_ops + i64::try_from(draw.tier).unwrap(),
                            promo_ops: before.promo_ops + i64::try_from(draw.promo_total()).unwrap(),
                            first_redemption: before
                                .first_redemption
                                .clone()
                                .or_else(|| draw.first_grant().map(str::to_owned)),
                            settled_at: Some(later),
                            ..before
                        };
                        assert_eq!(result.unwrap(), expected, "{what}: settle of a held row");
                        charges += 1;
                    }
                    LedgerStatus::Charged => {
                        assert_eq!(result.unwrap(), before, "{what}: settle of a charged row");
                        unchanged += 1;
                    }
                    LedgerStatus::Released => {
                        assert_not_found(result, &what);
                        not_found += 1;
                    }
                }
            }
            8..=9 if !known.is_empty() => {
                let id = &known[rng.below(known.len() as u64) as usize];
                let before = db.ledger_entry(id).await.unwrap().expect("known row");
                let result = db.release(id, later).await.unwrap();
                if before.status == LedgerStatus::Held {
                    let expected = LedgerEntry { status: LedgerStatus::Released, settled_at: Some(later), ..before };
                    assert_eq!(result, expected, "{what}: release of a held row");
                    releases += 1;
                } else {
                    assert_eq!(result, before, "{what}: release of a finished row");
                    unchanged += 1;
                }
            }
            _ => {}
        }
        assert_ledger_agrees(db, &mut raw, ann, &[&nov, &dec], &what).await;
    }
    // The seed exercises every path.
    let counts = (admits, refusals, charges, releases, unchanged, not_found);
    assert!(
        admits > 0 && refusals > 0 && charges > 0 && releases > 0 && unchanged > 0 && not_found > 0,
        "admits, refusals, charges, releases, unchanged, not found: {counts:?}"
    );
}
