//! API keys managed from the web app: creation, listing, revocation, plan limits
//! (docs/api.md, "Authentication", the contract's Authentication 3–5).

use serde_json::Value;

use crate::helpers::*;

fn key_of(r: &Reply) -> (String, String) {
    r.expect_status(201).expect_json();
    let key = r.json["api_key"].as_str().unwrap_or_else(|| panic!("api_key: {r:?}")).to_owned();
    let id = r.json["key_id"].as_str().unwrap_or_else(|| panic!("key_id: {r:?}")).to_owned();
    (key, id)
}

fn listed(list: &Reply) -> &Vec<Value> {
    list.expect_status(200).expect_json();
    list.json["keys"].as_array().unwrap_or_else(|| panic!("keys: {list:?}"))
}

#[tokio::test]
async fn created_key_is_shown_once_and_works() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let r = app.create_key(&token, "laptop").await;
    let (key, id) = key_of(&r);
    assert!(is_user_key(&key), "{key:?}");
    assert!(!id.is_empty());
    app.assert_key_works(&key).await;
    assert_eq!(app.sessions_with_key(&key).await.json, serde_json::json!([]));
}

#[tokio::test]
async fn listing_never_contains_the_key() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let (key_a, id_a) = key_of(&app.create_key(&token, "a").await);
    let (key_b, id_b) = key_of(&app.create_key(&token, "b").await);
    let list = app.list_keys(&token).await;
    let keys = listed(&list);
    assert_eq!(keys.len(), 2);
    for (key, id) in [(&key_a, &id_a), (&key_b, &id_b)] {
        let secret_part = &key[key.len() - 24..];
        assert!(!list.text.contains(key.as_str()), "the listing shows the key: {}", list.text);
        assert!(!list.text.contains(secret_part), "the listing shows the key's secret part: {}", list.text);
        let entry = keys
            .iter()
            .find(|k| k["key_id"] == id.as_str())
            .unwrap_or_else(|| panic!("key_id {id} not listed: {}", list.text));
        let preview = entry["key_preview"].as_str().unwrap_or_else(|| panic!("no key_preview in {entry}"));
        let shown = preview.trim_end_matches('…').trim_end_matches("...");
        assert!(shown.starts_with("sk_") && key.starts_with(shown), "preview {preview:?} of {key:?}");
        assert!(shown.len() < key.len() - 16, "preview {preview:?} shows too much");
    }
}

#[tokio::test]
async fn revocation_is_immediate_and_permanent() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let (key, id) = key_of(&app.create_key(&token, "soon gone").await);
    let (other_key, _) = key_of(&app.create_key(&token, "stays").await);
    // Verified once, so a cache (if any) holds it.
    app.assert_key_works(&key).await;
    app.assert_key_works(&key).await;
    let r = app.revoke_key(&token, &id).await;
    r.expect_status(204);
    assert!(r.text.is_empty(), "204 with a body: {r:?}");
    app.assert_key_refused(&key).await;
    app.assert_key_works(&other_key).await;
    let again = app.revoke_key(&token, &id).await;
    again.expect_status(404).expect_json();
    assert!(!again.detail().is_empty());
    app.assert_key_refused(&key).await;
}

#[tokio::test]
async fn revoking_unknown_ids_is_404() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    for id in ["not-a-key-id".to_owned(), uuid::Uuid::new_v4().to_string(), "0".to_owned()] {
        let r = app.revoke_key(&token, &id).await;
        r.expect_status(404).expect_json();
        assert!(!r.detail().is_empty());
    }
}

#[tokio::test]
async fn another_users_key_is_404_and_keeps_working() {
    let app = spawn_app().await;
    let (_, _, alice) = app.web_user().await;
    let (_, _, bob) = app.web_user().await;
    let (alice_key, alice_key_id) = key_of(&app.create_key(&alice, "alice").await);
    let r = app.revoke_key(&bob, &alice_key_id).await;
    r.expect_status(404);
    app.assert_key_works(&alice_key).await;
    let bobs = app.list_keys(&bob).await;
    assert!(listed(&bobs).is_empty(), "{bobs:?}");
    assert!(!bobs.text.contains(&alice_key_id));
}

#[tokio::test]
async fn free_plan_allows_five_live_keys() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        ids.push(key_of(&app.create_key(&token, &format!("key {i}")).await).1);
    }
    let r = app.create_key(&token, "sixth").await;
    r.expect_status(409).expect_json();
    assert!(!r.detail().is_empty());
    assert!(r.json.get("api_key").is_none());
    assert_eq!(listed(&app.list_keys(&token).await).iter().filter(|k| k["revoked"] != true).count(), 5);
    // Revoked keys do not count.
    app.revoke_key(&token, &ids[0]).await.expect_status(204);
    let (key, _) = key_of(&app.create_key(&token, "replacement").await);
    app.assert_key_works(&key).await;
    app.create_key(&token, "seventh").await.expect_status(409);
}

#[tokio::test]
async fn plus_plan_allows_twenty_five_live_keys() {
    let app = spawn_app().await;
    let email = unique_email();
    app.admin(&["create-user", "--email", &email, "--password", "plus password", "--plan", "plus"]);
    let token = app.login_token(&email, "plus password").await;
    for i in 0..25 {
        let r = app.create_key(&token, &format!("key {i}")).await;
        assert_eq!(r.status.as_u16(), 201, "key {i} of 25 on plus: {r:?}");
    }
    app.create_key(&token, "twenty-sixth").await.expect_status(409);
}
