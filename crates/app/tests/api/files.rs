//! Images extracted from uploads (docs/api.md, "Documents"): kept in the blob store, served without
//! Authorization at an unguessable URL, deleted with their session. Also the helpers the
//! export tests share: documents made by a save, uploads as multipart bodies, the outbox.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::*;

/// A DOCX with one embedded picture, from the shared corpus.
pub fn docx_with_image() -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus/docx/pandoc-image.docx");
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `POST /v1/documents/upload` with a hand-made multipart body.
pub async fn upload(app: &TestApp, key: &str, session_id: &str, filename: &str, bytes: &[u8]) -> Reply {
    upload_with(app, key, &[("session_id", session_id)], filename, bytes).await
}

/// [`upload`] with form fields of the caller's choice before the file.
pub async fn upload_with(app: &TestApp, key: &str, fields: &[(&str, &str)], filename: &str, bytes: &[u8]) -> Reply {
    let boundary = format!("redline-{}", random_hex());
    let mut body = Vec::new();
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let req = app
        .post("/v1/documents/upload")
        .bearer_auth(key)
        .header("content-type", format!("multipart/form-data; boundary={boundary}"))
        .body(body);
    app.send(req).await
}

/// Saves `html` as the session's document.
pub async fn save(app: &TestApp, key: &str, session_id: &str, html: &str) -> Reply {
    let req =
        app.client.put(app.url(&format!("/v1/documents/{session_id}"))).bearer_auth(key).json(&json!({"html": html}));
    let r = app.send(req).await;
    r.expect_status(200);
    r
}

/// The `src` of every `<img>` in `html`.
pub fn image_srcs(html: &str) -> Vec<String> {
    html.split("<img")
        .skip(1)
        .filter_map(|tag| {
            let at = tag.find("src=\"")? + 5;
            let end = tag[at..].find('"')?;
            Some(tag[at..at + end].replace("&amp;", "&"))
        })
        .collect()
}

/// The files under `dir` (recursively).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                out.extend(files_under(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// Whether a mail is one of the account's own (the verification link mailed at sign-up), not
/// one a test waits for.
pub fn account_mail(text: &str) -> bool {
    text.contains("Subject: Verify your e-mail address for Redline")
}

/// Waits for an `.eml` to `to` in the app's outbox, other than the account's own mails, and
/// returns its text.
pub async fn wait_for_mail(app: &TestApp, to: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        for path in files_under(&app.data_dir().join("outbox")) {
            if path.extension().is_some_and(|e| e == "eml") {
                let text = std::fs::read_to_string(&path).unwrap();
                if text.contains(&format!("To: {to}")) && !account_mail(&text) {
                    return text;
                }
            }
        }
        assert!(Instant::now() < deadline, "no mail to {to} within 60 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The path of the first download link in a mail's text (quoted-printable soft breaks
/// undone).
pub fn download_path(mail: &str) -> String {
    let text = mail.replace("=\r\n", "").replace("=\n", "");
    let at = text.find("/v1/documents/export/download/").unwrap_or_else(|| panic!("no download link in {mail}"));
    let end = text[at..].find(|c: char| c.is_whitespace() || c == '"' || c == '<').map_or(text.len(), |e| at + e);
    text[at..end].to_owned()
}

async fn uploaded_with_image(app: &TestApp, key: &str, session_id: &str) -> (Value, String) {
    let r = upload(app, key, session_id, "picture.docx", &docx_with_image()).await;
    r.expect_status(200);
    let images = r.json["images"].as_array().unwrap_or_else(|| panic!("images: {r:?}"));
    assert!(!images.is_empty(), "the picture is extracted: {r:?}");
    let html = r.json["html"].as_str().unwrap();
    assert!(!html.contains("data:image"), "images are not inlined any more: {html}");
    let srcs: Vec<String> = image_srcs(html).into_iter().filter(|s| s.contains("/v1/documents/images/")).collect();
    assert_eq!(srcs.len(), images.len(), "{html}");
    assert!(srcs[0].starts_with(&format!("{}/v1/documents/images/img_", app.base)), "absolute URLs: {srcs:?}");
    (images[0].clone(), srcs[0].clone())
}

#[tokio::test]
async fn images_are_served_without_authorization() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (image, url) = uploaded_with_image(&app, &key, "pics").await;
    let id = last_segment(&url).to_owned();
    assert_eq!(id.len(), 4 + 32, "128 random bits: {id}");

    let r = app.client.get(&url).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let content_type = r.headers()["content-type"].to_str().unwrap().to_owned();
    assert_eq!(content_type, image["content_type"].as_str().unwrap());
    let cache = r.headers()["cache-control"].to_str().unwrap().to_owned();
    assert!(cache.contains("max-age=31536000"), "{cache}");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    let bytes = r.bytes().await.unwrap();
    assert_eq!(bytes.len() as u64, image["size_bytes"].as_u64().unwrap());

    // With a key it is the same image; unknown or malformed ids are 404 JSON.
    app.send(app.get(&format!("/v1/documents/images/{id}")).bearer_auth(&key)).await.expect_status(200);
    for unknown in
        [format!("img_{}", "0".repeat(32)), "img_nothex".to_owned(), "..%2Fsecret".to_owned(), "x".to_owned()]
    {
        let r = app.send(app.get(&format!("/v1/documents/images/{unknown}"))).await;
        r.expect_status(404).expect_json();
        assert!(!r.detail().is_empty());
    }
    // The blob is where the default store keeps it.
    assert!(app.data_dir().join("blobs/images").join(&id).is_file());
}

#[tokio::test]
async fn deleting_the_session_deletes_its_images_and_exports() {
    let app = spawn_app().await;
    let (key, to) = app.mailing_key().await;
    let (_, url) = uploaded_with_image(&app, &key, "doomed").await;
    let (_, other_url) = uploaded_with_image(&app, &key, "kept").await;
    let r = app
        .send(app.post("/v1/documents/export/email-request").bearer_auth(&key).json(&json!({
            "session_id": "doomed", "format": "html", "email": to
        })))
        .await;
    r.expect_status(202);
    let link = download_path(&wait_for_mail(&app, &to).await);
    app.send(app.get(&link)).await.expect_status(200);
    assert_eq!(files_under(&app.data_dir().join("blobs/exports")).len(), 1);

    app.send(app.delete("/v1/sessions/doomed").bearer_auth(&key)).await.expect_status(204);
    app.send(app.get(last_path(&url))).await.expect_status(404);
    app.send(app.get(&link)).await.expect_status(404);
    let left = files_under(&app.data_dir().join("blobs"));
    assert_eq!(left.len(), 1, "only the other session's image is left: {left:?}");
    assert!(left[0].ends_with(last_segment(&other_url)));
    app.send(app.get(last_path(&other_url))).await.expect_status(200);
    app.send(app.delete("/v1/sessions/doomed").bearer_auth(&key)).await.expect_status(404);
}

#[tokio::test]
async fn a_refused_upload_stores_no_image() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let mut broken = docx_with_image();
    broken.truncate(broken.len() / 2);
    upload(&app, &key, "broken", "broken.docx", &broken).await.expect_status(422);
    assert!(files_under(&app.data_dir().join("blobs")).is_empty());
    app.send(app.get("/v1/documents/broken").bearer_auth(&key)).await.expect_status(404);
}

/// The path (and query) of an absolute URL.
fn last_path(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..].find('/').map_or("/", |i| &url[after_scheme + i..])
}

/// An editor copy sent with a chat turn is held to the same limit, before the turn is admitted:
/// 422, no session made, nothing charged (it was a 502 for a session left behind).
#[tokio::test]
async fn a_chat_turns_editor_copy_of_more_than_100_000_sections_is_refused() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let html = "<p>a</p>".repeat(100_001);
    for path in ["/v1/chat", "/v1/chat/async"] {
        let r = app
            .send(
                app.post(path)
                    .bearer_auth(&key)
                    .json(&json!({"session_id": "editor", "message": "what?", "document_html": html})),
            )
            .await;
        r.expect_status(422).expect_json();
        assert_eq!(r.json["detail"][0]["type"], "too_many_sections", "{path}: {r:?}");
        assert_eq!(r.json["detail"][0]["loc"], json!(["body"]), "{path}: {r:?}");
    }
    let sessions = app.send(app.get("/v1/sessions").bearer_auth(&key)).await;
    assert_eq!(sessions.json, json!([]), "no session is made");
    let jobs = app.send(app.get("/v1/jobs").bearer_auth(&key)).await;
    assert_eq!(jobs.json["total"], 0);
    let usage = app.send(app.get("/v1/usage").bearer_auth(&key)).await;
    assert_eq!(usage.json["monthly_used"], 0, "{usage:?}");
    // At the limit the copy is taken.
    let r = app
        .send(
            app.post("/v1/chat").bearer_auth(&key).json(
                &json!({"session_id": "editor", "message": "what?", "document_html": "<p>a</p>".repeat(100_000)}),
            ),
        )
        .await;
    r.expect_status(200);
    let doc = app.send(app.get("/v1/documents/editor").bearer_auth(&key)).await;
    assert_eq!(doc.json["section_count"], 100_000);
}

/// A document has at most 100,000 sections (`MAX_SECTIONS`): an upload or a save of more is
/// refused with 422 and leaves nothing behind; at the limit it is taken, and exported.
#[tokio::test]
async fn a_document_of_more_than_100_000_sections_is_refused() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let too_many = b"x\n\n".repeat(100_001);
    let r = upload(&app, &key, "many", "many.txt", &too_many).await;
    r.expect_status(422).expect_json();
    assert_eq!(r.json["detail"][0]["type"], "too_many_sections", "{r:?}");
    assert!(r.json["detail"][0]["msg"].as_str().unwrap_or_default().contains("more than 100000 sections"), "{r:?}");
    app.send(app.get("/v1/documents/many").bearer_auth(&key)).await.expect_status(404);

    let save =
        |html: String| app.client.put(app.url("/v1/documents/many")).bearer_auth(&key).json(&json!({"html": html}));
    let r = app.send(save("<p>x</p>".repeat(100_001))).await;
    r.expect_status(422);
    assert_eq!(r.json["detail"][0]["type"], "too_many_sections", "{r:?}");
    app.send(save("<p>x</p>".repeat(100_000))).await.expect_status(200);
    let doc = app.send(app.get("/v1/documents/many").bearer_auth(&key)).await;
    assert_eq!(doc.json["section_count"], 100_000, "{}", doc.json["section_count"]);

    // Appending past the limit is refused too; the document stays as it was.
    let boundary = format!("redline-{}", random_hex());
    let mut body = Vec::new();
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"session_id\"\r\n\r\nmany\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"open_mode\"\r\n\r\nappend\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"one.txt\"\r\n\r\none more\r\n--{boundary}--\r\n"
        )
        .as_bytes(),
    );
    let r = app
        .send(
            app.post("/v1/documents/upload")
                .bearer_auth(&key)
                .header("content-type", format!("multipart/form-data; boundary={boundary}"))
                .body(body),
        )
        .await;
    r.expect_status(422);
    assert_eq!(r.json["detail"][0]["type"], "too_many_sections", "{r:?}");
    let after = app.send(app.get("/v1/documents/many").bearer_auth(&key)).await;
    assert_eq!(after.json["version_id"], doc.json["version_id"]);

    let export = app
        .send(app.post("/v1/documents/export").bearer_auth(&key).json(&json!({"session_id": "many", "format": "txt"})))
        .await;
    export.expect_status(200);

    // The AI cannot add a section past the limit either (its tool says why), but may edit.
    let chat =
        |message: &str| app.post("/v1/chat").bearer_auth(&key).json(&json!({"session_id": "many", "message": message}));
    let r = app.send(chat("append a section: one more")).await;
    r.expect_status(200);
    assert!(r.json["response"].as_str().unwrap_or_default().contains("more than 100000 sections"), "{r:?}");
    let html = doc.json["html"].as_str().unwrap_or_default().to_owned();
    let middle = html.split("data-chunk-id=\"").nth(50_000).and_then(|s| s.split('"').next()).unwrap_or_default();
    let r = app.send(chat(&format!("rewrite {middle}: <p>the middle one</p>"))).await;
    r.expect_status(200);
    let doc = app.send(app.get("/v1/documents/many").bearer_auth(&key)).await;
    assert_eq!(doc.json["section_count"], 100_000);
    assert!(doc.json["html"].as_str().unwrap_or_default().contains("the middle one</p>"), "{}", r.json);
}

/// Appends sent at the same moment each land: none is built on a version another replaced
/// (they used to read, append and write over each other, and 200s lost their text).
#[tokio::test]
async fn appends_at_the_same_moment_all_land() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    save(&app, &key, "many-appends", "<p>start</p>").await;
    let fields = [("session_id", "many-appends"), ("open_mode", "append")];
    let texts: Vec<String> = (0..6).map(|i| format!("paragraph number {i}")).collect();
    let names: Vec<String> = (0..6).map(|i| format!("f{i}.txt")).collect();
    let answers = futures_util::future::join_all(
        texts.iter().zip(&names).map(|(t, name)| upload_with(&app, &key, &fields, name, t.as_bytes())),
    )
    .await;
    for r in &answers {
        r.expect_status(200);
    }
    let doc = app.send(app.get("/v1/documents/many-appends").bearer_auth(&key)).await;
    let html = doc.json["html"].as_str().unwrap_or_default();
    for t in &texts {
        assert!(html.contains(t.as_str()), "{t} was lost: {html}");
    }
    assert_eq!(doc.json["section_count"], 7, "{html}");
    let versions = app.send(app.get("/v1/documents/many-appends/versions").bearer_auth(&key)).await;
    let mut counts: Vec<i64> = versions.json["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["section_count"].as_i64())
        .collect();
    counts.sort_unstable();
    assert_eq!(counts, [1, 2, 3, 4, 5, 6, 7], "each append is built on the one before: {}", versions.text);
}

/// A save with no content never empties a document whose content it did not see: sent at the
/// same moment as a save with content onto an empty document, either it lands first (and the
/// content after it) or it is refused with 400. It used to check the document it read, then
/// commit without a condition, so the content saved in between could be wiped.
#[tokio::test]
async fn an_empty_save_never_wipes_content_saved_at_the_same_moment() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    for round in 0..20 {
        let sid = format!("race-{round}");
        save(&app, &key, &sid, "").await;
        let put = |html: &'static str| {
            app.send(
                app.client.put(app.url(&format!("/v1/documents/{sid}"))).bearer_auth(&key).json(&json!({"html": html})),
            )
        };
        let (full, empty) = futures_util::join!(put("<p>kept text</p>"), put("   "));
        full.expect_status(200);
        assert!(matches!(empty.status.as_u16(), 200 | 400), "{} {}", empty.status, empty.text);
        let doc = app.send(app.get(&format!("/v1/documents/{sid}")).bearer_auth(&key)).await;
        assert!(doc.json["html"].as_str().unwrap_or_default().contains("kept text"), "round {round}: {}", doc.text);
    }
}

/// An append of HTML carrying ids the document uses (its own HTML export) gets fresh ids for
/// those sections (it was a 500).
#[tokio::test]
async fn an_append_whose_ids_the_document_uses_gets_fresh_ones() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    save(&app, &key, "ids", r#"<h1 data-chunk-id="keep">Title</h1><p data-chunk-id="body">Body</p>"#).await;
    let fields = [("session_id", "ids"), ("open_mode", "append")];
    let html = br#"<p data-chunk-id="keep">again</p><p data-chunk-id="keep">twice</p><p data-chunk-id="new">new</p>"#;
    upload_with(&app, &key, &fields, "export.html", html).await.expect_status(200);
    let doc = app.send(app.get("/v1/documents/ids").bearer_auth(&key)).await;
    let html = doc.json["html"].as_str().unwrap_or_default();
    let ids: Vec<&str> = html.split("data-chunk-id=\"").skip(1).filter_map(|s| s.split('"').next()).collect();
    assert_eq!(ids.len(), 5, "{html}");
    assert_eq!(&ids[..2], ["keep", "body"], "the document's own sections keep their ids: {html}");
    assert_eq!(ids[4], "new", "an id nobody uses is kept: {html}");
    let unique: std::collections::HashSet<&&str> = ids.iter().collect();
    assert_eq!(unique.len(), 5, "ids are unique: {html}");
    for text in ["Title", "Body", "again", "twice", "new"] {
        assert!(html.contains(&format!(">{text}<")), "{text} in {html}");
    }
}

/// Bytes that are no text under a text extension (a zip or a PDF named `.md`) → 422, as for
/// `.txt` and `.html`.
#[tokio::test]
async fn binary_bytes_under_a_text_extension_are_refused() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    for name in ["x.md", "x.txt", "x.html"] {
        let r = upload(&app, &key, "binary", name, &docx_with_image()).await;
        r.expect_status(422).expect_json();
        assert!(r.text.contains("binary data"), "{name}: {r:?}");
    }
    app.send(app.get("/v1/documents/binary").bearer_auth(&key)).await.expect_status(404);
}

/// The upload's file name is data: folders, control and invisible characters are dropped and
/// it is cut to 255 characters before it is echoed or makes the session's title; too-deep
/// nesting from a file is a problem of the file (422 at `["body", "file"]`).
#[tokio::test]
async fn an_uploads_file_name_is_neutralised_and_its_problems_are_the_files() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = upload(&app, &key, "names", "../../etc/pass\u{202e}wd.txt", b"some text").await;
    r.expect_status(200);
    assert_eq!(r.json["filename"], "passwd.txt", "{r:?}");
    let long = format!("{}.md", "n".repeat(400));
    let r = upload(&app, &key, "names", &long, b"# Heading").await;
    r.expect_status(200);
    let echoed = r.json["filename"].as_str().unwrap_or_default();
    assert!(echoed.ends_with(".md") && echoed.chars().count() == 255, "{echoed}");

    let deep = format!("{}x{}", "<div>".repeat(2_000), "</div>".repeat(2_000));
    let r = upload(&app, &key, "deep", "deep.html", deep.as_bytes()).await;
    let item = r.expect_422_at(&[json!("body"), json!("file")]);
    assert!(item["msg"].as_str().unwrap_or_default().contains("nested too deeply"), "{item}");
    app.send(app.get("/v1/documents/deep").bearer_auth(&key)).await.expect_status(404);

    // A field given twice is not guessed at: 422 at it, nothing loaded.
    let fields = [("session_id", "twice-a"), ("open_mode", "replace"), ("session_id", "twice-b")];
    let r = upload_with(&app, &key, &fields, "a.md", b"# Heading").await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("session_id")])["type"], "multipart_duplicate_field");
    for sid in ["twice-a", "twice-b"] {
        app.send(app.get(&format!("/v1/documents/{sid}")).bearer_auth(&key)).await.expect_status(404);
    }
}

/// Footnotes of an upload become DPUB-ARIA notes, their ids under `user-content-`, the notes
/// one section at the end; saving the document back leaves the ids as they are
/// (docs/api.md, "Documents").
#[tokio::test]
async fn uploaded_footnotes_are_notes_whose_ids_survive_a_save() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r =
        upload(&app, &key, "notes", "notes.md", b"# Top\n\nA claim.[^src] [Up](#top)\n\n[^src]: The source.\n").await;
    r.expect_status(200);
    let html = r.json["html"].as_str().unwrap_or_default().to_string();
    assert_eq!(r.json["section_count"], 3, "{html}");
    assert!(html.contains("href=\"#user-content-fn1\""), "{html}");
    assert!(html.contains("id=\"user-content-fnref1\""), "{html}");
    assert!(html.contains("href=\"#user-content-top\""), "{html}");
    let last = html.trim_end().rsplit("<div data-chunk-id=").next().unwrap_or_default();
    assert!(last.contains("role=\"doc-endnotes\"") && last.contains("<li id=\"user-content-fn1\">"), "{html}");
    let saved = save(&app, &key, "notes", &html).await;
    saved.expect_status(200);
    assert_eq!(saved.json["html"].as_str().unwrap_or_default(), html);
    assert!(!html.contains("user-content-user-content"), "{html}");
}
