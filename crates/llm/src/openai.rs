//! `LanguageModel` over any OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM,
//! llama.cpp server, Ollama, LM Studio): `POST {base_url}/chat/completions` with the tools,
//! streamed (SSE) or not.
//!
//! Failures are translated once, here, into `LlmError`:
//!
//! | what happened (after the last attempt) | error | retried |
//! | - | - | - |
//! | no answer head within `timeout`, or a streamed answer silent for `timeout` | `Timeout` | yes |
//! | connection refused, reset, DNS, TLS | `Unreachable` | yes |
//! | 408, 429, 5xx | `Upstream { status, message }` (the upstream's own error text) | yes, honouring `Retry-After` |
//! | any other non-2xx | `Upstream { status, message }` | no |
//! | a 2xx that is not a completion (bad JSON, no choices, a call without a name, a stream cut short, too large) | `InvalidResponse` | no |
//!
//! Retries wait `retry_base_delay · 2^attempt` (at most `max_retry_wait`) with jitter, or what
//! `Retry-After` / `retry-after-ms` asks (capped at `max_retry_wait`). Once streamed text has
//! gone to the `DeltaSink` a failure is not retried, so a client never sees text twice.

mod stream;
mod wire;
pub use wire::Sampling;

use std::fmt;
use std::time::Duration;

use rand::Rng;
use redline_ports::llm::{Completion, CompletionRequest, DeltaSink, LanguageModel, LlmError};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use tokio::time::{timeout, timeout_at, Instant};

use stream::{Flow, SseDecoder, StreamState};

/// Largest answer read from the upstream (a completion is a few KB; this bounds memory).
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// Largest error body read (only its start is kept in the message).
const MAX_ERROR_BYTES: usize = 64 * 1024;
/// Connecting never waits longer than this, even with a long `timeout`.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How to reach the endpoint and how patient to be with it.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8099/v1` (with or
    /// without a trailing slash); `/chat/completions` is appended.
    pub base_url: String,
    /// Sent as `Authorization: Bearer <key>` when set and not empty.
    pub api_key: Option<String>,
    pub model: String,
    /// One attempt's patience: for the answer head, then (non-streamed) for the whole body, or
    /// (streamed) between two pieces of the stream, so a long generation is not cut while it
    /// is still producing.
    pub timeout: Duration,
    /// Attempts after the first for transient failures (default 3).
    pub max_retries: u32,
    /// Ask for a streamed answer and pass text to the `DeltaSink` as it comes (default true).
    pub stream: bool,
    /// With `stream`, ask for token usage in the last chunk (`stream_options.include_usage`);
    /// turn off for a server that refuses the option (default true).
    pub stream_usage: bool,
    /// First backoff delay, doubled at each retry (default 500 ms).
    pub retry_base_delay: Duration,
    /// Longest wait between two attempts, also for `Retry-After` (default 30 s).
    pub max_retry_wait: Duration,
    /// Temperature and seed sent with every request (default: the server's).
    pub sampling: Sampling,
}

impl OpenAiConfig {
    /// The defaults: 120 s timeout, 3 retries, streamed.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            timeout: Duration::from_secs(120),
            max_retries: 3,
            stream: true,
            stream_usage: true,
            retry_base_delay: Duration::from_millis(500),
            max_retry_wait: Duration::from_secs(30),
            sampling: Sampling::default(),
        }
    }
}

/// The key never reaches a log line.
impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("stream", &self.stream)
            .field("stream_usage", &self.stream_usage)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("max_retry_wait", &self.max_retry_wait)
            .finish()
    }
}

/// A configuration that cannot work, found before any call.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("the OpenAI base URL {0:?} is not an http(s) URL")]
    BaseUrl(String),
    #[error("the OpenAI model name is empty")]
    EmptyModel,
    #[error("the OpenAI API key cannot be sent in a header (it holds control characters)")]
    ApiKey,
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

/// The adapter. Cheap to share behind an `Arc<dyn LanguageModel>`; its `reqwest::Client`
/// pools connections across calls.
#[derive(Debug, Clone)]
pub struct OpenAiModel {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    config: OpenAiConfig,
}

impl OpenAiModel {
    /// An adapter with its own connection pool.
    pub fn new(config: OpenAiConfig) -> Result<Self, ConfigError> {
        let client = reqwest::Client::builder()
            .connect_timeout(config.timeout.min(MAX_CONNECT_TIMEOUT))
            .user_agent(concat!("redline/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ConfigError::Client(e.to_string()))?;
        Self::with_client(config, client)
    }

    /// An adapter on a client the application shares. The client's own timeouts, if any,
    /// apply on top of `config.timeout`.
    pub fn with_client(config: OpenAiConfig, client: reqwest::Client) -> Result<Self, ConfigError> {
        if config.model.trim().is_empty() {
            return Err(ConfigError::EmptyModel);
        }
        let endpoint = endpoint(&config.base_url)?;
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| ConfigError::ApiKey)?;
            value.set_sensitive(true);
            headers.insert(header::AUTHORIZATION, value);
        }
        Ok(Self { client, endpoint, headers, config })
    }

    /// One attempt, start to finish.
    async fn attempt(&self, body: &[u8], deltas: &dyn DeltaSink) -> Result<Completion, Failure> {
        let deadline = Instant::now() + self.config.timeout;
        let send = self.client.post(self.endpoint.clone()).headers(self.headers.clone()).body(body.to_vec()).send();
        let mut response = match timeout_at(deadline, send).await {
            Err(_) => return Err(Failure::timeout()),
            Ok(Err(e)) => return Err(Failure::transport(&e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = retry_after(response.headers());
            // What the error body says is a bonus: a slow or broken one still gives the status.
            let body = read_body(&mut response, MAX_ERROR_BYTES, Patience::Until(deadline)).await.unwrap_or_default();
            return Err(Failure::status(status, &body, retry_after));
        }
        let is_sse = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
        if is_sse {
            self.read_stream(&mut response, deltas).await
        } else {
            // Also what a server that ignores `stream: true` sends.
            let body = read_body(&mut response, MAX_ANSWER_BYTES, Patience::Until(deadline)).await?;
            wire::parse_completion(&body).map_err(Failure::invalid)
        }
    }

    async fn read_stream(
        &self,
        response: &mut reqwest::Response,
        deltas: &dyn DeltaSink,
    ) -> Result<Completion, Failure> {
        let mut decoder = SseDecoder::default();
        let mut state = StreamState::default();
        let mut events = Vec::new();
        let mut received = 0usize;
        loop {
            let ended = match next_piece(response, Patience::Idle(self.config.timeout)).await {
                Ok(Some(piece)) => {
                    received += piece.as_ref().len();
                    if received > MAX_ANSWER_BYTES {
                        return Err(Failure::invalid(format!("the stream is larger than {MAX_ANSWER_BYTES} bytes")));
                    }
                    decoder.push(piece.as_ref(), &mut events).map_err(Failure::invalid)?;
                    false
                }
                Ok(None) => {
                    decoder.finish(&mut events).map_err(Failure::invalid)?;
                    true
                }
                // Text already shown must not be shown again by a retry.
                Err(failure) => return Err(failure.final_if(state.emitted)),
            };
            for data in events.drain(..) {
                if state.on_data(&data, deltas).map_err(Failure::invalid)? == Flow::Done {
                    return state.finish(true).map_err(Failure::invalid);
                }
            }
            if ended {
                return state.finish(false).map_err(Failure::invalid);
            }
        }
    }

    /// How long to wait before attempt `attempt + 1`.
    fn wait_before_retry(&self, attempt: u32, failure: &Failure) -> Duration {
        let cap = self.config.max_retry_wait;
        if let Some(asked) = failure.retry_after {
            return asked.min(cap);
        }
        let full = self.config.retry_base_delay.saturating_mul(2u32.saturating_pow(attempt)).min(cap);
        // Equal jitter: between half and all of it, so replicas that failed together spread out.
        let half = full / 2;
        half + (full - half).mul_f64(rand::thread_rng().gen_range(0.0..=1.0))
    }
}

#[async_trait::async_trait]
impl LanguageModel for OpenAiModel {
    fn name(&self) -> String {
        format!("openai:{}", self.config.model)
    }

    async fn complete(&self, request: &CompletionRequest, deltas: &dyn DeltaSink) -> Result<Completion, LlmError> {
        let body = wire::ChatRequest::new(
            &self.config.model,
            request,
            self.config.stream,
            self.config.stream_usage,
            self.config.sampling,
        );
        let body = serde_json::to_vec(&body)
            .map_err(|e| LlmError::InvalidResponse(format!("the request could not be encoded: {e}")))?;
        let mut attempt = 0u32;
        loop {
            let failure = match self.attempt(&body, deltas).await {
                Ok(completion) => return Ok(completion),
                Err(failure) => failure,
            };
            if !failure.retryable || attempt >= self.config.max_retries {
                tracing::warn!(
                    llm.model = %self.config.model,
                    llm.attempts = attempt + 1,
                    error = %failure.error,
                    "language model call failed"
                );
                return Err(failure.error);
            }
            let wait = self.wait_before_retry(attempt, &failure);
            tracing::info!(
                llm.model = %self.config.model,
                llm.attempt = attempt + 1,
                llm.wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                error = %failure.error,
                "language model call failed; retrying"
            );
            deltas.retrying(attempt + 2, wait, &failure.error);
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }
}

/// What went wrong in one attempt, and whether another could go better.
#[derive(Debug)]
struct Failure {
    error: LlmError,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn timeout() -> Self {
        Self { error: LlmError::Timeout, retryable: true, retry_after: None }
    }

    fn invalid(reason: impl Into<String>) -> Self {
        Self { error: LlmError::InvalidResponse(reason.into()), retryable: false, retry_after: None }
    }

    fn transport(error: &reqwest::Error) -> Self {
        if error.is_timeout() && !error.is_connect() {
            return Self::timeout();
        }
        Self { error: LlmError::Unreachable(causes(error)), retryable: true, retry_after: None }
    }

    fn status(status: StatusCode, body: &[u8], retry_after: Option<Duration>) -> Self {
        let message = wire::error_message(body, status.canonical_reason().unwrap_or("error"));
        let retryable = status == StatusCode::REQUEST_TIMEOUT
            || status == StatusCode::TOO_MANY_REQUESTS
            || status.is_server_error();
        Self { error: LlmError::Upstream { status: status.as_u16(), message }, retryable, retry_after }
    }

    fn final_if(mut self, last: bool) -> Self {
        self.retryable &= !last;
        self
    }
}

/// An error and its causes, `: `-joined ("error sending request …: connection refused").
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

/// `retry-after-ms` (OpenAI's own, milliseconds) or `Retry-After` in seconds or as an HTTP
/// date (the time left until it; a date already past means now).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    retry_after_at(headers, std::time::SystemTime::now())
}

fn retry_after_at(headers: &HeaderMap, now: std::time::SystemTime) -> Option<Duration> {
    let date = || {
        let at = httpdate::parse_http_date(headers.get("retry-after")?.to_str().ok()?.trim()).ok()?;
        Some(at.duration_since(now).unwrap_or(Duration::ZERO).min(Duration::from_secs(86_400)))
    };
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| ms / 1000.0)
        .or_else(|| number("retry-after"))
        // Anything beyond a day is as good as a day: the cap applies later anyway.
        .map(|secs| Duration::from_secs_f64(secs.min(86_400.0)))
        .or_else(date)
}

/// How long a read may wait.
#[derive(Debug, Clone, Copy)]
enum Patience {
    /// The whole read ends by then.
    Until(Instant),
    /// Each piece comes within this.
    Idle(Duration),
}

async fn next_piece(response: &mut reqwest::Response, patience: Patience) -> Result<Option<impl AsRef<[u8]>>, Failure> {
    let read = match patience {
        Patience::Until(deadline) => timeout_at(deadline, response.chunk()).await,
        Patience::Idle(idle) => timeout(idle, response.chunk()).await,
    };
    match read {
        Err(_) => Err(Failure::timeout()),
        Ok(Err(e)) => Err(Failure::transport(&e)),
        Ok(Ok(piece)) => Ok(piece),
    }
}

/// A whole body of at most `max` bytes.
async fn read_body(response: &mut reqwest::Response, max: usize, patience: Patience) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    while let Some(piece) = next_piece(response, patience).await? {
        let piece = piece.as_ref();
        if body.len() + piece.len() > max {
            return Err(Failure::invalid(format!("the answer is larger than {max} bytes")));
        }
        body.extend_from_slice(piece);
    }
    Ok(body)
}

/// `{base_url}/chat/completions`, whether or not the base ends with a slash (a base that
/// already names the endpoint is taken as it is).
fn endpoint(base_url: &str) -> Result<Url, ConfigError> {
    let base = base_url.trim().trim_end_matches('/');
    let full = if base.ends_with("/chat/completions") { base.to_owned() } else { format!("{base}/chat/completions") };
    let url = Url::parse(&full).map_err(|_| ConfigError::BaseUrl(base_url.to_owned()))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(ConfigError::BaseUrl(base_url.to_owned()));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_is_appended_once() {
        for base in ["http://h:1/v1", "http://h:1/v1/", " http://h:1/v1// ", "http://h:1/v1/chat/completions"] {
            assert_eq!(endpoint(base).unwrap().as_str(), "http://h:1/v1/chat/completions", "{base}");
        }
        for bad in ["", "h:1/v1", "ftp://h/v1", "not a url"] {
            assert!(endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn retry_after_reads_seconds_milliseconds_and_dates() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("250"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(250)));
        headers.clear();
        // An HTTP date: the time left until it, none once it is past.
        headers.insert("retry-after", HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"));
        let at = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(retry_after_at(&headers, at - Duration::from_secs(5)), Some(Duration::from_secs(5)));
        assert_eq!(retry_after_at(&headers, at + Duration::from_secs(5)), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers), Some(Duration::ZERO), "long past");
        headers.insert("retry-after", HeaderValue::from_static("-1"));
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_respects_the_cap() {
        let mut config = OpenAiConfig::new("http://h/v1", "m");
        config.retry_base_delay = Duration::from_millis(100);
        config.max_retry_wait = Duration::from_millis(350);
        let model = OpenAiModel::new(config).unwrap();
        let plain = Failure::timeout();
        for _ in 0..50 {
            let first = model.wait_before_retry(0, &plain);
            assert!((Duration::from_millis(50)..=Duration::from_millis(100)).contains(&first), "{first:?}");
            let second = model.wait_before_retry(1, &plain);
            assert!((Duration::from_millis(100)..=Duration::from_millis(200)).contains(&second), "{second:?}");
            let late = model.wait_before_retry(10, &plain);
            assert!(late <= Duration::from_millis(350), "{late:?}");
        }
        let asked = Failure { retry_after: Some(Duration::from_secs(3600)), ..Failure::timeout() };
        assert_eq!(model.wait_before_retry(0, &asked), Duration::from_millis(350));
    }

    #[test]
    fn the_key_is_not_in_debug_output() {
        let mut config = OpenAiConfig::new("http://h/v1", "m");
        config.api_key = Some("sk-very-secret".into());
        assert!(!format!("{config:?}").contains("very-secret"));
        assert!(!format!("{:?}", OpenAiModel::new(config).unwrap()).contains("very-secret"));
    }
}
