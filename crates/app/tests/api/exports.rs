//! Export (the contract's POST /v1/documents/export, Errors 413 Details 8, Versioning 3;
//! docs/api.md, "Export"): every format, the `doc` alias, the 413 object, e-mailed links.

use std::time::Duration;

use serde_json::{json, Value};

use crate::files::{download_path, save, wait_for_mail};
use crate::helpers::*;

const PHRASE: &str = "Export check phrase alpha.";

fn doc_html() -> String {
    format!("<h1>Export Title</h1><p>{PHRASE}</p><ul><li>List item bravo</li></ul>")
}

/// Hard-to-compress paragraphs, about `n` × 130 bytes.
fn bulky_html(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "<p>{}</p>",
                (0..12)
                    .map(|j| format!("{:010x}", (i * 7919 + j * 104_729) * 2_654_435_761usize % (1 << 40)))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        })
        .collect()
}

async fn export(app: &TestApp, key: &str, session_id: &str, format: &str) -> Reply {
    app.send(
        app.post("/v1/documents/export").bearer_auth(key).json(&json!({"session_id": session_id, "format": format})),
    )
    .await
}

async fn email_request(app: &TestApp, key: &str, body: Value) -> Reply {
    app.send(app.post("/v1/documents/export/email-request").bearer_auth(key).json(&body)).await
}

fn disposition(r: &Reply) -> &str {
    r.header("content-disposition").unwrap_or_else(|| panic!("no Content-Disposition: {r:?}"))
}

#[tokio::test]
async fn every_format_is_an_attachment_of_its_type() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    save(&app, &key, "report-1", &doc_html()).await;
    let cases = [
        ("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "report-1.docx"),
        ("pdf", "application/pdf", "report-1.pdf"),
        ("html", "text/html; charset=utf-8", "report-1.html"),
        ("markdown", "text/markdown; charset=utf-8", "report-1.md"),
        ("txt", "text/plain; charset=utf-8", "report-1.txt"),
    ];
    for (format, content_type, filename) in cases {
        let resp = app
            .post("/v1/documents/export")
            .bearer_auth(&key)
            .json(&json!({"session_id": "report-1", "format": format}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{format}");
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.unwrap();
        assert_eq!(headers["content-type"], content_type, "{format}");
        let cd = headers["content-disposition"].to_str().unwrap();
        assert!(cd.starts_with("attachment") && cd.contains(&format!("filename=\"{filename}\"")), "{format}: {cd}");
        assert!(headers.get("deprecation").is_none(), "{format}");
        match format {
            "docx" => assert!(bytes.starts_with(b"PK\x03\x04"), "a zip"),
            "pdf" => assert!(bytes.starts_with(b"%PDF"), "a PDF"),
            _ => {
                let text = String::from_utf8(bytes.to_vec()).unwrap();
                assert!(text.contains(PHRASE), "{format}: {text}");
                match format {
                    "html" => assert!(text.contains("<h1"), "{text}"),
                    "markdown" => {
                        assert!(text.lines().any(|l| l.trim() == "# Export Title"), "{text}");
                        assert!(
                            text.lines().any(|l| l.trim_start().starts_with("- List item bravo")
                                || l.trim_start().starts_with("* List item bravo")),
                            "{text}"
                        );
                    }
                    _ => assert!(!text.contains("<p") && text.contains("List item bravo"), "{text}"),
                }
            }
        }
    }
}

#[tokio::test]
async fn doc_is_docx_with_a_deprecation_header() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    save(&app, &key, "legacy", &doc_html()).await;
    let r = export(&app, &key, "legacy", "doc").await;
    r.expect_status(200);
    assert_eq!(r.header("deprecation"), Some("true"));
    assert_eq!(
        r.header("content-type"),
        Some("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    );
    assert!(disposition(&r).contains("legacy.docx"), "{}", disposition(&r));
}

#[tokio::test]
async fn bad_bodies_and_missing_sessions() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    save(&app, &key, "mine", &doc_html()).await;
    for bad in ["rtf", "PDF", "doc ", "", "xlsx"] {
        let r = export(&app, &key, "mine", bad).await;
        let item = r.expect_422_at(&[json!("body"), json!("format")]);
        assert_eq!(item["type"], "literal_error", "{bad:?}: {r:?}");
    }
    let r = app
        .send(app.post("/v1/documents/export").bearer_auth(&key).json(&json!({"session_id": "mine", "format": 5})))
        .await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("format")])["type"], "literal_error");
    let r = export(&app, &key, "has space", "html").await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("session_id")])["type"], "string_pattern_mismatch");
    let r = app.send(app.post("/v1/documents/export").bearer_auth(&key).json(&json!({}))).await;
    r.expect_422_at(&[json!("body"), json!("session_id")]);
    r.expect_422_at(&[json!("body"), json!("format")]);

    export(&app, &key, "nosuch", "html").await.expect_status(404);
    // Sessions are per owner: another account's session of the same id is not found.
    let other = app.agent_key().await;
    export(&app, &other, "mine", "html").await.expect_status(404);
    email_request(&app, &other, json!({"session_id": "mine", "format": "html", "email": "x@example.com"}))
        .await
        .expect_status(404);

    let r = app.send(app.post("/v1/documents/export").json(&json!({"session_id": "mine", "format": "html"}))).await;
    assert_eq!(r.expect_401(), MISSING_HEADER);
}

#[tokio::test]
async fn over_the_cap_is_413_with_a_detail_object() {
    let app =
        spawn_app_with(&[("REDLINE_EXPORT_CAP_BYTES", "100000"), ("REDLINE_EXPORT_CAP_BYTES_DOCX", "2048")]).await;
    let key = app.agent_key().await;
    save(&app, &key, "big", &bulky_html(2000)).await;
    let r = export(&app, &key, "big", "html").await;
    r.expect_status(413).expect_json();
    let d = &r.json["detail"];
    assert!(d.is_object(), "{r:?}");
    assert_eq!(d["error_code"], "document_too_large");
    assert_eq!(d["suggested_action"], "email_request");
    assert_eq!(d["format"], "html");
    assert!(d["message_user"].as_str().is_some_and(|m| m.contains("email-request")), "{d}");
    assert_eq!(d["contact_email"], "support@redline.invalid");
    assert_eq!(d["support_event_id"].as_str(), r.header("x-request-id"), "the request id");
    let max = d["max_size_mb"].as_f64().unwrap();
    assert!((max - 0.0954).abs() < 0.001, "{d}");
    assert!(d["document_size_mb"].as_f64().unwrap() > max, "{d}");

    // The docx cap is its own; a small document passes the others.
    save(&app, &key, "small", &doc_html()).await;
    let r = export(&app, &key, "small", "docx").await;
    assert_eq!(r.expect_status(413).json["detail"]["format"], "docx");
    assert_eq!(r.json["detail"]["max_size_mb"], 0.002);
    export(&app, &key, "small", "html").await.expect_status(200);
    let r = export(&app, &key, "small", "doc").await;
    assert_eq!(r.expect_status(413).json["detail"]["format"], "docx", "the alias hits the docx cap");
}

#[tokio::test]
async fn an_emailed_link_downloads_without_authorization_until_it_expires() {
    let app = spawn_app_with(&[("REDLINE_EXPORT_LINK_TTL_SECS", "3"), ("REDLINE_EXPORT_CAP_BYTES", "2048")]).await;
    let (key, to) = app.mailing_key().await;
    save(&app, &key, "mailed", &format!("<p>{PHRASE}</p>{}", bulky_html(100))).await;
    // Over the cap for a direct export: the e-mail is the remedy.
    export(&app, &key, "mailed", "html").await.expect_status(413);

    let r = email_request(&app, &key, json!({"session_id": "mailed", "format": "html", "email": to})).await;
    r.expect_status(202).expect_json();
    let request_id = r.json["request_id"].as_str().unwrap_or_else(|| panic!("{r:?}"));
    assert!(request_id.starts_with("exp_"), "{request_id}");
    let mail = wait_for_mail(&app, &to).await;
    assert!(mail.contains("Subject: Your Redline export of mailed is ready"), "{mail}");
    let link = download_path(&mail);
    assert!(link.contains(request_id), "{link}");

    let r = app.send(app.get(&link)).await;
    r.expect_status(200);
    assert!(r.text.contains(PHRASE) && r.text.len() > 2048);
    assert!(disposition(&r).starts_with("attachment") && disposition(&r).contains("mailed.html"));

    let mut tampered = link.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == '0' { '1' } else { '0' });
    app.send(app.get(&tampered)).await.expect_status(404).expect_json();
    app.send(app.get("/v1/documents/export/download/nonsense")).await.expect_status(404);

    tokio::time::sleep(Duration::from_millis(3200)).await;
    app.send(app.get(&link)).await.expect_status(404);
}

#[tokio::test]
async fn the_recipient_defaults_to_the_accounts_address() {
    let app = spawn_app().await;
    // An agent has no address: it cannot mail exports, to itself or to anyone.
    let agent = app.agent_key().await;
    save(&app, &agent, "s", &doc_html()).await;
    for body in [
        json!({"session_id": "s", "format": "txt"}),
        json!({"session_id": "s", "format": "txt", "email": "a@example.com"}),
    ] {
        let r = email_request(&app, &agent, body).await;
        r.expect_status(403).expect_json();
        assert!(r.detail().contains("POST /v1/documents/export"), "{r:?}");
    }
    let r = email_request(&app, &agent, json!({"session_id": "s", "format": "txt", "email": "not-an-address"})).await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("email")])["type"], "value_error");
    let r = email_request(&app, &agent, json!({"session_id": "s", "format": "rtf", "email": "a@example.com"})).await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("format")])["type"], "literal_error");

    // A web user's key: the mail goes to the account.
    let (email, _, token) = app.web_user().await;
    let key = app.create_key(&token, "exports").await.json["api_key"].as_str().unwrap().to_owned();
    save(&app, &key, "s", &doc_html()).await;
    let r = email_request(&app, &key, json!({"session_id": "s", "format": "txt", "email": unique_email()})).await;
    assert!(r.expect_status(403).detail().starts_with("Exports are mailed only to your account's own e-mail address"));
    // Not before the account's address is proven by the link mailed to it at sign-up.
    let r = email_request(&app, &key, json!({"session_id": "s", "format": "txt"})).await;
    assert!(r.expect_status(403).detail().starts_with("Exports are mailed only to verified addresses"), "{r:?}");
    app.verify_email(&email).await;
    let r = email_request(&app, &key, json!({"session_id": "s", "format": "doc"})).await;
    r.expect_status(202);
    assert_eq!(r.header("deprecation"), Some("true"));
    let mail = wait_for_mail(&app, &email).await;
    let r = app.send(app.get(&download_path(&mail))).await;
    r.expect_status(200);
    assert_eq!(
        r.header("content-type"),
        Some("application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    );
}

/// The `.eml` files in `dir` addressed to `to`.
fn mails_to(dir: &std::path::Path, to: &str) -> Vec<String> {
    crate::files::files_under(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "eml"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .filter(|text| text.contains(&format!("To: {to}")) && !crate::files::account_mail(text))
        .collect()
}

/// The e-mailed export runs as a job of the queue, but an internal one: the request answers
/// `{request_id}` alone, the mail arrives, and no job endpoint shows or finds it.
#[tokio::test]
async fn an_emailed_export_is_a_queued_job_that_no_job_endpoint_shows() {
    let app = spawn_app().await;
    let (key, to) = app.mailing_key().await;
    save(&app, &key, "queued", &doc_html()).await;
    let r = email_request(&app, &key, json!({"session_id": "queued", "format": "txt", "email": to})).await;
    r.expect_status(202).expect_json();
    let request_id = r.json["request_id"].as_str().unwrap_or_else(|| panic!("{r:?}")).to_owned();
    assert_eq!(r.json, json!({"request_id": request_id}), "the answer is the request id alone");
    assert!(
        r.text.starts_with("{\"request_id\":\"exp_") && r.text.len() == r#"{"request_id":""}"#.len() + 36,
        "{}",
        r.text
    );

    let mail = wait_for_mail(&app, &to).await;
    assert!(mail.contains("Subject: Your Redline export of queued is ready"), "{mail}");
    let file = app.send(app.get(&download_path(&mail))).await;
    assert!(file.expect_status(200).text.contains(PHRASE));

    for path in ["/v1/jobs", "/v1/jobs?status=completed", "/v1/jobs?status=pending", "/v1/sessions/queued/jobs"] {
        let r = app.send(app.get(path).bearer_auth(&key)).await;
        assert_eq!(r.expect_status(200).json["jobs"], json!([]), "{path}: {r:?}");
    }
    let r = app.send(app.get("/v1/jobs?job_type=emailed_export").bearer_auth(&key)).await;
    assert_eq!(r.expect_422_at(&[json!("query"), json!("job_type")])["type"], "literal_error");
    app.send(app.get(&format!("/v1/jobs/{request_id}")).bearer_auth(&key)).await.expect_status(404);
    app.send(app.get(&format!("/v1/jobs/{request_id}/events")).bearer_auth(&key)).await.expect_status(404);
    app.send(app.post(&format!("/v1/jobs/{request_id}/cancel")).bearer_auth(&key)).await.expect_status(404);
    let metrics = app.send(app.get("/metrics")).await;
    assert!(metrics.text.contains("redline_jobs{type=\"emailed_export\""), "{}", metrics.text);
}

/// A replica dies while it holds the export's job: the job's lease runs out, another replica's
/// sweep queues it again and its worker mails the version that was asked for, once.
#[tokio::test]
async fn an_export_whose_worker_died_is_retried_by_another_replica_and_mailed_once() {
    let Some(db) = PgDatabase::create("redline_export_retry").await else { return };
    // What the replicas share: the database, the blob store, the secret, the address, and
    // the outbox folder (where a relay would collect the mail).
    let shared = tempfile::tempdir().expect("temp dir");
    let outbox = shared.path().join("outbox");
    let env = [
        fleet_env(&db, shared.path()),
        vec![("REDLINE_STORAGE_URL", shared.path().join("blobs").display().to_string())],
    ]
    .concat();
    let fleet = borrowed(&env);
    // Replica A only serves HTTP.
    let a = spawn_app_with(&[&fleet[..], &[("REDLINE_WORKERS", "0")]].concat()).await;
    let (key, to) = a.mailing_key().await;
    save(&a, &key, "pinned", &doc_html()).await;
    let r = email_request(&a, &key, json!({"session_id": "pinned", "format": "txt", "email": to})).await;
    let request_id = r.expect_status(202).json["request_id"].as_str().unwrap().to_owned();
    // The document moves on after the request: the export is of the version asked for.
    save(&a, &key, "pinned", "<p>Edited after the request.</p>").await;

    // A worker claims the job and dies: its lease ends in half a second and is never renewed.
    let (pg, connection) = tokio_postgres::connect(&db.url, tokio_postgres::NoTls).await.expect("connect");
    tokio::spawn(connection);
    let now_ms =
        i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap();
    let claimed = pg
        .execute(
            "UPDATE jobs SET status = 'in_progress', lease_until = $2 WHERE job_id = $1 AND status = 'pending'",
            &[&request_id, &(now_ms + 500)],
        )
        .await
        .expect("claim");
    assert_eq!(claimed, 1, "the job waits in the queue");

    // Replica B runs jobs; its sweep finds the lease run out.
    let _b = spawn_app_with(&[&fleet[..], &[("REDLINE_WORKERS", "1"), ("REDLINE_JOB_LEASE_SECS", "2")]].concat()).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let (status, attempts) = loop {
        let row = pg.query_one("SELECT status, attempts FROM jobs WHERE job_id = $1", &[&request_id]).await.unwrap();
        let (status, attempts): (String, i32) = (row.get(0), row.get(1));
        if status == "completed" || status == "failed" {
            break (status, attempts);
        }
        assert!(std::time::Instant::now() < deadline, "the export job is still {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!((status.as_str(), attempts), ("completed", 1), "retried once after the crash");
    // The mail goes out before the job completes, and a completed job never runs again.
    let mails = mails_to(&outbox, &to);
    assert_eq!(mails.len(), 1, "{mails:?}");
    let file = a.send(a.get(&download_path(&mails[0]))).await;
    let text = &file.expect_status(200).text;
    assert!(text.contains(PHRASE) && !text.contains("Edited after"), "{text}");

    a.send(a.get(&format!("/v1/jobs/{request_id}")).bearer_auth(&key)).await.expect_status(404);
    let listed = a.send(a.get("/v1/jobs").bearer_auth(&key)).await;
    assert_eq!(listed.expect_status(200).json["jobs"], json!([]));
}
