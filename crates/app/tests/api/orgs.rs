//! Organizations over HTTP and their `lce_` keys (docs/api.md, "Authentication").

use serde_json::json;

use crate::helpers::*;

pub async fn create_org(app: &TestApp, token: &str, name: &str) -> String {
    let r = app.send(app.post("/v1/users/me/organizations").bearer_auth(token).json(&json!({"name": name}))).await;
    r.expect_status(201).expect_json();
    assert_eq!(r.json["name"], name);
    r.json["org_id"].as_str().unwrap_or_else(|| panic!("org_id: {r:?}")).to_owned()
}

#[tokio::test]
async fn create_an_organization_and_see_it() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let org_id = create_org(&app, &token, "Acme Corp").await;
    let got = app.send(app.get(&format!("/v1/users/me/organizations/{org_id}")).bearer_auth(&token)).await;
    got.expect_status(200);
    assert_eq!(got.json["org_id"], org_id.as_str());
    assert_eq!(got.json["name"], "Acme Corp");
    let me = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    let orgs = me.json["organizations"].as_array().unwrap_or_else(|| panic!("{me:?}"));
    assert!(orgs.iter().any(|o| o["org_id"] == org_id.as_str()), "{me:?}");
}

#[tokio::test]
async fn organization_name_is_validated() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    for body in [json!({}), json!({"name": 7}), json!({"name": "   "}), json!({"name": "\u{202e}\u{0}"})] {
        let r = app.send(app.post("/v1/users/me/organizations").bearer_auth(&token).json(&body)).await;
        r.expect_422_at(&[json!("body"), json!("name")]);
    }
    // Names are shown to people: control, bidi and zero-width characters are dropped, from
    // organization and key names alike.
    let org_id = create_org(&app, &token, "Acme").await;
    let r = app
        .send(app.post("/v1/users/me/organizations").bearer_auth(&token).json(&json!({"name": " Ac\u{0}me\u{202e} "})))
        .await;
    r.expect_status(201);
    assert_eq!(r.json["name"], "Acme");
    let r = app
        .send(
            app.post(&format!("/v1/users/me/organizations/{org_id}/api-keys"))
                .bearer_auth(&token)
                .json(&json!({"name": "a\u{0}b\u{202e}c\n"})),
        )
        .await;
    r.expect_status(201);
    assert_eq!(r.json["name"], "abc");
    let r = app.create_key(&token, "\u{200b}ci\u{7}").await;
    assert_eq!(r.json["name"], "ci");
}

#[tokio::test]
async fn org_keys_are_lce_keys_that_work() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let org_id = create_org(&app, &token, "Keys Inc").await;
    let path = format!("/v1/users/me/organizations/{org_id}/api-keys");
    let r = app.send(app.post(&path).bearer_auth(&token).json(&json!({"name": "backend"}))).await;
    r.expect_status(201).expect_json();
    let key = r.json["api_key"].as_str().unwrap_or_else(|| panic!("{r:?}")).to_owned();
    let key_id = r.json["key_id"].as_str().unwrap_or_else(|| panic!("{r:?}")).to_owned();
    assert!(is_org_key(&key), "{key:?}");
    app.assert_key_works(&key).await;
    assert_eq!(app.sessions_with_key(&key).await.json, json!([]));

    let list = app.send(app.get(&path).bearer_auth(&token)).await;
    list.expect_status(200);
    assert!(list.text.contains(&key_id), "{list:?}");
    assert!(!list.text.contains(&key), "org key listing shows the key: {}", list.text);
    assert!(!list.text.contains(&key[key.len() - 24..]), "{}", list.text);
    // The user's own key listing is separate.
    assert!(!app.list_keys(&token).await.text.contains(&key_id));

    // An organization key is not a web-app session.
    app.send(app.get("/v1/users/me").bearer_auth(&key)).await.expect_401();
    app.send(app.get("/v1/users/me/api-keys").bearer_auth(&key)).await.expect_401();
    app.send(app.get(&path).bearer_auth(&key)).await.expect_401();

    // Revoked at once.
    app.send(app.delete(&format!("{path}/{key_id}")).bearer_auth(&token)).await.expect_status(204);
    app.assert_key_refused(&key).await;
}

#[tokio::test]
async fn non_members_get_404() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let (_, _, stranger) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Private").await;
    let path = format!("/v1/users/me/organizations/{org_id}/api-keys");
    let r = app.send(app.post(&path).bearer_auth(&owner).json(&json!({}))).await;
    r.expect_status(201);
    let key_id = r.json["key_id"].as_str().expect("key_id").to_owned();
    let key = r.json["api_key"].as_str().expect("api_key").to_owned();

    let org_path = format!("/v1/users/me/organizations/{org_id}");
    app.send(app.get(&org_path).bearer_auth(&stranger)).await.expect_status(404).expect_json();
    app.send(app.get(&path).bearer_auth(&stranger)).await.expect_status(404);
    let r = app.send(app.post(&path).bearer_auth(&stranger).json(&json!({"name": "mine now"}))).await;
    r.expect_status(404);
    assert!(r.json.get("api_key").is_none());
    app.send(app.delete(&format!("{path}/{key_id}")).bearer_auth(&stranger)).await.expect_status(404);
    app.send(app.get(&format!("{org_path}/members")).bearer_auth(&stranger)).await.expect_status(404);
    app.assert_key_works(&key).await;
    // An unknown or malformed org id is 404 too.
    app.send(app.get(&format!("/v1/users/me/organizations/{}", uuid::Uuid::new_v4())).bearer_auth(&owner))
        .await
        .expect_status(404);
    app.send(app.get("/v1/users/me/organizations/not-an-id").bearer_auth(&owner)).await.expect_status(404);
}

#[tokio::test]
async fn sessions_are_owner_scoped_and_empty_for_new_owners() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let org_id = create_org(&app, &token, "Scoped").await;
    let r = app
        .send(app.post(&format!("/v1/users/me/organizations/{org_id}/api-keys")).bearer_auth(&token).json(&json!({})))
        .await;
    let org_key = r.json["api_key"].as_str().expect("api_key").to_owned();
    let user_key = app.create_key(&token, "mine").await.json["api_key"].as_str().expect("api_key").to_owned();
    let agent_key = app.agent_key().await;
    for key in [org_key, user_key, agent_key] {
        let r = app.sessions_with_key(&key).await;
        r.expect_status(200).expect_json();
        assert_eq!(r.json, json!([]), "a new owner has no sessions");
    }
}

#[tokio::test]
async fn members_see_the_org_but_only_owners_and_admins_manage_keys() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let (member_email, _, member) = app.web_user().await;
    let (admin_email, _, admin) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Team").await;
    let members = format!("/v1/users/me/organizations/{org_id}/members");
    let keys = format!("/v1/users/me/organizations/{org_id}/api-keys");
    app.join_org(&owner, &org_id, &member_email, "member", &member).await;
    app.join_org(&owner, &org_id, &admin_email, "admin", &admin).await;
    // Inviting a member again is a conflict; an address without an account is invited all
    // the same (the answer does not tell who has an account).
    let r = app.send(app.post(&members).bearer_auth(&owner).json(&json!({"email": member_email}))).await;
    r.expect_status(409);
    let r = app.send(app.post(&members).bearer_auth(&owner).json(&json!({"email": unique_email()}))).await;
    r.expect_status(201);
    assert_eq!(r.json["status"], "invited");

    app.send(app.get(&format!("/v1/users/me/organizations/{org_id}")).bearer_auth(&member)).await.expect_status(200);
    let r = app.send(app.post(&keys).bearer_auth(&member).json(&json!({}))).await;
    r.expect_status(403).expect_json();
    assert!(r.json.get("api_key").is_none());
    app.send(app.get(&keys).bearer_auth(&member)).await.expect_status(403);
    let r = app.send(app.post(&members).bearer_auth(&member).json(&json!({"email": unique_email()}))).await;
    r.expect_status(403);

    let r = app.send(app.post(&keys).bearer_auth(&admin).json(&json!({}))).await;
    r.expect_status(201);
    assert!(is_org_key(r.json["api_key"].as_str().expect("api_key")));
}

/// Members are removed by the owner or an admin, or leave by themselves; the owner is never
/// removed. A removed admin loses the organization at once, and so do the keys they made.
#[tokio::test]
async fn members_are_removed_and_can_leave_but_the_owner_stays() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let (admin_email, _, admin) = app.web_user().await;
    let (member_email, _, member) = app.web_user().await;
    let (leaver_email, _, leaver) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Team").await;
    let members = format!("/v1/users/me/organizations/{org_id}/members");
    let keys = format!("/v1/users/me/organizations/{org_id}/api-keys");
    let mut ids = std::collections::HashMap::new();
    for (email, role, token) in
        [(&admin_email, "admin", &admin), (&member_email, "member", &member), (&leaver_email, "member", &leaver)]
    {
        let joined = app.join_org(&owner, &org_id, email, role, token).await;
        ids.insert(email.clone(), joined["user_id"].as_str().unwrap().to_owned());
    }
    let owner_id =
        app.send(app.get("/v1/users/me").bearer_auth(&owner)).await.json["user_id"].as_str().unwrap().to_owned();
    let one = |id: &str| format!("{members}/{id}");
    let org_key = app.send(app.post(&keys).bearer_auth(&admin).json(&json!({}))).await;
    org_key.expect_status(201);
    let org_key = org_key.json["api_key"].as_str().unwrap().to_owned();

    // A plain member removes nobody else; nobody removes the owner, not even the owner.
    app.send(app.delete(&one(&ids[&admin_email])).bearer_auth(&member)).await.expect_status(403);
    for who in [&owner, &admin] {
        let r = app.send(app.delete(&one(&owner_id)).bearer_auth(who)).await;
        r.expect_status(409);
        assert!(r.detail().contains("owner"), "{}", r.detail());
    }
    // Unknown or malformed member ids are 404, as is an organization the caller is not in.
    app.send(app.delete(&one(&uuid::Uuid::new_v4().to_string())).bearer_auth(&owner)).await.expect_status(404);
    app.send(app.delete(&one("not-a-user")).bearer_auth(&owner)).await.expect_status(404);
    let (_, _, outsider) = app.web_user().await;
    app.send(app.delete(&one(&ids[&member_email])).bearer_auth(&outsider)).await.expect_status(404);

    // A member leaves; the admin removes a member; the owner removes the admin.
    app.send(app.delete(&one(&ids[&leaver_email])).bearer_auth(&leaver)).await.expect_status(204);
    app.send(app.get(&format!("/v1/users/me/organizations/{org_id}")).bearer_auth(&leaver)).await.expect_status(404);
    app.send(app.delete(&one(&ids[&member_email])).bearer_auth(&admin)).await.expect_status(204);
    app.send(app.delete(&one(&ids[&member_email])).bearer_auth(&admin)).await.expect_status(404);
    app.send(app.delete(&one(&ids[&admin_email])).bearer_auth(&owner)).await.expect_status(204);
    app.send(app.get(&keys).bearer_auth(&admin)).await.expect_status(404);
    app.send(app.post(&keys).bearer_auth(&admin).json(&json!({}))).await.expect_status(404);

    let left = app.send(app.get(&members).bearer_auth(&owner)).await;
    assert_eq!(left.json["total"], 1, "{}", left.text);
    // The key the removed admin made went with them.
    app.assert_key_refused(&org_key).await;
}

#[tokio::test]
async fn org_key_limit_follows_the_org_plan() {
    let app = spawn_app().await;
    let email = unique_email();
    app.web_signup(&email, "limit owner pw").await.expect_status(201);
    let token = app.login_token(&email, "limit owner pw").await;
    let org_id = create_org(&app, &token, "Limited").await;
    let keys = format!("/v1/users/me/organizations/{org_id}/api-keys");
    for i in 0..5 {
        let r = app.send(app.post(&keys).bearer_auth(&token).json(&json!({"name": format!("k{i}")}))).await;
        assert_eq!(r.status.as_u16(), 201, "org key {i} on free: {r:?}");
    }
    app.send(app.post(&keys).bearer_auth(&token).json(&json!({}))).await.expect_status(409);
    let plan = app.admin(&["set-plan", "--org-id", &org_id, "--plan", "enterprise"]);
    assert_eq!(plan, json!({"subscription_tier": "enterprise", "monthly_limit": -1}));
    app.send(app.post(&keys).bearer_auth(&token).json(&json!({}))).await.expect_status(201);
}

/// Members are listed with their e-mail, so fellow members see who they share with.
#[tokio::test]
async fn members_are_listed_with_their_email() {
    let app = spawn_app().await;
    let (owner_email, _, owner) = app.web_user().await;
    let (member_email, _, member) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Team").await;
    let members = format!("/v1/users/me/organizations/{org_id}/members");
    app.join_org(&owner, &org_id, &member_email, "member", &member).await;
    let r = app.send(app.get(&members).bearer_auth(&owner)).await;
    r.expect_status(200);
    let mut emails: Vec<&str> =
        r.json["members"].as_array().expect("members").iter().filter_map(|m| m["email"].as_str()).collect();
    // Members joined in the same millisecond are ordered by their ids, which are random.
    emails.sort_unstable();
    let mut expected = vec![owner_email.as_str(), member_email.as_str()];
    expected.sort_unstable();
    assert_eq!(emails, expected, "{r:?}");
}

/// Keys say who made them, and removing a member revokes the organization keys they made
/// unless the remover says otherwise (docs/api.md, "Accounts, keys and organizations").
#[tokio::test]
async fn keys_name_their_maker_and_a_removed_admins_keys_are_revoked() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Keyed").await;
    let mut admins = Vec::new();
    for _ in 0..2 {
        let (email, _, token) = app.web_user().await;
        let user_id =
            app.join_org(&owner, &org_id, &email, "admin", &token).await["user_id"].as_str().unwrap().to_owned();
        let make = app.post(&format!("/v1/users/me/organizations/{org_id}/api-keys")).bearer_auth(&token);
        let key = app.send(make.json(&json!({"name": "made by an admin"}))).await;
        key.expect_status(201);
        admins.push((email, user_id, key.json["api_key"].as_str().unwrap().to_owned()));
    }
    let listed = app.send(app.get(&format!("/v1/users/me/organizations/{org_id}/api-keys")).bearer_auth(&owner)).await;
    let makers: Vec<&str> =
        listed.json["keys"].as_array().unwrap().iter().map(|k| k["created_by"]["email"].as_str().unwrap()).collect();
    assert_eq!(makers.len(), 2);
    assert!(admins.iter().all(|(email, _, _)| makers.contains(&email.as_str())), "{listed:?}");
    // An operator's key names nobody.
    app.admin(&["create-key", "--org-id", &org_id, "--name", "ops"]);
    let listed = app.send(app.get(&format!("/v1/users/me/organizations/{org_id}/api-keys")).bearer_auth(&owner)).await;
    let ops = listed.json["keys"].as_array().unwrap().iter().find(|k| k["name"] == "ops").unwrap().clone();
    assert_eq!(ops["created_by"], serde_json::Value::Null);

    // Removed by default with their keys; with revoke_keys=false, the keys stay.
    let (_, first_id, first_key) = &admins[0];
    let (_, second_id, second_key) = &admins[1];
    let remove = |user: &str, query: &str| {
        app.delete(&format!("/v1/users/me/organizations/{org_id}/members/{user}{query}")).bearer_auth(&owner)
    };
    app.send(remove(first_id, "")).await.expect_status(204);
    app.assert_key_refused(first_key).await;
    app.send(remove(second_id, "?revoke_keys=false")).await.expect_status(204);
    app.assert_key_works(second_key).await;
    app.send(remove(second_id, "?revoke_keys=maybe")).await.expect_422_at(&[json!("query"), json!("revoke_keys")]);
}

/// Membership is by invitation (docs/api.md, "Accounts, keys and organizations"): until the
/// invitee accepts through the mailed link, the organization is not theirs; the link works
/// only for the address it was sent to, once; admins see and withdraw pending invitations.
#[tokio::test]
async fn an_invitation_gives_nothing_until_accepted_through_its_link() {
    let app = spawn_app().await;
    let (_, _, owner) = app.web_user().await;
    let (invitee_email, _, invitee) = app.web_user().await;
    let (_, _, stranger) = app.web_user().await;
    let org_id = create_org(&app, &owner, "Invites").await;
    let members = format!("/v1/users/me/organizations/{org_id}/members");
    let r =
        app.send(app.post(&members).bearer_auth(&owner).json(&json!({"email": invitee_email, "role": "admin"}))).await;
    r.expect_status(201);
    assert_eq!(
        (&r.json["status"], &r.json["role"], &r.json["email"]),
        (&json!("invited"), &json!("admin"), &json!(invitee_email))
    );
    let invitation_id = r.json["invitation_id"].as_str().unwrap().to_owned();

    // Not a member yet: not in the list, no access, no "Acting for" entry.
    let me = app.send(app.get("/v1/users/me").bearer_auth(&invitee)).await;
    assert_eq!(me.json["organizations"], json!([]), "{me:?}");
    app.send(app.get(&format!("/v1/users/me/organizations/{org_id}")).bearer_auth(&invitee)).await.expect_status(404);
    let r = app.send(app.get("/v1/sessions").bearer_auth(&invitee).header("Redline-Organization", &org_id)).await;
    r.expect_status(403);
    let pending =
        app.send(app.get(&format!("/v1/users/me/organizations/{org_id}/invitations")).bearer_auth(&owner)).await;
    assert_eq!(pending.json["invitations"][0]["invitation_id"], invitation_id.as_str(), "{pending:?}");

    let token = app.mailed_tokens(&invitee_email, "/invitations#token=", 1).await.remove(0);
    let accept = |who: &str, token: &str| {
        app.post("/v1/users/me/invitations/accept").bearer_auth(who).json(&json!({"token": token}))
    };
    // Another account cannot use the link, nor learn more than that it is someone else's.
    let r = app.send(accept(&stranger, &token)).await;
    r.expect_status(403);
    assert!(r.detail().contains("another address"), "{r:?}");
    let offer = app
        .send(app.post("/v1/users/me/invitations/lookup").bearer_auth(&invitee).json(&json!({"token": token})))
        .await;
    offer.expect_status(200);
    assert_eq!((&offer.json["org_name"], &offer.json["role"]), (&json!("Invites"), &json!("admin")));
    app.send(accept(&invitee, "it_made-up")).await.expect_status(404);

    let joined = app.send(accept(&invitee, &token)).await;
    joined.expect_status(201);
    assert_eq!(joined.json["role"], "admin");
    let me = app.send(app.get("/v1/users/me").bearer_auth(&invitee)).await;
    assert_eq!(me.json["organizations"][0]["org_id"], org_id.as_str());
    app.send(accept(&invitee, &token)).await.expect_status(404);
    let pending =
        app.send(app.get(&format!("/v1/users/me/organizations/{org_id}/invitations")).bearer_auth(&owner)).await;
    assert_eq!(pending.json["invitations"], json!([]));

    // A withdrawn invitation's link is dead; a declined one too.
    for (email, token_of) in [(unique_email(), "withdraw"), (unique_email(), "decline")] {
        let r = app.send(app.post(&members).bearer_auth(&owner).json(&json!({"email": email}))).await;
        let id = r.json["invitation_id"].as_str().unwrap().to_owned();
        app.send(app.post("/v1/auth/signup").json(&json!({"email": email, "password": "a fine long password"})))
            .await
            .expect_status(201);
        let theirs = app.login_token(&email, "a fine long password").await;
        let token = app.mailed_tokens(&email, "/invitations#token=", 1).await.remove(0);
        if token_of == "withdraw" {
            let path = format!("/v1/users/me/organizations/{org_id}/invitations/{id}");
            app.send(app.delete(&path).bearer_auth(&invitee)).await.expect_status(204);
            app.send(app.delete(&path).bearer_auth(&owner)).await.expect_status(404);
        } else {
            app.send(app.post("/v1/users/me/invitations/decline").bearer_auth(&theirs).json(&json!({"token": token})))
                .await
                .expect_status(204);
        }
        app.send(accept(&theirs, &token)).await.expect_status(404);
    }
}
