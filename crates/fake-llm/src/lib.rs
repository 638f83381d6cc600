#![doc = include_str!("../README.md")]

mod script;
mod validate;

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

use script::{Script, Step};
use validate::validate;

/// The fake server; it stops when dropped.
pub struct Fake {
    /// What `OpenAiConfig::base_url` should be.
    pub base_url: String,
    state: Arc<Mutex<State>>,
    stop: Option<oneshot::Sender<()>>,
}

struct State {
    steps: Vec<Step>,
    default: Step,
    requests: Vec<Value>,
    counter: u64,
}

impl Fake {
    /// Binds a free port on loopback and serves from a thread of its own, so that a test's
    /// runtime (current-thread or not) never starves it.
    pub fn start() -> Self {
        Self::bind(0).expect("bind the fake")
    }

    /// Binds `127.0.0.1:port` (0: a free port) and serves from a thread of its own, like
    /// [`Fake::start`].
    pub fn bind(port: u16) -> std::io::Result<Self> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        std_listener.set_nonblocking(true)?;
        let url = format!("http://{}", std_listener.local_addr()?);
        let state = Arc::new(Mutex::new(State::new()));
        let (stop, stopped) = oneshot::channel::<()>();
        let served = Arc::clone(&state);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
            runtime.block_on(async move {
                let listener = TcpListener::from_std(std_listener).expect("a tokio listener");
                let accept = async {
                    loop {
                        let Ok((socket, _)) = listener.accept().await else { continue };
                        tokio::spawn(connection(socket, Arc::clone(&served)));
                    }
                };
                tokio::select! {
                    () = accept => {}
                    _ = stopped => {}
                }
            });
        });
        Ok(Self { base_url: format!("{url}/v1"), state, stop: Some(stop) })
    }

    /// Replaces the queue with `{"steps": [...]}`, or extends it with `"append": true`; a
    /// `"default"` key sets the step given when the queue is empty (`null`: the built-in one).
    ///
    /// # Panics
    /// On a script the fake cannot read (an unknown key, a step of the wrong shape), with the
    /// problem; `POST /_fake/script` answers it with a 400 instead.
    pub async fn script(&self, spec: Value) {
        let script = script::parse(spec).unwrap_or_else(|problem| panic!("{problem}"));
        self.state.lock().unwrap().apply(script);
    }

    /// Every completion request received, oldest first.
    pub async fn requests(&self) -> Vec<Value> {
        self.state.lock().unwrap().requests.clone()
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl State {
    /// As the fake starts: nothing queued, the built-in default, no request received.
    fn new() -> Self {
        Self { steps: Vec::new(), default: script::built_in_default(), requests: Vec::new(), counter: 0 }
    }

    fn apply(&mut self, script: Script) {
        if script.append {
            self.steps.extend(script.steps);
        } else {
            self.steps = script.steps;
        }
        if let Some(default) = script.default {
            self.default = default;
        }
    }

    /// The first queued step whose `match` occurs in the request's messages, else the default.
    fn take(&mut self, body: &Value) -> (Step, &'static str) {
        let haystack = body.get("messages").map(Value::to_string).unwrap_or_default();
        let found = self.steps.iter().position(|step| match step.get("match").and_then(Value::as_str) {
            Some(needle) => haystack.contains(needle),
            None => true,
        });
        match found {
            Some(i) => (self.steps.remove(i), "scripted"),
            None => (self.default.clone(), "default"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// HTTP/1.1, just enough: keep-alive, Content-Length or chunked request bodies.
// ---------------------------------------------------------------------------------------------

struct Request {
    method: String,
    path: String,
    headers: Map<String, Value>,
    body: Vec<u8>,
}

async fn connection(mut socket: TcpStream, state: Arc<Mutex<State>>) {
    let mut buffer = Vec::new();
    while let Some(request) = read_request(&mut socket, &mut buffer).await {
        let closing = request.headers.get("connection").and_then(Value::as_str) == Some("close");
        if answer(&mut socket, request, &state).await.is_err() || closing {
            return;
        }
    }
}

async fn fill(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<()> {
    let mut chunk = [0u8; 8192];
    let n = socket.read(&mut chunk).await.ok()?;
    (n > 0).then(|| buffer.extend_from_slice(&chunk[..n]))
}

async fn read_request(socket: &mut TcpStream, buffer: &mut Vec<u8>) -> Option<Request> {
    let head_end = loop {
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        fill(socket, buffer).await?;
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    buffer.drain(..head_end);
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, target) = (first.next()?.to_owned(), first.next()?.to_owned());
    let path = target.split('?').next().unwrap_or_default().to_owned();
    let mut headers = Map::new();
    for line in lines.filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once(':')?;
        headers.insert(name.trim().to_ascii_lowercase(), Value::String(value.trim().to_owned()));
    }
    let header = |name: &str| headers.get(name).and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
    if header("expect") == "100-continue" {
        socket.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await.ok()?;
    }
    let body = if header("transfer-encoding").contains("chunked") {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(i) = buffer.windows(2).position(|w| w == b"\r\n") {
                    break i;
                }
                fill(socket, buffer).await?;
            };
            let size_text = String::from_utf8_lossy(&buffer[..line_end]).into_owned();
            let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
            buffer.drain(..line_end + 2);
            while buffer.len() < size + 2 {
                fill(socket, buffer).await?;
            }
            body.extend_from_slice(&buffer[..size]);
            buffer.drain(..size + 2);
            if size == 0 {
                break body;
            }
        }
    } else {
        let length: usize = header("content-length").parse().unwrap_or(0);
        while buffer.len() < length {
            fill(socket, buffer).await?;
        }
        buffer.drain(..length).collect()
    };
    Some(Request { method, path, headers, body })
}

async fn send(
    socket: &mut TcpStream,
    status: u16,
    content_type: &str,
    extra: &Map<String, Value>,
    body: &[u8],
) -> std::io::Result<()> {
    let mut head =
        format!("HTTP/1.1 {status} Fake\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n", body.len());
    for (name, value) in extra {
        let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(body).await?;
    socket.flush().await
}

async fn send_json(socket: &mut TcpStream, status: u16, body: &Value) -> std::io::Result<()> {
    send(socket, status, "application/json", &Map::new(), body.to_string().as_bytes()).await
}

async fn send_no_content(socket: &mut TcpStream) -> std::io::Result<()> {
    socket.write_all(b"HTTP/1.1 204 No Content\r\n\r\n").await?;
    socket.flush().await
}

fn openai_error(message: &str) -> Value {
    json!({"error": {"message": message, "type": "invalid_request_error"}})
}

/// The control endpoints, outside `/v1`: script, read the records, reset.
async fn control(socket: &mut TcpStream, request: Request, state: &Mutex<State>) -> std::io::Result<()> {
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/_fake/script") => {
            let script = serde_json::from_slice(&request.body)
                .map_err(|e| format!("the script is not JSON: {e}"))
                .and_then(script::parse);
            match script {
                Ok(script) => {
                    state.lock().unwrap().apply(script);
                    send_no_content(socket).await
                }
                Err(problem) => send_json(socket, 400, &openai_error(&problem)).await,
            }
        }
        ("GET", "/_fake/requests") => {
            let requests = Value::from(state.lock().unwrap().requests.clone());
            send_json(socket, 200, &requests).await
        }
        ("POST", "/_fake/reset") => {
            *state.lock().unwrap() = State::new();
            send_no_content(socket).await
        }
        (method, path) => {
            let message = format!(
                "no route {method} {path}; the control endpoints are POST /_fake/script, GET /_fake/requests and POST /_fake/reset"
            );
            send_json(socket, 404, &openai_error(&message)).await
        }
    }
}

async fn answer(socket: &mut TcpStream, request: Request, state: &Mutex<State>) -> std::io::Result<()> {
    if request.path.starts_with("/_fake/") {
        return control(socket, request, state).await;
    }
    if request.method == "GET" && request.path.ends_with("/models") {
        let models = json!({"object": "list", "data": [{"id": "fake-model", "object": "model", "owned_by": "fake"}]});
        return send_json(socket, 200, &models).await;
    }
    if request.method != "POST" || !request.path.ends_with("/chat/completions") {
        return send_json(socket, 404, &openai_error(&format!("no route {}", request.path))).await;
    }
    let parsed: Result<Value, _> = serde_json::from_slice(&request.body);
    let problems = match &parsed {
        Ok(body) => validate(body),
        Err(e) => vec![format!("body is not JSON: {e}")],
    };
    let body = parsed.unwrap_or(Value::Null);
    let stream = body["stream"].as_bool().unwrap_or(false);
    let received_at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
    let (n, step) = {
        let mut state = state.lock().unwrap();
        state.counter += 1;
        let n = state.counter;
        let mut record = json!({
            "n": n, "path": request.path, "headers": request.headers, "body": body, "stream": stream,
            "received_at": received_at, "problems": problems, "step": null,
        });
        let step = if problems.is_empty() {
            let (step, source) = state.take(&body);
            let mut shown: Map<String, Value> =
                step.iter().filter(|(k, _)| *k != "body").map(|(k, v)| (k.clone(), v.clone())).collect();
            shown.insert("source".into(), source.into());
            record["step"] = Value::Object(shown);
            Some(step)
        } else {
            None
        };
        state.requests.push(record);
        (n, step)
    };
    let Some(step) = step else {
        return send_json(socket, 400, &openai_error(&problems.join("; "))).await;
    };
    if let Some(seconds) = step.get("delay_s").and_then(Value::as_f64) {
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    }
    if let Some(status) = step.get("status").and_then(Value::as_u64) {
        let status = u16::try_from(status).expect("an HTTP status");
        let headers = step.get("headers").and_then(Value::as_object).cloned().unwrap_or_default();
        return match step.get("body") {
            Some(Value::String(text)) => send(socket, status, "text/plain", &headers, text.as_bytes()).await,
            Some(error) => send(socket, status, "application/json", &headers, error.to_string().as_bytes()).await,
            None => {
                let error = json!({"error": {"message": "scripted failure", "type": "server_error"}});
                send(socket, status, "application/json", &headers, error.to_string().as_bytes()).await
            }
        };
    }
    if let Some(raw) = step.get("raw") {
        let raw = raw.as_str().map_or_else(|| raw.to_string(), str::to_owned);
        return send(socket, 200, "application/json", &Map::new(), raw.as_bytes()).await;
    }
    let calls: Vec<Value> = step
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, call)| {
            let arguments = match &call["arguments"] {
                Value::String(s) => s.clone(),
                Value::Null => "{}".to_owned(),
                other => other.to_string(),
            };
            json!({"id": format!("call_{n}_{i}"), "type": "function", "function": {"name": call["name"], "arguments": arguments}})
        })
        .collect();
    let text = step.get("text").and_then(Value::as_str).map(str::to_owned);
    let text = if text.is_none() && calls.is_empty() { Some(String::new()) } else { text };
    let prompt_tokens = (body["messages"].to_string().len() / 4).max(1);
    let completion_tokens =
        ((Value::from(calls.clone()).to_string().len() + text.as_deref().map_or(0, str::len)) / 4).max(1);
    let usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens});
    let finish = if calls.is_empty() { "stop" } else { "tool_calls" };
    let id = format!("chatcmpl-fake-{n}");
    let model = body["model"].as_str().unwrap_or("fake-model").to_owned();
    let created = received_at as u64;
    if !stream {
        let mut message = json!({"role": "assistant", "content": text});
        if !calls.is_empty() {
            message["tool_calls"] = Value::from(calls);
        }
        let completion = json!({
            "id": id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": null}],
            "usage": usage,
        });
        return send_json(socket, 200, &completion).await;
    }

    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    socket.write_all(head.as_bytes()).await?;
    let mut chunks = Vec::new();
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    chunks.push(chunk(
        json!({"role": "assistant", "content": if calls.is_empty() { json!("") } else { Value::Null }}),
        Value::Null,
    ));
    let characters: Vec<char> = text.unwrap_or_default().chars().collect();
    for piece in characters.chunks(12) {
        chunks.push(chunk(json!({"content": piece.iter().collect::<String>()}), Value::Null));
    }
    for (i, call) in calls.iter().enumerate() {
        let function = &call["function"];
        chunks.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call["id"], "type": "function", "function": {"name": function["name"], "arguments": ""}}]}),
            Value::Null,
        ));
        let arguments: Vec<char> = function["arguments"].as_str().unwrap_or_default().chars().collect();
        for piece in arguments.chunks(16) {
            let piece: String = piece.iter().collect();
            chunks.push(chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}), Value::Null));
        }
    }
    chunks.push(chunk(json!({}), json!(finish)));
    if body["stream_options"]["include_usage"].as_bool() == Some(true) {
        chunks.push(json!({"id": id, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage}));
    }
    let mut frames: Vec<String> = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    frames.push("data: [DONE]\n\n".to_owned());
    for frame in frames {
        socket.write_all(format!("{:X}\r\n{frame}\r\n", frame.len()).as_bytes()).await?;
        socket.flush().await?;
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.flush().await
}
