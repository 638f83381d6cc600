//! The `redline-fake-llm` binary as the browser tests use it: started as a process, read for its
//! URL, scripted and read over HTTP, stopped with SIGTERM.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ChildStdout, Command, Stdio};

use serde_json::{json, Value};

const BINARY: &str = env!("CARGO_BIN_EXE_redline-fake-llm");

/// A running `redline-fake-llm`, killed when dropped.
struct Process {
    child: Child,
    stdout: BufReader<ChildStdout>,
    /// The line it printed: what `REDLINE_OPENAI_BASE_URL` would be.
    base_url: String,
    /// Where its control endpoints are: `http://127.0.0.1:PORT/_fake`.
    control: String,
}

impl Process {
    fn start(args: &[&str]) -> Self {
        Self::try_start(args).expect("the binary prints its URL")
    }

    /// `None` when it exits without a line (a port it cannot bind).
    fn try_start(args: &[&str]) -> Option<Self> {
        let mut child = Command::new(BINARY).args(args).stdout(Stdio::piped()).spawn().expect("the binary starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("its standard output"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("its first line");
        if line.is_empty() {
            let status = child.wait().expect("it exits");
            assert_eq!(status.code(), Some(1), "no line: only a port it cannot bind stops it");
            return None;
        }
        let base_url = line.strip_suffix('\n').unwrap_or_else(|| panic!("one whole line, not {line:?}")).to_owned();
        let port = base_url
            .strip_prefix("http://127.0.0.1:")
            .and_then(|rest| rest.strip_suffix("/v1"))
            .unwrap_or_else(|| panic!("http://127.0.0.1:PORT/v1, not {base_url:?}"));
        assert!(port.parse::<u16>().is_ok_and(|port| port > 0), "a port: {base_url}");
        let control = format!("{}/_fake", base_url.trim_end_matches("/v1"));
        Some(Self { child, stdout, base_url, control })
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn edit_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "edit_section",
        "description": "Replace the HTML of one section.",
        "parameters": {"type": "object", "properties": {"chunk_id": {"type": "string"}, "new_html": {"type": "string"}}},
    }})
}

fn completion(message: &str, stream: bool) -> Value {
    json!({
        "model": "fake-model",
        "messages": [{"role": "system", "content": "You edit documents."}, {"role": "user", "content": message}],
        "tools": [edit_tool()],
        "stream": stream,
    })
}

async fn post(client: &reqwest::Client, url: &str, body: &Value) -> reqwest::Response {
    client.post(url).json(body).send().await.expect("an answer")
}

/// The text of a completion's answer, streamed (the `delta.content` of every chunk, which must
/// end with `[DONE]`) or not.
async fn text_of(answer: reqwest::Response, stream: bool) -> String {
    assert_eq!(answer.status(), 200);
    if !stream {
        let body: Value = answer.json().await.expect("a JSON completion");
        return body["choices"][0]["message"]["content"].as_str().expect("a text answer").to_owned();
    }
    let content_type = answer.headers()["content-type"].to_str().unwrap().to_owned();
    assert_eq!(content_type, "text/event-stream");
    let events = answer.text().await.expect("the whole stream");
    let data: Vec<&str> = events.lines().filter_map(|line| line.strip_prefix("data: ")).collect();
    assert_eq!(data.last(), Some(&"[DONE]"), "{events}");
    data[..data.len() - 1]
        .iter()
        .map(|chunk| serde_json::from_str::<Value>(chunk).expect("a JSON chunk"))
        .filter_map(|chunk| chunk["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect()
}

async fn records(client: &reqwest::Client, fake: &Process) -> Vec<Value> {
    let answer = client.get(format!("{}/requests", fake.control)).send().await.expect("an answer");
    assert_eq!(answer.status(), 200);
    answer.json().await.expect("a JSON array")
}

#[tokio::test]
async fn scripted_over_http_answered_on_v1_recorded_and_stopped() {
    let mut fake = Process::start(&[]);
    let client = reqwest::Client::new();
    let chat = format!("{}/chat/completions", fake.base_url);

    let edit = json!({"chunk_id": "c-intro", "new_html": "<p>The Buyer pays.</p>"});
    let script = json!({"steps": [[{"name": "edit_section", "arguments": edit}], "I named the Buyer."]});
    assert_eq!(post(&client, &format!("{}/script", fake.control), &script).await.status(), 204);

    let answer = post(&client, &chat, &completion("Name the party in c-intro", false)).await;
    assert_eq!(answer.status(), 200);
    let body: Value = answer.json().await.expect("a JSON completion");
    let choice = &body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!((&call["id"], &call["function"]["name"]), (&json!("call_1_0"), &json!("edit_section")));
    let arguments: Value = serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, edit);

    let answer = post(&client, &chat, &completion("And say so", true)).await;
    assert_eq!(text_of(answer, true).await, "I named the Buyer.");

    let sent = records(&client, &fake).await;
    assert_eq!(sent.len(), 2, "{sent:?}");
    for (record, (n, stream, message)) in
        sent.iter().zip([(1, false, "Name the party in c-intro"), (2, true, "And say so")])
    {
        assert_eq!(record["n"], n);
        assert_eq!(record["path"], "/v1/chat/completions");
        assert_eq!(record["stream"], stream);
        assert_eq!(record["problems"], json!([]));
        assert_eq!(record["body"]["messages"][1]["content"], message);
        assert_eq!(record["step"]["source"], "scripted");
        assert!(record["headers"]["content-type"].as_str().unwrap().starts_with("application/json"));
    }
    assert_eq!(sent[0]["step"]["tool_calls"][0]["arguments"], edit);

    // A step that waits for the reviewer's words, answered once, and a default for the rest.
    for stream in [false, true] {
        let script = json!({
            "steps": [{"match": "Call them the Purchaser", "text": "Purchaser it is."}],
            "default": "No feedback yet.",
        });
        assert_eq!(post(&client, &format!("{}/script", fake.control), &script).await.status(), 204);
        for (message, expected) in [
            ("Name the party", "No feedback yet."),
            ("Reviewer feedback on the rejected changes: Call them the Purchaser", "Purchaser it is."),
            ("Call them the Purchaser, I said", "No feedback yet."),
        ] {
            let answer = post(&client, &chat, &completion(message, stream)).await;
            assert_eq!(text_of(answer, stream).await, expected, "{message} (stream: {stream})");
        }
    }

    // A script the fake cannot read changes nothing and says why.
    let answer = post(&client, &format!("{}/script", fake.control), &json!({"steps": [{"tool_call": []}]})).await;
    assert_eq!(answer.status(), 400);
    let error: Value = answer.json().await.unwrap();
    assert!(error["error"]["message"].as_str().unwrap().contains("unknown step key \"tool_call\""), "{error}");
    let answer = client.get(format!("{}/nothing", fake.control)).send().await.unwrap();
    assert_eq!(answer.status(), 404);

    // A reset: no record, the built-in default, numbering from 1 again.
    let answer = client.post(format!("{}/reset", fake.control)).send().await.unwrap();
    assert_eq!(answer.status(), 204);
    assert_eq!(records(&client, &fake).await, Vec::<Value>::new());
    let answer = post(&client, &chat, &completion("hi", false)).await;
    assert_eq!(text_of(answer, false).await, "OK (fake LLM: nothing scripted)");
    let sent = records(&client, &fake).await;
    assert_eq!((sent.len(), &sent[0]["n"], &sent[0]["step"]["source"]), (1, &json!(1), &json!("default")));

    // SIGTERM stops it cleanly, and it printed nothing but its URL.
    let pid = fake.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs").success());
    let status = fake.child.wait().expect("it stops");
    assert!(status.success(), "{status}");
    let mut rest = String::new();
    fake.stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "one line only");
}

#[test]
fn a_chosen_port_and_wrong_arguments() {
    // A port free a moment ago may be taken by the time the fake binds it: a few tries.
    let (free, fake) = (0..5)
        .find_map(|_| {
            let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            Process::try_start(&["--port", &free.to_string()]).map(|fake| (free, fake))
        })
        .expect("a free port in 5 tries");
    assert_eq!(fake.base_url, format!("http://127.0.0.1:{free}/v1"));

    for args in [&["--port", "nope"][..], &["--port"], &["--verbose"]] {
        let out = Command::new(BINARY).args(args).output().expect("the binary runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains("usage: redline-fake-llm [--port N]"), "{args:?}");
    }
    // The port is taken by the running fake.
    let out = Command::new(BINARY).args(["--port", &free.to_string()]).output().expect("the binary runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot bind"));
}
