//! Chat turns as jobs (docs/api.md, "Chat and jobs"): the builtin editor end to end, approval, cancel,
//! ownership, event streams, and a model that misbehaves (garbage, endless tool loops),
//! served by a real HTTP server speaking the OpenAI wire format.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use crate::helpers::*;

pub(crate) async fn seed(app: &TestApp, key: &str, sid: &str, paragraphs: &[&str]) -> Value {
    let html: String = paragraphs.iter().map(|p| format!("<p>{p}</p>")).collect();
    let r = app
        .send(app.client.put(app.url(&format!("/v1/documents/{sid}"))).bearer_auth(key).json(&json!({"html": html})))
        .await;
    r.expect_status(200);
    r.json.clone()
}

async fn doc(app: &TestApp, key: &str, sid: &str) -> Value {
    let r = app.send(app.get(&format!("/v1/documents/{sid}")).bearer_auth(key)).await;
    r.expect_status(200);
    r.json.clone()
}

pub(crate) async fn start(app: &TestApp, key: &str, body: Value) -> Value {
    let r = app.send(app.post("/v1/chat/async").bearer_auth(key).json(&body)).await;
    r.expect_status(202);
    r.json.clone()
}

pub(crate) async fn wait_for(app: &TestApp, key: &str, job_id: &str, statuses: &[&str]) -> Value {
    for _ in 0..600 {
        let r = app.send(app.get(&format!("/v1/jobs/{job_id}")).bearer_auth(key)).await;
        r.expect_status(200);
        if statuses.contains(&r.json["status"].as_str().unwrap_or_default()) {
            return r.json.clone();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("job {job_id} never reached {statuses:?}");
}

async fn used(app: &TestApp, key: &str) -> i64 {
    app.send(app.get("/v1/usage").bearer_auth(key)).await.json["monthly_used"].as_i64().unwrap_or(-1)
}

#[tokio::test]
async fn a_sync_turn_edits_charges_and_is_recorded() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let before = seed(&app, &key, "s1", &["The quick brown fox.", "A lazy dog."]).await;
    let r = app
        .send(
            app.post("/v1/chat")
                .bearer_auth(&key)
                .json(&json!({"session_id": "s1", "message": "replace \"fox\" with \"cat\""})),
        )
        .await;
    r.expect_status(200);
    let html = r.json["document_changes"]["updated_html"].as_str().unwrap_or_default();
    assert!(html.contains("quick brown cat") && !html.contains("fox"), "{html}");
    assert_ne!(r.json["document_changes"]["version_id"], before["version_id"]);
    assert_eq!(r.json["usage"]["ops_charged"], 1);
    assert_eq!(r.header("x-usage-used"), Some("1"));
    assert_eq!(doc(&app, &key, "s1").await["html"], html);
    let job = app.send(app.get(&format!("/v1/jobs/{}", r.json["job_id"].as_str().unwrap())).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "completed");
    assert_eq!(job.json["result"]["response"], r.json["response"]);
    let items = job.json["metadata"]["intermediate_responses"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = items.iter().filter_map(|i| i["type"].as_str()).collect();
    assert!(kinds.contains(&"tool_call") && kinds.contains(&"change"), "{kinds:?}");
    let history = app.send(app.get("/v1/sessions/s1/history").bearer_auth(&key)).await;
    let messages = history.json["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["version_before"], before["version_id"]);
}

#[tokio::test]
async fn empty_and_invalid_messages_are_refused_and_not_billed() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let r = app.send(app.post("/v1/chat").bearer_auth(&key).json(&json!({"session_id": "s", "message": ""}))).await;
    r.expect_status(400);
    assert_eq!(r.detail(), "Message cannot be empty");
    let r =
        app.send(app.post("/v1/chat/async").bearer_auth(&key).json(&json!({"session_id": "s", "message": 5}))).await;
    r.expect_422_at(&[json!("body"), json!("message")]);
    let r = app
        .send(
            app.post("/v1/chat")
                .bearer_auth(&key)
                .json(&json!({"session_id": "s", "message": "x", "response_mode": "loud"})),
        )
        .await;
    r.expect_422_at(&[json!("body"), json!("response_mode")]);
    assert_eq!(used(&app, &key).await, 0);
}

#[tokio::test]
async fn the_builtin_replaces_in_every_section_of_a_large_document() {
    // More matches than one search answers (1,000), in more pages (13) than a turn has steps
    // (12), and a replacement that holds the word it replaces, so searching again after
    // editing would find the edited sections first. 496 operations fit the free plan.
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let paragraphs: Vec<String> = (0..12_400).map(|i| format!("foo number {i}")).collect();
    seed(&app, &key, "big", &paragraphs.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let r = app
        .send(
            app.post("/v1/chat")
                .bearer_auth(&key)
                .json(&json!({"session_id": "big", "message": "replace \"foo\" with \"foo-bar\""})),
        )
        .await;
    r.expect_status(200);
    assert_eq!(r.json["response"], "Replaced \"foo\" with \"foo-bar\" in 12400 sections.");
    assert_eq!(r.json["usage"]["ops_charged"], 496, "12,400 sections edited, 25 an operation");
    let html = doc(&app, &key, "big").await["html"].as_str().unwrap().to_owned();
    assert_eq!(html.matches("foo-bar number").count(), 12_400);
    assert!(!html.contains("foo-bar-bar"), "a section was replaced twice");
}

#[tokio::test]
async fn approval_applies_a_subset_refuses_unknown_and_stale_changes() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    seed(&app, &key, "h", &["alpha one", "alpha two", "plain"]).await;
    let job = start(
        &app,
        &key,
        json!({"session_id": "h", "message": "replace \"alpha\" with \"omega\"", "require_approval": true}),
    )
    .await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    let waiting = wait_for(&app, &key, &id, &["awaiting_approval"]).await;
    assert_eq!(waiting["result"], Value::Null);
    let pending = waiting["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    assert_eq!(pending.len(), 2);
    let unknown = app
        .send(app.post("/v1/chat/h/approve").bearer_auth(&key).json(&json!({"job_id": id, "approve": ["nope"]})))
        .await;
    unknown.expect_status(422);
    // Under another session's path: 409 (no job of that session awaits), saying whose it is.
    let elsewhere = app
        .send(app.post("/v1/chat/other/approve").bearer_auth(&key).json(&json!({"job_id": id, "approve_all": true})))
        .await;
    elsewhere.expect_status(409);
    assert!(
        elsewhere.detail().contains("in session other: job") && elsewhere.detail().ends_with("session h."),
        "{elsewhere:?}"
    );

    // A person edits the first section: approving its change is stale (409, named).
    let current = doc(&app, &key, "h").await["html"].as_str().unwrap().replace("alpha one", "alpha one!");
    app.send(app.client.put(app.url("/v1/documents/h")).bearer_auth(&key).json(&json!({"html": current})))
        .await
        .expect_status(200);
    let first = pending.iter().find(|p| p["old_html"].as_str().unwrap_or_default().contains("alpha one")).unwrap();
    let stale = app
        .send(
            app.post("/v1/chat/h/approve")
                .bearer_auth(&key)
                .json(&json!({"job_id": id, "approve": [first["change_id"]]})),
        )
        .await;
    stale.expect_status(409);
    assert!(stale.detail().contains(first["change_id"].as_str().unwrap()), "{}", stale.detail());

    let second = pending.iter().find(|p| p["old_html"].as_str().unwrap_or_default().contains("alpha two")).unwrap();
    let ok = app
        .send(
            app.post("/v1/chat/h/approve")
                .bearer_auth(&key)
                .json(&json!({"job_id": id, "approve": [second["change_id"]], "reject": [first["change_id"]]})),
        )
        .await;
    ok.expect_status(200);
    assert_eq!(ok.json["status"], "completed");
    let html = doc(&app, &key, "h").await["html"].as_str().unwrap().to_owned();
    assert!(html.contains("alpha one!") && html.contains("omega two"), "{html}");
    assert_eq!(used(&app, &key).await, 1);
    let again = app
        .send(app.post("/v1/chat/h/approve").bearer_auth(&key).json(&json!({"job_id": id, "approve_all": true})))
        .await;
    again.expect_status(409);
}

#[tokio::test]
async fn cancel_ownership_and_unknown_jobs() {
    let app = spawn_app().await;
    let (owner, stranger) = (app.agent_key().await, app.agent_key().await);
    seed(&app, &owner, "c", &["kappa"]).await;
    let job = start(
        &app,
        &owner,
        json!({"session_id": "c", "message": "replace \"kappa\" with \"lambda\"", "require_approval": true}),
    )
    .await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    wait_for(&app, &owner, &id, &["awaiting_approval"]).await;
    app.send(app.get(&format!("/v1/jobs/{id}")).bearer_auth(&stranger)).await.expect_status(403);
    app.send(app.post(&format!("/v1/jobs/{id}/cancel")).bearer_auth(&stranger)).await.expect_status(403);
    let r = app.send(app.post(&format!("/v1/jobs/{id}/cancel")).bearer_auth(&owner)).await;
    r.expect_status(200);
    assert_eq!(r.json["status"], "cancelled");
    app.send(app.post(&format!("/v1/jobs/{id}/cancel")).bearer_auth(&owner)).await.expect_status(409);
    assert!(doc(&app, &owner, "c").await["html"].as_str().unwrap().contains("kappa"));
    assert_eq!(used(&app, &owner).await, 0, "cancelled turns are not billed");
    app.send(app.get("/v1/jobs/00000000-0000-4000-8000-000000000000").bearer_auth(&owner)).await.expect_status(404);
    let listed = app.send(app.get("/v1/jobs").bearer_auth(&stranger)).await;
    assert_eq!(listed.json["total"], 0);
    let bad = app.send(app.get("/v1/sessions/c/jobs?limit=abc").bearer_auth(&owner)).await;
    bad.expect_422_at(&[json!("query"), json!("limit")]);
}

#[tokio::test]
async fn deleting_the_session_gives_back_its_waiting_turns_operation() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    seed(&app, &key, "d", &["kappa one", "kappa two"]).await;
    let job = start(
        &app,
        &key,
        json!({"session_id": "d", "message": "replace \"kappa\" with \"lambda\"", "require_approval": true}),
    )
    .await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    wait_for(&app, &key, &id, &["awaiting_approval"]).await;
    assert_eq!(used(&app, &key).await, 1, "the waiting turn holds its operation");
    // A stream open on the waiting job is told why it ends.
    let stream =
        app.client.get(app.url(&format!("/v1/jobs/{id}/events"))).bearer_auth(&key).send().await.expect("stream");
    assert_eq!(stream.status(), 200);
    app.send(app.delete("/v1/sessions/d").bearer_auth(&key)).await.expect_status(204);
    app.send(app.get(&format!("/v1/jobs/{id}")).bearer_auth(&key)).await.expect_status(404);
    assert_eq!(used(&app, &key).await, 0, "a turn deleted with its session is not billed");
    let body =
        tokio::time::timeout(Duration::from_secs(30), stream.text()).await.expect("the stream ends").expect("body");
    let events: Vec<&str> = body.lines().filter_map(|l| l.strip_prefix("event: ")).collect();
    assert_eq!(events.last(), Some(&"error"), "{body}");
    assert!(body.contains("its session was deleted") && body.contains(&id), "{body}");
}

#[tokio::test]
async fn an_async_turn_answers_with_the_usage_headers() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let body = json!({"session_id": "u", "message": "what is here?"});
    let r = app.send(app.post("/v1/chat/async").bearer_auth(&key).json(&body)).await;
    r.expect_status(202);
    assert_eq!(r.header("x-usage-limit"), Some("500"), "{r:?}");
    assert_eq!(r.header("x-usage-used"), Some("1"), "the turn's operation is held: {r:?}");
    assert_eq!(r.header("x-usage-remaining"), Some("499"), "{r:?}");
    let stream = app
        .client
        .post(app.url("/v1/chat/async"))
        .bearer_auth(&key)
        .header("accept", "text/event-stream")
        .json(&body)
        .send()
        .await
        .expect("stream");
    assert_eq!(stream.status(), 200);
    assert_eq!(stream.headers()["x-usage-used"].to_str().unwrap(), "2");
    tokio::time::timeout(Duration::from_secs(30), stream.text()).await.expect("the stream ends").expect("body");
}

#[tokio::test]
async fn head_on_the_event_stream_of_a_waiting_job_answers_at_once() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    seed(&app, &key, "w", &["kappa one"]).await;
    let job = start(
        &app,
        &key,
        json!({"session_id": "w", "message": "replace \"kappa\" with \"lambda\"", "require_approval": true}),
    )
    .await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    wait_for(&app, &key, &id, &["awaiting_approval"]).await;
    // A GET would stay open until the turn is decided; a HEAD gets the headers and ends.
    let head = app.client.head(app.url(&format!("/v1/jobs/{id}/events"))).bearer_auth(&key).send();
    let head = tokio::time::timeout(Duration::from_secs(30), head).await.expect("HEAD answers").expect("response");
    assert_eq!(head.status(), 200);
    assert!(head.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    assert_eq!(head.headers()["x-job-id"].to_str().unwrap(), id);
    let body = tokio::time::timeout(Duration::from_secs(30), head.text()).await.expect("no body").expect("body");
    assert!(body.is_empty(), "{body}");
    let job = app.send(app.get(&format!("/v1/jobs/{id}")).bearer_auth(&key)).await;
    assert_eq!(job.json["status"], "awaiting_approval", "HEAD changes nothing");
}

#[tokio::test]
async fn the_event_stream_ends_with_the_final_job() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    seed(&app, &key, "e", &["stream alpha"]).await;
    let resp = app
        .client
        .post(app.url("/v1/chat/async"))
        .bearer_auth(&key)
        .header("accept", "text/event-stream")
        .json(&json!({"session_id": "e", "message": "replace \"alpha\" with \"omega\""}))
        .send()
        .await
        .expect("stream");
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/event-stream"));
    let header_id = resp.headers()["x-job-id"].to_str().unwrap().to_owned();
    let body =
        tokio::time::timeout(Duration::from_secs(30), resp.text()).await.expect("the stream ends").expect("body");
    let events: Vec<&str> = body.lines().filter_map(|l| l.strip_prefix("event: ")).collect();
    assert_eq!(events.last(), Some(&"final"), "{body}");
    assert!(events.iter().filter(|e| **e == "intermediate").count() >= 3, "{body}");
    let final_data = body.lines().filter_map(|l| l.strip_prefix("data: ")).next_back().unwrap();
    let job: Value = serde_json::from_str(final_data).unwrap();
    assert_eq!(job["status"], "completed");
    assert_eq!(job["job_id"], header_id.as_str(), "X-Job-Id names the streamed job");
    // Resuming after the last intermediate event replays nothing but the final event.
    let last_id: i64 =
        body.lines().filter_map(|l| l.strip_prefix("id: ")).filter_map(|s| s.parse().ok()).max().unwrap();
    let again = app
        .send(
            app.get(&format!("/v1/jobs/{}/events", job["job_id"].as_str().unwrap()))
                .bearer_auth(&key)
                .header("last-event-id", last_id.to_string()),
        )
        .await;
    let text = again.text.clone();
    assert!(!text.contains("event: intermediate") && text.contains("event: final"), "{text}");

    // An Accept that refuses the stream (q=0), or accepts anything, gets the queued Job.
    for accept in ["text/event-stream;q=0, application/json", "*/*"] {
        let r = app
            .send(
                app.post("/v1/chat/async")
                    .bearer_auth(&key)
                    .header("accept", accept)
                    .json(&json!({"session_id": "e", "message": "hello"})),
            )
            .await;
        r.expect_status(202);
        assert!(r.json["job_id"].is_string(), "{accept}: {r:?}");
    }
}

/// A one-route OpenAI-compatible server: `answer(n)` gives the status and JSON body of the
/// n-th request (0-based).
pub(crate) async fn fake_model(
    answer: impl Fn(usize) -> (u16, String) + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    fake_model_after(Duration::ZERO, answer).await
}

/// [`fake_model`] that answers each request only `delay` after it has read it.
async fn fake_model_after(
    delay: Duration,
    answer: impl Fn(usize) -> (u16, String) + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { return };
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let answer = answer.clone();
            tokio::spawn(async move {
                if crate::helpers::read_request(&mut sock).await.is_none() {
                    return;
                }
                tokio::time::sleep(delay).await;
                let (status, body) = answer(n);
                let reply = format!("HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
                let _ = sock.write_all(reply.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}/v1"), count)
}

fn tool_call_answer(n: usize) -> String {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": format!("call_{n}"), "type": "function", "function": {"name": "read_sections", "arguments": "{\"chunk_ids\": []}"}}]}}]})
    .to_string()
}

async fn openai_app(base_url: &str) -> TestApp {
    spawn_app_with(&[
        ("REDLINE_LLM_PROVIDER", "openai"),
        ("REDLINE_OPENAI_BASE_URL", base_url),
        ("REDLINE_OPENAI_MODEL", "m"),
    ])
    .await
}

/// A sync turn that reaches `REDLINE_CHAT_TIMEOUT_SECS` answers 504 pointing at
/// `/v1/chat/async`, every time: the turn itself completes at the same moment with a "time
/// limit" answer, and that completion must not win the race against the wait.
#[tokio::test]
async fn a_sync_turn_over_the_time_limit_is_a_504_every_time() {
    let answer = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "too late"}}]});
    let (url, _) = fake_model_after(Duration::from_secs(3), move |_| (200, answer.to_string())).await;
    let app = spawn_app_with(&[
        ("REDLINE_LLM_PROVIDER", "openai"),
        ("REDLINE_OPENAI_BASE_URL", &url),
        ("REDLINE_OPENAI_MODEL", "m"),
        ("REDLINE_CHAT_TIMEOUT_SECS", "1"),
    ])
    .await;
    let key = app.agent_key().await;
    seed(&app, &key, "slow", &["Slow model ahead"]).await;
    for _ in 0..3 {
        let started = std::time::Instant::now();
        let r = app
            .send(
                app.post("/v1/chat")
                    .bearer_auth(&key)
                    .json(&json!({"session_id": "slow", "message": "Take your time"})),
            )
            .await;
        r.expect_status(504);
        assert!(r.detail().contains("/v1/chat/async"), "{}", r.detail());
        assert!(
            started.elapsed() < Duration::from_millis(2_500),
            "at the limit, not after the model: {:?}",
            started.elapsed()
        );
    }
}

/// A sync turn whose section was changed by another writer while the model worked cannot
/// apply its edit onto the new text: it fails, unbilled, and answers 409 with the job's error,
/// not 502 as if the model had failed.
#[tokio::test]
async fn a_sync_turn_whose_section_changed_meanwhile_is_a_409() {
    let edit = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_0", "type": "function", "function": {"name": "edit_section",
            "arguments": json!({"chunk_id": "c000000000001", "new_html": "<p>AI text</p>", "explanation": "x"}).to_string()}}]}}]});
    let done = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Edited."}}]});
    let (url, _) = fake_model_after(Duration::from_millis(1_500), move |n| {
        (200, if n == 0 { edit.to_string() } else { done.to_string() })
    })
    .await;
    let app = openai_app(&url).await;
    let key = app.agent_key().await;
    let put = |text: &str| {
        app.client
            .put(app.url("/v1/documents/clash"))
            .bearer_auth(&key)
            .json(&json!({"html": format!("<p data-chunk-id=\"c000000000001\">{text}</p>")}))
    };
    app.send(put("original")).await.expect_status(200);
    let chat =
        app.send(app.post("/v1/chat").bearer_auth(&key).json(&json!({"session_id": "clash", "message": "edit it"})));
    let human = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        app.send(put("human text")).await
    };
    let (r, saved) = tokio::join!(chat, human);
    saved.expect_status(200);
    r.expect_status(409);
    assert!(r.detail().contains("changed by someone else"), "{}", r.detail());
    let html = doc(&app, &key, "clash").await["html"].as_str().unwrap_or_default().to_owned();
    assert!(html.contains("human text") && !html.contains("AI text"), "{html}");
    assert_eq!(used(&app, &key).await, 0);
}

#[tokio::test]
async fn a_model_answering_garbage_fails_the_job_without_touching_anything() {
    let (url, _) = fake_model(|_| (200, "this is not json".to_owned())).await;
    let app = openai_app(&url).await;
    let key = app.agent_key().await;
    let before = seed(&app, &key, "g", &["untouched"]).await;
    let job = start(&app, &key, json!({"session_id": "g", "message": "edit it"})).await;
    let done = wait_for(&app, &key, job["job_id"].as_str().unwrap(), &["failed", "completed"]).await;
    assert_eq!(done["status"], "failed");
    assert!(done["error"].as_str().unwrap_or_default().contains("could not be read"), "{done}");
    assert_eq!(doc(&app, &key, "g").await["version_id"], before["version_id"]);
    assert_eq!(used(&app, &key).await, 0);
}

#[tokio::test]
async fn an_endless_tool_loop_is_cut_off_and_not_billed() {
    let (url, count) = fake_model(|n| (200, tool_call_answer(n))).await;
    let app = openai_app(&url).await;
    let key = app.agent_key().await;
    let before = seed(&app, &key, "l", &["untouched"]).await;
    let job = start(&app, &key, json!({"session_id": "l", "message": "loop forever"})).await;
    let done = wait_for(&app, &key, job["job_id"].as_str().unwrap(), &["failed", "completed"]).await;
    assert_eq!(done["status"], "failed");
    assert!(done["error"].as_str().unwrap_or_default().contains("did not finish"), "{done}");
    assert_eq!(count.load(Ordering::SeqCst), 12, "bounded rounds");
    assert_eq!(doc(&app, &key, "l").await["version_id"], before["version_id"]);
    assert_eq!(used(&app, &key).await, 0);
}

/// A turn whose second round fails after a reviewer approved part of its first: the error says
/// the approved changes stay (it said "Nothing was changed" over a changed document), and the
/// turn is in the history, not billed.
#[tokio::test]
async fn a_turn_failing_after_an_approved_round_says_what_stays() {
    let ids: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let chunks = ids.clone();
    let (url, _) = fake_model(move |n| {
        let ids = chunks.lock().unwrap().clone();
        let edit = |id: &str, html: &str| {
            json!({"id": format!("e{id}"), "type": "function", "function": {"name": "edit_section",
                "arguments": json!({"chunk_id": id, "new_html": html, "explanation": "x"}).to_string()}})
        };
        match n {
            0 => (
                200,
                json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                edit(&ids[0], "<p>Alpha approved</p>"), edit(&ids[1], "<p>Bravo rejected</p>")]}}]})
                .to_string(),
            ),
            1 => (200, json!({"choices": [{"message": {"role": "assistant", "content": "proposed"}}]}).to_string()),
            // The round after the feedback: a client error, which is not retried.
            _ => (400, json!({"error": {"message": "Incorrect API key provided: sk-upstream-SECRET"}}).to_string()),
        }
    })
    .await;
    let app = openai_app(&url).await;
    let key = app.agent_key().await;
    seed(&app, &key, "fa", &["Alpha", "Bravo"]).await;
    let html = doc(&app, &key, "fa").await["html"].as_str().unwrap_or_default().to_owned();
    *ids.lock().unwrap() =
        html.split("data-chunk-id=\"").skip(1).map(|s| s[..s.find('"').unwrap()].to_owned()).collect();
    let job = start(&app, &key, json!({"session_id": "fa", "message": "edit", "require_approval": true})).await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    let waiting = wait_for(&app, &key, &id, &["awaiting_approval", "failed"]).await;
    let pending = waiting["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    assert_eq!(pending.len(), 2, "{waiting}");
    app.send(app.post("/v1/chat/fa/approve").bearer_auth(&key).json(&json!({
        "job_id": id, "approve": [pending[0]["change_id"]], "reject": [pending[1]["change_id"]], "feedback": "redo it"
    })))
    .await
    .expect_status(200);
    let failed = wait_for(&app, &key, &id, &["failed", "completed"]).await;
    let error = failed["error"].as_str().unwrap_or_default();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(error.ends_with("The 1 change approved earlier in this turn stays in the document."), "{error}");
    assert!(!error.to_lowercase().contains("nothing was changed"), "{error}");
    // The kind and status of the model's failure, not what the service said.
    assert!(error.starts_with("The AI model failed: the language model service answered 400."), "{error}");
    assert!(!error.contains("SECRET") && !error.contains("Incorrect"), "{error}");
    assert!(doc(&app, &key, "fa").await["html"].as_str().unwrap_or_default().contains("Alpha approved"));
    assert_eq!(used(&app, &key).await, 0);
    let messages = history(&app, &key, "fa").await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    let said = messages[1]["content"].as_str().unwrap_or_default();
    assert!(said.starts_with("This turn failed after the reviewer had approved 1 change"), "{said}");
}

/// Every model call is an intermediate event (docs/api.md, "Chat and jobs"): an attempt that failed and
/// is tried again is a `status` event, sent while the turn waits, naming the failure's kind.
#[tokio::test]
async fn a_model_call_tried_again_is_an_event() {
    let (url, _) = fake_model(|n| match n {
        0 => (503, json!({"error": {"message": "overloaded at 10.1.2.3"}}).to_string()),
        _ => (200, json!({"choices": [{"message": {"role": "assistant", "content": "Fine now."}}]}).to_string()),
    })
    .await;
    let app = openai_app(&url).await;
    let key = app.agent_key().await;
    seed(&app, &key, "re", &["text"]).await;
    let job = start(&app, &key, json!({"session_id": "re", "message": "hello"})).await;
    let done = wait_for(&app, &key, job["job_id"].as_str().unwrap(), &["completed", "failed"]).await;
    assert_eq!(done["result"]["response"], "Fine now.", "{done}");
    let events = done["metadata"]["intermediate_responses"].as_array().cloned().unwrap_or_default();
    let retry = events
        .iter()
        .find(|e| e["content"]["message"] == "The AI model failed; trying again")
        .unwrap_or_else(|| panic!("no retry event: {events:?}"));
    assert_eq!(retry["type"], "status");
    assert_eq!(retry["content"]["attempt"], 2);
    assert_eq!(retry["content"]["reason"], "the language model service answered 503");
    assert!(retry["content"]["wait_ms"].as_u64().is_some(), "{retry}");
    assert!(!retry.to_string().contains("10.1.2.3"), "{retry}");
}

#[tokio::test]
async fn invalid_tool_arguments_and_unknown_chunks_go_back_to_the_model() {
    let (url, _) = fake_model(|n| {
        let body = match n {
            0 => json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "edit_section", "arguments": "{not json"}},
                {"id": "b", "type": "function", "function": {"name": "delete_section", "arguments": "{\"chunk_id\": \"nope\", \"explanation\": \"x\"}"}}
            ]}}]}),
            _ => json!({"choices": [{"message": {"role": "assistant", "content": "I could not edit."}}]}),
        };
        (200, body.to_string())
    })
    .await;
    let app = openai_app(&url).await;
    let key = app.agent_key().await;
    let before = seed(&app, &key, "t", &["untouched"]).await;
    let job = start(&app, &key, json!({"session_id": "t", "message": "try"})).await;
    let done = wait_for(&app, &key, job["job_id"].as_str().unwrap(), &["failed", "completed"]).await;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["response"], "I could not edit.");
    let results: Vec<Value> = done["metadata"]["intermediate_responses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "tool_result")
        .cloned()
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r["content"]["ok"] == false), "{results:?}");
    assert_eq!(doc(&app, &key, "t").await["version_id"], before["version_id"]);
}

#[tokio::test]
async fn revert_restores_and_refuses_while_a_job_waits() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    seed(&app, &key, "r", &["alpha"]).await;
    let original = doc(&app, &key, "r").await["html"].clone();
    app.send(
        app.post("/v1/chat")
            .bearer_auth(&key)
            .json(&json!({"session_id": "r", "message": "replace \"alpha\" with \"beta\""})),
    )
    .await
    .expect_status(200);
    let history = app.send(app.get("/v1/sessions/r/history").bearer_auth(&key)).await;
    let first = history.json["messages"][0]["message_id"].as_str().unwrap().to_owned();
    let job = start(
        &app,
        &key,
        json!({"session_id": "r", "message": "replace \"beta\" with \"gamma\"", "require_approval": true}),
    )
    .await;
    wait_for(&app, &key, job["job_id"].as_str().unwrap(), &["awaiting_approval"]).await;
    app.send(app.post("/v1/sessions/r/revert").bearer_auth(&key).json(&json!({"message_id": first})))
        .await
        .expect_status(409);
    app.send(app.post(&format!("/v1/jobs/{}/cancel", job["job_id"].as_str().unwrap())).bearer_auth(&key))
        .await
        .expect_status(200);
    app.send(app.post("/v1/sessions/r/revert").bearer_auth(&key).json(&json!({"message_id": first})))
        .await
        .expect_status(200);
    assert_eq!(doc(&app, &key, "r").await["html"], original);
    app.send(app.post("/v1/sessions/r/revert").bearer_auth(&key).json(&json!({"message_id": first})))
        .await
        .expect_status(404);
}

#[tokio::test]
async fn reviewer_feedback_goes_back_to_the_ai_which_proposes_again() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    seed(&app, &key, "f", &["alpha text", "plain"]).await;
    let job = start(
        &app,
        &key,
        json!({"session_id": "f", "message": "replace \"alpha\" with \"omega\"", "require_approval": true}),
    )
    .await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    let waiting = wait_for(&app, &key, &id, &["awaiting_approval"]).await;
    let first = waiting["metadata"]["pending_changes"][0]["change_id"].clone();
    let r = app
        .send(app.post("/v1/chat/f/approve").bearer_auth(&key).json(&json!({
            "job_id": id, "reject": [first], "feedback": "replace \"alpha\" with \"gamma\""
        })))
        .await;
    r.expect_status(200);
    assert_ne!(r.json["status"], "completed", "the AI gets another turn: {}", r.json);
    let again = wait_for(&app, &key, &id, &["awaiting_approval", "completed", "failed"]).await;
    assert_eq!(again["status"], "awaiting_approval", "{again}");
    let proposal = again["metadata"]["pending_changes"][0]["new_html"].as_str().unwrap_or_default().to_owned();
    assert!(proposal.contains("gamma text"), "{proposal}");
    app.send(app.post("/v1/chat/f/approve").bearer_auth(&key).json(&json!({"job_id": id, "approve_all": true})))
        .await
        .expect_status(200);
    let done = wait_for(&app, &key, &id, &["completed"]).await;
    assert_eq!(done["result"]["usage"]["ops_charged"], 1);
    assert!(doc(&app, &key, "f").await["html"].as_str().unwrap().contains("gamma text"));
    assert_eq!(used(&app, &key).await, 1);
}

/// Starts a turn on "alpha one", "alpha two" that asks for approval, approves the first change
/// and rejects the second with feedback, and waits for the AI's second proposal. Returns the
/// job id and the document's html before the turn.
async fn turn_in_rounds(app: &TestApp, key: &str, sid: &str) -> (String, String) {
    seed(app, key, sid, &["alpha one", "alpha two"]).await;
    let original = doc(app, key, sid).await["html"].as_str().unwrap_or_default().to_owned();
    let job = start(
        app,
        key,
        json!({"session_id": sid, "message": "replace \"alpha\" with \"omega\"", "require_approval": true}),
    )
    .await;
    let id = job["job_id"].as_str().unwrap().to_owned();
    let waiting = wait_for(app, key, &id, &["awaiting_approval"]).await;
    let pending = waiting["metadata"]["pending_changes"].as_array().cloned().unwrap_or_default();
    let change = |text: &str| {
        pending.iter().find(|p| p["old_html"].as_str().unwrap_or_default().contains(text)).unwrap()["change_id"].clone()
    };
    app.send(app.post(&format!("/v1/chat/{sid}/approve")).bearer_auth(key).json(&json!({
        "job_id": id, "approve": [change("alpha one")], "reject": [change("alpha two")],
        "feedback": "replace \"alpha\" with \"gamma\""
    })))
    .await
    .expect_status(200);
    wait_for(app, key, &id, &["awaiting_approval"]).await;
    (id, original)
}

async fn history(app: &TestApp, key: &str, sid: &str) -> Vec<Value> {
    let r = app.send(app.get(&format!("/v1/sessions/{sid}/history")).bearer_auth(key)).await;
    r.expect_status(200);
    r.json["messages"].as_array().cloned().unwrap_or_default()
}

async fn revert(app: &TestApp, key: &str, sid: &str, message: &Value) {
    app.send(
        app.post(&format!("/v1/sessions/{sid}/revert"))
            .bearer_auth(key)
            .json(&json!({"message_id": message["message_id"]})),
    )
    .await
    .expect_status(200);
}

/// After a partial approval with feedback, the turn's result describes every change it
/// applied, the first round's too (it described the last round only); the history shows the
/// round sent back (the AI's answer and the reviewer's notes) between the request and the last
/// answer; and a revert to the turn undoes every round (it undid the last one only).
#[tokio::test]
async fn a_turn_in_rounds_lists_every_round_and_is_reverted_whole() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let (id, original) = turn_in_rounds(&app, &key, "rounds").await;
    app.send(app.post("/v1/chat/rounds/approve").bearer_auth(&key).json(&json!({"job_id": id, "approve_all": true})))
        .await
        .expect_status(200);
    let done = wait_for(&app, &key, &id, &["completed"]).await;
    let changes = done["result"]["document_changes"]["changes"].as_array().cloned().unwrap_or_default();
    let written: Vec<String> = changes.iter().map(|c| c["new_html"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(written.len(), 2, "{written:?}");
    assert!(written[0].contains("omega one") && written[1].contains("gamma two"), "{written:?}");
    assert_eq!(done["result"]["usage"]["ops_charged"], 1);
    let html = doc(&app, &key, "rounds").await["html"].as_str().unwrap_or_default().to_owned();
    assert!(html.contains("omega one") && html.contains("gamma two"), "{html}");

    let messages = history(&app, &key, "rounds").await;
    let said: Vec<(&str, &str)> = messages
        .iter()
        .map(|m| (m["role"].as_str().unwrap_or_default(), m["content"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(said.len(), 4, "{said:?}");
    assert_eq!(said[0], ("user", "replace \"alpha\" with \"omega\""));
    assert_eq!(said[1].0, "assistant");
    assert!(said[1].1.ends_with("1 of 2 proposed changes applied after review."), "{said:?}");
    assert_eq!(said[2], ("user", "My notes on the changes I rejected:\nreplace \"alpha\" with \"gamma\""));
    assert_eq!(said[3].0, "assistant");
    assert!(said[3].1.ends_with("1 of 1 proposed change applied after review."), "{said:?}");
    assert!(messages.iter().all(|m| m["job_id"] == id.as_str()), "one turn: {messages:?}");
    assert_eq!(messages[3]["version_after"], done["result"]["document_changes"]["version_id"]);
    revert(&app, &key, "rounds", &messages[0]).await;
    assert_eq!(doc(&app, &key, "rounds").await["html"], original);
}

/// A turn cancelled, or timed out waiting for approval, after a reviewer approved part of it:
/// the approved edits stay in the document, the turn is in the history (not charged) and a
/// revert to it undoes them. Before, the document kept edits that no history entry named.
#[tokio::test]
async fn a_turn_cancelled_after_an_approved_round_is_in_the_history_and_reverts() {
    for timeout in [false, true] {
        let app = if timeout {
            // Long enough for the test to answer the first proposal (the sweep runs each second).
            spawn_app_with(&[("REDLINE_APPROVAL_TIMEOUT_SECS", "2")]).await
        } else {
            spawn_app().await
        };
        let key = app.agent_key().await;
        let (id, original) = turn_in_rounds(&app, &key, "cut").await;
        let approved_html = doc(&app, &key, "cut").await["html"].as_str().unwrap_or_default().to_owned();
        assert!(approved_html.contains("omega one") && approved_html.contains("alpha two"), "{approved_html}");
        if !timeout {
            app.send(app.post(&format!("/v1/jobs/{id}/cancel")).bearer_auth(&key)).await.expect_status(200);
        }
        let ended = wait_for(&app, &key, &id, &["cancelled"]).await;
        assert!(ended["result"].is_null(), "{ended}");
        assert_eq!(doc(&app, &key, "cut").await["html"], approved_html.as_str(), "the approved round stays");
        assert_eq!(used(&app, &key).await, 0, "a cancelled turn is not billed");

        let messages = history(&app, &key, "cut").await;
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert_eq!(messages[0]["role"], "user");
        assert_eq!(messages[0]["job_id"], id.as_str());
        let said = messages[1]["content"].as_str().unwrap_or_default();
        assert!(
            said.starts_with(
                "This turn was cancelled after the reviewer had approved 1 change (1 section edited); they stay"
            ),
            "{said}"
        );
        revert(&app, &key, "cut", &messages[0]).await;
        assert_eq!(doc(&app, &key, "cut").await["html"], original);
    }
}

/// Two turns on one session at the same moment: reverting the one recorded last undoes its
/// edits only. Its `version_before` is the version its edits were written onto, which holds
/// the other turn's edits when those were committed first (it was the version the turn
/// started from, and the revert threw the other turn's edits away while keeping its messages).
#[tokio::test]
async fn reverting_the_later_of_two_concurrent_turns_keeps_the_earlier_ones_edits() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    for round in 0..12 {
        let sid = format!("two-{round}");
        seed(&app, &key, &sid, &["a foo", "b foo"]).await;
        let jobs = futures_util::future::join_all([
            start(&app, &key, json!({"session_id": sid, "message": "append a section: hello"})),
            start(&app, &key, json!({"session_id": sid, "message": "replace \"b foo\" with \"B foo\""})),
        ])
        .await;
        for job in &jobs {
            wait_for(&app, &key, job["job_id"].as_str().unwrap(), &["completed"]).await;
        }
        let both = doc(&app, &key, &sid).await["html"].as_str().unwrap_or_default().to_owned();
        assert!(both.contains("hello") && both.contains("B foo"), "{both}");
        let history = app.send(app.get(&format!("/v1/sessions/{sid}/history")).bearer_auth(&key)).await;
        let messages = history.json["messages"].as_array().cloned().unwrap_or_default();
        assert_eq!(messages.len(), 4, "{}", history.text);
        let later = &messages[2];
        let kept = &messages[0];
        app.send(
            app.post(&format!("/v1/sessions/{sid}/revert"))
                .bearer_auth(&key)
                .json(&json!({"message_id": later["message_id"]})),
        )
        .await
        .expect_status(200);
        let html = doc(&app, &key, &sid).await["html"].as_str().unwrap_or_default().to_owned();
        let (kept_edit, undone_edit) = if kept["content"].as_str().unwrap_or_default().contains("append") {
            ("hello", "B foo")
        } else {
            ("B foo", "hello")
        };
        assert!(html.contains(kept_edit), "the earlier turn's edit stays: {html}");
        assert!(!html.contains(undone_edit), "the reverted turn's edit is gone: {html}");
    }
}

/// A turn sent while its session is deleted is either deleted with it, its held operation
/// given back, or runs and is charged: never deleted and charged (a job queued between the
/// delete's listing and its deletion used to keep its operation for good).
#[tokio::test]
async fn a_turn_racing_its_sessions_delete_is_charged_only_if_it_ran() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let mut jobs = Vec::new();
    for round in 0..8 {
        let sid = format!("race-{round}");
        seed(&app, &key, &sid, &["a foo"]).await;
        let submit = app.send(
            app.post("/v1/chat/async")
                .bearer_auth(&key)
                .json(&json!({"session_id": sid, "message": "append a section: Z"})),
        );
        let delete = app.send(app.delete(&format!("/v1/sessions/{sid}")).bearer_auth(&key));
        let (submitted, deleted) = tokio::join!(submit, delete);
        submitted.expect_status(202);
        deleted.expect_status(204);
        jobs.push(submitted.json["job_id"].as_str().unwrap().to_owned());
    }
    let (mut completed, mut gone) = (0, 0);
    for job in &jobs {
        let r = app.send(app.get(&format!("/v1/jobs/{job}")).bearer_auth(&key)).await;
        if r.status.as_u16() == 404 {
            // Deleted with its session: before it ran (not charged), or after it completed
            // (charged, as a turn that ran).
            gone += 1;
            continue;
        }
        let settled = wait_for(&app, &key, job, &["completed", "failed", "cancelled"]).await;
        if settled["status"] == "completed" {
            completed += 1;
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let charged = used(&app, &key).await;
    assert!(
        (completed..=completed + gone).contains(&charged),
        "only turns that ran are charged: {charged} charged, {completed} completed, {gone} deleted with their session"
    );
}
