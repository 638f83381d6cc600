//! The language model: one Chat Completions-style call with tools. Adapters: `builtin` (the
//! deterministic offline editor) and `openai` (any OpenAI-compatible endpoint), both in
//! `redline-llm`. The core's editing loop drives the conversation; a model only answers one
//! request at a time.

use serde::{Deserialize, Serialize};

/// Who wrote a message of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call the model asked for. `arguments` is the raw JSON text the model produced:
/// it may be invalid, and the loop answers that with a tool error rather than trusting it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// One message of the conversation sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    /// Text; `None` for an assistant message made only of tool calls.
    pub content: Option<String>,
    /// Tool calls of an assistant message (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn system(text: impl Into<String>) -> Self {
        Self { role: Role::System, content: Some(text.into()), tool_calls: Vec::new(), tool_call_id: None }
    }
    pub fn user(text: impl Into<String>) -> Self {
        Self { role: Role::User, content: Some(text.into()), tool_calls: Vec::new(), tool_call_id: None }
    }
    pub fn assistant(text: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self { role: Role::Assistant, content: text, tool_calls, tool_call_id: None }
    }
    pub fn tool(call_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: Some(text.into()),
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
        }
    }
}

/// A tool the model may call: a name, what it does, and a JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionRequest {
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// Tokens a call used, as the provider reports them (zero when it does not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The model's answer: text, tool calls, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Completion {
    pub content: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub usage: TokenUsage,
}

/// Why a model call failed. Every variant ends the job with a clear error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// No answer within the adapter's timeout (after its retries).
    #[error("the language model did not answer in time")]
    Timeout,
    /// The upstream answered with an error status (after retries where it made sense).
    #[error("the language model service answered {status}: {message}")]
    Upstream { status: u16, message: String },
    /// The upstream could not be reached.
    #[error("the language model service is unreachable: {0}")]
    Unreachable(String),
    /// The answer was not a valid completion (bad JSON, no choices, …).
    #[error("the language model sent an invalid answer: {0}")]
    InvalidResponse(String),
}

/// Receives text as the model streams it, so a client can watch the answer form, and hears
/// of the attempts that failed and are tried again.
pub trait DeltaSink: Send + Sync {
    fn text(&self, delta: &str);

    /// An attempt failed with `error` and attempt number `next` (from 2) starts after `wait`.
    /// Called before the adapter waits; MUST NOT block.
    fn retrying(&self, _next: u32, _wait: std::time::Duration, _error: &LlmError) {}
}

/// A sink that drops everything (non-streaming callers).
pub struct NoDeltas;

impl DeltaSink for NoDeltas {
    fn text(&self, _delta: &str) {}
}

/// A language model with tool calling.
#[async_trait::async_trait]
pub trait LanguageModel: Send + Sync {
    /// A short name for logs and events (`builtin`, `openai:<model>`).
    fn name(&self) -> String;

    /// One completion. Text produced while streaming MAY be passed to `deltas` as it comes;
    /// the returned `Completion` MUST hold the whole text regardless. MUST NOT panic on any
    /// upstream answer. Retries of transient failures happen inside the adapter.
    async fn complete(&self, request: &CompletionRequest, deltas: &dyn DeltaSink) -> Result<Completion, LlmError>;
}
