//! Attachments (docs/api.md, "Attachments"): streamed uploads processed by jobs, the status
//! endpoint, search, listing, reading and deleting, pre-signed uploads, refusals that leave
//! nothing behind, ownership, documents indexed on upload, a retried job that does not index
//! twice, the AI quoting a passage, and the same flow on an S3-compatible store (moto).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use redline_domain::job::JobStatus;
use redline_ports::jobs::JobUpdate;
use redline_ports::JobStore;
use serde_json::{json, Value};

use crate::helpers::*;

pub const PASSAGE: &str = "The secret ingredient of Zorblax soup is purple kelp harvested at dawn.";

pub fn harbour_text() -> Vec<u8> {
    [
        "Chapter one describes the harbour town and its quiet mornings.",
        "The market opens at six and closes before the evening tide.",
        PASSAGE,
    ]
    .join("\n\n")
    .into_bytes()
}

/// A `multipart/form-data` body of text fields and one file field.
pub(crate) fn multipart(fields: &[(&str, &str)], file: Option<(&str, &[u8])>) -> (String, Vec<u8>) {
    let boundary = format!("redline-{}", random_hex());
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    if let Some((filename, bytes)) = file {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// `POST /v1/attachments/upload`.
pub async fn attach(app: &TestApp, key: &str, session_id: &str, filename: &str, bytes: &[u8]) -> Reply {
    let (content_type, body) = multipart(&[("session_id", session_id)], Some((filename, bytes)));
    app.send(app.post("/v1/attachments/upload").bearer_auth(key).header("content-type", content_type).body(body)).await
}

/// Polls the status endpoint until the job is finished; answers the last status.
pub async fn wait_processed(app: &TestApp, key: &str, job_id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let r = app.send(app.get(&format!("/v1/attachments/status/{job_id}")).bearer_auth(key)).await;
        r.expect_status(200);
        if ["completed", "failed", "cancelled"].contains(&r.json["status"].as_str().unwrap_or_default()) {
            return r.json.clone();
        }
        assert!(Instant::now() < deadline, "attachment job {job_id} not finished: {r:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Uploads and waits until processed; answers the 202 body.
pub async fn attach_processed(app: &TestApp, key: &str, session_id: &str, filename: &str, bytes: &[u8]) -> Value {
    let r = attach(app, key, session_id, filename, bytes).await;
    r.expect_status(202);
    let done = wait_processed(app, key, r.json["job_id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed", "{done}");
    r.json.clone()
}

pub async fn search(app: &TestApp, key: &str, session_id: &str, q: &str) -> Vec<Value> {
    let r = app
        .send(app.get("/v1/attachments/search").bearer_auth(key).query(&[("session_id", session_id), ("q", q)]))
        .await;
    r.expect_status(200);
    r.json["passages"].as_array().cloned().unwrap_or_default()
}

/// Every file under `dir` (relative paths), sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                out.push(path.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn attachment_blobs(app: &TestApp) -> Vec<String> {
    files_under(&app.data_dir().join("blobs").join("attachments"))
}

#[tokio::test]
async fn an_upload_is_processed_searchable_listed_and_quoted() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let data = harbour_text();
    let r = attach(&app, &key, "s1", "harbour.txt", &data).await;
    r.expect_status(202);
    let body = r.json.clone();
    assert_eq!(body["filename"], "harbour.txt");
    assert_eq!(body["file_size"], data.len());
    assert_eq!(body["content_type"], "text/plain");
    assert_eq!(body["status"], "pending");
    let (job_id, aid) = (body["job_id"].as_str().unwrap(), body["attachment_id"].as_str().unwrap());

    let status = wait_processed(&app, &key, job_id).await;
    assert_eq!(
        status,
        json!({"job_id": job_id, "attachment_id": aid, "status": "completed", "progress": 100, "error": null})
    );
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["job_type"], "attachment_processing");
    assert_eq!(job.json["result"]["attachment_id"], aid);
    assert_eq!(job.json["metadata"]["filename"], "harbour.txt");
    assert_eq!(job.json["metadata"]["file_size"], data.len());
    assert_eq!(job.json["metadata"]["content_type"], "text/plain");
    let steps = job.json["metadata"]["intermediate_responses"].as_array().cloned().unwrap_or_default();
    assert!(steps.len() >= 3, "progress is reported step by step: {steps:?}");

    let hits = search(&app, &key, "s1", "What is the secret ingredient of Zorblax soup?").await;
    assert_eq!(hits[0]["attachment_id"], aid);
    assert_eq!(hits[0]["filename"], "harbour.txt");
    assert!(hits[0]["text"].as_str().unwrap().contains("purple kelp"));
    assert!(hits[0]["chunk_index"].is_i64() && hits[0]["score"].as_f64().unwrap() > 0.0);

    let listing = app.send(app.get("/v1/attachments").bearer_auth(&key).query(&[("session_id", "s1")])).await;
    listing.expect_status(200);
    assert_eq!(listing.json["total"], 1);
    let item = &listing.json["attachments"][0];
    assert_eq!(
        (&item["attachment_id"], &item["status"], &item["source"]),
        (&json!(aid), &json!("completed"), &json!("upload"))
    );
    assert!(item["passage_count"].as_i64().unwrap() >= 1 && item.get("preview").is_none());
    let one = app.send(app.get(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await;
    one.expect_status(200);
    assert!(one.json["preview"].as_str().unwrap().starts_with("Chapter one describes"), "{one:?}");
    assert_eq!(
        one.json["text_chars"].as_i64(),
        Some(std::str::from_utf8(&data).unwrap().split("\n\n").map(|p| p.chars().count() as i64).sum::<i64>())
    );

    // The builtin AI answers a question by quoting the passage; processing cost nothing.
    let chat = app
        .send(
            app.post("/v1/chat")
                .bearer_auth(&key)
                .json(&json!({"session_id": "s1", "message": "What is the secret ingredient of Zorblax soup?"})),
        )
        .await;
    chat.expect_status(200);
    assert!(chat.json["response"].as_str().unwrap().contains("purple kelp"), "{chat:?}");
    assert!(chat.json["response"].as_str().unwrap().contains("harbour.txt"), "{chat:?}");
    let usage = app.send(app.get("/v1/usage").bearer_auth(&key)).await;
    assert_eq!(usage.json["monthly_used"], 1, "only the chat turn is billed");

    // The job shows in the listings of jobs with its type.
    let jobs = app.send(app.get("/v1/jobs").bearer_auth(&key).query(&[("job_type", "attachment_processing")])).await;
    assert_eq!(jobs.json["jobs"].as_array().unwrap().len(), 1);
}

/// The builtin AI quotes what its search found even when the question's words are not in the
/// passage as written: a stemmed form ("harvest" finds "harvested"), a short word, or a
/// word inside a run of Japanese. It used to filter the search's passages again by literal
/// words of three letters or more, and said it found nothing.
#[tokio::test]
async fn the_builtin_quotes_what_the_search_found() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let text =
        "# Notes\n\nThe farmers harvested wheat in the north.\n\n都市: 東京 大阪 京都\n\nThe mu particle decays.\n";
    attach_processed(&app, &key, "quotes", "notes.md", text.as_bytes()).await;
    for (question, quoted) in [("harvest", "harvested wheat"), ("東京", "東京 大阪"), ("mu", "mu particle")] {
        assert!(!search(&app, &key, "quotes", question).await.is_empty(), "the search finds {question:?}");
        let chat = app
            .send(app.post("/v1/chat").bearer_auth(&key).json(&json!({"session_id": "quotes", "message": question})));
        let chat = chat.await;
        chat.expect_status(200);
        let response = chat.json["response"].as_str().unwrap_or_default();
        assert!(response.contains(quoted) && response.contains("notes.md"), "{question:?}: {response}");
    }
}

#[tokio::test]
async fn refused_uploads_leave_nothing_behind() {
    let app = spawn_app_with(&[("REDLINE_MAX_ATTACHMENT_BYTES", "2048")]).await;
    let key = app.agent_key().await;

    for name in ["old.doc", "OLD.DOC", "setup.exe", "noextension"] {
        let r = attach(&app, &key, "s1", name, b"\xd0\xcf\x11\xe0 binary").await;
        r.expect_status(415).expect_json();
        assert!(r.detail().contains(".pdf, .docx, .txt, .rtf, .md, .html, .htm"), "{r:?}");
    }
    let r = attach(&app, &key, "s1", "old.doc", b"x").await;
    assert!(r.detail().contains("'.doc'") && r.detail().contains("save the file as .docx"), "{r:?}");

    let r = attach(&app, &key, "s1", "big.txt", &vec![b'a'; 4096]).await;
    r.expect_status(413).expect_json();
    assert_eq!(r.json["error_code"], "request_too_large");
    assert_eq!(r.json["suggested_action"], "split_request");
    assert!(r.json["max_size_mb"].is_number() && r.json["support_event_id"].as_str().is_some_and(|s| !s.is_empty()));

    // A file just under the cap is taken.
    attach(&app, &key, "s2", "fits.txt", &vec![b'a'; 2000]).await.expect_status(202);
    let before = attachment_blobs(&app);
    assert_eq!(before.len(), 1, "{before:?}");

    // Missing or invalid session_id, no file, an empty file: 422, nothing stored.
    let (ct, body) = multipart(&[], Some(("a.txt", b"hello")));
    let r = app.send(app.post("/v1/attachments/upload").bearer_auth(&key).header("content-type", ct).body(body)).await;
    r.expect_422_at(&[json!("body"), json!("session_id")]);
    let (ct, body) = multipart(&[("session_id", "bad id!")], Some(("a.txt", b"hello")));
    let r = app.send(app.post("/v1/attachments/upload").bearer_auth(&key).header("content-type", ct).body(body)).await;
    r.expect_422_at(&[json!("body"), json!("session_id")]);
    let (ct, body) = multipart(&[("session_id", "s3")], None);
    let r = app.send(app.post("/v1/attachments/upload").bearer_auth(&key).header("content-type", ct).body(body)).await;
    r.expect_422_at(&[json!("body"), json!("file")]);
    attach(&app, &key, "s3", "empty.txt", b"").await.expect_422_at(&[json!("body"), json!("file")]);
    // Not multipart at all.
    let r = app.send(app.post("/v1/attachments/upload").bearer_auth(&key).json(&json!({"session_id": "s3"}))).await;
    r.expect_status(415);

    // A problem after the file was stored (a field given twice, an over-long field, a body
    // cut short before its closing boundary): 422, and the stored file is removed (it stayed).
    let part = |name: &str, file: bool, value: &str| {
        let file = if file { "; filename=\"a.txt\"" } else { "" };
        format!("--b0\r\nContent-Disposition: form-data; name=\"{name}\"{file}\r\n\r\n{value}\r\n")
    };
    let long = "x".repeat(9000);
    for (parts, end, loc, kind) in [
        (
            vec![part("file", true, "hello"), part("session_id", false, "s4"), part("session_id", false, "s5")],
            true,
            "session_id",
            "multipart_duplicate_field",
        ),
        (vec![part("file", true, "hello"), part("file", true, "again")], true, "file", "multipart_duplicate_field"),
        (vec![part("file", true, "hello"), part("note", false, &long)], true, "note", "string_too_long"),
        (vec![part("session_id", false, "s4"), part("file", true, "hello")], false, "", "multipart_invalid"),
    ] {
        let mut body = parts.concat();
        if end {
            body.push_str("--b0--\r\n");
        }
        let r = app
            .send(
                app.post("/v1/attachments/upload")
                    .bearer_auth(&key)
                    .header("content-type", "multipart/form-data; boundary=b0")
                    .body(body),
            )
            .await;
        let loc: Vec<Value> = std::iter::once(json!("body")).chain((!loc.is_empty()).then(|| json!(loc))).collect();
        assert_eq!(r.expect_422_at(&loc)["type"], kind, "{r:?}");
    }

    assert_eq!(attachment_blobs(&app), before, "a refused upload leaves no file");
    let sessions = app.sessions_with_key(&key).await;
    let ids: Vec<&str> = sessions.json.as_array().unwrap().iter().filter_map(|s| s["session_id"].as_str()).collect();
    assert_eq!(ids, ["s2"], "a refused upload creates no session");
}

#[tokio::test]
async fn file_names_are_data() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let long = format!("{}.txt", "n".repeat(400));
    for (sent, kept) in [
        ("../../etc/passwd.txt", "passwd.txt".to_owned()),
        ("..\\..\\boot.ini.md", "boot.ini.md".to_owned()),
        // Windows paths sent unescaped in the quoted filename, as old browsers do.
        (r"C:\Users\me\report.txt", "report.txt".to_owned()),
        (r"\\fileserver\team\notes.md", "notes.md".to_owned()),
        ("tab\there.txt", "tabhere.txt".to_owned()),
        ("rtl\u{202e}txt.md", "rtltxt.md".to_owned()),
        (long.as_str(), format!("{}.txt", "n".repeat(251))),
    ] {
        let body = attach_processed(&app, &key, "names", sent, b"Some text to index.").await;
        assert_eq!(body["filename"], kept.as_str(), "sent {sent:?}");
    }
    assert!(attachment_blobs(&app).iter().all(|f| f.starts_with("att_")), "{:?}", attachment_blobs(&app));

    // RFC 5987's `filename*` (what curl and most HTTP libraries send for a name beyond
    // ASCII) is read, and wins over the plain `filename` sent next to it for old parsers.
    for disposition in
        ["filename*=UTF-8''r%C3%A9sum%C3%A9.md", "filename=\"resume.md\"; filename*=UTF-8''r%C3%A9sum%C3%A9.md"]
    {
        let body = format!(
            "--b0\r\nContent-Disposition: form-data; name=\"session_id\"\r\n\r\nnames\r\n\
             --b0\r\nContent-Disposition: form-data; name=\"file\"; {disposition}\r\n\r\nSome text.\r\n--b0--\r\n"
        );
        let r = app
            .send(
                app.post("/v1/attachments/upload")
                    .bearer_auth(&key)
                    .header("content-type", "multipart/form-data; boundary=b0")
                    .body(body),
            )
            .await;
        r.expect_status(202);
        assert_eq!(r.json["filename"], "résumé.md", "{disposition}");
    }
}

#[tokio::test]
async fn a_file_that_cannot_be_read_fails_with_a_clear_error() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = attach(&app, &key, "s1", "report.pdf", b"this is not a PDF at all").await;
    r.expect_status(202);
    let done = wait_processed(&app, &key, r.json["job_id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "failed");
    let error = done["error"].as_str().unwrap();
    assert!(error.starts_with("Could not extract text from report.pdf:"), "{error}");
    let job = app.send(app.get(&format!("/v1/jobs/{}", r.json["job_id"].as_str().unwrap())).bearer_auth(&key)).await;
    assert_eq!((&job.json["status"], &job.json["error"]), (&json!("failed"), &json!(error)));
    let one = app
        .send(app.get(&format!("/v1/attachments/{}", r.json["attachment_id"].as_str().unwrap())).bearer_auth(&key))
        .await;
    assert_eq!((&one.json["status"], &one.json["error"]), (&json!("failed"), &json!(error)));
}

/// A cancelled processing job's attachment says `cancelled`, with the job's error and
/// progress, also once the job is deleted (here after 1 s instead of an hour): the sweeper
/// copies the job's end onto the attachment first. It used to turn `failed`, progress 0.
#[tokio::test]
async fn a_cancelled_attachment_stays_cancelled_after_its_job_is_gone() {
    let app = spawn_app_with(&[("REDLINE_WORKERS", "0"), ("REDLINE_JOB_RETENTION_SECS", "1")]).await;
    let key = app.agent_key().await;
    let r = attach(&app, &key, "s1", "notes.txt", b"Kelp grows at dawn.").await;
    r.expect_status(202);
    let job_id = r.json["job_id"].as_str().unwrap().to_owned();
    let attachment_id = r.json["attachment_id"].as_str().unwrap().to_owned();
    app.send(app.post(&format!("/v1/jobs/{job_id}/cancel")).bearer_auth(&key)).await.expect_status(200);
    let shown = |r: &Reply| (r.json["status"].clone(), r.json["error"].clone(), r.json["progress"].clone());
    let expected = (json!("cancelled"), json!("The job was cancelled."), json!(0));
    let before = app.send(app.get(&format!("/v1/attachments/{attachment_id}")).bearer_auth(&key)).await;
    assert_eq!(shown(&before), expected);

    let deadline = Instant::now() + Duration::from_secs(30);
    while app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await.status != 404 {
        assert!(Instant::now() < deadline, "the cancelled job was never deleted");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let one = app.send(app.get(&format!("/v1/attachments/{attachment_id}")).bearer_auth(&key)).await;
    one.expect_status(200);
    assert_eq!(shown(&one), expected, "{:?}", one.json);
    let listed = app.send(app.get("/v1/attachments?session_id=s1").bearer_auth(&key)).await;
    let listed = &listed.json["attachments"][0];
    assert_eq!((listed["status"].clone(), listed["error"].clone()), (expected.0.clone(), expected.1.clone()));
    let status = app.send(app.get(&format!("/v1/attachments/status/{job_id}")).bearer_auth(&key)).await;
    status.expect_status(200);
    assert_eq!(shown(&status), expected, "{:?}", status.json);
}

/// A text file saved in Windows' "ANSI" code page (Windows-1252) is read, not refused as
/// invalid UTF-8: its passages are found, with the curly quotes and accents it had.
#[tokio::test]
async fn a_text_file_in_windows_1252_is_read() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let ansi = b"The harbour caf\xe9 serves \x93purple kelp cr\xe8me\x94 every morning.\r\n\r\n\
                 Its chef, Ren\xe9e, learnt the recipe in Marseille \x96 for 12 \x80.\r\n";
    let body = attach_processed(&app, &key, "s1", "menu.txt", ansi).await;
    let hits = search(&app, &key, "s1", "kelp creme").await;
    assert_eq!(hits[0]["attachment_id"], body["attachment_id"]);
    let text = hits[0]["text"].as_str().unwrap();
    assert!(text.contains("caf\u{e9} serves \u{201c}purple kelp cr\u{e8}me\u{201d}"), "{text}");
    let chef = search(&app, &key, "s1", "Renée").await;
    assert!(chef[0]["text"].as_str().unwrap().contains("Marseille \u{2013} for 12 \u{20ac}"), "{chef:?}");
}

#[tokio::test]
async fn owners_see_only_their_attachments() {
    let app = spawn_app().await;
    let ann = app.agent_key().await;
    let bob = app.agent_key().await;
    let body = attach_processed(&app, &ann, "shared-name", "harbour.txt", &harbour_text()).await;
    let (aid, job_id) = (body["attachment_id"].as_str().unwrap(), body["job_id"].as_str().unwrap());

    for path in [format!("/v1/attachments/{aid}"), format!("/v1/attachments/status/{job_id}")] {
        app.send(app.get(&path).bearer_auth(&bob)).await.expect_status(403);
    }
    app.send(app.delete(&format!("/v1/attachments/{aid}")).bearer_auth(&bob)).await.expect_status(403);
    // Bob's session of the same name is another session.
    app.send(
        app.get("/v1/attachments/search").bearer_auth(&bob).query(&[("session_id", "shared-name"), ("q", "zorblax")]),
    )
    .await
    .expect_status(404);
    attach_processed(&app, &bob, "shared-name", "bob.txt", b"Bob writes about zorblax too.").await;
    let hits = search(&app, &bob, "shared-name", "zorblax").await;
    assert!(hits.iter().all(|h| h["filename"] == "bob.txt") && !hits.is_empty(), "{hits:?}");
    let listing = app.send(app.get("/v1/attachments").bearer_auth(&bob).query(&[("session_id", "shared-name")])).await;
    assert_eq!(listing.json["total"], 1);

    for path in [
        "/v1/attachments/att_00000000000000000000000000000000",
        "/v1/attachments/00000000-0000-4000-8000-000000000000",
        "/v1/attachments/status/00000000-0000-4000-8000-000000000000",
    ] {
        app.send(app.get(path).bearer_auth(&ann)).await.expect_status(404);
    }
    app.send(app.get("/v1/attachments").bearer_auth(&ann).query(&[("session_id", "nope")])).await.expect_status(404);
    // A chat job is not an attachment job.
    app.send(app.client.put(app.url("/v1/documents/c")).bearer_auth(&ann).json(&json!({"html": "<p>x</p>"})))
        .await
        .expect_status(200);
    let chat = app
        .send(app.post("/v1/chat/async").bearer_auth(&ann).json(&json!({"session_id": "c", "message": "summarize"})))
        .await;
    let chat_id = chat.json["job_id"].as_str().unwrap();
    app.send(app.get(&format!("/v1/attachments/status/{chat_id}")).bearer_auth(&ann)).await.expect_status(404);
    // Without a key: 401.
    app.send(app.get(&format!("/v1/attachments/{aid}"))).await.expect_401();
}

#[tokio::test]
async fn search_takes_any_text() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    attach_processed(&app, &key, "s1", "harbour.txt", &harbour_text()).await;
    for q in ["\"unbalanced", "NEAR(a b", "*", "a AND OR NOT", "col:val ^ -", "", "text:zorblax", "zorblax*", "'; --"] {
        let r = app
            .send(app.get("/v1/attachments/search").bearer_auth(&key).query(&[("session_id", "s1"), ("q", q)]))
            .await;
        r.expect_status(200);
        assert!(r.json["passages"].is_array(), "{q:?}: {r:?}");
    }
    assert_eq!(search(&app, &key, "s1", "text:zorblax").await.len(), 1);
    let r = app
        .send(app.get("/v1/attachments/search").bearer_auth(&key).query(&[
            ("session_id", "s1"),
            ("q", "x"),
            ("limit", "-3"),
        ]))
        .await;
    r.expect_422_at(&[json!("query"), json!("limit")]);
    let r = app.send(app.get("/v1/attachments/search").bearer_auth(&key).query(&[("session_id", "s1")])).await;
    r.expect_422_at(&[json!("query"), json!("q")]);
    let r = app.send(app.get("/v1/attachments/search").bearer_auth(&key).query(&[("q", "x")])).await;
    r.expect_422_at(&[json!("query"), json!("session_id")]);
}

#[tokio::test]
async fn deleting_removes_the_file_and_the_passages() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let keep = attach_processed(&app, &key, "s1", "keep.txt", b"Zorblax tea is green.").await;
    let gone = attach_processed(&app, &key, "s1", "harbour.txt", &harbour_text()).await;
    let aid = gone["attachment_id"].as_str().unwrap();
    assert_eq!(attachment_blobs(&app).len(), 2);
    app.send(app.delete(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await.expect_status(204);
    app.send(app.get(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await.expect_status(404);
    app.send(app.delete(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await.expect_status(404);
    let hits = search(&app, &key, "s1", "zorblax soup kelp").await;
    assert!(hits.iter().all(|h| h["attachment_id"] == keep["attachment_id"]) && hits.len() == 1, "{hits:?}");
    let blobs = attachment_blobs(&app);
    assert!(blobs.len() == 1 && blobs[0].starts_with(keep["attachment_id"].as_str().unwrap()), "{blobs:?}");

    // Deletes of one attachment at the same moment: one did it (204), the others find
    // nothing (404).
    let twice = attach_processed(&app, &key, "s1", "twice.txt", b"Deleted once.").await;
    let path = format!("/v1/attachments/{}", twice["attachment_id"].as_str().unwrap());
    let answers = futures_util::future::join_all((0..6).map(|_| app.send(app.delete(&path).bearer_auth(&key)))).await;
    let mut statuses: Vec<u16> = answers.iter().map(|r| r.status.as_u16()).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [204, 404, 404, 404, 404, 404], "{answers:?}");

    // Deleting the session deletes the rest: file, rows, passages.
    app.send(app.delete("/v1/sessions/s1").bearer_auth(&key)).await.expect_status(204);
    assert!(attachment_blobs(&app).is_empty());
    app.send(app.get(&format!("/v1/attachments/{}", keep["attachment_id"].as_str().unwrap())).bearer_auth(&key))
        .await
        .expect_status(404);
    app.send(app.client.put(app.url("/v1/documents/s1")).bearer_auth(&key).json(&json!({"html": "<p>again</p>"})))
        .await
        .expect_status(200);
    assert!(search(&app, &key, "s1", "zorblax").await.is_empty());
}

async fn upload_url(app: &TestApp, key: &str, body: Value) -> Reply {
    app.send(app.post("/v1/attachments/upload-url").bearer_auth(key).json(&body)).await
}

fn now_ms() -> i64 {
    i64::try_from(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()).unwrap()
}

fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    &rest[rest.find('/').unwrap_or(rest.len())..]
}

#[tokio::test]
async fn pre_signed_uploads() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let data = harbour_text();
    let r =
        upload_url(&app, &key, json!({"session_id": "p1", "filename": "../signed.txt", "file_size": data.len()})).await;
    r.expect_status(201);
    let url = r.json["upload_url"].as_str().unwrap().to_owned();
    let aid = r.json["attachment_id"].as_str().unwrap().to_owned();
    assert!(url.starts_with(&app.base), "{url}");
    let expires = redline_domain::time_util::parse_iso8601(r.json["expires_at"].as_str().unwrap()).unwrap();
    let ttl = expires - now_ms();
    assert!((890_000..=900_000).contains(&ttl), "15 minutes: {ttl} ms");
    let awaiting = app.send(app.get(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await;
    assert_eq!(
        (&awaiting.json["status"], &awaiting.json["filename"]),
        (&json!("awaiting_upload"), &json!("signed.txt"))
    );

    // A forged or changed URL is unknown; more bytes than declared are refused.
    let last = if url.ends_with('0') { '1' } else { '0' };
    let forged = format!("{}{last}", &url[..url.len() - 1]);
    app.send(app.client.put(forged).body(data.clone())).await.expect_status(404);
    let mut more = data.clone();
    more.push(b'!');
    let over = app.send(app.client.put(&url).body(more.clone())).await;
    over.expect_status(413);
    let detail = over.json["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(&format!("({} bytes) exceeds", more.len())), "{detail}");
    assert!(detail.contains(&format!("({} bytes).", data.len())), "the declared size is the limit: {detail}");

    let put = app.send(app.client.put(&url).header("content-type", "text/plain").body(data.clone())).await;
    put.expect_status(202);
    assert_eq!(put.json["attachment_id"], aid.as_str());
    let done = wait_processed(&app, &key, put.json["job_id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "completed");
    assert!(search(&app, &key, "p1", "zorblax").await[0]["text"].as_str().unwrap().contains("purple kelp"));
    let one = app.send(app.get(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await;
    assert_eq!((&one.json["source"], &one.json["file_size"]), (&json!("presigned"), &json!(data.len())));
    // Used once.
    let again = app.send(app.client.put(&url).body(data.clone())).await;
    again.expect_status(409);
    assert!(again.detail().contains(&format!("attachment {aid}")), "{}", again.detail());
    // The path alone works too (the URL carries no credentials of the client).
    let r = upload_url(&app, &key, json!({"session_id": "p1", "filename": "two.md", "file_size": 5})).await;
    let put = app.send(app.client.put(app.url(path_of(r.json["upload_url"].as_str().unwrap()))).body("hello")).await;
    put.expect_status(202);

    // Validation, 415 and 413 before any URL is made.
    for (body, loc) in [
        (json!({"session_id": "p1", "filename": "a.txt", "file_size": -5}), "file_size"),
        (json!({"session_id": "p1", "filename": "a.txt", "file_size": 0}), "file_size"),
        (json!({"session_id": "p1", "filename": "a.txt", "file_size": "big"}), "file_size"),
        (json!({"session_id": "p1", "file_size": 5}), "filename"),
        (json!({"session_id": "bad id", "filename": "a.txt", "file_size": 5}), "session_id"),
    ] {
        upload_url(&app, &key, body).await.expect_422_at(&[json!("body"), json!(loc)]);
    }
    upload_url(&app, &key, json!({"session_id": "p1", "filename": "a.exe", "file_size": 5})).await.expect_status(415);
    let r = upload_url(&app, &key, json!({"session_id": "p1", "filename": "a.txt", "file_size": 60_000_000})).await;
    r.expect_status(413);
    assert_eq!(r.json["error_code"], "request_too_large");
}

#[tokio::test]
async fn pre_signed_uploads_expire() {
    let app = spawn_app_with(&[("REDLINE_PRESIGN_TTL_SECS", "1")]).await;
    let key = app.agent_key().await;
    let r = upload_url(&app, &key, json!({"session_id": "p1", "filename": "late.txt", "file_size": 5})).await;
    r.expect_status(201);
    let aid = r.json["attachment_id"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(2100)).await;
    app.send(app.client.put(r.json["upload_url"].as_str().unwrap()).body("hello")).await.expect_status(404);
    app.send(app.get(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await.expect_status(404);
    let listing = app.send(app.get("/v1/attachments").bearer_auth(&key).query(&[("session_id", "p1")])).await;
    assert_eq!(listing.json["total"], 0, "an expired upload that never came is not listed");
    assert!(attachment_blobs(&app).is_empty());
}

#[tokio::test]
async fn a_document_upload_with_index_true_is_searchable() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let html = format!("<h1>Harbour notes</h1><p>{PASSAGE}</p>");
    let (ct, body) = multipart(&[("session_id", "d1")], Some(("notes.html", html.as_bytes())));
    let plain =
        app.send(app.post("/v1/documents/upload").bearer_auth(&key).header("content-type", ct).body(body)).await;
    plain.expect_status(200);
    assert_eq!((&plain.json["indexed"], &plain.json["attachment_id"]), (&json!(false), &Value::Null));
    assert!(search(&app, &key, "d1", "zorblax").await.is_empty());

    let (ct, body) = multipart(&[("session_id", "d1")], Some(("notes.html", html.as_bytes())));
    let r = app
        .send(app.post("/v1/documents/upload?index=true").bearer_auth(&key).header("content-type", ct).body(body))
        .await;
    r.expect_status(200);
    assert_eq!(r.json["indexed"], true);
    let aid = r.json["attachment_id"].as_str().unwrap();
    let hits = search(&app, &key, "d1", "zorblax soup").await;
    assert_eq!(hits[0]["attachment_id"], aid);
    assert_eq!(hits[0]["text"], format!("Harbour notes\n{PASSAGE}"));
    let one = app.send(app.get(&format!("/v1/attachments/{aid}")).bearer_auth(&key)).await;
    assert_eq!(
        (&one.json["source"], &one.json["status"], &one.json["job_id"]),
        (&json!("document"), &json!("completed"), &Value::Null)
    );

    // `index` is a boolean like every other flag: its spellings are taken, anything else is a
    // 422 (not a silent false), and nothing is loaded.
    let (ct, body) = multipart(&[("session_id", "d2")], Some(("notes.html", html.as_bytes())));
    let r = app
        .send(app.post("/v1/documents/upload?index=banana").bearer_auth(&key).header("content-type", ct).body(body))
        .await;
    r.expect_422_at(&[json!("query"), json!("index")]);
    app.send(app.get("/v1/documents/d2").bearer_auth(&key)).await.expect_status(404);
    let (ct, body) = multipart(&[("session_id", "d2")], Some(("notes.html", html.as_bytes())));
    let r = app
        .send(app.post("/v1/documents/upload?index=1").bearer_auth(&key).header("content-type", ct).body(body))
        .await;
    assert_eq!(r.expect_status(200).json["indexed"], true);
}

#[tokio::test]
async fn a_job_run_again_after_a_crash_indexes_once() {
    let app = spawn_app_with(&[("REDLINE_JOB_LEASE_SECS", "1")]).await;
    let key = app.agent_key().await;
    let body = attach_processed(&app, &key, "s1", "harbour.txt", &harbour_text()).await;
    let job_id = body["job_id"].as_str().unwrap();
    let before = search(&app, &key, "s1", "zorblax harbour market").await;

    // As if the worker died after indexing, before it could finish the job: in progress with
    // a lease that ran out. The sweeper gives it to a worker again, which indexes again.
    let db = redline_storage::Db::open(&redline_storage::DbConfig::new(format!(
        "sqlite://{}",
        app.data_dir().join("redline.db").display()
    )))
    .await
    .unwrap();
    let update = JobUpdate {
        status: Some(JobStatus::InProgress),
        progress: Some(70),
        lease_until: Some(Some(1)),
        ..Default::default()
    };
    assert!(db.update_job(job_id, &[JobStatus::Completed], &update, now_ms()).await.unwrap().is_some());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let job = db.job(job_id).await.unwrap().unwrap();
        // One interruption counted (a lease that ran out), then a run to the end.
        if job.status == JobStatus::Completed && job.attempts == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "the job was not run again: {job:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = search(&app, &key, "s1", "zorblax harbour market").await;
    let key_of =
        |v: &Vec<Value>| v.iter().map(|p| (p["attachment_id"].clone(), p["chunk_index"].clone())).collect::<Vec<_>>();
    assert_eq!(key_of(&after), key_of(&before), "the same passages, once each");
}

// ---------------------------------------------------------------------------------------------
// The same flow on an S3-compatible store (moto from `.venv`, as the blob store's own tests).

pub(crate) fn moto_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REDLINE_MOTO_SERVER") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/bin/moto_server");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::var_os("PATH")
        .and_then(|paths| std::env::split_paths(&paths).map(|p| p.join("moto_server")).find(|p| p.is_file()))
}

/// A moto server on a free loopback port, stopped (by its pid) on drop.
pub(crate) struct Moto {
    child: Child,
    pub(crate) endpoint: String,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn start_moto(binary: &Path) -> Moto {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(binary)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
    let mut moto = Moto { child, endpoint: format!("http://127.0.0.1:{port}") };
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = moto.child.try_wait() {
            panic!("moto_server exited at start: {status}");
        }
        assert!(Instant::now() < deadline, "moto_server did not listen on {port} within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    moto
}

#[tokio::test]
async fn attachments_on_an_s3_compatible_store() {
    let Some(binary) = moto_binary() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: moto_server is required (pip install 'moto[server]')"
        );
        eprintln!("SKIPPED attachments_on_an_s3_compatible_store: moto_server not found");
        return;
    };
    let moto = start_moto(&binary);
    let created = client().put(format!("{}/redline-att", moto.endpoint)).send().await.unwrap();
    assert!(created.status().is_success(), "create bucket: {}", created.status());
    let app = spawn_app_with(&[
        ("REDLINE_STORAGE_URL", "s3://redline-att/tenant"),
        ("AWS_ENDPOINT_URL", moto.endpoint.as_str()),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_REGION", "us-east-1"),
        ("REDLINE_MAX_ATTACHMENT_BYTES", "20000000"),
    ])
    .await;
    let key = app.agent_key().await;
    // Larger than one multipart part (8 MiB): the upload goes up in parts.
    let mut big = harbour_text();
    big.extend(std::iter::repeat_n(b"\n\nFiller paragraph about nets and boats.".as_slice(), 220_000).flatten());
    assert!(big.len() > 8 * 1024 * 1024 + 100_000);
    let body = attach_processed(&app, &key, "s3", "big.txt", &big).await;
    assert_eq!(body["file_size"], big.len());
    let hits = search(&app, &key, "s3", "zorblax").await;
    assert!(hits[0]["text"].as_str().unwrap().contains("purple kelp"));
    let listed = client()
        .get(format!("{}/redline-att?list-type=2&prefix=tenant/attachments/", moto.endpoint))
        .send()
        .await
        .unwrap();
    let xml = listed.text().await.unwrap();
    assert!(xml.contains(body["attachment_id"].as_str().unwrap()), "{xml}");
    app.send(app.delete(&format!("/v1/attachments/{}", body["attachment_id"].as_str().unwrap())).bearer_auth(&key))
        .await
        .expect_status(204);
    let listed = client()
        .get(format!("{}/redline-att?list-type=2&prefix=tenant/attachments/", moto.endpoint))
        .send()
        .await
        .unwrap();
    let xml = listed.text().await.unwrap();
    assert!(!xml.contains("<Key>"), "the file is gone from the bucket: {xml}");
}

/// The free plan keeps a bounded amount of attachment files (docs/api.md, "Attachments"): an
/// upload past it is refused with 413 and nothing is kept, the usage shows it, a deletion
/// frees it, and an upload URL for too large a file is refused before any byte.
#[tokio::test]
async fn attachment_storage_is_limited_per_plan() {
    let app = spawn_app_with(&[("REDLINE_FREE_ATTACHMENT_STORAGE_BYTES", "2000")]).await;
    let key = app.agent_key().await;
    let storage = |r: &Reply| {
        (r.json["attachment_storage"]["used_bytes"].clone(), r.json["attachment_storage"]["limit_bytes"].clone())
    };
    let usage = app.send(app.get("/v1/usage").bearer_auth(&key)).await;
    assert_eq!(storage(&usage), (json!(0), json!(2000)), "{usage:?}");

    let file = vec![b'a'; 1200];
    let first = attach(&app, &key, "s", "first.txt", &file).await;
    first.expect_status(202);
    let second = attach(&app, &key, "s", "second.txt", &file).await;
    second.expect_status(413).expect_json();
    assert_eq!(second.json["error_code"], "attachment_storage_full", "{second:?}");
    assert_eq!(
        (&second.json["used_bytes"], &second.json["limit_bytes"], &second.json["file_bytes"]),
        (&json!(1200), &json!(2000), &json!(1200))
    );
    assert!(second.detail().starts_with("Attachment storage is full"), "{second:?}");
    let listed = app.send(app.get("/v1/attachments?session_id=s").bearer_auth(&key)).await;
    assert_eq!(
        listed.json["attachments"].as_array().map(Vec::len),
        Some(1),
        "nothing kept of the refused one: {listed:?}"
    );
    let r = upload_url(&app, &key, json!({"session_id": "s", "filename": "big.txt", "file_size": 900})).await;
    r.expect_status(413);
    assert_eq!(r.json["error_code"], "attachment_storage_full");

    let usage = app.send(app.get("/v1/usage").bearer_auth(&key)).await;
    assert_eq!(storage(&usage), (json!(1200), json!(2000)));
    let id = first.json["attachment_id"].as_str().unwrap();
    app.send(app.delete(&format!("/v1/attachments/{id}")).bearer_auth(&key)).await.expect_status(204);
    attach(&app, &key, "s", "second.txt", &file).await.expect_status(202);

    // Another plan has its own limit: an enterprise account has none.
    let user_id = app.agent_signup().await;
    let enterprise_key = user_id["api_key"].as_str().unwrap().to_owned();
    app.admin(&["set-plan", "--user-id", user_id["user_id"].as_str().unwrap(), "--plan", "enterprise"]);
    for n in 0..3 {
        attach(&app, &enterprise_key, "e", &format!("f{n}.txt"), &file).await.expect_status(202);
    }
    let usage = app.send(app.get("/v1/usage").bearer_auth(&enterprise_key)).await;
    assert_eq!(storage(&usage), (json!(3600), json!(-1)));
}

/// A pre-signed upload URL dies with the key that asked for it.
#[tokio::test]
async fn a_pre_signed_upload_url_dies_with_its_key() {
    let app = spawn_app().await;
    let (_, _, token) = app.web_user().await;
    let made = app.create_key(&token, "uploader").await;
    let key = made.json["api_key"].as_str().unwrap().to_owned();
    let data = harbour_text();
    let body = json!({"session_id": "k", "filename": "signed.txt", "file_size": data.len()});
    let doomed = upload_url(&app, &key, body.clone()).await;
    doomed.expect_status(201);
    let kept = upload_url(&app, &key, body).await;
    kept.expect_status(201);
    app.send(app.client.put(kept.json["upload_url"].as_str().unwrap()).body(data.clone())).await.expect_status(202);
    app.revoke_key(&token, made.json["key_id"].as_str().unwrap()).await.expect_status(204);
    let r = app.send(app.client.put(doomed.json["upload_url"].as_str().unwrap()).body(data.clone())).await;
    r.expect_status(404);
    // A URL a web session asked for names no key: it lives its 15 minutes.
    let by_session = app
        .send(
            app.post("/v1/attachments/upload-url")
                .bearer_auth(&token)
                .json(&json!({"session_id": "w", "filename": "w.txt", "file_size": data.len()})),
        )
        .await;
    by_session.expect_status(201);
    app.send(app.client.put(by_session.json["upload_url"].as_str().unwrap()).body(data.clone()))
        .await
        .expect_status(202);
}
