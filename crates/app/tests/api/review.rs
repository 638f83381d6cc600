//! Edit before accept (docs/api.md, "Approval"): a reviewer approves a proposed change with
//! their own corrected HTML, which is sanitized and applied in place of the AI's, and the job,
//! the history and the version list say so; corrections that cannot be applied are 422 at
//! `[body, edits, change_id]` and change nothing. Also how an upload treats a DOCX's tracked
//! changes (`track_changes`), and how an export shows pending ones as Word revisions.

use serde_json::{json, Value};

use crate::chat::{seed, start, wait_for};
use crate::helpers::*;

async fn html(app: &TestApp, key: &str, sid: &str) -> String {
    let r = app.send(app.get(&format!("/v1/documents/{sid}")).bearer_auth(key)).await;
    r.expect_status(200);
    r.json["html"].as_str().unwrap_or_default().to_owned()
}

/// A turn asking for approval of `message` on `paragraphs`; its job id and pending changes.
async fn proposal(app: &TestApp, key: &str, sid: &str, paragraphs: &[&str], message: &str) -> (String, Vec<Value>) {
    seed(app, key, sid, paragraphs).await;
    let job = start(app, key, json!({"session_id": sid, "message": message, "require_approval": true})).await;
    let id = job["job_id"].as_str().unwrap_or_default().to_owned();
    let waiting = wait_for(app, key, &id, &["awaiting_approval"]).await;
    (id, waiting["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default())
}

fn loc(r: &Reply) -> Value {
    r.json["detail"][0]["loc"].clone()
}

fn msg(r: &Reply) -> &str {
    r.json["detail"][0]["msg"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_corrected_change_is_applied_sanitized_and_said_to_be_corrected() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (id, pending) =
        proposal(&app, &key, "fix", &["alpha one", "alpha two"], "replace \"alpha\" with \"omega\"").await;
    assert_eq!(pending.len(), 2);
    let first = pending[0]["change_id"].as_str().unwrap_or_default().to_owned();
    let chunk = pending[0]["chunk_id"].as_str().unwrap_or_default().to_owned();
    let corrected = "<p>Omega <b>first</b><script>alert(1)</script> one</p>";
    let r = app
        .send(app.post("/v1/chat/fix/approve").bearer_auth(&key).json(&json!({
            "job_id": id, "edits": {first.clone(): corrected}, "reject": [pending[1]["change_id"]]
        })))
        .await;
    r.expect_status(200);
    assert_eq!(r.json["status"], "completed");
    let changes = r.json["result"]["document_changes"]["changes"].as_array().cloned().unwrap_or_default();
    assert_eq!(changes.len(), 1, "a correction approves its change; the other was rejected");
    assert_eq!(changes[0]["change_id"], first.as_str());
    assert_eq!(changes[0]["edited_by_reviewer"], true);
    let applied = changes[0]["new_html"].as_str().unwrap_or_default();
    assert!(applied.contains("Omega <b>first</b>") && !applied.contains("script"), "sanitized: {applied}");
    assert!(applied.contains(&format!("data-chunk-id=\"{chunk}\"")), "the section keeps its id: {applied}");
    let now = html(&app, &key, "fix").await;
    assert!(now.contains("Omega <b>first</b>") && now.contains("alpha two") && !now.contains("omega"), "{now}");
    assert!(r.json["result"]["response"]
        .as_str()
        .unwrap_or_default()
        .ends_with("1 of 2 proposed changes applied after review (1 corrected by the reviewer)."));
    // The version list says the reviewer corrected it; the history's answer too.
    let versions = app.send(app.get("/v1/documents/fix/versions").bearer_auth(&key)).await;
    assert_eq!(versions.json["versions"][0]["source"], "review");
    let history = app.send(app.get("/v1/sessions/fix/history").bearer_auth(&key)).await;
    let said = history.json["messages"].as_array().and_then(|m| m.last().cloned()).unwrap_or_default();
    assert!(said["content"].as_str().unwrap_or_default().contains("(1 corrected by the reviewer)"), "{said}");
    // A plain approval shows no such field.
    let (plain, pending) = proposal(&app, &key, "plain", &["alpha"], "replace \"alpha\" with \"omega\"").await;
    let same = pending[0]["new_html"].as_str().unwrap_or_default();
    let r = app
        .send(app.post("/v1/chat/plain/approve").bearer_auth(&key).json(&json!({
            "job_id": plain, "edits": {pending[0]["change_id"].as_str().unwrap_or_default(): same}
        })))
        .await;
    r.expect_status(200);
    let change = &r.json["result"]["document_changes"]["changes"][0];
    assert!(change.get("edited_by_reviewer").is_none(), "the AI's own text is no correction: {change}");
    let versions = app.send(app.get("/v1/documents/plain/versions").bearer_auth(&key)).await;
    assert_eq!(versions.json["versions"][0]["source"], "chat");
}

#[tokio::test]
async fn corrections_that_cannot_apply_are_422_and_change_nothing() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (id, pending) = proposal(&app, &key, "bad", &["alpha one", "keep"], "replace \"alpha\" with \"omega\"").await;
    let change = pending[0]["change_id"].as_str().unwrap_or_default().to_owned();
    let before = html(&app, &key, "bad").await;
    let approve = |body: Value| app.post("/v1/chat/bad/approve").bearer_auth(&key).json(&body);

    let empty = app.send(approve(json!({"job_id": id, "edits": {change.clone(): "<p> </p>"}}))).await;
    empty.expect_status(422);
    assert_eq!(loc(&empty), json!(["body", "edits", change.as_str()]));
    assert!(msg(&empty).contains("has no text. To drop the change, reject it."), "{empty:?}");

    let unknown = app.send(approve(json!({"job_id": id, "edits": {"chg_nope": "<p>x</p>"}}))).await;
    unknown.expect_status(422);
    assert_eq!(loc(&unknown), json!(["body", "edits", "chg_nope"]));

    let both =
        app.send(approve(json!({"job_id": id, "edits": {change.clone(): "<p>x</p>"}, "reject": [change]}))).await;
    both.expect_status(422);

    let not_text = app.send(approve(json!({"job_id": id, "edits": {change.clone(): 5}}))).await;
    not_text.expect_status(422);
    assert_eq!(loc(&not_text), json!(["body", "edits", change.as_str()]));
    let not_object = app.send(approve(json!({"job_id": id, "edits": ["<p>x</p>"]}))).await;
    not_object.expect_status(422);
    assert_eq!(loc(&not_object), json!(["body", "edits"]));

    assert_eq!(html(&app, &key, "bad").await, before, "nothing applied");
    assert_eq!(wait_for(&app, &key, &id, &["awaiting_approval"]).await["status"], "awaiting_approval");

    // A deletion has no text to correct.
    seed(&app, &key, "del", &["first", "second"]).await;
    let now = html(&app, &key, "del").await;
    let ids: Vec<&str> = now.split("data-chunk-id=\"").skip(1).filter_map(|s| s.split('"').next()).collect();
    let job = start(
        &app,
        &key,
        json!({"session_id": "del", "message": format!("delete section {}", ids[1]), "require_approval": true}),
    )
    .await;
    let gone = job["job_id"].as_str().unwrap_or_default().to_owned();
    let waiting = wait_for(&app, &key, &gone, &["awaiting_approval"]).await;
    let deleting = waiting["metadata"]["pending_changes"][0]["change_id"].as_str().unwrap_or_default().to_owned();
    let r = app
        .send(
            app.post("/v1/chat/del/approve")
                .bearer_auth(&key)
                .json(&json!({"job_id": gone, "edits": {deleting.clone(): "<p>keep it</p>"}})),
        )
        .await;
    r.expect_status(422);
    assert_eq!(loc(&r), json!(["body", "edits", deleting.as_str()]));
    assert!(msg(&r).contains("deletes its section: there is no text to correct"), "{r:?}");
}

/// A DOCX of the corpus with tracked changes.
fn revised_docx(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus/docx").join(name);
    std::fs::read(path).expect("corpus file")
}

#[tokio::test]
async fn an_upload_with_tracked_changes_says_so_and_loads_the_reading_asked_for() {
    use crate::files::upload_with;
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let bytes = revised_docx("pandoc-track_changes_move.docx");

    let accepted = upload_with(&app, &key, &[("session_id", "moved")], "moved.docx", &bytes).await;
    accepted.expect_status(200);
    let warnings = accepted.json["warnings"].to_string();
    assert!(
        warnings
            .contains("The file has tracked changes (1 move by Jesse Rosenthal): they are accepted in the document."),
        "{warnings}"
    );
    let html = accepted.json["html"].as_str().unwrap_or_default();
    let order = |html: &str| (html.find("to be moved").unwrap_or(0), html.find("some more text").unwrap_or(0));
    let (moved, more) = order(html);
    // The reviewer moved the paragraph up, before "Here is some more text." (as pandoc reads it).
    assert!(moved < more, "accepted: the text is where it was moved to: {html}");

    let rejected =
        upload_with(&app, &key, &[("session_id", "kept"), ("track_changes", "reject")], "moved.docx", &bytes).await;
    rejected.expect_status(200);
    assert!(rejected.json["warnings"]
        .to_string()
        .contains("they are rejected, so the document is as it was before them"));
    let html = rejected.json["html"].as_str().unwrap_or_default();
    let (moved, more) = order(html);
    assert!(moved > more, "rejected: the text is where it was: {html}");

    let bad = upload_with(&app, &key, &[("session_id", "x"), ("track_changes", "maybe")], "moved.docx", &bytes).await;
    bad.expect_status(422);
    assert_eq!(bad.json["detail"][0]["loc"], json!(["body", "track_changes"]));
    assert_eq!(bad.json["detail"][0]["msg"], "Input should be 'accept', 'reject' or 'review'");
    let fields = [("session_id", "x"), ("track_changes", "review"), ("open_mode", "append")];
    let bad = upload_with(&app, &key, &fields, "moved.docx", &bytes).await;
    bad.expect_status(422);
    assert!(bad.json["detail"][0]["msg"].as_str().unwrap_or_default().contains("needs open_mode=replace"));

    // A file without tracked changes says nothing of them.
    let plain =
        upload_with(&app, &key, &[("session_id", "plain")], "plain.docx", &revised_docx("pandoc-lists.docx")).await;
    plain.expect_status(200);
    assert!(!plain.json["warnings"].to_string().contains("tracked changes"), "{plain:?}");
}

/// pandoc's plain text of a DOCX read with `--track-changes=<track>` (`None`: pandoc is
/// missing outside CI).
fn pandoc_text(docx: &[u8], track: &str) -> Option<String> {
    let dir = std::env::temp_dir().join(format!("redline-api-tracked-{}-{track}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("tracked.docx");
    std::fs::write(&file, docx).expect("write");
    let out = std::process::Command::new("pandoc")
        .args([&format!("--track-changes={track}"), "--wrap=none", "-f", "docx", "-t", "html"])
        .arg(&file)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    match out {
        Ok(out) if out.status.success() => Some(String::from_utf8(out.stdout).expect("utf-8")),
        _ => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "pandoc is missing: run scripts/setup-tests.sh");
            eprintln!("\n!! SKIPPED: pandoc is not installed (scripts/setup-tests.sh)\n");
            None
        }
    }
}

async fn export_tracked(app: &TestApp, key: &str, body: Value) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let resp = app.post("/v1/documents/export").bearer_auth(key).json(&body).send().await.expect("export");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    (status, headers, resp.bytes().await.expect("body").to_vec())
}

#[tokio::test]
async fn pending_changes_export_as_word_revisions_and_leave_the_job_waiting() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (id, pending) =
        proposal(&app, &key, "redline", &["alpha one", "beta two", "alpha three"], "replace \"alpha\" with \"omega\"")
            .await;
    assert_eq!(pending.len(), 2);
    let body = json!({"session_id": "redline", "format": "docx", "track_changes": true});
    let (status, headers, docx) = export_tracked(&app, &key, body.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(headers["redline-tracked-changes"], "2");
    assert_eq!(headers["redline-job-id"], id.as_str());
    assert!(headers["content-disposition"].to_str().unwrap_or_default().contains(".docx"));
    if let Some(accepted) = pandoc_text(&docx, "accept") {
        assert!(accepted.contains("omega one") && accepted.contains("beta two") && accepted.contains("omega three"));
        assert!(!accepted.contains("alpha"), "{accepted}");
        let rejected = pandoc_text(&docx, "reject").unwrap_or_default();
        assert!(rejected.contains("alpha one") && rejected.contains("alpha three") && !rejected.contains("omega"));
        let all = pandoc_text(&docx, "all").unwrap_or_default();
        assert_eq!(all.matches("class=\"insertion\" data-author=\"Redline AI\"").count(), 2, "{all}");
        assert_eq!(all.matches("class=\"deletion\" data-author=\"Redline AI\"").count(), 2, "{all}");
    }
    // Exporting decides nothing: the turn still waits.
    let job = app.send(app.get(&format!("/v1/jobs/{id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "awaiting_approval");
    // Only DOCX has revisions.
    let r = app
        .send(app.post("/v1/documents/export").bearer_auth(&key).json(&json!({
            "session_id": "redline", "format": "pdf", "track_changes": true
        })))
        .await;
    r.expect_status(422);
    assert_eq!(loc(&r), json!(["body", "track_changes"]));
    assert!(msg(&r).contains("track_changes needs format docx"), "{}", r.text);
    // Another account's session is not found.
    let stranger = app.agent_key().await;
    let (status, _, _) = export_tracked(&app, &stranger, body.clone()).await;
    assert_eq!(status, 404);
    // Once the turn is decided there is nothing to track: the plain document, 0 changes.
    let r = app
        .send(app.post("/v1/chat/redline/approve").bearer_auth(&key).json(&json!({"job_id": id, "approve_all": true})))
        .await;
    r.expect_status(200);
    let (status, headers, docx) = export_tracked(&app, &key, body).await;
    assert_eq!(status, 200);
    assert_eq!(headers["redline-tracked-changes"], "0");
    assert!(headers.get("redline-job-id").is_none());
    if let Some(all) = pandoc_text(&docx, "all") {
        assert!(all.contains("omega one") && !all.contains("class=\"insertion\""), "{all}");
    }
}

#[tokio::test]
async fn an_upload_reviewed_proposes_its_tracked_changes_as_a_turn_awaiting_approval() {
    use crate::files::upload_with;
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let bytes = revised_docx("pandoc-track_changes_move.docx");
    let order = |html: &str| (html.find("to be moved").unwrap_or(0), html.find("some more text").unwrap_or(0));
    let fields = [("session_id", "moves"), ("track_changes", "review")];
    let r = upload_with(&app, &key, &fields, "moved.docx", &bytes).await;
    r.expect_status(200);
    let job_id = r.json["review_job_id"].as_str().unwrap_or_default().to_owned();
    assert!(!job_id.is_empty(), "{:?}", r.json);
    let (moved, more) = order(r.json["html"].as_str().unwrap_or_default());
    assert!(moved > more, "the document is as it was before the changes");
    let warnings = r.json["warnings"].to_string();
    assert!(warnings.contains("awaiting your review in job"), "{warnings}");
    // One turn awaiting approval, whose changes say where they came from. The paragraph
    // the section alignment moves is the one the reviewer's move passed, which has no
    // revision of its own: its changes name the file's revisions as a whole.
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "awaiting_approval");
    let pending = job.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    assert!(!pending.is_empty());
    for change in &pending {
        let why = change["ai_explanation"].as_str().unwrap_or_default();
        assert_eq!(why, "A tracked change of moved.docx (1 move by Jesse Rosenthal).", "{change}");
    }
    // A change whose paragraph has revisions names their author and day.
    let inserted = [("session_id", "inserted"), ("track_changes", "review")];
    let r = upload_with(&app, &key, &inserted, "ins.docx", &revised_docx("pandoc-track_changes_insertion.docx")).await;
    r.expect_status(200);
    let ins_job = r.json["review_job_id"].as_str().unwrap_or_default().to_owned();
    let job = app.send(app.get(&format!("/v1/jobs/{ins_job}")).bearer_auth(&key)).await;
    let pending = job.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    let said: Vec<&str> = pending.iter().map(|c| c["ai_explanation"].as_str().unwrap_or_default()).collect();
    assert_eq!(said, ["A tracked change of ins.docx, by eng-dept on 2014-06-25."], "{pending:?}");
    // A second review while the first waits: 409, and the document is not replaced.
    let again = upload_with(&app, &key, &fields, "moved.docx", &bytes).await;
    again.expect_status(409);
    // Approving every change gives the document with the changes accepted.
    let r = app
        .send(
            app.post("/v1/chat/moves/approve").bearer_auth(&key).json(&json!({"job_id": job_id, "approve_all": true})),
        )
        .await;
    r.expect_status(200);
    assert_eq!(r.json["status"], "completed");
    let (moved, more) = order(&html(&app, &key, "moves").await);
    assert!(moved < more, "accepted: the text is where it was moved to");
    let usage = &r.json["result"]["usage"];
    assert_eq!((usage["was_billable"].clone(), usage["ops_charged"].clone()), (json!(false), json!(0)), "{usage}");
    assert_eq!(usage["monthly_used"], 0, "no model ran: nothing is billed");
    // Rejecting with notes ends the turn: no model proposed these changes.
    let fields = [("session_id", "kept"), ("track_changes", "review")];
    let r = upload_with(&app, &key, &fields, "moved.docx", &bytes).await;
    let job_id = r.json["review_job_id"].as_str().unwrap_or_default().to_owned();
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    let pending = job.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    let r = app
        .send(app.post("/v1/chat/kept/approve").bearer_auth(&key).json(&json!({
            "job_id": job_id, "reject": pending.iter().map(|c| c["change_id"].clone()).collect::<Vec<_>>(), "feedback": "keep it"
        })))
        .await;
    r.expect_status(200);
    assert_eq!(r.json["status"], "completed");
    let (moved, more) = order(&html(&app, &key, "kept").await);
    assert!(moved > more, "rejected: the text stays where it was");
}

#[tokio::test]
async fn a_tracked_export_uploaded_for_review_proposes_the_same_changes() {
    use crate::files::upload_with;
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (_, pending) =
        proposal(&app, &key, "out", &["alpha one", "beta two", "alpha three"], "replace \"alpha\" with \"omega\"")
            .await;
    assert_eq!(pending.len(), 2);
    let body = json!({"session_id": "out", "format": "docx", "track_changes": true});
    let (status, _, docx) = export_tracked(&app, &key, body).await;
    assert_eq!(status, 200);
    // Into another session: the document as it is, and the AI's two changes to review.
    let r = upload_with(&app, &key, &[("session_id", "back"), ("track_changes", "review")], "out.docx", &docx).await;
    r.expect_status(200);
    let loaded = r.json["html"].as_str().unwrap_or_default();
    assert!(loaded.contains("alpha one") && loaded.contains("alpha three") && !loaded.contains("omega"), "{loaded}");
    let job_id = r.json["review_job_id"].as_str().unwrap_or_default().to_owned();
    let job = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(&key)).await;
    let back = job.json["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    assert_eq!(back.len(), 2, "{back:?}");
    for change in &back {
        assert_eq!(change["operation"], "edit");
        assert!(change["ai_explanation"].as_str().unwrap_or_default().contains("by Redline AI"), "{change}");
    }
    let r = app
        .send(app.post("/v1/chat/back/approve").bearer_auth(&key).json(&json!({"job_id": job_id, "approve_all": true})))
        .await;
    r.expect_status(200);
    let now = html(&app, &key, "back").await;
    assert!(now.contains("omega one") && now.contains("beta two") && now.contains("omega three"), "{now}");
}
