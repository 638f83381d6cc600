//! Helpers of the tests: the adapter's configuration, a sink that records what it hears, and a
//! tiny raw HTTP server for what the fake (`redline_fake_llm::Fake`) cannot be scripted to do
//! (garbage bytes, hanging after a few chunks, streams cut short).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use redline_llm::openai::OpenAiConfig;
use redline_ports::llm::{DeltaSink, LlmError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub const KEY: &str = "sk-test-key";
pub const MODEL: &str = "fake-model-1";

/// A config for tests: quick retries, a short timeout.
pub fn config(base_url: &str, stream: bool) -> OpenAiConfig {
    let mut config = OpenAiConfig::new(base_url, MODEL);
    config.api_key = Some(KEY.to_owned());
    config.stream = stream;
    config.timeout = Duration::from_secs(10);
    config.retry_base_delay = Duration::from_millis(10);
    config.max_retry_wait = Duration::from_secs(5);
    config
}

/// A sink that keeps every piece, and every retry it hears of (the next attempt's number and
/// the error that made it).
#[derive(Default)]
pub struct Collect(Mutex<Vec<String>>, Mutex<Vec<(u32, LlmError)>>);

impl Collect {
    pub fn pieces(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    pub fn retries(&self) -> Vec<(u32, LlmError)> {
        self.1.lock().unwrap().clone()
    }
}

impl DeltaSink for Collect {
    fn text(&self, delta: &str) {
        self.0.lock().unwrap().push(delta.to_owned());
    }

    fn retrying(&self, next: u32, _wait: Duration, error: &LlmError) {
        self.1.lock().unwrap().push((next, error.clone()));
    }
}

// ---------------------------------------------------------------------------------------------
// A raw HTTP server
// ---------------------------------------------------------------------------------------------

/// What the raw server does with one request (one connection each).
#[derive(Clone)]
pub enum Reply {
    /// These exact bytes (a whole HTTP response, see [`response`]), then close.
    Bytes(Vec<u8>),
    /// These bytes, then keep the connection open and silent.
    BytesThenHang(Vec<u8>),
    /// Read the request and never answer.
    Hang,
}

pub fn response(status: u16, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

/// The head of a streamed answer with no length: the body ends when the connection does.
pub fn sse_head() -> Vec<u8> {
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n".to_vec()
}

pub struct RawServer {
    pub base_url: String,
    hits: Arc<Mutex<usize>>,
}

impl RawServer {
    /// Serves `replies` in order, one per connection; the last one again when they run out.
    pub async fn start(replies: Vec<Reply>) -> Self {
        assert!(!replies.is_empty());
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("addr"));
        let hits = Arc::new(Mutex::new(0usize));
        let counter = Arc::clone(&hits);
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else { return };
                let reply = {
                    let mut n = counter.lock().unwrap();
                    *n += 1;
                    replies[(*n - 1).min(replies.len() - 1)].clone()
                };
                tokio::spawn(serve(socket, reply));
            }
        });
        Self { base_url, hits }
    }

    /// How many requests arrived.
    pub fn hits(&self) -> usize {
        *self.hits.lock().unwrap()
    }

    /// The count once it reaches `expected` (or `within` has passed), then after a further
    /// moment in which it must not grow past it.
    pub async fn hits_settled(&self, expected: usize, within: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + within;
        while self.hits() < expected && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        self.hits()
    }
}

async fn serve(mut socket: TcpStream, reply: Reply) {
    if read_request(&mut socket).await.is_none() {
        return;
    }
    match reply {
        Reply::Bytes(bytes) => {
            let _ = socket.write_all(&bytes).await;
            let _ = socket.shutdown().await;
        }
        Reply::BytesThenHang(bytes) => {
            let _ = socket.write_all(&bytes).await;
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_secs(120)).await;
        }
        Reply::Hang => tokio::time::sleep(Duration::from_secs(120)).await,
    }
}

/// Reads one request (head, then `Content-Length` bytes of body).
async fn read_request(socket: &mut TcpStream) -> Option<Vec<u8>> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_ascii_lowercase();
    let length: usize =
        head.lines().find_map(|l| l.strip_prefix("content-length:")).and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    while data.len() < head_end + length {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    }
    Some(data.split_off(head_end))
}
