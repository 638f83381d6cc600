//! The text edit protocols through the API, with a scripted model (docs/api.md, "Edit
//! protocols"): a model whose name states a small size gets `rewrite` by default; sections
//! its answer leaves out are kept; a question gets answering instructions; an answer that
//! changes nothing is sent back, and the person never reads a change that was not made.

use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::chat::{fake_model, seed};
use crate::helpers::*;

fn answer(text: &str) -> String {
    json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
    .to_string()
}

fn ids(html: &str) -> Vec<String> {
    html.split("data-chunk-id=\"").skip(1).map(|rest| rest[..rest.find('"').unwrap()].to_owned()).collect()
}

async fn chat(app: &TestApp, key: &str, message: &str) -> Reply {
    let r =
        app.send(app.post("/v1/chat").bearer_auth(key).json(&json!({"session_id": "memo", "message": message}))).await;
    r.expect_status(200);
    r
}

#[tokio::test]
async fn a_small_local_model_edits_by_rewriting_what_it_sees_and_answers_questions_plainly() {
    let script: Arc<Mutex<Vec<String>>> = Arc::default();
    let scripted = script.clone();
    let (url, calls) =
        fake_model(move |n| (200, answer(scripted.lock().unwrap().get(n).map_or("", String::as_str)))).await;
    let app = spawn_app_with(&[
        ("REDLINE_LLM_PROVIDER", "openai"),
        ("REDLINE_OPENAI_BASE_URL", &url),
        ("REDLINE_OPENAI_MODEL", "qwen2.5-coder-1.5b"),
    ])
    .await;
    let key = app.agent_key().await;
    let seeded =
        seed(&app, &key, "memo", &["Acme grew by 12%.", "The Lyon office opened in May.", "Ask Mariana."]).await;
    let html = seeded["html"].as_str().unwrap().to_owned();
    let id = ids(&html);
    let calls_now = || calls.load(std::sync::atomic::Ordering::SeqCst);

    // 1. An edit answered with only the changed section: the others stay.
    script.lock().unwrap().push(format!(
        "```html\n<p data-chunk-id=\"{}\">The Lyon office opened in June.</p>\n```\nI changed May to June.",
        id[1]
    ));
    let r = chat(&app, &key, "The Lyon office opened in June, not May.").await;
    let after = r.json["document_changes"]["updated_html"].as_str().unwrap_or_default().to_owned();
    assert_eq!(ids(&after), id, "{after}: no section deleted, ids kept");
    assert!(after.contains("opened in June.") && after.contains("Acme grew by 12%.") && after.contains("Ask Mariana."));
    assert_eq!(r.json["response"], "I changed May to June.");
    assert_eq!(calls_now(), 1);

    // 2. A question: plain words back, nothing changed.
    script.lock().unwrap().push("Revenue grew by 12%.".to_owned());
    let r = chat(&app, &key, "By how much did revenue grow?").await;
    assert_eq!(r.json["response"], "Revenue grew by 12%.");
    assert_eq!(r.json["document_changes"]["changes"], json!([]), "{r:?}");

    // 3. The model echoes the sections unchanged, twice, then claims an edit: sent back
    // twice (at most), and the person is told plainly that nothing changed.
    let echo = format!("```html\n{}\n```", after.trim());
    script.lock().unwrap().extend([echo.clone(), echo, "I added the paragraph.".to_owned()]);
    let r = chat(&app, &key, "Add a paragraph about the Porto office.").await;
    assert_eq!(calls_now(), 5);
    let response = r.json["response"].as_str().unwrap_or_default();
    assert!(response.starts_with("No change was made to the document."), "{response}");
    assert!(!response.contains("<p"), "{response}");
    assert_eq!(app.send(app.get("/v1/documents/memo").bearer_auth(&key)).await.json["html"], after);
}
