use std::sync::Arc;

use redline_ports::clock::MockClock;
use redline_ports::identity::MockIdentityStore;

use super::*;

fn clock(now: Millis) -> Arc<MockClock> {
    let mut c = MockClock::new();
    c.expect_now_ms().return_const(now);
    Arc::new(c)
}

/// A store whose throttle never makes anyone wait.
fn unthrottled(store: &mut MockIdentityStore) {
    store.expect_take_throttle().returning(|_, _| Ok(Ok(())));
    store.expect_give_back_throttle().returning(|_, _| Ok(()));
    // Every admitted key notes its use.
    store.expect_touch_key().returning(|_, _, _| Ok(()));
}

/// A stored record of `key`: hashed, live, every scope, never expiring.
async fn key_record(key: &ApiKey, owner: Owner) -> KeyRecord {
    KeyRecord {
        id: KeyId::new(),
        owner,
        name: "k".into(),
        lookup_prefix: key.lookup_prefix().into(),
        hash: secrets::hash_secret(key.expose().to_owned()).await.unwrap(),
        created_at: 0,
        revoked_at: None,
        created_by: None,
        scopes: Scopes::FULL,
        expires_at: None,
        last_used_at: None,
    }
}

fn identity(store: MockIdentityStore, now: Millis) -> Identity {
    Identity::new(Arc::new(store), clock(now), IdentityConfig::default())
}

#[test]
fn bearer_parsing() {
    assert_eq!(bearer_token("Bearer abc"), Some("abc"));
    assert_eq!(bearer_token("bearer abc "), Some("abc"));
    for bad in ["abc", "Token abc", "Basic dXNlcjpwYXNz", "Bearer:abc", "Bearer ", "Bearer", "", "Bearerabc"] {
        assert_eq!(bearer_token(bad), None, "{bad:?}");
    }
    // never panics on multi-byte text around the split point
    assert_eq!(bearer_token("Beäre abc"), None);
}

#[tokio::test]
async fn verified_keys_are_cached_and_evicted_on_revocation() {
    let key = secrets::new_api_key(KeyKind::User);
    let owner = Owner::User(UserId::new());
    let record = key_record(&key, owner).await;
    let mut store = MockIdentityStore::new();
    let rec = record.clone();
    // Looked up once before revocation (then cached), once after (then refused).
    let mut calls = 0;
    unthrottled(&mut store);
    store.expect_live_keys_by_prefix().times(2).returning(move |_| {
        calls += 1;
        Ok(if calls == 1 { vec![rec.clone()] } else { vec![] })
    });
    store.expect_revoke_key().times(1).returning(|_, _, _| Ok(()));
    let id = identity(store, 1_000);

    let header = format!("Bearer {}", key.expose());
    for _ in 0..3 {
        let p = id.authenticate_header(Some(&header), "198.51.100.1").await.unwrap();
        assert_eq!(p.owner, owner);
    }
    id.revoke_key(owner, record.id).await.unwrap();
    let err = id.authenticate_header(Some(&header), "198.51.100.1").await.unwrap_err();
    assert!(matches!(err, IdentityError::Auth(AuthFailure::InvalidKey)));
}

/// An expiring key works until its expiry and is refused from then on, also when the
/// verified-key cache still holds it; its use is written once a minute, not per request.
#[tokio::test]
async fn an_expired_key_is_refused_even_from_the_cache_and_its_use_is_noted_once_a_minute() {
    let key = secrets::new_api_key(KeyKind::User);
    let record = KeyRecord {
        scopes: Scopes::of([redline_domain::Scope::Read]),
        expires_at: Some(100_000),
        ..key_record(&key, Owner::User(UserId::new())).await
    };
    let now = Arc::new(std::sync::atomic::AtomicI64::new(1_000));
    let mut clock = MockClock::new();
    let read = now.clone();
    clock.expect_now_ms().returning(move || read.load(std::sync::atomic::Ordering::SeqCst));
    let touches = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut store = MockIdentityStore::new();
    store.expect_take_throttle().returning(|_, _| Ok(Ok(())));
    store.expect_give_back_throttle().returning(|_, _| Ok(()));
    let rec = record.clone();
    store.expect_live_keys_by_prefix().times(1).returning(move |_| Ok(vec![rec.clone()]));
    let seen = touches.clone();
    store.expect_touch_key().returning(move |_, at, gap| {
        seen.lock().unwrap().push((at, gap));
        Ok(())
    });
    let id = Identity::new(Arc::new(store), Arc::new(clock), IdentityConfig::default());
    let header = format!("Bearer {}", key.expose());

    for at in [1_000, 30_000, 61_000, 99_999] {
        now.store(at, std::sync::atomic::Ordering::SeqCst);
        let p = id.authenticate_header(Some(&header), "198.51.100.1").await.unwrap();
        assert_eq!(p.scopes, record.scopes);
    }
    now.store(100_000, std::sync::atomic::Ordering::SeqCst);
    let err = id.authenticate_header(Some(&header), "198.51.100.1").await.unwrap_err();
    assert!(matches!(err, IdentityError::Auth(AuthFailure::InvalidKey)), "{err:?}");
    for _ in 0..100 {
        if touches.lock().unwrap().len() >= 2 {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert_eq!(*touches.lock().unwrap(), vec![(1_000, KEY_USE_GRANULARITY_MS), (61_000, KEY_USE_GRANULARITY_MS)]);
}

#[tokio::test]
async fn header_failures_are_told_apart() {
    let id = identity(MockIdentityStore::new(), 0);
    let auth = |r: IdentityResult<Principal>| match r {
        Err(IdentityError::Auth(f)) => f,
        other => panic!("{other:?}"),
    };
    assert_eq!(auth(id.authenticate_header(None, "198.51.100.1").await), AuthFailure::MissingHeader);
    assert_eq!(auth(id.authenticate_header(Some("Token x"), "198.51.100.1").await), AuthFailure::NotBearer);
    // malformed keys never reach the store
    assert_eq!(auth(id.authenticate_header(Some("Bearer nonsense"), "198.51.100.1").await), AuthFailure::InvalidKey);
}

#[tokio::test]
async fn key_limit_is_reported_with_the_plans_maximum() {
    let mut store = MockIdentityStore::new();
    store.expect_plan_of().returning(|_| Ok(PlanSettings { plan: Plan::Free, monthly_limit_override: None }));
    store.expect_insert_key_within_limit().withf(|_, max| *max == 5).returning(|_, _| Err(StoreError::LimitReached));
    let id = identity(store, 0);
    let err = id.create_key(Owner::User(UserId::new()), "x", None, KeyTerms::default()).await.unwrap_err();
    assert!(matches!(err, IdentityError::KeyLimit { max: 5 }));
}

#[tokio::test]
async fn wrong_handoff_code_counts_down_and_disables() {
    let token = "ho_token";
    let user = UserId::new();
    let record = HandoffRecord {
        token_hash: secrets::sha256_hex(token.as_bytes()),
        user_id: user,
        code_hash: code_hash(token, "123456"),
        created_at: 0,
        expires_at: 10_000,
        wrong_codes: 3,
        claimed_at: None,
    };
    let mut store = MockIdentityStore::new();
    let r = record.clone();
    store.expect_handoff().returning(move |_| Ok(Some(r.clone())));
    store.expect_user_by_id().returning(move |id| {
        Ok(Some(UserRecord {
            id,
            kind: UserKind::Agent,
            email: None,
            password_hash: None,
            name: None,
            plan: PlanSettings { plan: Plan::Free, monthly_limit_override: None },
            created_at: 0,
        }))
    });
    let r = record.clone();
    store.expect_take_attempt().times(1).returning(move |_, _| Ok(HandoffRecord { wrong_codes: 4, ..r.clone() }));
    let id = identity(store, 5_000);
    let email = Email::parse("op@example.com").unwrap();
    let password = Password::parse("long enough").unwrap();
    let err = id.claim_handoff(token, "654321", email, password).await.unwrap_err();
    assert!(matches!(err, IdentityError::WrongCode { attempts_left: 1 }), "{err:?}");

    let mut store = MockIdentityStore::new();
    let r = record.clone();
    store.expect_handoff().returning(move |_| Ok(Some(HandoffRecord { wrong_codes: 5, ..r.clone() })));
    let id = identity(store, 5_000);
    let err = id
        .claim_handoff(
            token,
            "123456",
            Email::parse("op@example.com").unwrap(),
            Password::parse("long enough").unwrap(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, IdentityError::HandoffDisabled), "{err:?}");
}

#[tokio::test]
async fn login_with_unknown_email_is_refused_like_a_wrong_password() {
    let mut store = MockIdentityStore::new();
    store.expect_user_by_email().returning(|_| Ok(None));
    unthrottled(&mut store);
    let id = identity(store, 0);
    assert!(matches!(
        id.login("nobody@example.com", "whatever-pass", &ClientInfo::at("198.51.100.1")).await,
        Err(IdentityError::InvalidCredentials)
    ));
    assert!(matches!(
        id.login("not an email", "whatever-pass", &ClientInfo::at("198.51.100.1")).await,
        Err(IdentityError::InvalidCredentials)
    ));
}

#[test]
fn session_token_shape() {
    let t = secrets::new_token(SESSION_TOKEN_PREFIX);
    assert!(is_session_token_shaped(&t));
    assert!(!is_session_token_shaped("ws_short"));
    assert!(!is_session_token_shaped(&format!("sk_{}", "a".repeat(43))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_misses_verify_a_key_once() {
    let key = secrets::new_api_key(KeyKind::User);
    let record = key_record(&key, Owner::User(UserId::new())).await;
    let mut store = MockIdentityStore::new();
    unthrottled(&mut store);
    store.expect_live_keys_by_prefix().times(1).returning(move |_| Ok(vec![record.clone()]));
    let id = Arc::new(identity(store, 0));
    let header = format!("Bearer {}", key.expose());
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let id = id.clone();
            let header = header.clone();
            tokio::spawn(async move { id.authenticate_header(Some(&header), "198.51.100.1").await.map(|p| p.key_id) })
        })
        .collect();
    for t in tasks {
        assert!(t.await.unwrap().is_ok());
    }
}

#[tokio::test]
async fn a_throttled_sign_in_computes_no_hash_and_reads_no_account() {
    let mut store = MockIdentityStore::new();
    let scopes = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = scopes.clone();
    store.expect_take_throttle().times(1).returning(move |s, _| {
        seen.lock().unwrap().extend(s.iter().map(|(k, p)| (k.clone(), *p)));
        Ok(Err(4_200))
    });
    // No user_by_email expectation: reading the account would panic the mock.
    let id = identity(store, 0);
    let err = id.login("Ann@Example.com ", "guess", &ClientInfo::at("198.51.100.7")).await.unwrap_err();
    assert!(matches!(err, IdentityError::Throttled { guess: Guess::Password, retry_after_secs: 5 }), "{err:?}");
    let scopes = scopes.lock().unwrap();
    assert_eq!(scopes.len(), 2);
    assert_eq!(scopes[0], (throttle_scope("account", "ann@example.com"), throttle::ACCOUNT));
    assert_eq!(scopes[1], (throttle_scope("address", "198.51.100.7"), throttle::ADDRESS));
    assert!(!scopes[0].0.contains("ann"), "scopes are stored hashed");
}
