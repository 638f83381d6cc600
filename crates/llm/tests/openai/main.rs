//! The `openai` adapter against real HTTP: a scriptable fake OpenAI server (`redline-fake-llm`,
//! which answers 400 to what the real API would refuse) and, for what it cannot be scripted to
//! do, a raw server in the test.

mod support;

use std::time::{Duration, Instant};

use redline_fake_llm::Fake;
use redline_llm::openai::{ConfigError, OpenAiConfig, OpenAiModel};
use redline_ports::llm::{CompletionRequest, LanguageModel, LlmError, Message, NoDeltas, ToolCall, ToolSpec};
use serde_json::{json, Value};
use support::{config, response, sse_head, Collect, RawServer, Reply, KEY, MODEL};

fn model(config: OpenAiConfig) -> OpenAiModel {
    OpenAiModel::new(config).expect("a valid config")
}

fn edit_tool() -> ToolSpec {
    ToolSpec {
        name: "edit_section".into(),
        description: "Replace the HTML of one section.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"chunk_id": {"type": "string"}, "new_html": {"type": "string"}, "explanation": {"type": "string"}},
            "required": ["chunk_id", "new_html"],
        }),
    }
}

fn read_tool() -> ToolSpec {
    ToolSpec {
        name: "read_sections".into(),
        description: "Read sections.".into(),
        parameters: json!({"type": "object", "properties": {"chunk_ids": {"type": "array", "items": {"type": "string"}}}}),
    }
}

fn ask(text: &str) -> CompletionRequest {
    CompletionRequest {
        messages: vec![Message::system("You edit documents."), Message::user(text)],
        tools: vec![edit_tool()],
    }
}

fn problems(request: &Value) -> &Value {
    &request["problems"]
}

// ---------------------------------------------------------------------------------------------
// Request shape
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn requests_have_the_chat_completions_shape() {
    let fake = Fake::start();
    for stream in [false, true] {
        let call =
            ToolCall { id: "call_a".into(), name: "edit_section".into(), arguments: r#"{"chunk_id":"c1"}"#.into() };
        let request = CompletionRequest {
            messages: vec![
                Message::system("You edit documents."),
                Message::user("Fix c1"),
                Message::assistant(None, vec![call]),
                Message::tool("call_a", "edited"),
                Message::assistant(Some("Done before.".into()), vec![]),
                Message::user("Again"),
            ],
            tools: vec![edit_tool(), read_tool()],
        };
        model(config(&fake.base_url, stream)).complete(&request, &NoDeltas).await.expect("a completion");
        let requests = fake.requests().await;
        let sent = requests.last().expect("one request");
        assert_eq!(problems(sent), &json!([]), "the fake found problems");
        assert_eq!(sent["path"], "/v1/chat/completions");
        assert_eq!(sent["headers"]["authorization"], format!("Bearer {KEY}"));
        assert!(sent["headers"]["content-type"].as_str().unwrap().starts_with("application/json"));
        let body = &sent["body"];
        assert_eq!(body["model"], MODEL);
        assert_eq!(body["stream"], stream);
        if stream {
            assert_eq!(body["stream_options"], json!({"include_usage": true}));
        } else {
            assert!(body.get("stream_options").is_none());
        }
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "You edit documents."},
                {"role": "user", "content": "Fix c1"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_a", "type": "function", "function": {"name": "edit_section", "arguments": "{\"chunk_id\":\"c1\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_a", "content": "edited"},
                {"role": "assistant", "content": "Done before."},
                {"role": "user", "content": "Again"},
            ])
        );
        assert_eq!(
            body["tools"],
            json!([
                {"type": "function", "function": {"name": "edit_section", "description": edit_tool().description, "parameters": edit_tool().parameters}},
                {"type": "function", "function": {"name": "read_sections", "description": read_tool().description, "parameters": read_tool().parameters}},
            ])
        );
    }
}

#[tokio::test]
async fn no_tools_no_key_and_a_trailing_slash() {
    let fake = Fake::start();
    let mut config = config(&format!("{}/", fake.base_url), false);
    config.api_key = None;
    let request = CompletionRequest { messages: vec![Message::user("hi")], tools: vec![] };
    model(config).complete(&request, &NoDeltas).await.expect("a completion");
    let sent = &fake.requests().await[0];
    assert_eq!(problems(sent), &json!([]));
    assert_eq!(sent["path"], "/v1/chat/completions");
    assert!(sent["body"].get("tools").is_none(), "no empty tools array: {}", sent["body"]);
    assert!(sent["headers"].get("authorization").is_none());
}

#[test]
fn the_name_and_bad_configs() {
    assert_eq!(model(OpenAiConfig::new("http://127.0.0.1:1/v1", "gpt-x")).name(), "openai:gpt-x");
    assert!(matches!(OpenAiModel::new(OpenAiConfig::new("http://127.0.0.1:1/v1", " ")), Err(ConfigError::EmptyModel)));
    assert!(matches!(OpenAiModel::new(OpenAiConfig::new("127.0.0.1:1", "m")), Err(ConfigError::BaseUrl(_))));
    let mut bad_key = OpenAiConfig::new("http://127.0.0.1:1/v1", "m");
    bad_key.api_key = Some("sk\nx".into());
    assert!(matches!(OpenAiModel::new(bad_key), Err(ConfigError::ApiKey)));
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn text_streamed_and_not() {
    let fake = Fake::start();
    let text = "A fairly long answer, so that the fake splits it into several streamed pieces.";
    for stream in [false, true] {
        fake.script(json!({"steps": [text]})).await;
        let sink = Collect::default();
        let done =
            model(config(&fake.base_url, stream)).complete(&ask("Say something"), &sink).await.expect("a completion");
        assert_eq!(done.content.as_deref(), Some(text));
        assert!(done.tool_calls.is_empty());
        assert!(done.usage.prompt_tokens > 0 && done.usage.completion_tokens > 0, "{:?}", done.usage);
        if stream {
            let pieces = sink.pieces();
            assert!(pieces.len() > 2, "streamed in pieces: {pieces:?}");
            assert_eq!(pieces.concat(), text);
        }
    }
}

#[tokio::test]
async fn tool_calls_single_and_parallel_with_split_arguments() {
    let fake = Fake::start();
    let long_html = format!("<p>{}</p>", "word ".repeat(40));
    for stream in [false, true] {
        fake.script(json!({"steps": [
            [{"name": "edit_section", "arguments": {"chunk_id": "c1", "new_html": long_html, "explanation": "longer"}}],
            {"text": "Two things at once.", "tool_calls": [
                {"name": "read_sections", "arguments": {"chunk_ids": ["c1", "c2"]}},
                {"name": "edit_section", "arguments": "{\"chunk_id\": \"c2\", \"new_html\": \"<p>é ✓</p>\"}"},
            ]},
        ]}))
        .await;
        let model = model(config(&fake.base_url, stream));

        let single = model.complete(&ask("Edit c1"), &NoDeltas).await.expect("a completion");
        let n = fake.requests().await.last().unwrap()["n"].as_u64().unwrap();
        assert_eq!(single.content, None);
        assert_eq!(single.tool_calls.len(), 1);
        let call = &single.tool_calls[0];
        assert_eq!((call.id.as_str(), call.name.as_str()), (format!("call_{n}_0").as_str(), "edit_section"));
        let arguments: Value = serde_json::from_str(&call.arguments).expect("whole JSON arguments");
        assert_eq!(arguments, json!({"chunk_id": "c1", "new_html": long_html, "explanation": "longer"}));

        let sink = Collect::default();
        let parallel = model.complete(&ask("Read and edit"), &sink).await.expect("a completion");
        let n = fake.requests().await.last().unwrap()["n"].as_u64().unwrap();
        assert_eq!(parallel.content.as_deref(), Some("Two things at once."));
        let got: Vec<(String, String, Value)> = parallel
            .tool_calls
            .iter()
            .map(|c| (c.id.clone(), c.name.clone(), serde_json::from_str(&c.arguments).expect("JSON arguments")))
            .collect();
        assert_eq!(
            got,
            vec![
                (format!("call_{n}_0"), "read_sections".to_owned(), json!({"chunk_ids": ["c1", "c2"]})),
                (format!("call_{n}_1"), "edit_section".to_owned(), json!({"chunk_id": "c2", "new_html": "<p>é ✓</p>"})),
            ]
        );
        if stream {
            assert_eq!(sink.pieces().concat(), "Two things at once.");
        }
    }
}

#[tokio::test]
async fn tool_results_are_fed_back_in_the_next_call() {
    let fake = Fake::start();
    for stream in [false, true] {
        fake.script(json!({"steps": [
            [{"name": "edit_section", "arguments": {"chunk_id": "c1", "new_html": "<p>x</p>"}},
             {"name": "read_sections", "arguments": {"chunk_ids": ["c2"]}}],
            "All done.",
        ]}))
        .await;
        let model = model(config(&fake.base_url, stream));
        let mut request = ask("Edit c1 and read c2");
        request.tools.push(read_tool());
        let first = model.complete(&request, &NoDeltas).await.expect("the first call");
        assert_eq!(first.tool_calls.len(), 2);
        request.messages.push(Message::assistant(first.content.clone(), first.tool_calls.clone()));
        for call in &first.tool_calls {
            request.messages.push(Message::tool(call.id.clone(), format!("result of {}", call.name)));
        }
        let second = model.complete(&request, &NoDeltas).await.expect("the second call");
        assert_eq!(second.content.as_deref(), Some("All done."));
        assert!(second.tool_calls.is_empty());

        let requests = fake.requests().await;
        let sent = requests.last().unwrap();
        assert_eq!(problems(sent), &json!([]), "the fake accepts the fed-back conversation");
        let messages = sent["body"]["messages"].as_array().unwrap();
        let assistant = &messages[2];
        assert_eq!(assistant["role"], "assistant");
        assert_eq!(assistant["content"], Value::Null);
        let ids: Vec<&str> =
            assistant["tool_calls"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(ids, first.tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>());
        for (message, call) in messages[3..5].iter().zip(&first.tool_calls) {
            assert_eq!(message["role"], "tool");
            assert_eq!(message["tool_call_id"], call.id.as_str());
            assert_eq!(message["content"], format!("result of {}", call.name));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Retries and errors
// ---------------------------------------------------------------------------------------------

fn error_body(message: &str) -> Value {
    json!({"error": {"message": message, "type": "server_error"}})
}

#[tokio::test]
async fn a_429_with_retry_after_is_waited_for_then_succeeds() {
    let fake = Fake::start();
    fake.script(json!({"steps": [
        {"status": 429, "headers": {"Retry-After": "1"}, "body": error_body("slow down")},
        "After the wait.",
    ]}))
    .await;
    let done = model(config(&fake.base_url, true)).complete(&ask("hi"), &NoDeltas).await.expect("a completion");
    assert_eq!(done.content.as_deref(), Some("After the wait."));
    let requests = fake.requests().await;
    assert_eq!(requests.len(), 2);
    let waited = requests[1]["received_at"].as_f64().unwrap() - requests[0]["received_at"].as_f64().unwrap();
    assert!(waited >= 0.95, "Retry-After: 1 was honoured, waited only {waited:.3} s");
}

#[tokio::test]
async fn a_long_retry_after_is_capped() {
    let fake = Fake::start();
    fake.script(json!({"steps": [{"status": 503, "headers": {"Retry-After": "3600"}}, "Soon enough."]})).await;
    let mut config = config(&fake.base_url, false);
    config.max_retry_wait = Duration::from_millis(200);
    let started = Instant::now();
    let done = model(config).complete(&ask("hi"), &NoDeltas).await.expect("a completion");
    assert_eq!(done.content.as_deref(), Some("Soon enough."));
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[tokio::test]
async fn a_500_is_retried_then_succeeds() {
    let fake = Fake::start();
    for stream in [false, true] {
        fake.script(json!({"steps": [{"status": 500, "body": error_body("hiccup")}, {"status": 408}, "Recovered."]}))
            .await;
        let before = fake.requests().await.len();
        let sink = Collect::default();
        let done = model(config(&fake.base_url, stream)).complete(&ask("hi"), &sink).await.expect("a completion");
        assert_eq!(done.content.as_deref(), Some("Recovered."));
        assert_eq!(fake.requests().await.len() - before, 3);
        // The sink hears of each retry before its wait.
        let retries: Vec<(u32, Option<u16>)> = sink
            .retries()
            .into_iter()
            .map(|(n, e)| (n, if let LlmError::Upstream { status, .. } = e { Some(status) } else { None }))
            .collect();
        assert_eq!(retries, [(2, Some(500)), (3, Some(408))]);
    }
}

#[tokio::test]
async fn persistent_5xx_ends_with_the_upstream_text_after_every_attempt() {
    let fake = Fake::start();
    fake.script(json!({"steps": [], "default": {"status": 500, "body": error_body("upstream exploded")}})).await;
    let mut config = config(&fake.base_url, true);
    config.max_retries = 2;
    let error = model(config).complete(&ask("hi"), &NoDeltas).await.unwrap_err();
    assert_eq!(error, LlmError::Upstream { status: 500, message: "upstream exploded".into() });
    assert_eq!(fake.requests().await.len(), 3, "the first attempt and two retries");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let fake = Fake::start();
    for (status, body, message) in [
        (400, error_body("bad request shape"), "bad request shape"),
        (401, error_body("Incorrect API key provided"), "Incorrect API key provided"),
        (404, json!("no such model"), "no such model"),
    ] {
        fake.script(json!({"steps": [{"status": status, "body": body}, "never reached"]})).await;
        let before = fake.requests().await.len();
        let error = model(config(&fake.base_url, true)).complete(&ask("hi"), &NoDeltas).await.unwrap_err();
        assert_eq!(error, LlmError::Upstream { status, message: message.into() });
        assert_eq!(fake.requests().await.len() - before, 1, "{status} is not retried");
        fake.script(json!({"steps": []})).await; // drop the unused step
    }
}

#[tokio::test]
async fn a_request_the_api_would_refuse_is_a_400_not_retried() {
    let fake = Fake::start();
    // A tool message answering no earlier call: the fake refuses it as the real API would.
    let request =
        CompletionRequest { messages: vec![Message::user("hi"), Message::tool("nobody", "x")], tools: vec![] };
    let error = model(config(&fake.base_url, false)).complete(&request, &NoDeltas).await.unwrap_err();
    match error {
        LlmError::Upstream { status: 400, message } => {
            assert!(message.contains("answers no earlier tool call"), "{message}")
        }
        other => panic!("expected a 400, got {other:?}"),
    }
    assert_eq!(fake.requests().await.len(), 1);
}

#[tokio::test]
async fn a_silent_upstream_times_out_after_its_retries() {
    let fake = Fake::start();
    fake.script(json!({"steps": [], "default": {"text": "too late", "delay_s": 3}})).await;
    for stream in [false, true] {
        let before = fake.requests().await.len();
        let mut config = config(&fake.base_url, stream);
        config.timeout = Duration::from_millis(300);
        config.max_retries = 1;
        let started = Instant::now();
        let error = model(config).complete(&ask("hi"), &NoDeltas).await.unwrap_err();
        assert_eq!(error, LlmError::Timeout);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "gave up at the timeout, not after the model: {:?}",
            started.elapsed()
        );
        assert_eq!(fake.requests().await.len() - before, 2);
    }
}

#[tokio::test]
async fn a_hanging_connection_times_out() {
    let server = RawServer::start(vec![Reply::Hang]).await;
    let mut config = config(&server.base_url, false);
    config.timeout = Duration::from_millis(200);
    config.max_retries = 2;
    assert_eq!(model(config).complete(&ask("hi"), &NoDeltas).await.unwrap_err(), LlmError::Timeout);
    // The server counts a connection when its accept loop gets to it, which on a loaded
    // machine can come after the client has given up on it: wait for the count to settle.
    assert_eq!(server.hits_settled(3, Duration::from_secs(5)).await, 3, "one attempt and two retries");
}

#[tokio::test]
async fn a_stream_that_stalls_after_text_times_out_without_a_retry() {
    let mut bytes = sse_head();
    bytes.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n");
    let server = RawServer::start(vec![Reply::BytesThenHang(bytes)]).await;
    let mut config = config(&server.base_url, true);
    config.timeout = Duration::from_millis(300);
    let sink = Collect::default();
    assert_eq!(model(config).complete(&ask("hi"), &sink).await.unwrap_err(), LlmError::Timeout);
    assert_eq!(sink.pieces(), vec!["Hel"]);
    assert_eq!(server.hits(), 1, "text already shown is never shown twice by a retry");
}

#[tokio::test]
async fn an_unreachable_upstream_is_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = config(&format!("http://127.0.0.1:{port}/v1"), true);
    config.max_retries = 1;
    match model(config).complete(&ask("hi"), &NoDeltas).await {
        Err(LlmError::Unreachable(reason)) => assert!(!reason.is_empty()),
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Garbage and oddities
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn garbage_from_the_fake_is_an_invalid_response() {
    let fake = Fake::start();
    for stream in [false, true] {
        fake.script(json!({"steps": [{"raw": "this is not JSON {"}, "never reached"]})).await;
        let before = fake.requests().await.len();
        let error = model(config(&fake.base_url, stream)).complete(&ask("hi"), &NoDeltas).await.unwrap_err();
        assert!(matches!(error, LlmError::InvalidResponse(_)), "{error:?}");
        assert_eq!(fake.requests().await.len() - before, 1, "garbage is not retried");
        fake.script(json!({"steps": []})).await;
    }
}

#[tokio::test]
async fn garbage_bodies_are_invalid_responses_never_panics() {
    let json_bodies: Vec<&[u8]> = vec![
        b"",
        b"null",
        b"[1, 2]",
        b"{}",
        br#"{"choices": null}"#,
        br#"{"choices": []}"#,
        br#"{"choices": "x"}"#,
        br#"{"choices": [{}]}"#,
        br#"{"choices": [{"message": {"content": 42}}]}"#,
        br#"{"choices": [{"message": {"tool_calls": [{"id": "a", "function": {}}]}}]}"#,
        br#"{"choices": [{"message": {"tool_calls": "nope"}}]}"#,
        b"\xff\xfe\x00garbage",
    ];
    let sse_bodies: Vec<&[u8]> = vec![
        b"data: nonsense\n\n",
        b"data: {\"choices\":[{\"delta\":{\"content\":\"cut\"}}]}\n\n",
        b"data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\ndata: [DONE]\n\n",
        b"data: {\"error\":{\"message\":\"overloaded mid-stream\"}}\n\n",
        b"data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\n",
        b"data: \xff\xfe\n\n",
        b"",
    ];
    let cases = json_bodies
        .into_iter()
        .map(|b| response(200, "application/json", b))
        .chain(sse_bodies.into_iter().map(|b| [sse_head(), b.to_vec()].concat()));
    for bytes in cases {
        let shown = String::from_utf8_lossy(&bytes).into_owned();
        let server = RawServer::start(vec![Reply::Bytes(bytes)]).await;
        let error = model(config(&server.base_url, true)).complete(&ask("hi"), &NoDeltas).await.unwrap_err();
        assert!(matches!(error, LlmError::InvalidResponse(_)), "{shown:?} → {error:?}");
        assert_eq!(server.hits(), 1, "{shown:?} is not retried");
    }
}

#[tokio::test]
async fn the_stream_error_event_keeps_its_message() {
    let body = [sse_head(), b"data: {\"error\":{\"message\":\"overloaded mid-stream\"}}\n\n".to_vec()].concat();
    let server = RawServer::start(vec![Reply::Bytes(body)]).await;
    match model(config(&server.base_url, true)).complete(&ask("hi"), &NoDeltas).await {
        Err(LlmError::InvalidResponse(reason)) => assert!(reason.contains("overloaded mid-stream"), "{reason}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn tolerated_variants_of_the_wire_format() {
    // A server that ignores `stream: true` and answers one JSON body.
    let plain = br#"{"choices":[{"message":{"role":"assistant","content":"Plain JSON."}}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"#;
    // CRLF lines, comments and keep-alives, no [DONE] but a finish_reason, usage in a last chunk.
    let crlf = b": keep-alive\r\n\r\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"CRLF \"}}]}\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"works.\"},\"finish_reason\":\"stop\"}]}\r\n\r\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":7}}\r\n\r\n";
    // Data after [DONE] is never read.
    let after_done = b"data: {\"choices\":[{\"delta\":{\"content\":\"Stops.\"}}]}\n\ndata: [DONE]\n\ndata: garbage\n\n";
    let cases: Vec<(Vec<u8>, &str, (u64, u64))> = vec![
        (response(200, "application/json", plain), "Plain JSON.", (3, 2)),
        ([sse_head(), crlf.to_vec()].concat(), "CRLF works.", (5, 7)),
        ([sse_head(), after_done.to_vec()].concat(), "Stops.", (0, 0)),
    ];
    for (bytes, text, (prompt, completion)) in cases {
        let server = RawServer::start(vec![Reply::Bytes(bytes)]).await;
        let sink = Collect::default();
        let done = model(config(&server.base_url, true)).complete(&ask("hi"), &sink).await.expect("a completion");
        assert_eq!(done.content.as_deref(), Some(text));
        assert_eq!((done.usage.prompt_tokens, done.usage.completion_tokens), (prompt, completion));
    }
}
