//! A streamed answer: Server-Sent Events decoded as the bytes arrive, and the
//! `chat.completion.chunk`s folded into one `Completion`.

use std::collections::BTreeMap;

use redline_ports::llm::{Completion, DeltaSink, TokenUsage};
use serde::Deserialize;
use serde_json::Value;

use super::wire;

/// Splits a byte stream into the `data` of its events (SSE: `field: value` lines, an event
/// ends at a blank line, `data` lines of one event are joined by `\n`, `:` starts a comment).
/// Pieces may end anywhere, even inside a UTF-8 character.
///
/// Written here rather than taken from `eventsource-stream` (0.2), which would change two
/// things this adapter relies on: an event the server does not close with a blank line before
/// the stream ends (a final `data: [DONE]` without one) is dropped there and kept here; and
/// that crate parses its whole buffer again for every piece and copies the rest of it for
/// every line, so a long line arriving in small pieces costs time quadratic in its length,
/// where this decoder scans each byte once (a stream is bounded by `MAX_ANSWER_BYTES`, not
/// by its lines).
#[derive(Debug, Default)]
pub(super) struct SseDecoder {
    pending: Vec<u8>,
    /// How much of `pending` is known to hold no `\n`.
    scanned: usize,
    data: Option<String>,
}

impl SseDecoder {
    /// Feeds bytes; the `data` of every event they complete is pushed to `out`.
    pub(super) fn push(&mut self, bytes: &[u8], out: &mut Vec<String>) -> Result<(), String> {
        self.pending.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(offset) = self.pending[start + self.scanned..].iter().position(|&b| b == b'\n') {
            let end = start + self.scanned + offset;
            let mut line = &self.pending[start..end];
            if let Some(stripped) = line.strip_suffix(b"\r") {
                line = stripped;
            }
            let line = std::str::from_utf8(line).map_err(|_| "the stream is not UTF-8 text".to_owned())?;
            Self::line(&mut self.data, line, out);
            start = end + 1;
            self.scanned = 0;
        }
        self.pending.drain(..start);
        self.scanned = self.pending.len();
        Ok(())
    }

    /// The stream ended: an event not closed by a blank line still counts.
    pub(super) fn finish(&mut self, out: &mut Vec<String>) -> Result<(), String> {
        if !self.pending.is_empty() {
            let rest = std::mem::take(&mut self.pending);
            let line = std::str::from_utf8(&rest).map_err(|_| "the stream is not UTF-8 text".to_owned())?;
            Self::line(&mut self.data, line.trim_end_matches('\r'), out);
        }
        self.scanned = 0;
        out.extend(self.data.take());
        Ok(())
    }

    fn line(data: &mut Option<String>, line: &str, out: &mut Vec<String>) {
        if line.is_empty() {
            out.extend(data.take());
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        if field != "data" {
            return; // `event`, `id`, `retry`: nothing the Chat Completions stream needs
        }
        let value = value.strip_prefix(' ').unwrap_or(value);
        match data {
            Some(text) => {
                text.push('\n');
                text.push_str(value);
            }
            None => *data = Some(value.to_owned()),
        }
    }
}

#[derive(Debug, Deserialize)]
struct Chunk {
    choices: Option<Vec<ChunkChoice>>,
    usage: Option<Value>,
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct ChunkChoice {
    index: Option<u64>,
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    content: Option<String>,
    refusal: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Whether to keep reading.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Flow {
    More,
    Done,
}

/// The answer so far.
#[derive(Debug, Default)]
pub(super) struct StreamState {
    content: String,
    calls: BTreeMap<u64, PartialCall>,
    last_call: Option<u64>,
    usage: TokenUsage,
    finished: bool,
    /// Some text went to the sink: a retry would show it twice.
    pub(super) emitted: bool,
}

impl StreamState {
    /// One event's `data`. The error is the reason for `InvalidResponse`.
    pub(super) fn on_data(&mut self, data: &str, sink: &dyn DeltaSink) -> Result<Flow, String> {
        if data.trim() == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|e| format!("a stream event is not a completion chunk: {e}"))?;
        if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
            let text = wire::error_message(serde_json::json!({ "error": error }).to_string().as_bytes(), "no message");
            return Err(format!("the stream carried an error: {text}"));
        }
        if let Some(usage) = chunk.usage.filter(|u| !u.is_null()) {
            self.usage = wire::usage_of(&usage);
        }
        // Only the first choice is ours (we never ask for `n` > 1).
        for choice in chunk.choices.unwrap_or_default().into_iter().filter(|c| c.index.unwrap_or(0) == 0) {
            if let Some(delta) = choice.delta {
                for piece in [delta.content, delta.refusal].into_iter().flatten().filter(|p| !p.is_empty()) {
                    sink.text(&piece);
                    self.emitted = true;
                    self.content.push_str(&piece);
                }
                for call in delta.tool_calls.unwrap_or_default() {
                    self.on_call(call);
                }
            }
            if choice.finish_reason.is_some() {
                self.finished = true;
            }
        }
        Ok(Flow::More)
    }

    /// Pieces of one call share an `index`; its id and name come first, its arguments in
    /// pieces. A server that leaves `index` out starts a new call with each new id.
    fn on_call(&mut self, delta: ToolCallDelta) {
        let index = delta.index.unwrap_or_else(|| {
            let new_id = delta.id.as_deref().filter(|id| !id.is_empty());
            match (self.last_call, new_id) {
                (Some(last), Some(id)) if self.calls.get(&last).and_then(|c| c.id.as_deref()) != Some(id) => last + 1,
                (Some(last), _) => last,
                (None, _) => 0,
            }
        });
        self.last_call = Some(index);
        let call = self.calls.entry(index).or_default();
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id.get_or_insert(id);
        }
        if let Some(function) = delta.function {
            call.name.push_str(function.name.as_deref().unwrap_or(""));
            call.arguments.push_str(function.arguments.as_deref().unwrap_or(""));
        }
    }

    /// The whole answer once the stream ended (at `[DONE]`, or at its end after a
    /// `finish_reason`). The error is the reason for `InvalidResponse`.
    pub(super) fn finish(self, saw_done: bool) -> Result<Completion, String> {
        if !saw_done && !self.finished {
            return Err("the stream ended before its last chunk".to_owned());
        }
        let tool_calls = self
            .calls
            .into_values()
            .enumerate()
            .map(|(i, call)| wire::finish_call(call.id, Some(call.name), call.arguments, i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Completion { content: (!self.content.is_empty()).then_some(self.content), tool_calls, usage: self.usage })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_ports::llm::{NoDeltas, ToolCall};

    fn events(pieces: &[&[u8]]) -> Vec<String> {
        let mut decoder = SseDecoder::default();
        let mut out = Vec::new();
        for piece in pieces {
            decoder.push(piece, &mut out).unwrap();
        }
        decoder.finish(&mut out).unwrap();
        out
    }

    #[test]
    fn events_survive_any_split() {
        let text = "data: {\"a\":\"é\"}\r\n\r\n: comment\nevent: x\ndata:one\ndata: two\n\ndata: [DONE]";
        let whole = events(&[text.as_bytes()]);
        assert_eq!(whole, vec!["{\"a\":\"é\"}", "one\ntwo", "[DONE]"]);
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() {
            assert_eq!(events(&[&bytes[..cut], &bytes[cut..]]), whole, "cut at {cut}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(events(&singles), whole);
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut decoder = SseDecoder::default();
        assert!(decoder.push(b"data: \xff\xfe\n\n", &mut Vec::new()).is_err());
    }

    #[test]
    fn calls_without_index_are_told_apart_by_id() {
        let mut state = StreamState::default();
        for data in [
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
        ] {
            assert_eq!(state.on_data(data, &NoDeltas).unwrap(), Flow::More);
        }
        let done = state.finish(false).unwrap();
        assert_eq!(
            done.tool_calls,
            vec![
                ToolCall { id: "a".into(), name: "f".into(), arguments: r#"{"x":1}"#.into() },
                ToolCall { id: "b".into(), name: "g".into(), arguments: "{}".into() },
            ]
        );
    }

    #[test]
    fn an_error_event_is_reported_with_its_message() {
        let mut state = StreamState::default();
        let err = state.on_data(r#"{"error":{"message":"overloaded"}}"#, &NoDeltas).unwrap_err();
        assert!(err.contains("overloaded"), "{err}");
    }

    #[test]
    fn a_stream_cut_short_is_invalid() {
        let mut state = StreamState::default();
        state.on_data(r#"{"choices":[{"delta":{"content":"Hel"}}]}"#, &NoDeltas).unwrap();
        assert!(state.emitted);
        assert!(state.finish(false).is_err());
    }
}
