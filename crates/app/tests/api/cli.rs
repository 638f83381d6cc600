//! The operator CLI `redline admin …` on the app's own database (README.md, "Configuration").

use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn create_user_with_a_plan_can_sign_in() {
    let app = spawn_app().await;
    let email = unique_email();
    let out = app.admin(&["create-user", "--email", &email, "--password", "operator made", "--plan", "plus"]);
    let user_id = out["user_id"].as_str().unwrap_or_else(|| panic!("user_id in {out}"));
    let token = app.login_token(&email, "operator made").await;
    let me = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    me.expect_status(200);
    assert_eq!(me.json["user_id"], user_id);
    assert_eq!(me.json["subscription_tier"], "plus");
}

#[tokio::test]
async fn orgs_keys_and_plans_from_the_cli() {
    let app = spawn_app().await;
    let email = unique_email();
    let user = app.admin(&["create-user", "--email", &email, "--password", "org owner pw"]);
    let user_id = user["user_id"].as_str().expect("user_id").to_owned();

    let org = app.admin(&["create-org", "--name", "Acme", "--owner-email", &email]);
    let org_id = org["org_id"].as_str().unwrap_or_else(|| panic!("org_id in {org}")).to_owned();

    let key = app.admin(&["create-key", "--org-id", &org_id]);
    let org_key = key["api_key"].as_str().unwrap_or_else(|| panic!("api_key in {key}"));
    assert!(is_org_key(org_key), "{org_key:?}");
    assert!(key["key_id"].as_str().is_some_and(|s| !s.is_empty()), "{key}");
    app.assert_key_works(org_key).await;

    let key = app.admin(&["create-key", "--user-id", &user_id, "--name", "ci"]);
    let user_key = key["api_key"].as_str().expect("api_key");
    assert!(is_user_key(user_key), "{user_key:?}");
    app.assert_key_works(user_key).await;

    let plan = app.admin(&["set-plan", "--org-id", &org_id, "--plan", "enterprise"]);
    assert_eq!(plan, json!({"subscription_tier": "enterprise", "monthly_limit": -1}));

    let plan = app.admin(&["set-plan", "--user-id", &user_id, "--plan", "pro", "--monthly-limit", "42"]);
    assert_eq!(plan["subscription_tier"], "pro");
    assert_eq!(plan["monthly_limit"], 42);

    // The web app sees what the operator did.
    let token = app.login_token(&email, "org owner pw").await;
    let me = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    me.expect_status(200);
    assert_eq!(me.json["subscription_tier"], "pro");
    let orgs = me.json["organizations"].as_array().unwrap_or_else(|| panic!("organizations: {me:?}"));
    assert!(orgs.iter().any(|o| o["org_id"] == org_id.as_str()), "{me:?}");
    let got = app.send(app.get(&format!("/v1/users/me/organizations/{org_id}")).bearer_auth(&token)).await;
    got.expect_status(200);
    assert_eq!(got.json["subscription_tier"], "enterprise");
}

#[tokio::test]
async fn promotions_from_the_cli() {
    let app = spawn_app().await;
    let code = format!("WELCOME{}", &random_hex()[..8]);
    let out = app.admin(&["create-promo", "--code", &code, "--name", "Welcome", "--ops", "100"]);
    assert_eq!(out["code"], code.as_str());
    let out = app.admin(&[
        "create-promo",
        "--code",
        &format!("{code}X"),
        "--name",
        "Expiring",
        "--ops",
        "5",
        "--expires-at",
        "2099-01-01T00:00:00Z",
    ]);
    assert_eq!(out["code"], format!("{code}X"));
    app.admin_fails(&["create-promo", "--code", &code, "--name", "Again", "--ops", "1"]);

    let agent = app.agent_signup().await;
    let user_id = agent["user_id"].as_str().expect("user_id");
    let out = app.admin(&["grant-promo", "--user-id", user_id, "--name", "Launch credit", "--ops", "50"]);
    assert!(out["redemption_id"].as_str().is_some_and(|s| !s.is_empty()), "{out}");

    // Codes are kept as written and redeemed in any case; a code differing only in case is
    // the same code. A date alone is accepted as an expiry (its first instant, UTC).
    let lower = format!("spring-{}", &random_hex()[..6]);
    let out = app.admin(&[
        "create-promo",
        "--code",
        &lower,
        "--name",
        " Spring ",
        "--ops",
        "7",
        "--expires-at",
        "2099-03-01",
    ]);
    assert_eq!(
        (&out["code"], &out["name"], &out["expires_at"]),
        (&json!(lower), &json!("Spring"), &json!("2099-03-01T00:00:00Z"))
    );
    app.admin_fails(&["create-promo", "--code", &lower.to_uppercase(), "--name", "Again", "--ops", "1"]);
    // Letters outside ASCII would fold differently on the two backends: refused.
    app.admin_fails(&["create-promo", "--code", &format!("ÄBC{lower}"), "--name", "Umlaut", "--ops", "1"]);
    let (_, _, token) = app.web_user().await;
    let redeem =
        |code: String| app.post("/v1/users/me/promotions/redeem").bearer_auth(&token).json(&json!({"code": code}));
    let r = app.send(redeem(format!("  {} ", lower.to_uppercase()))).await;
    r.expect_status(201);
    assert_eq!((&r.json["name"], &r.json["ops_granted"]), (&json!("Spring"), &json!(7)));
    app.send(redeem(lower.clone())).await.expect_status(409);
}

/// Promotion codes and names are checked: what a user has to type, and what the accounts
/// that get it are shown.
#[tokio::test]
async fn promotion_codes_and_names_are_checked() {
    let app = spawn_app().await;
    let user_id = app.agent_signup().await["user_id"].as_str().unwrap().to_owned();
    let long_code = "c".repeat(65);
    for code in ["two words", "CTRL\u{1}\u{1b}[31m", "", long_code.as_str()] {
        let err = app.admin_fails(&["create-promo", "--code", code, "--name", "n", "--ops", "1"]);
        assert!(err.contains("--code"), "{code:?}: {err}");
    }
    let long = "n".repeat(201);
    for name in ["  ", "", "tab\there", long.as_str()] {
        let err = app.admin_fails(&["create-promo", "--code", "OKCODE", "--name", name, "--ops", "1"]);
        assert!(err.contains("--name"), "{name:?}: {err}");
        let err = app.admin_fails(&["grant-promo", "--user-id", &user_id, "--name", name, "--ops", "1"]);
        assert!(err.contains("--name"), "{name:?}: {err}");
    }
    let out = app.admin(&[
        "grant-promo",
        "--user-id",
        &user_id,
        "--name",
        "n",
        "--ops",
        "1",
        "--expires-at",
        "2099-01-01T08:30:00",
    ]);
    assert_eq!(out["expires_at"], "2099-01-01T08:30:00Z", "a date-time without a zone is UTC");
}

/// The change is made before its result is printed: when stdout cannot be written (a full
/// disk, a closed pipe) the command says so on stderr and fails, without a panic.
#[tokio::test]
async fn an_unwritable_stdout_is_a_failure_not_a_panic() {
    let app = spawn_app().await;
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full");
    let mut cmd = app.cli_command();
    cmd.stdout(full);
    let code = format!("FULL{}", &random_hex()[..6]);
    let out = cmd.args(["admin", "create-promo", "--code", &code, "--name", "n", "--ops", "1"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the change was made") && !stderr.contains("panicked"), "{stderr}");
    // It was made: the same code is now taken.
    app.admin_fails(&["create-promo", "--code", &code, "--name", "n", "--ops", "1"]);
}

#[tokio::test]
async fn cli_failures_exit_non_zero_with_a_message() {
    let app = spawn_app().await;
    let email = unique_email();
    let user = app.admin(&["create-user", "--email", &email, "--password", "a good password"]);
    let user_id = user["user_id"].as_str().expect("user_id").to_owned();
    let unknown = uuid::Uuid::new_v4().to_string();

    let err =
        app.admin_fails(&["create-user", "--email", &unique_email(), "--password", "pw long enough", "--plan", "gold"]);
    assert!(err.contains("gold"), "the message should name the unknown plan: {err}");
    app.admin_fails(&["set-plan", "--user-id", &user_id, "--plan", "gold"]);
    app.admin_fails(&["create-key", "--user-id", &unknown]);
    app.admin_fails(&["create-key", "--org-id", &unknown]);
    app.admin_fails(&["set-plan", "--user-id", &unknown, "--plan", "pro"]);
    app.admin_fails(&["grant-promo", "--user-id", &unknown, "--name", "n", "--ops", "5"]);
    app.admin_fails(&["create-key", "--user-id", &user_id, "--org-id", &unknown]);
    app.admin_fails(&["create-key"]);
    app.admin_fails(&["create-key", "--user-id", "not-an-id"]);
    app.admin_fails(&["create-org", "--name", "Nobody's", "--owner-email", &unique_email()]);
    app.admin_fails(&["create-user", "--email", &email, "--password", "duplicate pw"]);
    app.admin_fails(&["create-user", "--email", "not-an-email", "--password", "a good password"]);
    app.admin_fails(&["create-user", "--email", &unique_email(), "--password", "short"]);
    app.admin_fails(&["create-promo", "--code", "ZERO", "--name", "n", "--ops", "0"]);
    app.admin_fails(&["create-promo", "--code", "BADDATE", "--name", "n", "--ops", "1", "--expires-at", "tomorrow"]);
    let past = "2020-01-01T00:00:00Z";
    for args in [
        vec!["create-promo", "--code", "PAST", "--name", "n", "--ops", "1", "--expires-at", past],
        vec!["grant-promo", "--user-id", &user_id, "--name", "n", "--ops", "5", "--expires-at", past],
    ] {
        let err = app.admin_fails(&args);
        assert!(err.contains("is in the past"), "{err}");
    }
    // The user is unchanged by the failed commands.
    let token = app.login_token(&email, "a good password").await;
    let me = app.send(app.get("/v1/users/me").bearer_auth(&token)).await;
    assert_eq!(me.json["subscription_tier"], "free");
}

/// `redline admin backup` of a database being written to: the copy opens as a database of
/// its own, with every write answered before the backup began, each whole, and the keys.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_under_write_load_restores_to_a_consistent_database() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    let app = Arc::new(spawn_app().await);
    let key = app.agent_key().await;
    let (stop, written) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let writer = {
        let (app, key, stop, written) = (app.clone(), key.clone(), stop.clone(), written.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                let html = format!("<h1>Document {n}</h1>{}", "<p>a paragraph of the document</p>".repeat(20));
                let put = app
                    .client
                    .put(app.url(&format!("/v1/documents/b{n}")))
                    .bearer_auth(&key)
                    .json(&json!({"html": html}));
                app.send(put).await.expect_status(200);
                n += 1;
                written.store(n, Ordering::SeqCst);
            }
        })
    };
    while written.load(Ordering::SeqCst) < 30 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let backup_dir = tempfile::tempdir().expect("temp dir");
    let to = backup_dir.path().join("copy.db");
    let before = written.load(Ordering::SeqCst);
    let out = {
        let (app, to) = (app.clone(), to.display().to_string());
        tokio::task::spawn_blocking(move || app.admin(&["backup", "--to", &to])).await.expect("backup ran")
    };
    let during = written.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    writer.await.expect("writer");
    assert!(during > before, "the writes went on during the backup ({before} → {during})");
    assert_eq!(out["backup"], to.display().to_string());
    assert!(out["bytes"].as_u64().is_some_and(|b| b > 0), "{out}");
    // A second backup to the same file is refused, the first left as it was.
    let refused = app.admin_fails(&["backup", "--to", &to.display().to_string()]);
    assert!(refused.contains("exists already"), "{refused}");

    let url = format!("sqlite://{}", to.display());
    let restored = spawn_app_with(&[("REDLINE_DATABASE_URL", url.as_str())]).await;
    restored.assert_key_works(&key).await;
    let mut found = 0;
    let mut first_missing = None;
    for n in 0..during + 1 {
        let r = restored.send(restored.get(&format!("/v1/documents/b{n}")).bearer_auth(&key)).await;
        match r.status.as_u16() {
            200 => {
                let html = r.json["html"].as_str().unwrap_or_default();
                assert!(
                    html.contains(&format!("Document {n}</h1>")) && html.matches("a paragraph").count() == 20,
                    "{r:?}"
                );
                assert_eq!(first_missing, None, "b{n} is in the copy but an earlier document is not: not one moment");
                found += 1;
            }
            404 => {
                assert!(n >= before, "document b{n}, written before the backup began, is missing");
                first_missing.get_or_insert(n);
            }
            _ => panic!("{r:?}"),
        }
    }
    assert!(found >= before, "{found} documents in the copy, {before} written before it");
    let listed = restored.sessions_with_key(&key).await;
    listed.expect_status(200);
}

/// `serve`'s environment once it runs (read from /proc), started with `env` only.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
async fn serve_environment(env: &[(&str, &str)]) -> std::collections::HashMap<String, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_redline"))
        .arg("serve")
        .env_clear()
        .env("REDLINE_BIND", format!("127.0.0.1:{port}"))
        .env("REDLINE_DATA_DIR", dir.path())
        .env("REDLINE_LOG", "warn")
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("redline serve starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let ready = loop {
        let up = crate::helpers::client().get(format!("http://127.0.0.1:{port}/healthz")).send().await;
        if up.is_ok_and(|r| r.status().is_success()) {
            break true;
        }
        if child.try_wait().expect("try_wait").is_some() || std::time::Instant::now() > deadline {
            break false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    // The pid is the same after `serve` executes itself again.
    let environ = std::fs::read(format!("/proc/{}/environ", child.id())).unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    assert!(ready, "redline serve did not come up");
    environ
        .split(|b| *b == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (name, value) = entry.split_once('=')?;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[tokio::test]
async fn serve_sets_glibc_malloc_settings_the_operator_left_unset() {
    let env = serve_environment(&[]).await;
    assert_eq!(env.get("MALLOC_ARENA_MAX").map(String::as_str), Some("2"));
    assert_eq!(env.get("MALLOC_MMAP_THRESHOLD_").map(String::as_str), Some("4194304"));

    // An operator's value is kept; the other setting is still added.
    let env = serve_environment(&[("MALLOC_ARENA_MAX", "4")]).await;
    assert_eq!(env.get("MALLOC_ARENA_MAX").map(String::as_str), Some("4"));
    assert_eq!(env.get("MALLOC_MMAP_THRESHOLD_").map(String::as_str), Some("4194304"));

    // GLIBC_TUNABLES decides everything.
    let env = serve_environment(&[("GLIBC_TUNABLES", "glibc.malloc.arena_max=8")]).await;
    assert_eq!(env.get("GLIBC_TUNABLES").map(String::as_str), Some("glibc.malloc.arena_max=8"));
    assert_eq!(env.get("MALLOC_ARENA_MAX"), None);
    assert_eq!(env.get("MALLOC_MMAP_THRESHOLD_"), None);
}
