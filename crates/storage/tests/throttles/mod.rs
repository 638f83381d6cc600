//! `IdentityStore::take_throttle` and `give_back_throttle`.

use redline_domain::throttle::{ThrottlePolicy, ACCOUNT, ADDRESS};
use redline_domain::time_util::Millis;
use redline_ports::IdentityStore;
use redline_storage::Db;

use crate::common;

const T0: Millis = 1_800_000_000_000;

fn scopes(list: &[(&str, ThrottlePolicy)]) -> Vec<(String, ThrottlePolicy)> {
    list.iter().map(|(s, p)| ((*s).to_owned(), *p)).collect()
}

pub async fn free_attempts_then_waits_and_refusals_change_nothing(db: &Db) {
    let one = scopes(&[("account-a", ACCOUNT), ("address-1", ADDRESS)]);
    for n in 0..ACCOUNT.free {
        assert_eq!(db.take_throttle(&one, T0).await.unwrap(), Ok(()), "free attempt {n}");
    }
    assert_eq!(db.take_throttle(&one, T0 + 10).await.unwrap(), Err(ACCOUNT.base_ms - 10), "the account waits");
    // Refused: nothing was counted, so the same wait is owed, and the address was not charged.
    assert_eq!(db.take_throttle(&one, T0 + 20).await.unwrap(), Err(ACCOUNT.base_ms - 20));
    // Spraying other accounts from the same address.
    for n in ACCOUNT.free..ADDRESS.free {
        let sprayed = vec![(format!("account-{n}"), ACCOUNT), ("address-1".to_owned(), ADDRESS)];
        assert_eq!(db.take_throttle(&sprayed, T0).await.unwrap(), Ok(()), "address attempt {n}");
    }
    let other_account = scopes(&[("account-b", ACCOUNT), ("address-1", ADDRESS)]);
    assert_eq!(db.take_throttle(&other_account, T0).await.unwrap(), Err(ADDRESS.base_ms), "the address is used up too");
    // After the wait, one more attempt; then the wait doubles.
    let later = scopes(&[("account-a", ACCOUNT)]);
    assert_eq!(db.take_throttle(&later, T0 + ACCOUNT.base_ms).await.unwrap(), Ok(()));
    assert_eq!(db.take_throttle(&later, T0 + ACCOUNT.base_ms).await.unwrap(), Err(2 * ACCOUNT.base_ms));
    // A right secret: the account is forgotten, the address gets one attempt back.
    db.give_back_throttle("account-a", true).await.unwrap();
    assert_eq!(db.take_throttle(&later, T0 + ACCOUNT.base_ms).await.unwrap(), Ok(()));
    db.give_back_throttle("address-1", false).await.unwrap();
    assert_eq!(db.take_throttle(&scopes(&[("address-1", ADDRESS)]), T0).await.unwrap(), Ok(()), "one given back");
    db.give_back_throttle("never-seen", false).await.unwrap();
    db.give_back_throttle("never-seen", true).await.unwrap();
    // A day later everything is forgotten.
    assert_eq!(db.take_throttle(&other_account, T0 + ADDRESS.window_ms).await.unwrap(), Ok(()));
}

pub async fn attempts_at_once_are_each_counted(db: &Db) {
    const CALLS: usize = 16;
    let shared = common::shared(db);
    let tasks: Vec<_> = (0..CALLS)
        .map(|i| {
            let db = shared.clone();
            // Two scopes in different orders: the locks are taken in one order whatever the
            // caller's, so no two attempts wait on each other.
            let list = if i % 2 == 0 {
                scopes(&[("account-a", ACCOUNT), ("address-1", ADDRESS)])
            } else {
                scopes(&[("address-1", ADDRESS), ("account-a", ACCOUNT)])
            };
            tokio::spawn(async move { db.take_throttle(&list, T0).await })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        if task.await.expect("task panicked").expect("store") == Ok(()) {
            admitted += 1;
        }
    }
    assert_eq!(admitted, ACCOUNT.free as usize, "guesses sent at once get no more than the free attempts");
}
