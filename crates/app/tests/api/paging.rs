//! Paged listings (docs/api.md "Pagination"): attachments, versions, the chat history,
//! templates, keys, organizations and members answer a page of `limit` items with `next_cursor` and, while another page follows, a
//! `Link` header whose address the client follows as given; a damaged cursor is a 422 at
//! `[query, cursor]`.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::attachments::attach;
use crate::helpers::*;

/// The address of `Link: <address>; rel="next"`, if the answer has one.
fn next_link(r: &Reply) -> Option<String> {
    let link = r.header("link")?;
    let (address, rel) = link.strip_prefix('<')?.split_once('>')?;
    assert_eq!(rel, "; rel=\"next\"", "{r:?}");
    Some(address.to_owned())
}

/// The query parameter `name` of `url`, decoded.
fn query_param(url: &str, name: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned())
}

/// The items (`field`) of a page.
fn items(r: &Reply, field: &str) -> Vec<Value> {
    r.json[field].as_array().unwrap_or_else(|| panic!("no {field} in {r:?}")).clone()
}

/// Whether the page's `total`, where its body has one (the history's has none), counts its
/// items.
fn total_counts_the_page(r: &Reply, field: &str) -> bool {
    r.json.get("total").is_none_or(|total| *total == json!(items(r, field).len()))
}

/// The ids (`id`) of `items`.
fn ids(items: &[Value], id: &str) -> Vec<String> {
    items.iter().map(|item| item[id].as_str().unwrap_or_else(|| panic!("no {id} in {item}")).to_owned()).collect()
}

/// The ids as a set: what was created, whatever the order of items made in one millisecond.
fn set(ids: &[String]) -> BTreeSet<String> {
    ids.iter().cloned().collect()
}

/// Whether the `created_at` of `items` never goes down (`oldest_first`) or never goes up.
fn in_time_order(items: &[Value], oldest_first: bool) -> bool {
    // As instants: the text drops a fraction's trailing zeros (`.44Z` is 440 ms), so it does
    // not sort as text.
    let times: Vec<i64> = items
        .iter()
        .map(|i| {
            redline_domain::time_util::parse_iso8601(i["created_at"].as_str().unwrap_or_default()).expect("a time")
        })
        .collect();
    times.windows(2).all(|w| if oldest_first { w[0] <= w[1] } else { w[0] >= w[1] })
}

/// Checks the listing at `path` (its query, if any, included) for the credential `auth`:
/// read with `limit` from page to page by the `Link` header's address as given, it holds
/// the items of the whole listing (one page at the default limit), each once and in the same
/// order; every page's `next_cursor` is the cursor of its `Link`, and the last page has
/// neither. A damaged cursor is refused. Answers the items in listing order.
async fn check_listing(app: &TestApp, auth: &str, path: &str, field: &str, id: &str, limit: usize) -> Vec<Value> {
    let whole = app.send(app.get(path).bearer_auth(auth)).await;
    whole.expect_status(200).expect_json();
    assert!(whole.json["next_cursor"].is_null() && whole.header("link").is_none(), "{path}: {whole:?}");
    let listed = items(&whole, field);
    let expected = ids(&listed, id);
    assert!(total_counts_the_page(&whole, field), "{path}: {whole:?}");

    let separator = if path.contains('?') { '&' } else { '?' };
    let mut address = app.url(&format!("{path}{separator}limit={limit}"));
    let mut seen: Vec<String> = Vec::new();
    for _ in 0..expected.len() + 1 {
        let r = app.send(app.client.get(&address).bearer_auth(auth)).await;
        r.expect_status(200).expect_json();
        let page = ids(&items(&r, field), id);
        assert!(!page.is_empty() && page.len() <= limit, "{path}: {r:?}");
        assert!(total_counts_the_page(&r, field), "{path}: {r:?}");
        seen.extend(page);
        let Some(next) = next_link(&r) else {
            assert!(r.json["next_cursor"].is_null(), "{path}: the last page has no cursor: {r:?}");
            assert_eq!(seen, expected, "{path}: every item once, in order");
            refuses_damaged_cursors(app, auth, path).await;
            return listed;
        };
        assert!(next.starts_with(&app.base), "{path}: an absolute address on the service: {next}");
        assert_eq!(query_param(&next, "cursor").as_deref(), r.json["next_cursor"].as_str(), "{path}: {r:?}");
        assert_eq!(query_param(&next, "limit"), Some(limit.to_string()), "{path}: the query is kept");
        address = next;
    }
    panic!("{path}: more pages than items; seen {seen:?}");
}

async fn refuses_damaged_cursors(app: &TestApp, auth: &str, path: &str) {
    let separator = if path.contains('?') { '&' } else { '?' };
    for cursor in ["%21%21%21", "bm9wZQ", "MTp4Onk"] {
        let r = app.send(app.get(&format!("{path}{separator}cursor={cursor}")).bearer_auth(auth)).await;
        let item = r.expect_422_at(&[json!("query"), json!("cursor")]);
        assert_eq!(item["type"], "value_error", "{path}: {r:?}");
    }
    let r = app.send(app.get(&format!("{path}{separator}limit=0")).bearer_auth(auth)).await;
    r.expect_422_at(&[json!("query"), json!("limit")]);
}

async fn put_document(app: &TestApp, key: &str, sid: &str, html: &str) -> Value {
    let put = app.client.put(app.url(&format!("/v1/documents/{sid}"))).bearer_auth(key).json(&json!({"html": html}));
    let r = app.send(put).await;
    r.expect_status(200);
    r.json.clone()
}

#[tokio::test]
async fn attachments_versions_and_history_are_paged() {
    let app = spawn_app().await;
    let key = app.agent_key().await;

    put_document(&app, &key, "att", "<p>Attachments here.</p>").await;
    let mut attached = Vec::new();
    for i in 0..5 {
        let r = attach(&app, &key, "att", &format!("note-{i}.txt"), format!("Note number {i}.").as_bytes()).await;
        r.expect_status(202);
        attached.push(r.json["attachment_id"].as_str().unwrap().to_owned());
    }
    let listed = check_listing(&app, &key, "/v1/attachments?session_id=att", "attachments", "attachment_id", 2).await;
    assert_eq!(set(&ids(&listed, "attachment_id")), set(&attached));
    assert!(in_time_order(&listed, true), "oldest first: {listed:?}");

    // A commit is stamped at least a millisecond after the one before: their order is exact.
    let mut versions = Vec::new();
    for i in 0..5 {
        let d = put_document(&app, &key, "ver", &format!("<p>Draft {i}.</p>")).await;
        versions.push(d["version_id"].as_str().unwrap().to_owned());
    }
    versions.reverse();
    let listed = check_listing(&app, &key, "/v1/documents/ver/versions", "versions", "version_id", 2).await;
    assert_eq!(ids(&listed, "version_id"), versions, "newest first");

    put_document(&app, &key, "chat", "<p>The quick brown fox.</p>").await;
    let mut sent = Vec::new();
    for (from, to) in [("fox", "cat"), ("cat", "dog"), ("dog", "owl")] {
        let message = format!("replace \"{from}\" with \"{to}\"");
        let body = json!({"session_id": "chat", "message": message});
        app.send(app.post("/v1/chat").bearer_auth(&key).json(&body)).await.expect_status(200);
        sent.push(message);
    }
    let listed = check_listing(&app, &key, "/v1/sessions/chat/history", "messages", "message_id", 2).await;
    let roles: Vec<&str> = listed.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant"].repeat(3), "two messages a turn");
    let said: Vec<&str> = listed.iter().step_by(2).map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(said, sent, "oldest first");
}

/// Creates `n` of something with `POST path` and the body `body(i)`; answers the ids (`id`).
async fn create(
    app: &TestApp,
    auth: &str,
    path: &str,
    n: usize,
    body: impl Fn(usize) -> Value,
    id: &str,
) -> Vec<String> {
    let mut made = Vec::new();
    for i in 0..n {
        let r = app.send(app.post(path).bearer_auth(auth).json(&body(i))).await;
        r.expect_status(201).expect_json();
        made.push(r.json[id].as_str().unwrap_or_else(|| panic!("no {id} in {r:?}")).to_owned());
    }
    made
}

#[tokio::test]
async fn templates_are_paged_after_the_built_in_ones() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let body = |i| json!({"name": format!("Mine {i}"), "html": format!("<p>Template {i}.</p>")});
    let mine = create(&app, &key, "/v1/templates", 5, body, "template_id").await;
    // Pages of 3 end among the built-ins (4) and among the caller's own.
    let listed = check_listing(&app, &key, "/v1/templates", "templates", "template_id", 3).await;
    let builtin: Vec<bool> = listed.iter().map(|t| t["builtin"] == true).collect();
    assert_eq!(builtin, [true; 4].into_iter().chain([false; 5]).collect::<Vec<_>>(), "built-in ones first");
    assert!(listed.iter().all(|t| t.get("html").is_none()), "a listing leaves out the HTML");
    assert_eq!(set(&ids(&listed[4..], "template_id")), set(&mine));
    assert!(in_time_order(&listed[4..], false), "newest first: {listed:?}");
    let other = app.agent_key().await;
    let theirs = check_listing(&app, &other, "/v1/templates", "templates", "template_id", 1).await;
    assert_eq!(theirs.len(), 4, "another account sees the built-in ones only");
}

#[tokio::test]
async fn keys_organizations_and_members_are_paged() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let keys = create(&app, &token, "/v1/users/me/api-keys", 4, |i| json!({"name": format!("k{i}")}), "key_id").await;
    app.revoke_key(&token, &keys[1]).await.expect_status(204);
    let listed = check_listing(&app, &token, "/v1/users/me/api-keys", "keys", "key_id", 3).await;
    assert_eq!(set(&ids(&listed, "key_id")), set(&keys), "revoked keys included");
    assert!(in_time_order(&listed, false), "newest first: {listed:?}");

    let orgs_path = "/v1/users/me/organizations";
    let orgs = create(&app, &token, orgs_path, 3, |i| json!({"name": format!("Org {i}")}), "org_id").await;
    let listed = check_listing(&app, &token, orgs_path, "organizations", "org_id", 2).await;
    assert_eq!(set(&ids(&listed, "org_id")), set(&orgs));
    assert!(in_time_order(&listed, true), "oldest first: {listed:?}");

    let org = &orgs[0];
    let members = format!("/v1/users/me/organizations/{org}/members");
    let mut joined = Vec::new();
    for _ in 0..3 {
        let (email, _, theirs) = app.web_user().await;
        let r = app.join_org(&token, org, &email, "member", &theirs).await;
        joined.push(r["user_id"].as_str().unwrap().to_owned());
    }
    let listed = check_listing(&app, &token, &members, "members", "user_id", 2).await;
    assert_eq!(listed[0]["role"], "owner", "the owner joined first: {listed:?}");
    assert_eq!(set(&ids(&listed[1..], "user_id")), set(&joined));
    assert!(in_time_order(&listed, true), "oldest first: {listed:?}");

    let org_keys = format!("/v1/users/me/organizations/{org}/api-keys");
    let made = create(&app, &token, &org_keys, 3, |_| json!({}), "key_id").await;
    let listed = check_listing(&app, &token, &org_keys, "keys", "key_id", 2).await;
    assert_eq!(set(&ids(&listed, "key_id")), set(&made), "the organization's keys only");
}
