//! Accounts people control: who made each key, signed-in sessions listed and signed out,
//! password changes and single-use reset links (`IdentityStore`).

use redline_domain::page::PageRequest;
use redline_domain::time_util::Millis;
use redline_domain::{Email, KeyId, OrgId, Owner, Scope, Scopes, UserId};
use redline_ports::records::{
    EmailVerificationRecord, InvitationRecord, KeyRecord, MemberRecord, OrgRecord, PasswordResetRecord, PlanSettings,
};
use redline_ports::{IdentityStore, StoreError};
use redline_storage::Db;

use super::*;

pub async fn keys_remember_their_maker(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let org = Owner::Org(OrgId::new());
    let by = |owner: Owner, maker: Option<UserId>, n: i64| KeyRecord {
        created_by: maker,
        ..key(owner, &format!("{n:08x}"), T0 + n)
    };
    let (a1, a2, b1, ops) =
        (by(org, Some(ann.id), 1), by(org, Some(ann.id), 2), by(org, Some(bob.id), 3), by(org, None, 4));
    let own = by(Owner::User(ann.id), Some(ann.id), 5);
    for k in [&a1, &a2, &b1, &ops, &own] {
        db.insert_key_within_limit(k, 100).await.unwrap();
    }
    db.revoke_key(org, a2.id, T0 + 10).await.unwrap();
    let listed = db.keys_of(org, &PageRequest::first(10)).await.unwrap().items;
    assert_eq!(listed.iter().find(|k| k.id == b1.id).unwrap().created_by, Some(bob.id));
    assert_eq!(listed.iter().find(|k| k.id == ops.id).unwrap().created_by, None);

    let revoked = db.revoke_keys_created_by(org, ann.id, T0 + 20).await.unwrap();
    assert_eq!(revoked, vec![a1.id], "Ann's live key of the organization only");
    assert!(!db.key_is_live(a1.id, T0).await.unwrap());
    assert!(db.key_is_live(b1.id, T0).await.unwrap() && db.key_is_live(ops.id, T0).await.unwrap());
    assert!(db.key_is_live(own.id, T0).await.unwrap(), "Ann's own keys are not the organization's");
    assert!(!db.key_is_live(KeyId::new(), T0).await.unwrap());
    assert!(db.revoke_keys_created_by(org, ann.id, T0 + 30).await.unwrap().is_empty());
}

pub async fn keys_keep_their_terms_and_last_use(db: &Db) {
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let read =
        KeyRecord { scopes: Scopes::of([Scope::Read]), expires_at: Some(T0 + 1_000), ..key(ann, "0000000a", T0) };
    let admin = KeyRecord { scopes: Scopes::of([Scope::Admin]), ..key(ann, "0000000b", T0 + 1) };
    for k in [&read, &admin] {
        db.insert_key_within_limit(k, 100).await.unwrap();
    }
    let found = db.live_keys_by_prefix("0000000a").await.unwrap();
    assert_eq!(found, vec![read.clone()], "scopes and expiry come back as written");
    assert_eq!(db.live_keys_by_prefix("0000000b").await.unwrap()[0].scopes, Scopes::of([Scope::Admin]));
    assert!(db.key_is_live(read.id, T0 + 999).await.unwrap());
    assert!(!db.key_is_live(read.id, T0 + 1_000).await.unwrap(), "expired at its expiry");

    // The last use is written once per gap, whatever the order the writes arrive in.
    db.touch_key(read.id, T0 + 100, 60_000).await.unwrap();
    db.touch_key(read.id, T0 + 200, 60_000).await.unwrap();
    assert_eq!(db.live_keys_by_prefix("0000000a").await.unwrap()[0].last_used_at, Some(T0 + 100));
    db.touch_key(read.id, T0 + 60_100, 60_000).await.unwrap();
    assert_eq!(db.live_keys_by_prefix("0000000a").await.unwrap()[0].last_used_at, Some(T0 + 60_100));

    // An expired key no longer counts against the owner's limit; a live one does.
    let next = key(ann, "0000000c", T0 + 2_000);
    db.insert_key_within_limit(&next, 2).await.unwrap();
    let over = key(ann, "0000000d", T0 + 2_001);
    assert!(matches!(db.insert_key_within_limit(&over, 2).await, Err(StoreError::LimitReached)));
}

pub async fn web_sessions_listed_touched_and_signed_out(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let (a1, a2, a3) = (
        web_session("a1", ann.id, T0 + 10_000),
        web_session("a2", ann.id, T0 + 10_000),
        web_session("a3", ann.id, T0 + 500),
    );
    let b1 = web_session("b1", bob.id, T0 + 10_000);
    for s in [&a1, &a2, &a3, &b1] {
        db.insert_web_session(s).await.unwrap();
    }
    db.touch_web_session("a2", T0 + 100).await.unwrap();
    let listed = db.web_sessions_of(ann.id, T0 + 600, 10).await.unwrap();
    let ids: Vec<&str> = listed.iter().map(|s| s.token_hash.as_str()).collect();
    assert_eq!(ids, ["a2", "a1"], "most recently used first, expired ones left out, only Ann's");
    assert_eq!(listed[0].last_seen_at, T0 + 100);
    assert_eq!(listed[1], a1);
    assert_eq!(db.web_sessions_of(ann.id, T0, 1).await.unwrap().len(), 1, "the limit holds");

    assert!(!db.delete_web_session_by_id(bob.id, "wss_a1").await.unwrap(), "not Bob's session");
    assert!(db.delete_web_session_by_id(ann.id, "wss_a1").await.unwrap());
    assert!(!db.delete_web_session_by_id(ann.id, "wss_a1").await.unwrap(), "already gone");
    assert_eq!(db.web_session("a1", T0).await.unwrap(), None);

    db.insert_web_session(&web_session("a4", ann.id, T0 + 10_000)).await.unwrap();
    assert_eq!(db.delete_web_sessions_of(ann.id, Some("a4".to_owned())).await.unwrap(), 2, "a2 and the expired a3");
    assert!(db.web_session("a4", T0).await.unwrap().is_some(), "the kept one stays");
    assert_eq!(db.delete_web_sessions_of(ann.id, None).await.unwrap(), 1);
    assert!(db.web_session("b1", T0).await.unwrap().is_some(), "Bob's sessions stay");

    db.set_password_hash(ann.id, "new-hash").await.unwrap();
    assert_eq!(db.user_by_id(ann.id).await.unwrap().unwrap().password_hash.as_deref(), Some("new-hash"));
    assert!(matches!(db.set_password_hash(UserId::new(), "x").await, Err(StoreError::NotFound)));
}

pub async fn password_resets_work_once_until_they_expire(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    for token in ["r1", "r2", "r3"] {
        let reset = PasswordResetRecord {
            token_hash: token.to_owned(),
            user_id: ann.id,
            created_at: T0,
            expires_at: T0 + 1_800_000,
        };
        db.insert_password_reset(&reset).await.unwrap();
    }
    assert_eq!(db.password_reset("r1", T0).await.unwrap(), Some(ann.id));
    assert_eq!(db.use_password_reset("r1", T0 + 1).await.unwrap(), Some(ann.id));
    assert_eq!(db.use_password_reset("r1", T0 + 2).await.unwrap(), None, "once");
    assert_eq!(db.password_reset("r1", T0 + 2).await.unwrap(), None);
    assert_eq!(db.password_reset("r2", T0 + 1_799_999).await.unwrap(), Some(ann.id), "usable for 30 minutes");
    assert_eq!(db.password_reset("r2", T0 + 1_800_000).await.unwrap(), None, "not after");
    assert_eq!(db.use_password_reset("r2", T0 + 1_800_000).await.unwrap(), None, "expired");
    assert_eq!(db.use_password_reset("unknown", T0).await.unwrap(), None);
    // Used at the same moment: exactly one wins.
    let (x, y) = tokio::join!(db.use_password_reset("r3", T0 + 5), db.use_password_reset("r3", T0 + 5));
    assert_eq!([x.unwrap(), y.unwrap()].iter().filter(|u| u.is_some()).count(), 1);
}

pub async fn web_sessions_expire(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let s = web_session("token-hash-1", ann.id, T0 + 1_000);
    db.insert_web_session(&s).await.unwrap();

    assert_eq!(db.web_session("token-hash-1", T0).await.unwrap(), Some(s.clone()));
    assert_eq!(db.web_session("token-hash-1", T0 + 999).await.unwrap(), Some(s.clone()), "valid until expires_at");
    assert_eq!(db.web_session("token-hash-1", T0 + 1_000).await.unwrap(), None, "expired at expires_at");
    assert_eq!(db.web_session("token-hash-1", T0 + 50_000).await.unwrap(), None, "expired after");
    assert_eq!(db.web_session("unknown", T0).await.unwrap(), None);
    // Looking at an expired session does not delete it.
    assert_eq!(db.web_session("token-hash-1", T0 + 1).await.unwrap(), Some(s));
}

pub async fn delete_web_session_is_idempotent(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let gone = web_session("token-hash-gone", ann.id, T0 + 1_000);
    let kept = web_session("token-hash-kept", ann.id, T0 + 1_000);
    db.insert_web_session(&gone).await.unwrap();
    db.insert_web_session(&kept).await.unwrap();

    db.delete_web_session("token-hash-gone").await.unwrap();
    assert_eq!(db.web_session("token-hash-gone", T0).await.unwrap(), None);
    db.delete_web_session("token-hash-gone").await.expect("deleting twice is not an error");
    db.delete_web_session("never-existed").await.expect("deleting an unknown session is not an error");
    assert_eq!(db.web_session("token-hash-kept", T0).await.unwrap(), Some(kept), "other sessions stay");
}

pub async fn invitations_are_replaced_listed_and_accepted_once(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let org = OrgRecord {
        id: OrgId::new(),
        name: "Acme".to_owned(),
        owner_user_id: ann.id,
        plan: PlanSettings { plan: redline_domain::Plan::Free, monthly_limit_override: None },
        created_at: T0,
    };
    db.create_org(&org).await.unwrap();
    let invite = |id: &str, email: &str, role: &str, expires_at: Millis| InvitationRecord {
        id: id.to_owned(),
        token_hash: format!("hash-{id}"),
        org_id: org.id,
        email: Email::unchecked(email),
        role: role.to_owned(),
        invited_by: ann.id,
        created_at: T0,
        expires_at,
    };
    db.upsert_invitation(&invite("inv_1", "bob@example.com", "member", T0 + 1_000)).await.unwrap();
    // Inviting the same address again replaces the pending invitation.
    db.upsert_invitation(&invite("inv_2", "bob@example.com", "admin", T0 + 1_000)).await.unwrap();
    db.upsert_invitation(&invite("inv_3", "carol@example.com", "member", T0 + 10)).await.unwrap();
    assert_eq!(db.invitation_by_token("hash-inv_1").await.unwrap(), None, "replaced");
    assert_eq!(db.invitation_by_token("hash-inv_2").await.unwrap().unwrap().role, "admin");
    let pending: Vec<String> = db.invitations_of(org.id, T0).await.unwrap().into_iter().map(|i| i.id).collect();
    assert_eq!(pending, ["inv_2", "inv_3"]);
    let later: Vec<String> = db.invitations_of(org.id, T0 + 10).await.unwrap().into_iter().map(|i| i.id).collect();
    assert_eq!(later, ["inv_2"], "expired ones are left out");

    let member = MemberRecord { org_id: org.id, user_id: bob.id, role: "admin".to_owned(), created_at: T0 + 5 };
    db.accept_invitation("inv_2", &member).await.unwrap();
    assert_eq!(db.member(org.id, bob.id).await.unwrap(), Some(member.clone()));
    assert!(matches!(db.accept_invitation("inv_2", &member).await, Err(StoreError::NotFound)), "once");
    // An invitation of someone who is already a member is used up all the same.
    db.upsert_invitation(&invite("inv_4", "bob@example.com", "member", T0 + 1_000)).await.unwrap();
    assert!(matches!(db.accept_invitation("inv_4", &member).await, Err(StoreError::Duplicate(_))));
    assert_eq!(db.invitation_by_token("hash-inv_4").await.unwrap(), None);
    assert!(db.delete_invitation("inv_3").await.unwrap());
    assert!(!db.delete_invitation("inv_3").await.unwrap());
}

pub async fn email_verifications_prove_an_address_once_until_they_expire(db: &Db) {
    let ann = new_user(db, web_user("ann@example.com", T0)).await;
    let bob = new_user(db, web_user("bob@example.com", T0)).await;
    let email = |s: &str| Email::parse(s).unwrap();
    let link = |token: &str, user: UserId, to: &str| EmailVerificationRecord {
        token_hash: token.to_owned(),
        user_id: user,
        email: email(to),
        created_at: T0,
        expires_at: T0 + 1_000,
    };
    for l in [
        link("v1", ann.id, "ann@example.com"),
        link("v2", ann.id, "ann@example.com"),
        link("v3", bob.id, "bob@example.com"),
    ] {
        db.insert_email_verification(&l).await.unwrap();
    }
    assert_eq!(db.verified_email(ann.id).await.unwrap(), None);
    assert_eq!(db.use_email_verification("v1", T0 + 10).await.unwrap(), Some(ann.id));
    assert_eq!(db.verified_email(ann.id).await.unwrap(), Some((email("ann@example.com"), T0 + 10)));
    assert_eq!(db.use_email_verification("v1", T0 + 20).await.unwrap(), None, "once");
    assert_eq!(db.use_email_verification("v2", T0 + 30).await.unwrap(), Some(ann.id), "another link works");
    assert_eq!(db.verified_email(ann.id).await.unwrap(), Some((email("ann@example.com"), T0 + 30)));
    assert_eq!(db.use_email_verification("v3", T0 + 1_000).await.unwrap(), None, "expired");
    assert_eq!(db.verified_email(bob.id).await.unwrap(), None, "an expired link proves nothing");
    assert_eq!(db.use_email_verification("unknown", T0).await.unwrap(), None);
    db.set_verified_email(bob.id, &email("bob@example.com"), T0 + 40).await.unwrap();
    db.set_verified_email(bob.id, &email("robert@example.com"), T0 + 50).await.unwrap();
    assert_eq!(db.verified_email(bob.id).await.unwrap(), Some((email("robert@example.com"), T0 + 50)), "one per user");
    assert_eq!(db.verified_email(ann.id).await.unwrap(), Some((email("ann@example.com"), T0 + 30)));
}

pub async fn an_idempotency_claim_taken_over_is_finished_only_by_its_new_holder(db: &Db) {
    use redline_ports::{ClaimRef, IdempotencyClaim, IdempotencyStore, StoredAnswer};
    let ann = Owner::User(new_user(db, web_user("ann@example.com", T0)).await.id);
    let claim =
        |token: &'static str, now: Millis| db.claim_idempotency_key(ann, "k", token, "print", now, now + 100, 0);
    assert_eq!(claim("first", T0).await.unwrap(), IdempotencyClaim::Claimed);
    assert_eq!(claim("second", T0 + 50).await.unwrap(), IdempotencyClaim::Running);
    let other = db.claim_idempotency_key(ann, "k", "third", "another print", T0 + 50, T0 + 150, 0).await.unwrap();
    assert_eq!(other, IdempotencyClaim::Mismatch);
    // The first's lease lapses unrenewed: the key is taken over, and the first touches nothing.
    assert_eq!(claim("second", T0 + 200).await.unwrap(), IdempotencyClaim::Claimed);
    let first = ClaimRef { owner: ann, key: "k", token: "first" };
    let second = ClaimRef { owner: ann, key: "k", token: "second" };
    assert!(!db.renew_idempotency_key(first.clone(), T0 + 1_000).await.unwrap());
    db.release_idempotency_key(first.clone()).await.unwrap();
    let stale = StoredAnswer { status: 200, headers: vec![], body: b"first".to_vec() };
    db.finish_idempotency_key(first, &stale).await.unwrap();
    assert_eq!(claim("third", T0 + 250).await.unwrap(), IdempotencyClaim::Running, "still the second's");
    assert!(db.renew_idempotency_key(second.clone(), T0 + 1_000).await.unwrap());
    let answer = StoredAnswer {
        status: 504,
        headers: vec![("content-type".into(), "application/json".into()), ("x-usage-used".into(), "1".into())],
        body: b"{\"detail\":\"goes on\"}".to_vec(),
    };
    db.finish_idempotency_key(second, &answer).await.unwrap();
    assert_eq!(claim("fourth", T0 + 5_000).await.unwrap(), IdempotencyClaim::Done(answer));
    // Another owner's key of the same name is another key; a day later the key is free.
    let bob = Owner::User(new_user(db, web_user("bob@example.com", T0)).await.id);
    let bobs = db.claim_idempotency_key(bob, "k", "b", "print", T0, T0 + 100, 0).await.unwrap();
    assert_eq!(bobs, IdempotencyClaim::Claimed);
    assert_eq!(db.purge_idempotency_keys(T0 + 201, 10).await.unwrap(), 2, "made at T0 and at T0 + 200");
    assert_eq!(claim("fifth", T0 + 6_000).await.unwrap(), IdempotencyClaim::Claimed);
}
