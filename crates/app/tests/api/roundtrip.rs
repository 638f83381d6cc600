//! The Word round trip (docs/api.md, "The Word round trip"): the tracked export of a turn
//! awaiting approval, reviewed in LibreOffice (some revisions accepted, some rejected, some
//! changed, some left, one of the reviewer's own added) and uploaded back into the session,
//! settles the turn as the reviewer decided, and what the file still changes awaits review.

use serde_json::{json, Value};

use crate::chat::{seed, start, wait_for};
use crate::files::upload_with;
use crate::helpers::*;

async fn html(app: &TestApp, key: &str, sid: &str) -> String {
    let r = app.send(app.get(&format!("/v1/documents/{sid}")).bearer_auth(key)).await;
    r.expect_status(200);
    r.json["html"].as_str().unwrap_or_default().to_owned()
}

/// A turn of `sid` awaiting approval of `message` on `paragraphs`, and its tracked export.
async fn exported_proposal(
    app: &TestApp,
    key: &str,
    sid: &str,
    paragraphs: &[&str],
    message: &str,
) -> (String, Vec<u8>) {
    seed(app, key, sid, paragraphs).await;
    let job = start(app, key, json!({"session_id": sid, "message": message, "require_approval": true})).await;
    let id = job["job_id"].as_str().unwrap_or_default().to_owned();
    wait_for(app, key, &id, &["awaiting_approval"]).await;
    let body = json!({"session_id": sid, "format": "docx", "track_changes": true});
    let resp = app.post("/v1/documents/export").bearer_auth(key).json(&body).send().await.expect("export");
    assert_eq!(resp.status().as_u16(), 200);
    (id, resp.bytes().await.expect("body").to_vec())
}

/// A reviewer's pass over `docx` in LibreOffice (scripts/lo-revisions.py `decide`): the file
/// they save, or `None` (and a skip, outside CI) when LibreOffice is missing.
fn libreoffice_decides(docx: &[u8], decisions: &[&str]) -> Option<Vec<u8>> {
    let dir = tempfile::tempdir().expect("temp dir");
    let (input, output) = (dir.path().join("in.docx"), dir.path().join("out.docx"));
    std::fs::write(&input, docx).expect("write");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/lo-revisions.py");
    let out = std::process::Command::new("/usr/bin/python3")
        .arg(script)
        .arg("decide")
        .arg(&input)
        .arg(&output)
        .args(decisions)
        .output();
    match out {
        Ok(out) if out.status.success() => Some(std::fs::read(&output).expect("the script's file")),
        Ok(out) if !String::from_utf8_lossy(&out.stderr).contains("No module named 'uno'") => {
            panic!("the script failed: {}", String::from_utf8_lossy(&out.stderr))
        }
        _ => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "LibreOffice is missing: run scripts/setup-tests.sh");
            eprintln!("\n!! SKIPPED: LibreOffice and python3-uno are not installed (scripts/setup-tests.sh)\n");
            None
        }
    }
}

fn changes(job: &Value) -> Vec<Value> {
    job["result"]["document_changes"]["changes"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_tracked_export_reviewed_in_libreoffice_settles_its_turn_when_it_comes_back() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let paragraphs = ["alpha one", "alpha two", "alpha three", "alpha four", "kept five"];
    let (job_id, docx) = exported_proposal(&app, &key, "trip", &paragraphs, "replace \"alpha\" with \"omega\"").await;
    let waiting = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    let proposed = waiting.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    assert_eq!(proposed.len(), 4, "{proposed:?}");
    let why_four = proposed[3]["ai_explanation"].clone();
    // The reviewer, in LibreOffice: accepts the change of "one", rejects that of "two", takes
    // the new word of "three" but keeps the old one too, leaves "four" alone, and types a
    // paragraph of their own with changes tracked.
    let decisions = ["one=accept", "two=reject", "three=mixed", "+Added by the reviewer."];
    let Some(reviewed) = libreoffice_decides(&docx, &decisions) else { return };
    let fields = [("session_id", "trip"), ("track_changes", "review")];
    let r = upload_with(&app, &key, &fields, "reviewed.docx", &reviewed).await;
    r.expect_status(200);
    assert_eq!(r.json["settled_job_id"], job_id.as_str(), "the file names its turn: {:?}", r.json);
    let warnings = r.json["warnings"].to_string();
    assert!(warnings.contains(&format!("tracked export of job {job_id}")), "{warnings}");
    // The turn is settled as the reviewer decided.
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "completed", "{:?}", job.json);
    let response = job.json["result"]["response"].as_str().unwrap_or_default();
    assert!(
        response.contains(
            "Settled by the reviewed file reviewed.docx: 2 accepted (1 with the reviewer's corrections), 1 rejected, 1 left undecided."
        ),
        "{response}"
    );
    let applied = changes(&job.json);
    assert_eq!(applied.len(), 2, "{applied:?}");
    assert_eq!(applied[0]["change_id"], proposed[0]["change_id"]);
    assert!(applied[0].get("edited_by_reviewer").is_none(), "{applied:?}");
    assert_eq!(applied[1]["change_id"], proposed[2]["change_id"]);
    assert_eq!(applied[1]["edited_by_reviewer"], true, "{applied:?}");
    let now = html(&app, &key, "trip").await;
    assert!(now.contains("omega one") && now.contains("alpha two") && now.contains("alpha four"), "{now}");
    let three = now.split("</p>").find(|p| p.contains("three")).unwrap_or_default();
    assert!(three.contains("alpha") && three.contains("omega"), "the reviewer's words: {three}");
    assert!(!now.contains("Added by the reviewer"), "the reviewer's own change awaits review: {now}");
    // What the file still changes awaits review: the proposal left undecided, with its
    // explanation, and the reviewer's paragraph.
    let next = r.json["review_job_id"].as_str().unwrap_or_default().to_owned();
    let next_job = app.send(app.get(&format!("/v1/jobs/{next}")).bearer_auth(&key)).await;
    assert_eq!(next_job.json["status"], "awaiting_approval");
    let rest = next_job.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(rest[0]["ai_explanation"], why_four, "{rest:?}");
    assert_eq!(rest[1]["operation"], "create");
    assert!(rest[1]["new_html"].as_str().unwrap_or_default().contains("Added by the reviewer."), "{rest:?}");
    let r = app
        .send(app.post("/v1/chat/trip/approve").bearer_auth(&key).json(&json!({"job_id": next, "approve_all": true})))
        .await;
    r.expect_status(200);
    let now = html(&app, &key, "trip").await;
    assert!(now.contains("omega four") && now.contains("Added by the reviewer."), "{now}");
    // The history says what the file did.
    let history = app.send(app.get("/v1/sessions/trip/history").bearer_auth(&key)).await;
    assert!(history.json.to_string().contains("Settled by the reviewed file reviewed.docx"), "{:?}", history.json);
}

#[tokio::test]
async fn a_tracked_export_sent_back_undecided_settles_as_the_upload_asks() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let paragraphs = ["alpha one", "beta two", "alpha three"];
    let ask = "replace \"alpha\" with \"omega\"";
    // Taken as it is: every proposal approved, no other turn.
    let (job_id, docx) = exported_proposal(&app, &key, "take", &paragraphs, ask).await;
    let r = upload_with(&app, &key, &[("session_id", "take"), ("track_changes", "accept")], "t.docx", &docx).await;
    r.expect_status(200);
    assert_eq!(r.json["settled_job_id"], job_id.as_str());
    assert!(r.json.get("review_job_id").is_none(), "{:?}", r.json);
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(changes(&job.json).len(), 2);
    let now = html(&app, &key, "take").await;
    assert!(now.contains("omega one") && now.contains("beta two") && now.contains("omega three"), "{now}");
    // Rejected as it is: none approved, the document unchanged.
    let (job_id, docx) = exported_proposal(&app, &key, "drop", &paragraphs, ask).await;
    let before = html(&app, &key, "drop").await;
    let r = upload_with(&app, &key, &[("session_id", "drop"), ("track_changes", "reject")], "d.docx", &docx).await;
    r.expect_status(200);
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "completed");
    assert!(changes(&job.json).is_empty(), "{:?}", job.json);
    assert_eq!(html(&app, &key, "drop").await, before);
    // Sent back undecided, without saying what to do with its tracked changes: they are
    // reviewed, never approved by default. The turn is settled with nothing decided, and its
    // proposals, explanations and all, await review again.
    let (job_id, docx) = exported_proposal(&app, &key, "again", &paragraphs, ask).await;
    let old = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    let why: Vec<Value> = old.json["metadata"]["pending_changes"]
        .as_array()
        .map(|p| p.iter().map(|c| c["ai_explanation"].clone()).collect())
        .unwrap_or_default();
    let r = upload_with(&app, &key, &[("session_id", "again")], "a.docx", &docx).await;
    r.expect_status(200);
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    let response = job.json["result"]["response"].as_str().unwrap_or_default();
    assert!(response.contains("0 accepted, 0 rejected, 2 left undecided."), "{response}");
    let next = r.json["review_job_id"].as_str().unwrap_or_default();
    let next = app.send(app.get(&format!("/v1/jobs/{next}")).bearer_auth(&key)).await;
    let rest: Vec<Value> = next.json["metadata"]["pending_changes"]
        .as_array()
        .map(|p| p.iter().map(|c| c["ai_explanation"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(rest, why);
    // Taken whole after the document changed since the proposal: 409, nothing settled (the
    // file would undo the edit).
    let (job_id, docx) = exported_proposal(&app, &key, "moved", &paragraphs, ask).await;
    let doc = app.send(app.get("/v1/documents/moved").bearer_auth(&key)).await;
    let html_now = doc.json["html"].as_str().unwrap_or_default().replace("beta two", "beta two, edited");
    let saved = app.send(app.put("/v1/documents/moved").bearer_auth(&key).json(&json!({"html": html_now}))).await;
    saved.expect_status(200);
    let r = upload_with(&app, &key, &[("session_id", "moved"), ("track_changes", "accept")], "m.docx", &docx).await;
    r.expect_status(409);
    assert!(r.json["detail"].as_str().unwrap_or_default().contains("track_changes=review"), "{:?}", r.json);
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "awaiting_approval");
    assert!(html(&app, &key, "moved").await.contains("beta two, edited"));
}

/// A DOCX whose body is `body` (WordprocessingML paragraphs).
fn docx_of(body: &str) -> Vec<u8> {
    docx_with(body, None)
}

/// [`docx_of`] with a PNG picture as relationship `rIdPic` (`word/media/pic.png`).
fn docx_with(body: &str, picture: Option<&[u8]>) -> Vec<u8> {
    use std::io::Write;
    let w = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" \
             xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" \
             xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" \
             xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" \
             xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"";
    let mut parts: Vec<(&str, Vec<u8>)> = vec![
        ("[Content_Types].xml", br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#.to_vec()),
        ("_rels/.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#.to_vec()),
        ("word/document.xml", format!("<?xml version=\"1.0\"?><w:document {w}><w:body>{body}</w:body></w:document>").into_bytes()),
    ];
    if let Some(png) = picture {
        parts.push(("word/_rels/document.xml.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdPic" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/pic.png"/></Relationships>"#.to_vec()));
        parts.push(("word/media/pic.png", png.to_vec()));
    }
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, bytes) in parts {
        zip.start_file(name, zip::write::SimpleFileOptions::default()).expect("zip entry");
        zip.write_all(&bytes).expect("zip write");
    }
    zip.finish().expect("zip").into_inner()
}

/// The pictures kept in the blob store.
fn stored_pictures(app: &TestApp) -> usize {
    crate::files::files_under(&app.data_dir().join("blobs").join("images")).len()
}

#[tokio::test]
async fn only_the_pictures_of_the_reading_taken_are_kept() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    // A reviewer's tracked insertion of a picture.
    let png: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";
    let drawing = r#"<w:drawing><wp:inline><wp:extent cx="95250" cy="95250"/><wp:docPr id="1" name="dot"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:blipFill><a:blip r:embed="rIdPic"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>"#;
    let body = format!(
        r#"<w:p><w:r><w:t>omega one</w:t></w:r></w:p><w:p><w:ins w:id="1" w:author="R"><w:r>{drawing}</w:r></w:ins></w:p>"#
    );
    let docx = docx_with(&body, Some(png));
    for (sid, choice, kept) in [("drop", "reject", 0), ("take", "accept", 1)] {
        let (job_id, _) = exported_proposal(&app, &key, sid, &["alpha one"], "replace \"alpha\" with \"omega\"").await;
        let before = stored_pictures(&app);
        let fields = [("session_id", sid), ("job_id", job_id.as_str()), ("track_changes", choice)];
        let r = upload_with(&app, &key, &fields, "p.docx", &docx).await;
        r.expect_status(200);
        assert_eq!(stored_pictures(&app) - before, kept, "{choice}: {:?}", r.json);
        assert_eq!(html(&app, &key, sid).await.contains("<img"), kept == 1, "{choice}");
    }
}

#[tokio::test]
async fn a_reviewed_file_taken_whole_never_empties_the_document() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (job_id, _) = exported_proposal(&app, &key, "blank", &["alpha one"], "replace \"alpha\" with \"omega\"").await;
    // All of it a tracked insertion: rejected, nothing is left.
    let docx = docx_of(r#"<w:p><w:ins w:id="1" w:author="R"><w:r><w:t>only new</w:t></w:r></w:ins></w:p>"#);
    let fields = [("session_id", "blank"), ("job_id", job_id.as_str()), ("track_changes", "reject")];
    let r = upload_with(&app, &key, &fields, "b.docx", &docx).await;
    r.expect_status(400);
    assert!(r.json["detail"].as_str().unwrap_or_default().contains("no content"), "{:?}", r.json);
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "awaiting_approval", "nothing settled");
    assert!(html(&app, &key, "blank").await.contains("alpha one"));
    // Reviewed instead, the file's text is proposed, the document kept until approved.
    let fields = [("session_id", "blank"), ("job_id", job_id.as_str()), ("track_changes", "review")];
    let r = upload_with(&app, &key, &fields, "b.docx", &docx).await;
    r.expect_status(200);
    assert!(html(&app, &key, "blank").await.contains("alpha one"));
}

/// The text of part `name` of the zip `bytes`.
fn part(bytes: &[u8], name: &str) -> String {
    use std::io::Read;
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).expect("a zip");
    let mut text = String::new();
    zip.by_name(name).expect("the part").read_to_string(&mut text).expect("utf-8");
    text
}

#[tokio::test]
async fn the_tracked_export_can_be_mailed() {
    let app = spawn_app().await;
    let (key, to) = app.mailing_key().await;
    seed(&app, &key, "mail", &["alpha one", "beta two"]).await;
    let ask = json!({"session_id": "mail", "message": "replace \"alpha\" with \"omega\"", "require_approval": true});
    let job = start(&app, &key, ask).await;
    let job_id = job["job_id"].as_str().unwrap_or_default().to_owned();
    wait_for(&app, &key, &job_id, &["awaiting_approval"]).await;
    let body = json!({"session_id": "mail", "format": "pdf", "track_changes": true});
    let r = app.send(app.post("/v1/documents/export/email-request").bearer_auth(&key).json(&body)).await;
    assert_eq!(r.expect_422_at(&[json!("body"), json!("track_changes")])["type"], "value_error");

    let body = json!({"session_id": "mail", "format": "docx", "track_changes": true});
    let r = app.send(app.post("/v1/documents/export/email-request").bearer_auth(&key).json(&body)).await;
    r.expect_status(202);
    let mail = crate::files::wait_for_mail(&app, &to).await;
    let link = crate::files::download_path(&mail);
    let resp = app.get(&link).send().await.expect("download");
    assert_eq!(resp.status().as_u16(), 200);
    let docx = resp.bytes().await.expect("body").to_vec();
    let doc = part(&docx, "word/document.xml");
    assert!(doc.contains("<w:ins ") && doc.contains("<w:del "), "the changes as revisions: {doc}");
    assert!(part(&docx, "docProps/custom.xml").contains(&job_id), "the file names its turn");
    // Exporting decides nothing.
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "awaiting_approval");
}

#[tokio::test]
async fn a_job_named_for_settling_must_be_a_turn_of_the_session_awaiting_approval() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (job_id, docx) =
        exported_proposal(&app, &key, "named", &["alpha one"], "replace \"alpha\" with \"omega\"").await;
    let fields = [("session_id", "named"), ("open_mode", "append"), ("job_id", job_id.as_str())];
    let r = upload_with(&app, &key, &fields, "n.docx", &docx).await;
    r.expect_status(422);
    assert_eq!(r.json["detail"][0]["loc"], json!(["body", "job_id"]));
    // Another session's turn, or one that does not exist: 409, nothing loaded.
    seed(&app, &key, "other", &["x"]).await;
    for job in [job_id.as_str(), "0190a0a0-0000-7000-8000-000000000000"] {
        let r = upload_with(&app, &key, &[("session_id", "other"), ("job_id", job)], "n.docx", &docx).await;
        r.expect_status(409);
        assert!(r.json["detail"].as_str().unwrap_or_default().contains("No job awaiting approval"), "{:?}", r.json);
    }
    assert!(html(&app, &key, "other").await.contains(">x<"));
    // Into another session without naming it, the file names a turn that is not that
    // session's: it uploads as any DOCX does.
    let r = upload_with(&app, &key, &[("session_id", "copy")], "n.docx", &docx).await;
    r.expect_status(200);
    assert!(r.json.get("settled_job_id").is_none(), "{:?}", r.json);
}

/// The text of a change's new HTML, without its section ids.
fn new_text(change: &Value) -> String {
    let html = change["new_html"].as_str().unwrap_or_default();
    let mut text = String::new();
    let mut inside = false;
    for c in html.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => text.push(c),
            _ => {}
        }
    }
    text
}

#[tokio::test]
async fn revisions_libreoffice_wrote_import_as_the_same_pending_changes() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let paragraphs = ["alpha one", "beta two", "alpha three"];
    let (job_id, docx) = exported_proposal(&app, &key, "lo-out", &paragraphs, "replace \"alpha\" with \"omega\"").await;
    // LibreOffice opens the tracked export and saves it: the revisions are its own writing.
    let Some(saved) = libreoffice_decides(&docx, &[]) else { return };
    let r = upload_with(&app, &key, &[("session_id", "lo-in"), ("track_changes", "review")], "lo.docx", &saved).await;
    r.expect_status(200);
    let loaded = r.json["html"].as_str().unwrap_or_default();
    assert!(loaded.contains("alpha one") && loaded.contains("alpha three") && !loaded.contains("omega"), "{loaded}");
    let proposed = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    let proposed = proposed.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    let review = r.json["review_job_id"].as_str().unwrap_or_default().to_owned();
    let imported = app.send(app.get(&format!("/v1/jobs/{review}")).bearer_auth(&key)).await;
    let imported = imported.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    let texts = |changes: &[Value]| -> Vec<(String, String)> {
        changes.iter().map(|c| (c["operation"].as_str().unwrap_or_default().to_owned(), new_text(c))).collect()
    };
    assert_eq!(texts(&imported), texts(&proposed));
    assert!(imported.iter().all(|c| c["ai_explanation"].as_str().unwrap_or_default().contains("lo.docx")));
}
