//! A web-app session on the API-key endpoints: it acts for its user, or, with
//! `Redline-Organization`, for an organization the user is a member of (403 otherwise); the
//! cookie counts only from the app's own origin; API keys keep their own scope.

use reqwest::header::{COOKIE, ORIGIN};
use serde_json::json;

use crate::helpers::*;

const ORG: &str = "Redline-Organization";

async fn create_org(app: &TestApp, token: &str, name: &str) -> String {
    let r = app.send(app.post("/v1/users/me/organizations").bearer_auth(token).json(&json!({"name": name}))).await;
    r.expect_status(201);
    r.json["org_id"].as_str().expect("org_id").to_owned()
}

async fn save(app: &TestApp, req: reqwest::RequestBuilder, html: &str) {
    app.send(req.json(&json!({"html": html}))).await.expect_status(200);
}

fn ids(r: &Reply) -> Vec<String> {
    r.json.as_array().unwrap_or_else(|| panic!("a list: {r:?}")).iter().map(|s| s["session_id"].to_string()).collect()
}

#[tokio::test]
async fn a_session_token_acts_for_its_user_like_the_users_key() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let key = app.create_key(&token, "mine").await.json["api_key"].as_str().expect("api_key").to_owned();
    // Made with the session, seen with the key, and the other way round.
    save(&app, app.client.put(app.url("/v1/documents/from-web")).bearer_auth(&token), "<p>web</p>").await;
    save(&app, app.client.put(app.url("/v1/documents/from-key")).bearer_auth(&key), "<p>key</p>").await;
    let by_key = app.send(app.get("/v1/sessions").bearer_auth(&key)).await;
    let by_session = app.send(app.get("/v1/sessions").bearer_auth(&token)).await;
    by_session.expect_status(200);
    assert_eq!(ids(&by_key).len(), 2, "{by_key:?}");
    assert_eq!(ids(&by_key), ids(&by_session));
    // The cookie from the app's own origin does the same.
    let r = app
        .send(app.get("/v1/usage").header(COOKIE, format!("redline_session={token}")).header(ORIGIN, &app.base))
        .await;
    r.expect_status(200);
    assert_eq!(r.json["subscription_tier"], "free");
    assert!(r.json["resets_at"].as_str().is_some_and(|t| t.ends_with("01T00:00:00Z")), "{r:?}");
}

#[tokio::test]
async fn the_cookie_from_another_origin_or_none_is_not_a_credential_on_api_endpoints() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let cookie = format!("redline_session={token}");
    let r = app.send(app.get("/v1/sessions").header(COOKIE, &cookie)).await;
    assert_eq!(r.expect_401(), "Missing Authorization header. Expected 'Authorization: Bearer <API_KEY>'");
    let r = app
        .send(
            app.client
                .put(app.url("/v1/documents/csrf"))
                .header(COOKIE, &cookie)
                .header(ORIGIN, "http://evil.example")
                .json(&json!({"html": "<p>x</p>"})),
        )
        .await;
    r.expect_401();
    let r = app.send(app.get("/v1/sessions").bearer_auth(&token)).await;
    assert!(ids(&r).is_empty(), "nothing was written: {r:?}");
}

#[tokio::test]
async fn an_ended_or_unknown_session_token_is_refused_on_api_endpoints() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    app.send(app.post("/v1/auth/logout").bearer_auth(&token)).await;
    for t in [token, format!("ws_{}", "A".repeat(43)), "ws_short".to_owned()] {
        let r = app.send(app.get("/v1/sessions").bearer_auth(&t)).await;
        assert_eq!(r.expect_401(), "Invalid or expired session token. Sign in to the web app again.");
    }
}

#[tokio::test]
async fn a_member_acts_for_the_organization_with_the_header() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let (member_email, _, member) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Acme").await;
    app.join_org(&owner, &org_id, &member_email, "member", &member).await;
    // The owner writes for the organization; the member reads it; the org's key sees it too.
    save(&app, app.client.put(app.url("/v1/documents/shared")).bearer_auth(&owner).header(ORG, &org_id), "<p>o</p>")
        .await;
    let r = app.send(app.get("/v1/sessions").bearer_auth(&member).header(ORG, &org_id)).await;
    assert_eq!(ids(&r), vec!["\"shared\"".to_owned()], "{r:?}");
    let key = app
        .send(app.post(&format!("/v1/users/me/organizations/{org_id}/api-keys")).bearer_auth(&owner).json(&json!({})))
        .await;
    let org_key = key.json["api_key"].as_str().expect("api_key").to_owned();
    assert_eq!(ids(&app.send(app.get("/v1/sessions").bearer_auth(&org_key)).await), vec!["\"shared\"".to_owned()]);
    // Without the header, each acts for themself.
    assert!(ids(&app.send(app.get("/v1/sessions").bearer_auth(&member)).await).is_empty());
    // A job made for the organization carries its id and no user.
    let r = app
        .send(
            app.post("/v1/chat/async")
                .bearer_auth(&member)
                .header(ORG, &org_id)
                .json(&json!({"session_id": "shared", "message": "Summarize the document"})),
        )
        .await;
    r.expect_status(202);
    let job = app
        .send(app.get(&format!("/v1/jobs/{}", r.json["job_id"].as_str().expect("job_id"))).bearer_auth(&org_key))
        .await;
    job.expect_status(200);
    assert_eq!(job.json["organization_id"], org_id.as_str());
    assert!(job.json["user_id"].is_null(), "{job:?}");
}

#[tokio::test]
async fn a_stranger_naming_an_organization_gets_403_whatever_the_value() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let (_, _, stranger) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Private").await;
    for value in [org_id.as_str(), "00000000-0000-0000-0000-000000000000", "not-an-id", ""] {
        let r = app.send(app.get("/v1/sessions").bearer_auth(&stranger).header(ORG, value)).await;
        r.expect_status(403).expect_json();
        assert_eq!(r.detail(), "You are not a member of the organization named in the Redline-Organization header.");
    }
    // A member who leaves loses it at once.
    let (leaver_email, _, leaver) = app.web_user().await;
    let members = format!("/v1/users/me/organizations/{org_id}/members");
    let joined = app.join_org(&owner, &org_id, &leaver_email, "member", &leaver).await;
    let leaver_id = joined["user_id"].as_str().expect("user_id").to_owned();
    app.send(app.get("/v1/sessions").bearer_auth(&leaver).header(ORG, &org_id)).await.expect_status(200);
    app.send(app.delete(&format!("{members}/{leaver_id}")).bearer_auth(&leaver)).await.expect_status(204);
    app.send(app.get("/v1/sessions").bearer_auth(&leaver).header(ORG, &org_id)).await.expect_status(403);
}

#[tokio::test]
async fn an_api_key_keeps_its_own_scope_whatever_the_header() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Acme").await;
    save(&app, app.client.put(app.url("/v1/documents/org-doc")).bearer_auth(&owner).header(ORG, &org_id), "<p>o</p>")
        .await;
    let key = app.create_key(&owner, "personal").await.json["api_key"].as_str().expect("api_key").to_owned();
    let r = app.send(app.get("/v1/sessions").bearer_auth(&key).header(ORG, &org_id)).await;
    assert!(ids(&r).is_empty(), "a user key does not reach the organization: {r:?}");
}

#[tokio::test]
async fn a_browser_opening_a_handoff_link_is_sent_to_the_claim_page() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let started = app.send(app.post("/v1/agents/handoff").bearer_auth(&key)).await;
    started.expect_status(201);
    let url = started.json["handoff_url"].as_str().expect("handoff_url").to_owned();
    let token = url.rsplit('/').next().expect("a token").to_owned();
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    let r = Reply::of(
        no_redirects
            .get(&url)
            .header("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
            .send()
            .await
            .expect("sent"),
    )
    .await;
    r.expect_status(303);
    assert_eq!(r.header("location"), Some(format!("/claim/{token}").as_str()));
    // An API client still gets the summary.
    let r = app.send(app.get(&format!("/v1/agents/handoff/{token}"))).await;
    r.expect_status(200);
    assert_eq!(r.json["attempts_left"], 5);
    // The page itself is the web app.
    let page = app.send(app.get(&format!("/claim/{token}"))).await;
    page.expect_status(200);
    assert!(page.text.contains("<script type=\"importmap\">"), "{}", page.text);
}

#[tokio::test]
async fn a_save_names_a_session_that_has_no_title_yet() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let put = |title: &str| {
        app.client
            .put(app.url("/v1/documents/named"))
            .bearer_auth(&key)
            .json(&json!({"html": "<h1>Heading</h1><p>x</p>", "title": title}))
    };
    app.send(put(" Board\u{202e} memo\u{0} ")).await.expect_status(200);
    app.send(put("Another title")).await.expect_status(200);
    let r = app.sessions_with_key(&key).await;
    assert_eq!(r.json[0]["title"], "Board memo", "the first title stays: {r:?}");
    let r = app.send(put(&"t".repeat(201))).await;
    r.expect_422_at(&[json!("body"), json!("title")]);
}
