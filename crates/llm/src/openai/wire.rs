//! The Chat Completions wire format: the request we send and the non-streamed answer we read.
//! Only this module (and `stream`) knows the JSON shapes of the OpenAI API.

use redline_ports::llm::{Completion, CompletionRequest, Message, Role, TokenUsage, ToolCall, ToolSpec};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest upstream error text kept in an `LlmError::Upstream` message.
const MAX_ERROR_TEXT: usize = 500;

// ---------------------------------------------------------------------------------------------
// The request
// ---------------------------------------------------------------------------------------------

/// `POST …/chat/completions` body.
#[derive(Debug, Serialize)]
pub(super) struct ChatRequest<'a> {
    model: &'a str,
    messages: Vec<OutMessage<'a>>,
    /// Absent when no tool is offered: some servers refuse an empty array.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OutTool<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    /// Sampling, when configured (`REDLINE_OPENAI_TEMPERATURE`, `REDLINE_OPENAI_SEED`).
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<u64>,
}

/// Sampling settings sent with every request, when set.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sampling {
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
}

#[derive(Debug, Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Debug, Serialize)]
struct OutMessage<'a> {
    role: &'static str,
    /// Always present: `null` only for an assistant message made of tool calls alone.
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<OutToolCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

#[derive(Debug, Serialize)]
struct OutToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutFunctionCall<'a>,
}

#[derive(Debug, Serialize)]
struct OutFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Debug, Serialize)]
struct OutTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: OutFunction<'a>,
}

#[derive(Debug, Serialize)]
struct OutFunction<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'a str,
    #[serde(skip_serializing_if = "Value::is_null")]
    parameters: &'a Value,
}

impl<'a> ChatRequest<'a> {
    pub(super) fn new(
        model: &'a str,
        request: &'a CompletionRequest,
        stream: bool,
        include_usage: bool,
        sampling: Sampling,
    ) -> Self {
        Self {
            model,
            messages: request.messages.iter().map(out_message).collect(),
            tools: request.tools.iter().map(out_tool).collect(),
            stream,
            stream_options: (stream && include_usage).then_some(StreamOptions { include_usage: true }),
            temperature: sampling.temperature,
            seed: sampling.seed,
        }
    }
}

fn out_message(message: &Message) -> OutMessage<'_> {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let tool_calls: Vec<OutToolCall<'_>> = match message.role {
        Role::Assistant => message
            .tool_calls
            .iter()
            .map(|call| OutToolCall {
                id: &call.id,
                kind: "function",
                function: OutFunctionCall { name: &call.name, arguments: &call.arguments },
            })
            .collect(),
        _ => Vec::new(),
    };
    // The API wants a string everywhere except beside tool calls, where `null` is the norm.
    let content = match (message.content.as_deref(), tool_calls.is_empty()) {
        (None, false) => None,
        (text, _) => Some(text.unwrap_or("")),
    };
    let tool_call_id = match message.role {
        Role::Tool => message.tool_call_id.as_deref(),
        _ => None,
    };
    OutMessage { role, content, tool_calls, tool_call_id }
}

fn out_tool(tool: &ToolSpec) -> OutTool<'_> {
    OutTool {
        kind: "function",
        function: OutFunction { name: &tool.name, description: &tool.description, parameters: &tool.parameters },
    }
}

// ---------------------------------------------------------------------------------------------
// The non-streamed answer
// ---------------------------------------------------------------------------------------------

/// Every field optional: what is missing is judged after parsing, with a clear message.
#[derive(Debug, Deserialize)]
struct InCompletion {
    choices: Option<Vec<InChoice>>,
    usage: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct InChoice {
    message: Option<InMessage>,
}

#[derive(Debug, Deserialize)]
struct InMessage {
    content: Option<Value>,
    refusal: Option<String>,
    tool_calls: Option<Vec<InToolCall>>,
}

#[derive(Debug, Deserialize)]
struct InToolCall {
    id: Option<String>,
    function: Option<InFunctionCall>,
}

#[derive(Debug, Deserialize)]
struct InFunctionCall {
    name: Option<String>,
    arguments: Option<Value>,
}

/// Reads a whole `chat.completion` body. The error is the reason for `InvalidResponse`.
pub(super) fn parse_completion(body: &[u8]) -> Result<Completion, String> {
    let parsed: InCompletion =
        serde_json::from_slice(body).map_err(|e| format!("the body is not a chat completion: {e}"))?;
    let choice = parsed
        .choices
        .and_then(|choices| choices.into_iter().next())
        .ok_or_else(|| "the answer has no choices".to_owned())?;
    let message = choice.message.ok_or_else(|| "the first choice has no message".to_owned())?;
    let mut content = message.content.map(content_text).transpose()?.unwrap_or_default();
    if content.is_empty() {
        content = message.refusal.unwrap_or_default();
    }
    let tool_calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            let function = call.function.unwrap_or(InFunctionCall { name: None, arguments: None });
            let arguments = match function.arguments {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => text,
                // A few servers send the arguments as a JSON object rather than its text.
                Some(other) => other.to_string(),
            };
            finish_call(call.id, function.name, arguments, i)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Completion {
        content: (!content.is_empty()).then_some(content),
        tool_calls,
        usage: parsed.usage.as_ref().map(usage_of).unwrap_or_default(),
    })
}

/// `content` is a string, or (some servers) an array of parts with `text`.
fn content_text(content: Value) -> Result<String, String> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(text) => Ok(text),
        Value::Array(parts) => Ok(parts
            .iter()
            .filter_map(|part| match part {
                Value::String(text) => Some(text.as_str()),
                other => other.get("text").and_then(Value::as_str),
            })
            .collect()),
        other => Err(format!("the message content is neither text nor parts: {}", kind_of(&other))),
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One finished tool call, shared by both modes. A call without a name cannot be run, so it
/// makes the answer invalid; a missing id is made up (the loop needs one to answer the call);
/// empty arguments mean "no arguments".
pub(super) fn finish_call(
    id: Option<String>,
    name: Option<String>,
    arguments: String,
    position: usize,
) -> Result<ToolCall, String> {
    let name = name.filter(|n| !n.is_empty()).ok_or_else(|| format!("tool call {position} has no function name"))?;
    let id = id.filter(|id| !id.is_empty()).unwrap_or_else(|| format!("call_{position}"));
    let arguments = if arguments.trim().is_empty() { "{}".to_owned() } else { arguments };
    Ok(ToolCall { id, name, arguments })
}

/// Token counts when present and sensible; zero otherwise (usage never fails an answer).
pub(super) fn usage_of(usage: &Value) -> TokenUsage {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    TokenUsage { prompt_tokens: count("prompt_tokens"), completion_tokens: count("completion_tokens") }
}

// ---------------------------------------------------------------------------------------------
// Error answers
// ---------------------------------------------------------------------------------------------

/// The upstream's own words for an error answer: `error.message` of an OpenAI-style body,
/// else a `message`/`detail`/string `error`, else the start of the body, else the reason phrase.
pub(super) fn error_message(body: &[u8], reason: &str) -> String {
    let from_json = serde_json::from_slice::<Value>(body).ok().and_then(|json| {
        let error = json.get("error");
        error
            .and_then(|e| e.get("message"))
            .or(error)
            .or_else(|| json.get("message"))
            .or_else(|| json.get("detail"))
            .and_then(|v| match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            })
    });
    let text = from_json.unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_owned());
    let text = if text.is_empty() { reason.to_owned() } else { text };
    truncate(text, MAX_ERROR_TEXT)
}

fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn assistant_tool_calls_have_null_content_and_other_messages_a_string() {
        let call = ToolCall { id: "c1".into(), name: "edit_section".into(), arguments: "{}".into() };
        let request = CompletionRequest {
            messages: vec![
                Message::system("sys"),
                Message::assistant(None, vec![call]),
                Message::tool("c1", "ok"),
                Message::assistant(None, vec![]),
            ],
            tools: vec![],
        };
        let json = serde_json::to_value(ChatRequest::new("m", &request, false, true, Sampling::default())).unwrap();
        assert_eq!(
            json,
            json!({
                "model": "m",
                "stream": false,
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c1", "type": "function", "function": {"name": "edit_section", "arguments": "{}"}}
                    ]},
                    {"role": "tool", "content": "ok", "tool_call_id": "c1"},
                    {"role": "assistant", "content": ""},
                ],
            })
        );
    }

    #[test]
    fn sampling_is_sent_only_when_set() {
        let request = CompletionRequest { messages: vec![Message::user("hi")], tools: vec![] };
        let plain = serde_json::to_value(ChatRequest::new("m", &request, false, true, Sampling::default())).unwrap();
        assert!(plain.get("temperature").is_none() && plain.get("seed").is_none(), "{plain}");
        let set = Sampling { temperature: Some(0.0), seed: Some(42) };
        let json = serde_json::to_value(ChatRequest::new("m", &request, false, true, set)).unwrap();
        assert_eq!(
            (json["temperature"].clone(), json["seed"].clone()),
            (serde_json::json!(0.0), serde_json::json!(42))
        );
    }

    #[test]
    fn stream_options_only_when_streaming() {
        let request = CompletionRequest { messages: vec![Message::user("hi")], tools: vec![] };
        let json = serde_json::to_value(ChatRequest::new("m", &request, true, true, Sampling::default())).unwrap();
        assert_eq!(json["stream_options"], json!({"include_usage": true}));
        let json = serde_json::to_value(ChatRequest::new("m", &request, true, false, Sampling::default())).unwrap();
        assert!(json.get("stream_options").is_none());
    }

    #[test]
    fn content_parts_and_refusals_are_text() {
        let body = json!({"choices": [{"message": {"content": [{"type": "text", "text": "a"}, "b"]}}]});
        assert_eq!(parse_completion(body.to_string().as_bytes()).unwrap().content.as_deref(), Some("ab"));
        let body = json!({"choices": [{"message": {"content": null, "refusal": "no"}}]});
        assert_eq!(parse_completion(body.to_string().as_bytes()).unwrap().content.as_deref(), Some("no"));
    }

    #[test]
    fn object_arguments_are_kept_as_json_text() {
        let body =
            json!({"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}}]});
        let done = parse_completion(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            done.tool_calls,
            vec![ToolCall { id: "call_0".into(), name: "f".into(), arguments: r#"{"a":1}"#.into() }]
        );
    }

    #[test]
    fn error_messages_prefer_the_upstream_text() {
        assert_eq!(error_message(br#"{"error": {"message": "busy"}}"#, "x"), "busy");
        assert_eq!(error_message(br#"{"error": "plain"}"#, "x"), "plain");
        assert_eq!(error_message(b"  oops \n", "x"), "oops");
        assert_eq!(error_message(b"", "Too Many Requests"), "Too Many Requests");
        assert!(error_message("é".repeat(400).as_bytes(), "x").ends_with('…'));
    }
}
