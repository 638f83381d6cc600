//! Guessing is throttled (docs/api.md, "Sign-in throttling"): per account across replicas,
//! per client address when spraying accounts, per API-key prefix and address for keys.

use std::time::Duration;

use crate::helpers::{borrowed, fleet_env, spawn_app, spawn_app_with, unique_email, PgDatabase, Reply};

fn retry_after(r: &Reply) -> u64 {
    r.header("retry-after").and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("no Retry-After: {r:?}"))
}

#[tokio::test]
async fn guessing_one_account_is_throttled_across_two_replicas() {
    let Some(db) = PgDatabase::create("redline_sign_in").await else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let fleet = fleet_env(&db, dir.path());
    let a = spawn_app_with(&borrowed(&fleet)).await;
    let b = spawn_app_with(&borrowed(&fleet)).await;
    let email = unique_email();
    a.web_signup(&email, "the right passphrase").await.expect_status(201);
    // Five free failures, alternating replicas.
    for n in 0..5 {
        let app = if n % 2 == 0 { &a } else { &b };
        app.login(&email, &format!("guess number {n}")).await.expect_401();
    }
    for app in [&a, &b] {
        let r = app.login(&email, "guess number 6").await;
        r.expect_status(429).expect_json();
        assert!(r.detail().starts_with("Too many failed sign-in attempts."), "{r:?}");
        assert!((1..=2).contains(&retry_after(&r)), "{r:?}");
    }
    // While it waits even the right password is refused: a guess that happens to be right
    // must not be told apart from a wrong one.
    let r = b.login(&email, "the right passphrase").await;
    r.expect_status(429);
    tokio::time::sleep(Duration::from_secs(retry_after(&r))).await;
    a.login(&email, "the right passphrase").await.expect_status(200);
    // The right password forgot the failures: five free ones again.
    for n in 0..5 {
        b.login(&email, &format!("again {n}")).await.expect_401();
    }
    b.login(&email, "again 6").await.expect_status(429);
}

#[tokio::test]
async fn spraying_many_accounts_from_one_address_is_throttled() {
    let app = spawn_app().await;
    for n in 0..20 {
        app.login(&unique_email(), &format!("password {n}")).await.expect_401();
    }
    let r = app.login(&unique_email(), "password 21").await;
    r.expect_status(429);
    assert!(retry_after(&r) >= 1, "{r:?}");
}

#[tokio::test]
async fn successful_sign_ins_do_not_use_up_the_address() {
    let app = spawn_app().await;
    let email = unique_email();
    app.web_signup(&email, "a proper passphrase").await.expect_status(201);
    for _ in 0..30 {
        app.login(&email, "a proper passphrase").await.expect_status(200);
    }
}

#[tokio::test]
async fn wrong_keys_sharing_a_real_prefix_are_throttled_per_address_only() {
    let app = spawn_app_with(&[("REDLINE_TRUSTED_PROXIES", "127.0.0.1")]).await;
    let key = app.agent_key().await;
    // The same prefix (`sk_` + 8 hex), a wrong rest.
    let (prefix, rest) = key.split_at(11);
    let flipped: String = rest.chars().rev().collect();
    let wrong = format!("{prefix}{flipped}");
    assert_ne!(wrong, key);
    let from = |addr: &'static str, k: &str| app.get("/v1/sessions").bearer_auth(k).header("X-Forwarded-For", addr);
    for _ in 0..5 {
        let r = app.send(from("203.0.113.9", &wrong)).await;
        r.expect_status(401);
    }
    let r = app.send(from("203.0.113.9", &wrong)).await;
    r.expect_status(429).expect_json();
    assert!(r.detail().starts_with("Too many invalid API keys from this address."), "{r:?}");
    retry_after(&r);
    // The owner, elsewhere, is not slowed down by the stranger's guesses.
    app.send(from("198.51.100.20", &key)).await.expect_status(200);
}

/// Web sign-up has the agent sign-up's brake: one sign-up of either kind per client address
/// per `REDLINE_SIGNUP_COOLDOWN_SECS`.
#[tokio::test]
async fn web_sign_ups_share_the_agent_sign_up_cooldown_per_address() {
    let app = spawn_app_with(&[("REDLINE_SIGNUP_COOLDOWN_SECS", "60")]).await;
    app.web_signup(&unique_email(), "a long passphrase").await.expect_status(201);
    let again = app.web_signup(&unique_email(), "a long passphrase").await;
    again.expect_status(429);
    assert_eq!(
        again.detail(),
        format!("Too many signups from this address. Retry after {} seconds.", retry_after(&again))
    );
    assert!((1..=60).contains(&retry_after(&again)), "{again:?}");
    let agent = app.send(app.post("/v1/agents/signup").json(&serde_json::json!({}))).await;
    agent.expect_status(429);
}
