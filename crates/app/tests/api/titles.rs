//! Titles and pictures added by hand (docs/api.md, "Titles", "Pictures added by hand"): a
//! title from the file's own metadata or name, renamed with `PATCH /v1/sessions/{id}`, naming
//! exports; a picture stored as the document's own.

use serde_json::{json, Value};

use crate::files::upload;
use crate::helpers::*;

async fn document(app: &TestApp, key: &str, sid: &str) -> Value {
    let r = app.send(app.get(&format!("/v1/documents/{sid}")).bearer_auth(key)).await;
    r.expect_status(200);
    r.json
}

fn rename(app: &TestApp, key: &str, sid: &str, body: Value) -> reqwest::RequestBuilder {
    app.client.patch(app.url(&format!("/v1/sessions/{sid}"))).bearer_auth(key).json(&body)
}

/// The `Content-Disposition` of an export, and its bytes.
async fn export(app: &TestApp, key: &str, sid: &str, format: &str) -> (String, Vec<u8>) {
    let r = app
        .post("/v1/documents/export")
        .bearer_auth(key)
        .json(&json!({"session_id": sid, "format": format}))
        .send()
        .await
        .expect("the export's answer");
    assert_eq!(r.status().as_u16(), 200);
    let disposition = r.headers().get("content-disposition").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    (disposition, r.bytes().await.expect("the file").to_vec())
}

#[tokio::test]
async fn an_upload_is_named_by_the_files_own_title_else_its_name() {
    let app = spawn_app().await;
    let key = app.agent_key().await;

    // Markdown front matter is metadata: its title names the document, none of it is text.
    let md = b"---\ntitle: \"Q3 plan: draft\"\nauthor: Ann\n---\n\n# Heading\n\nBody.\n";
    let r = upload(&app, &key, "md", "notes.md", md).await;
    r.expect_status(200);
    assert_eq!(r.json["title"], "Q3 plan: draft");
    let html = r.json["html"].as_str().unwrap_or_default();
    assert!(!html.contains("author") && !html.contains("Q3 plan"), "{html}");
    assert_eq!(document(&app, &key, "md").await["title"], "Q3 plan: draft");

    // An HTML page's <title>; a text file's name without its folders and extension.
    let page = b"<html><head><title>Minutes &amp; actions</title></head><body><p>Text.</p></body></html>";
    assert_eq!(upload(&app, &key, "page", "export.html", page).await.json["title"], "Minutes & actions");
    let r = upload(&app, &key, "txt", "C:\\Users\\ann\\Meeting notes.final.txt", b"Some words.").await;
    assert_eq!(r.json["title"], "Meeting notes.final");

    // A DOCX export carries its title in its core properties, which an upload reads back.
    rename(&app, &key, "txt", json!({"title": "Board memo"})).send().await.expect("renamed");
    let (_, docx) = export(&app, &key, "txt", "docx").await;
    let r = upload(&app, &key, "from-docx", "download (3).docx", &docx).await;
    r.expect_status(200);
    assert_eq!(r.json["title"], "Board memo");

    // A document keeps its title when a file replaces it.
    let r = upload(&app, &key, "md", "other.txt", b"New words.").await;
    assert_eq!(r.json["title"], "Q3 plan: draft");
}

#[tokio::test]
async fn a_rename_changes_the_title_alone_and_names_the_exports() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    upload(&app, &key, "r", "report.txt", b"The words.").await.expect_status(200);
    let before = document(&app, &key, "r").await;
    assert_eq!(before["title"], "report");

    let r = app.send(rename(&app, &key, "r", json!({"title": "  Résumé:\n 東京/2027 \u{200b}"}))).await;
    r.expect_status(200);
    assert_eq!(r.json["title"], "Résumé: 東京/2027", "made plain: {r:?}");
    assert_eq!(r.json["session_id"], "r");
    assert_eq!(r.json["version_id"], before["version_id"]);
    assert_eq!(r.json["updated_at"], before["updated_at"], "a rename is not a change of the document");
    let after = document(&app, &key, "r").await;
    assert_eq!((&after["title"], &after["html"]), (&r.json["title"], &before["html"]));
    let listed = app.sessions_with_key(&key).await;
    assert_eq!(listed.json[0]["title"], "Résumé: 東京/2027");

    // Exports are named after it: in full as filename*, as ASCII in filename.
    let (disposition, _) = export(&app, &key, "r", "pdf").await;
    assert_eq!(
        disposition,
        "attachment; filename=\"R_sum__ ___2027.pdf\"; filename*=UTF-8''R%C3%A9sum%C3%A9_%20%E6%9D%B1%E4%BA%AC_2027.pdf"
    );
    // A document with no title is named after its session.
    app.send(app.put("/v1/documents/plain").bearer_auth(&key).json(&json!({"html": "<p>x</p>"})))
        .await
        .expect_status(200);
    assert_eq!(document(&app, &key, "plain").await["title"], Value::Null);
    let (disposition, _) = export(&app, &key, "plain", "txt").await;
    assert_eq!(disposition, "attachment; filename=\"plain.txt\"; filename*=UTF-8''plain.txt");

    // Refusals: blank once made plain, too long, missing; unknown and other owners' sessions.
    for (body, kind) in [
        (json!({"title": " \u{200b}\n"}), "string_too_short"),
        (json!({"title": "x".repeat(201)}), "string_too_long"),
        (json!({}), "missing"),
        (json!({"title": 7}), "string_type"),
    ] {
        let r = app.send(rename(&app, &key, "r", body.clone())).await;
        r.expect_status(422);
        assert_eq!(r.json["detail"][0]["loc"], json!(["body", "title"]), "{body}: {r:?}");
        assert_eq!(r.json["detail"][0]["type"], kind, "{body}: {r:?}");
    }
    app.send(rename(&app, &key, "nothing-here", json!({"title": "x"}))).await.expect_status(404).expect_json();
    let other = app.agent_key().await;
    app.send(rename(&app, &other, "r", json!({"title": "Mine now"}))).await.expect_status(404);
    assert_eq!(document(&app, &key, "r").await["title"], "Résumé: 東京/2027");
    // A save does not take the title over.
    app.send(app.put("/v1/documents/r").bearer_auth(&key).json(&json!({"html": "<h1>Heading</h1>", "title": "Other"})))
        .await
        .expect_status(200);
    assert_eq!(document(&app, &key, "r").await["title"], "Résumé: 東京/2027");
}

/// The bytes of a PNG header and more: what is stored is served back unchanged.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";

#[tokio::test]
async fn a_picture_added_by_hand_is_stored_as_the_documents_own() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    upload(&app, &key, "pics", "pics.txt", b"Words.").await.expect_status(200);
    let add = |key: &str, sid: &str, bytes: Vec<u8>| {
        app.post(&format!("/v1/documents/{sid}/images"))
            .bearer_auth(key)
            .header("content-type", "image/png")
            .body(bytes)
    };

    let r = app.send(add(&key, "pics", PNG.to_vec())).await;
    r.expect_status(201);
    assert_eq!(r.json["content_type"], "image/png");
    assert_eq!(r.json["size_bytes"], PNG.len());
    let url = r.json["url"].as_str().unwrap_or_default().to_owned();
    assert_eq!(url, app.url(&format!("/v1/documents/images/{}", r.json["image_id"].as_str().unwrap_or_default())));
    let served = app.client.get(&url).send().await.expect("the picture");
    assert_eq!(served.status().as_u16(), 200);
    assert_eq!(served.bytes().await.expect("bytes").as_ref(), PNG);
    // Saved HTML that names it keeps it.
    let html = format!("<p>See <img src=\"{url}\" alt=\"chart\"></p>");
    let saved = app.send(app.put("/v1/documents/pics").bearer_auth(&key).json(&json!({"html": html}))).await;
    saved.expect_status(200);
    assert!(saved.json["html"].as_str().unwrap_or_default().contains(&url), "{saved:?}");

    // Refusals, each with the contract's body; nothing is stored for them.
    let r = app.send(add(&key, "pics", b"<svg onload=alert(1)>".to_vec())).await;
    r.expect_status(415);
    assert_eq!(
        r.json["detail"],
        "The file is not a picture browsers show: send a PNG, JPEG, GIF, BMP or WebP picture."
    );
    let mut big = PNG.to_vec();
    big.resize((10 << 20) + 1, 0);
    let r = app.send(add(&key, "pics", big)).await;
    r.expect_status(413);
    assert_eq!((&r.json["error_code"], &r.json["max_size_mb"]), (&json!("request_too_large"), &json!(10.0)), "{r:?}");
    let r = app.send(add(&key, "pics", Vec::new())).await;
    r.expect_status(422);
    assert_eq!(r.json["detail"][0]["loc"], json!(["body"]));
    app.send(add(&key, "nothing-here", PNG.to_vec())).await.expect_status(404).expect_json();
    let other = app.agent_key().await;
    app.send(add(&other, "pics", PNG.to_vec())).await.expect_status(404);
    app.send(add(&key, "bad id", PNG.to_vec())).await.expect_status(422);
}
