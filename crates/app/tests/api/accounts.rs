//! Accounts people can recover and control (docs/api.md, "Passwords" and "Accounts"): the
//! password rules, changing and resetting a password, the list of signed-in sessions, idle
//! expiry and the operator's reset.

use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::{spawn_app, spawn_app_with, unique_email, Reply, TestApp};

async fn me(app: &TestApp, token: &str) -> Reply {
    app.send(app.get("/v1/users/me").bearer_auth(token)).await
}

async fn sessions(app: &TestApp, token: &str) -> Vec<Value> {
    let r = app.send(app.get("/v1/users/me/sessions").bearer_auth(token)).await;
    r.expect_status(200);
    r.json["sessions"].as_array().unwrap_or_else(|| panic!("{r:?}")).clone()
}

async fn change_password(app: &TestApp, token: &str, current: &str, new: &str) -> Reply {
    let body = json!({"current_password": current, "new_password": new});
    app.send(app.post("/v1/users/me/password").bearer_auth(token).json(&body)).await
}

async fn ask_reset(app: &TestApp, email: &str) -> Reply {
    app.send(app.post("/v1/auth/password-reset").json(&json!({"email": email}))).await
}

async fn confirm_reset(app: &TestApp, token: &str, password: &str) -> Reply {
    app.send(app.post("/v1/auth/password-reset/confirm").json(&json!({"token": token, "password": password}))).await
}

/// The reset token mailed to `to`, number `nth` (it is sent after the answer).
async fn reset_token(app: &TestApp, to: &str, nth: usize) -> String {
    app.mailed_tokens(to, "/reset-password#token=", nth + 1).await.remove(nth)
}

#[tokio::test]
async fn sign_up_refuses_common_passwords_and_ones_made_from_the_address() {
    let app = spawn_app().await;
    for common in ["password", "12345678", "aaaaaaaa", "Password1", "qwertyuiop"] {
        let r = app.web_signup(&unique_email(), common).await;
        r.expect_422_at(&[json!("body"), json!("password")]);
        assert!(r.text.contains("list of common or leaked passwords"), "{common}: {r:?}");
    }
    let email = format!("grace.hopper.{}@example.com", uuid::Uuid::new_v4().simple());
    let local = email.split('@').next().unwrap();
    let r = app.web_signup(&email, &format!("{local}2024")).await;
    r.expect_422_at(&[json!("body"), json!("password")]);
    assert!(r.text.contains("made from the e-mail address"), "{r:?}");
    // No composition rule: a plain phrase that is on no list is fine.
    app.web_signup(&email, "violet tram at dusk").await.expect_status(201);
}

#[tokio::test]
async fn changing_the_password_needs_the_current_one_and_signs_out_every_other_session() {
    let app = spawn_app().await;
    let (email, password, this) = app.web_user().await;
    let other = app.login_token(&email, &password).await;

    let r = change_password(&app, &this, "not the password", "a new long passphrase").await;
    r.expect_status(403).expect_json();
    assert_eq!(r.detail(), "The current password is wrong.");
    let r = change_password(&app, &this, &password, "password123").await;
    r.expect_422_at(&[json!("body"), json!("new_password")]);
    me(&app, &other).await.expect_status(200);

    let r = change_password(&app, &this, &password, "a new long passphrase").await;
    r.expect_status(200);
    assert_eq!(r.json["other_sessions_ended"], 1, "{r:?}");
    me(&app, &this).await.expect_status(200);
    me(&app, &other).await.expect_401();
    app.login(&email, &password).await.expect_401();
    app.login(&email, "a new long passphrase").await.expect_status(200);
}

#[tokio::test]
async fn the_session_list_names_each_browser_and_signs_out_one_or_all() {
    let app = spawn_app().await;
    let (email, password, first) = app.web_user().await;
    let login = app.post("/v1/auth/login").header("user-agent", "Firefox on the kitchen laptop");
    let second = app.send(login.json(&json!({"email": email, "password": password}))).await;
    let second = second.json["token"].as_str().unwrap().to_owned();

    let list = sessions(&app, &first).await;
    assert_eq!(list.len(), 2, "{list:?}");
    let current: Vec<&Value> = list.iter().filter(|s| s["current"] == true).collect();
    assert_eq!(current.len(), 1, "{list:?}");
    let kitchen = list.iter().find(|s| s["user_agent"] == "Firefox on the kitchen laptop").expect("the second browser");
    assert_eq!(kitchen["current"], false);
    assert_eq!(kitchen["ip_address"], "127.0.0.1");
    let id = kitchen["session_id"].as_str().unwrap();
    assert!(id.starts_with("wss_"), "{id}");
    for field in ["created_at", "last_seen_at", "expires_at", "idle_expires_at"] {
        assert!(kitchen[field].is_string(), "{field}: {kitchen}");
    }

    // Another account cannot sign this session out, nor learn that it exists.
    let (_, _, stranger) = app.web_user().await;
    let r = app.send(app.delete(&format!("/v1/users/me/sessions/{id}")).bearer_auth(&stranger)).await;
    r.expect_status(404);
    assert_eq!(r.detail(), "Sign-in session not found");
    me(&app, &second).await.expect_status(200);

    app.send(app.delete(&format!("/v1/users/me/sessions/{id}")).bearer_auth(&first)).await.expect_status(204);
    me(&app, &second).await.expect_401();
    assert_eq!(sessions(&app, &first).await.len(), 1);

    let third = app.login_token(&email, &password).await;
    let r = app.send(app.delete("/v1/users/me/sessions").bearer_auth(&first)).await;
    r.expect_status(204);
    assert!(r.header("set-cookie").is_some_and(|c| c.contains("Max-Age=0")), "{r:?}");
    me(&app, &first).await.expect_401();
    me(&app, &third).await.expect_401();
}

#[tokio::test]
async fn a_reset_link_works_once_ends_every_session_and_strangers_get_the_same_answer() {
    let app = spawn_app().await;
    let (email, password, token) = app.web_user().await;

    let known = ask_reset(&app, &email).await;
    let unknown = ask_reset(&app, &unique_email()).await;
    known.expect_status(202);
    unknown.expect_status(202);
    assert_eq!(known.json, unknown.json, "the answer does not tell whether the address has an account");

    let link = reset_token(&app, &email, 0).await;
    assert!(link.starts_with("pr_"), "{link}");
    // A refused password leaves the link usable.
    confirm_reset(&app, &link, "iloveyou").await.expect_422_at(&[json!("body"), json!("password")]);
    me(&app, &token).await.expect_status(200);
    confirm_reset(&app, &link, "a brand new passphrase").await.expect_status(204);
    me(&app, &token).await.expect_401();
    app.login(&email, &password).await.expect_401();
    app.login(&email, "a brand new passphrase").await.expect_status(200);

    let again = confirm_reset(&app, &link, "yet another passphrase").await;
    again.expect_status(404).expect_json();
    assert!(again.detail().contains("already used or expired"), "{again:?}");
    confirm_reset(&app, "pr_made-up", "yet another passphrase").await.expect_status(404);
    app.login(&email, "a brand new passphrase").await.expect_status(200);
}

#[tokio::test]
async fn reset_mails_to_one_address_are_throttled() {
    let app = spawn_app().await;
    let (email, _, _) = app.web_user().await;
    for _ in 0..3 {
        ask_reset(&app, &email).await.expect_status(202);
    }
    let r = ask_reset(&app, &email).await;
    r.expect_status(429).expect_json();
    assert!(r.detail().starts_with("Too many password-reset requests."), "{r:?}");
    assert!(r.header("retry-after").is_some(), "{r:?}");
    reset_token(&app, &email, 2).await;
    assert_eq!(
        app.mailed_tokens(&email, "/reset-password#token=", 3).await.len(),
        3,
        "the refused request sent nothing"
    );
}

#[tokio::test]
async fn a_session_unused_for_the_idle_period_has_ended() {
    let app = spawn_app_with(&[("REDLINE_SESSION_IDLE_SECS", "2")]).await;
    let (_, _, token) = app.web_user().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let r = me(&app, &token).await;
    r.expect_401();
}

#[tokio::test]
async fn the_operator_resets_a_password_and_every_session_ends() {
    let app = spawn_app().await;
    let (email, password, token) = app.web_user().await;
    let refused = app.admin_fails(&["reset-password", "--email", &email, "--password", "password1"]);
    assert!(refused.contains("list of common or leaked passwords"), "{refused}");
    me(&app, &token).await.expect_status(200);

    let out = app.admin(&["reset-password", "--email", &email]);
    let new = out["password"].as_str().unwrap_or_else(|| panic!("{out}"));
    assert_eq!(new.len(), 20);
    me(&app, &token).await.expect_401();
    app.login(&email, &password).await.expect_401();
    app.login(&email, new).await.expect_status(200);

    let out = app.admin(&["reset-password", "--email", &email, "--password", "chosen by the operator"]);
    assert!(out.get("password").is_none(), "a chosen password is not printed back: {out}");
    app.login(&email, "chosen by the operator").await.expect_status(200);
}

#[tokio::test]
async fn guessing_promotion_codes_is_throttled_per_account() {
    let app = spawn_app().await;
    app.admin(&["create-promo", "--code", "REALCODE2026", "--name", "Real", "--ops", "5"]);
    let (_, _, guesser) = app.web_user().await;
    let redeem = |token: &str, code: &str| {
        app.post("/v1/users/me/promotions/redeem").bearer_auth(token).json(&json!({"code": code}))
    };
    for n in 0..5 {
        app.send(redeem(&guesser, &format!("GUESS{n}"))).await.expect_status(404);
    }
    let r = app.send(redeem(&guesser, "GUESS5")).await;
    r.expect_status(429).expect_json();
    assert!(r.detail().starts_with("Too many wrong promotion codes."), "{r:?}");
    assert!(r.header("retry-after").is_some(), "{r:?}");
    // While it waits, even the right code is refused: a right guess looks like a wrong one.
    app.send(redeem(&guesser, "REALCODE2026")).await.expect_status(429);
    // Another account at the same address still redeems, and a right code costs no guess.
    let (_, _, other) = app.web_user().await;
    app.send(redeem(&other, "REALCODE2026")).await.expect_status(201);
    for _ in 0..6 {
        app.send(redeem(&other, "REALCODE2026")).await.expect_status(409);
    }
}

#[tokio::test]
async fn an_address_is_verified_once_by_its_mailed_link_and_new_links_are_throttled() {
    let app = spawn_app().await;
    let (email, _, token) = app.web_user().await;
    let r = me(&app, &token).await;
    assert_eq!(r.json["email_verified"], false, "{r:?}");

    // The link mailed at sign-up proves the address, once, without a sign-in.
    let link = app.mailed_tokens(&email, "/verify-email#token=", 1).await.remove(0);
    assert!(link.starts_with("ev_"), "{link}");
    let verify = |t: String| app.send(app.post("/v1/auth/verify-email").json(&json!({"token": t})));
    let r = verify(link.clone()).await;
    r.expect_status(200);
    assert_eq!(r.json["email"], email.as_str(), "{r:?}");
    assert!(r.json["verified_at"].as_str().is_some_and(|t| t.ends_with('Z')), "{r:?}");
    assert_eq!(me(&app, &token).await.json["email_verified"], true);
    let r = verify(link).await;
    r.expect_status(404).expect_json();
    assert!(r.detail().starts_with("This verification link is unknown, already used or expired."), "{r:?}");
    verify("ev_nonsense".to_owned()).await.expect_status(404);
    app.send(app.post("/v1/auth/verify-email").json(&json!({}))).await.expect_422_at(&[json!("body"), json!("token")]);

    // Verified: no new link is sent.
    let resend = |t: &str| app.send(app.post("/v1/users/me/email-verification").bearer_auth(t));
    resend(&token).await.expect_status(409);

    // Another account asks for new links: three at once, then a wait.
    let (other, _, other_token) = app.web_user().await;
    for _ in 0..3 {
        let r = resend(&other_token).await;
        r.expect_status(202);
        assert!(r.detail().contains(&other), "{r:?}");
    }
    let r = resend(&other_token).await;
    r.expect_status(429).expect_json();
    assert!(r.detail().starts_with("Too many verification mails asked for."), "{r:?}");
    assert!(r.header("retry-after").is_some(), "{r:?}");
    // Any of its links works; then the others are of no more use than a verified address needs.
    let links = app.mailed_tokens(&other, "/verify-email#token=", 4).await;
    verify(links[2].clone()).await.expect_status(200);
    assert_eq!(me(&app, &other_token).await.json["email_verified"], true);
    resend("not a session").await.expect_401();
}

#[tokio::test]
async fn a_used_reset_link_or_an_accepted_invitation_proves_the_address() {
    let app = spawn_app().await;
    let (email, _, _) = app.web_user().await;
    ask_reset(&app, &email).await.expect_status(202);
    let token = reset_token(&app, &email, 0).await;
    confirm_reset(&app, &token, "a brand new passphrase").await.expect_status(204);
    let session = app.login_token(&email, "a brand new passphrase").await;
    assert_eq!(me(&app, &session).await.json["email_verified"], true);

    let (_, _, owner) = app.web_user().await;
    let org = app.send(app.post("/v1/users/me/organizations").bearer_auth(&owner).json(&json!({"name": "Acme"}))).await;
    let org_id = org.json["org_id"].as_str().unwrap_or_else(|| panic!("{org:?}")).to_owned();
    let (invitee, _, invitee_session) = app.web_user().await;
    app.join_org(&owner, &org_id, &invitee, "member", &invitee_session).await;
    assert_eq!(me(&app, &invitee_session).await.json["email_verified"], true);
}
