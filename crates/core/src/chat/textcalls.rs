//! Tool calls a model wrote as text instead of as `tool_calls` (docs/api.md, "Edit
//! protocols"): small models often follow a template they half know. Recognized, and then
//! run like real calls, never shown as the answer:
//!
//! - Hermes/Qwen tags: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`;
//! - a JSON object (alone, or in a ```json fence) with `name` and `arguments` (or
//!   `parameters`), or an array of them, or `{"tool_calls": [{"function": {…}}]}`;
//! - XML-like tags named after a tool: `<edit_section chunk_id="c1">…html…</edit_section>`,
//!   `<delete_section chunk_id="c1"/>`; the body becomes `new_html`.
//!
//! Only names of the tools offered are taken; anything else stays text.

use redline_ports::llm::ToolCall;
use serde_json::{Map, Value};

/// The calls found in `text`, and the text left when they are taken out (trimmed).
pub fn extract(text: &str, tools: &[&str]) -> (Vec<ToolCall>, String) {
    let mut calls = Vec::new();
    let mut rest = text.to_owned();
    // 1. <tool_call>…</tool_call> (the closing tag may be missing at the end).
    while let Some(start) = rest.find("<tool_call>") {
        let body_start = start + "<tool_call>".len();
        let (body_end, end) = match rest[body_start..].find("</tool_call>") {
            Some(i) => (body_start + i, body_start + i + "</tool_call>".len()),
            None => (rest.len(), rest.len()),
        };
        let found = calls_in_json(rest[body_start..body_end].trim(), tools);
        if found.is_empty() {
            break;
        }
        calls.extend(found);
        rest.replace_range(start..end, "");
    }
    // 2. Fenced JSON.
    let mut search_from = 0;
    while let Some((start, body, end)) = fence(&rest, search_from) {
        let found = calls_in_json(body.trim(), tools);
        if found.is_empty() {
            search_from = end;
            continue;
        }
        calls.extend(found);
        rest.replace_range(start..end, "");
    }
    // 3. The whole remaining text is a JSON call.
    let trimmed = rest.trim();
    if trimmed.starts_with(['{', '[']) {
        let found = calls_in_json(trimmed, tools);
        if !found.is_empty() {
            calls.extend(found);
            rest.clear();
        }
    }
    // 4. `<function name="tool" arguments='{…}'/>` (or the arguments as its body).
    while let Some((start, end, call)) = function_tag(&rest, tools) {
        calls.push(call);
        rest.replace_range(start..end, "");
    }
    if !calls.is_empty() {
        rest = rest.replace("<tools>", "").replace("</tools>", "");
    }
    // 5. XML-like tags named after a tool.
    for tool in tools {
        while let Some((start, end, call)) = tag_call(&rest, tool) {
            calls.push(call);
            rest.replace_range(start..end, "");
        }
    }
    for (i, call) in calls.iter_mut().enumerate() {
        call.id = format!("text_call_{i}");
    }
    (calls, rest.trim().to_owned())
}

/// The first ``` fence at or after `from` whose info string is empty or `json`: (start, body,
/// end) with `end` past the closing fence.
fn fence(text: &str, from: usize) -> Option<(usize, &str, usize)> {
    let mut at = from;
    loop {
        let start = at + text.get(at..)?.find("```")?;
        let line_end = start + text[start..].find('\n')?;
        let info = text[start + 3..line_end].trim().to_ascii_lowercase();
        let body_start = line_end + 1;
        let close = body_start + text[body_start..].find("```")?;
        let end = close + 3;
        if info.is_empty() || info == "json" || info == "tool_call" {
            return Some((start, &text[body_start..close], end));
        }
        at = end;
    }
}

/// Calls in a JSON text: an object, an array of objects, or an OpenAI-shaped `tool_calls`.
fn calls_in_json(text: &str, tools: &[&str]) -> Vec<ToolCall> {
    let Some(value) = lenient_json(text) else { return Vec::new() };
    let items: Vec<Value> = match value {
        Value::Array(items) => items,
        Value::Object(mut o) => match o.remove("tool_calls") {
            Some(Value::Array(items)) => items,
            Some(_) => return Vec::new(),
            None => vec![Value::Object(o)],
        },
        _ => return Vec::new(),
    };
    items.into_iter().filter_map(|item| call_of(item, tools)).collect()
}

/// `{name, arguments}` (or `parameters`, or wrapped in `function`) of an offered tool.
fn call_of(item: Value, tools: &[&str]) -> Option<ToolCall> {
    let Value::Object(mut o) = item else { return None };
    if let Some(Value::Object(f)) = o.remove("function") {
        o = f;
    }
    let name = o.get("name").and_then(Value::as_str)?.to_owned();
    if !tools.contains(&name.as_str()) {
        return None;
    }
    let arguments = match o.remove("arguments").or_else(|| o.remove("parameters")) {
        Some(Value::String(s)) => s,
        Some(v @ Value::Object(_)) => v.to_string(),
        None => {
            // The arguments written beside the name.
            o.remove("name");
            Value::Object(o).to_string()
        }
        Some(_) => return None,
    };
    Some(ToolCall { id: String::new(), name, arguments })
}

/// JSON, or JSON with the trailing commas and missing closing braces small models leave.
fn lenient_json(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str(text) {
        return Some(v);
    }
    let mut fixed = text.trim().trim_end_matches(',').to_owned();
    let opens = fixed.matches('{').count();
    let closes = fixed.matches('}').count();
    for _ in closes..opens.min(closes + 3) {
        fixed.push('}');
    }
    serde_json::from_str(&fixed).ok()
}

/// `<tool a="…" b='…'>body</tool>` or `<tool …/>`: (start, end, call).
fn tag_call(text: &str, tool: &str) -> Option<(usize, usize, ToolCall)> {
    let open = format!("<{tool}");
    let start = text.find(&open)?;
    let after_name = start + open.len();
    if !text[after_name..].starts_with([' ', '>', '/', '\n', '\t']) {
        return None;
    }
    let tag_end = after_name + text[after_name..].find('>')?;
    let self_closing = text[..tag_end].ends_with('/');
    let attrs_text = &text[after_name..if self_closing { tag_end - 1 } else { tag_end }];
    let mut args = Map::new();
    for (k, v) in attributes(attrs_text) {
        args.insert(k, Value::String(v));
    }
    let end = if self_closing {
        tag_end + 1
    } else {
        let close = format!("</{tool}>");
        let body_start = tag_end + 1;
        let (body_end, end) = match text[body_start..].find(&close) {
            Some(i) => (body_start + i, body_start + i + close.len()),
            None => (text.len(), text.len()),
        };
        let body = text[body_start..body_end].trim();
        if !body.is_empty() {
            let field = if tool == "replace_text" { "replace" } else { "new_html" };
            args.entry(field).or_insert_with(|| Value::String(body.to_owned()));
        }
        end
    };
    Some((
        start,
        end,
        ToolCall { id: String::new(), name: tool.to_owned(), arguments: Value::Object(args).to_string() },
    ))
}

/// The first `<function name="…" arguments='…'/>` of an offered tool: (start, end, call).
fn function_tag(text: &str, tools: &[&str]) -> Option<(usize, usize, ToolCall)> {
    let mut from = 0;
    while let Some(i) = text[from..].find("<function") {
        let start = from + i;
        let tag_end = start + text[start..].find('>')?;
        let self_closing = text[..tag_end].ends_with('/');
        let attrs = attributes(&text[start + "<function".len()..tag_end]);
        let get = |k: &str| attrs.iter().find(|(name, _)| name == k).map(|(_, v)| v.clone());
        let (end, body) = if self_closing {
            (tag_end + 1, None)
        } else {
            match text[tag_end + 1..].find("</function>") {
                Some(j) => {
                    (tag_end + 1 + j + "</function>".len(), Some(text[tag_end + 1..tag_end + 1 + j].trim().to_owned()))
                }
                None => (text.len(), Some(text[tag_end + 1..].trim().to_owned())),
            }
        };
        match get("name").filter(|n| tools.contains(&n.as_str())) {
            Some(name) => {
                let arguments = get("arguments").or(body).filter(|a| !a.is_empty()).unwrap_or_else(|| "{}".to_owned());
                return Some((start, end, ToolCall { id: String::new(), name, arguments }));
            }
            None => from = tag_end,
        }
    }
    None
}

/// `key="value"` and `key='value'` pairs.
fn attributes(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim().rsplit(char::is_whitespace).next().unwrap_or_default().to_owned();
        let after = rest[eq + 1..].trim_start();
        let Some(quote) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else { break };
        let Some(close) = after[1..].find(quote) else { break };
        if !key.is_empty() {
            out.push((key, after[1..1 + close].to_owned()));
        }
        rest = &after[1 + close + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["edit_section", "delete_section", "create_section", "replace_text", "read_sections"];

    fn args(call: &ToolCall) -> Value {
        serde_json::from_str(&call.arguments).unwrap()
    }

    #[test]
    fn hermes_tags_are_calls() {
        let text = "I'll fix it.\n<tool_call>\n{\"name\": \"edit_section\", \"arguments\": {\"chunk_id\": \"c1\", \"new_html\": \"<p>Hi</p>\"}}\n</tool_call>";
        let (calls, rest) = extract(text, TOOLS);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "edit_section");
        assert_eq!(args(&calls[0])["chunk_id"], "c1");
        assert_eq!(rest, "I'll fix it.");
    }

    #[test]
    fn fenced_and_bare_json_are_calls() {
        let text = "```json\n{\"name\": \"delete_section\", \"arguments\": {\"chunk_id\": \"c2\"}}\n```";
        let (calls, rest) = extract(text, TOOLS);
        assert_eq!((calls.len(), rest.as_str()), (1, ""));
        let text = "[{\"name\": \"replace_text\", \"parameters\": {\"search\": \"a\", \"replace\": \"b\"}}, {\"function\": {\"name\": \"read_sections\", \"arguments\": \"{\\\"chunk_ids\\\": [\\\"x\\\"]}\"}}]";
        let (calls, _) = extract(text, TOOLS);
        assert_eq!(calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["replace_text", "read_sections"]);
        assert_eq!(args(&calls[1])["chunk_ids"][0], "x");
        // Arguments beside the name, a missing closing brace.
        let (calls, _) = extract("{\"name\": \"delete_section\", \"chunk_id\": \"c9\"", TOOLS);
        assert_eq!(args(&calls[0]), serde_json::json!({"chunk_id": "c9"}));
    }

    #[test]
    fn xml_like_tags_are_calls() {
        let text = "Done: <edit_section chunk_id=\"c3\" explanation='typo'><p>Fixed text</p></edit_section>";
        let (calls, rest) = extract(text, TOOLS);
        assert_eq!(
            args(&calls[0]),
            serde_json::json!({"chunk_id": "c3", "explanation": "typo", "new_html": "<p>Fixed text</p>"})
        );
        assert_eq!(rest, "Done:");
        let (calls, _) = extract("<delete_section chunk_id=\"c4\"/>", TOOLS);
        assert_eq!(args(&calls[0]), serde_json::json!({"chunk_id": "c4"}));
    }

    #[test]
    fn function_tags_are_calls() {
        let text = "I'll search.\n\n<tools>\n  <function name=\"read_sections\" arguments='{\"chunk_ids\": [\"c1\"]}'/>\n</tools>\n\nThis returns it.";
        let (calls, rest) = extract(text, TOOLS);
        assert_eq!(calls.len(), 1);
        assert_eq!(args(&calls[0])["chunk_ids"][0], "c1");
        assert!(
            rest.starts_with("I'll search.") && rest.ends_with("This returns it.") && !rest.contains('<'),
            "{rest}"
        );
    }

    #[test]
    fn plain_text_and_other_json_stay_text() {
        for text in [
            "The capital is Paris.",
            "```json\n{\"city\": \"Paris\"}\n```",
            "{\"name\": \"format_disk\", \"arguments\": {}}",
            "<tool_call>not json</tool_call>",
            "```html\n<p>x</p>\n```",
            "Use <edit_sectionx> carefully",
        ] {
            let (calls, rest) = extract(text, TOOLS);
            assert!(calls.is_empty(), "{text}");
            assert_eq!(rest, text.trim());
        }
    }
}
