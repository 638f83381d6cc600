//! What the real service refuses: the checks that make the fake answer 400, as the OpenAI Chat
//! Completions API would, to a request our adapter must never send.

use std::collections::BTreeSet;

use serde_json::Value;

const ROLES: [&str; 5] = ["system", "developer", "user", "assistant", "tool"];

/// Problems that would make the OpenAI Chat Completions API reject the request.
pub(crate) fn validate(body: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(body) = body.as_object() else { return vec!["body is not a JSON object".to_owned()] };
    if body.get("model").and_then(Value::as_str).is_none_or(str::is_empty) {
        problems.push("model must be a non-empty string".to_owned());
    }
    let messages = match body.get("messages").and_then(Value::as_array) {
        Some(messages) if !messages.is_empty() => messages.as_slice(),
        _ => {
            problems.push("messages must be a non-empty array".to_owned());
            &[]
        }
    };
    let mut open: BTreeSet<String> = BTreeSet::new();
    let mut known: BTreeSet<String> = BTreeSet::new();
    for (i, message) in messages.iter().enumerate() {
        let Some(message) = message.as_object() else {
            problems.push(format!("messages[{i}] is not an object"));
            continue;
        };
        let role = message.get("role").and_then(Value::as_str).unwrap_or_default();
        if !ROLES.contains(&role) {
            problems.push(format!("messages[{i}].role {role:?} is not one of {ROLES:?}"));
        }
        let content = message.get("content").filter(|c| !c.is_null());
        if content.is_some_and(|c| !c.is_string() && !c.is_array()) {
            problems.push(format!("messages[{i}].content must be a string, an array or null"));
        }
        if role != "tool" && !open.is_empty() {
            problems.push(format!("messages[{i}]: tool calls {open:?} were not answered by tool messages"));
            open.clear();
        }
        match role {
            "assistant" => {
                let calls = message.get("tool_calls").filter(|c| !c.is_null());
                if content.is_none() && calls.is_none_or(|c| c.as_array().is_some_and(Vec::is_empty)) {
                    problems.push(format!("messages[{i}]: assistant message without content or tool_calls"));
                }
                let Some(calls) = calls else { continue };
                let Some(calls) = calls.as_array() else {
                    problems.push(format!("messages[{i}].tool_calls must be an array"));
                    continue;
                };
                for (j, call) in calls.iter().enumerate() {
                    let (Some(id), Some("function")) = (call["id"].as_str(), call["type"].as_str()) else {
                        problems.push(format!("messages[{i}].tool_calls[{j}] needs id and type 'function'"));
                        continue;
                    };
                    if !call["function"]["name"].is_string() || !call["function"]["arguments"].is_string() {
                        problems.push(format!(
                            "messages[{i}].tool_calls[{j}].function needs name and arguments (a string)"
                        ));
                    }
                    open.insert(id.to_owned());
                    known.insert(id.to_owned());
                }
            }
            "tool" => {
                match message.get("tool_call_id").and_then(Value::as_str) {
                    None => problems.push(format!("messages[{i}]: tool message without tool_call_id")),
                    Some(id) if !known.contains(id) => {
                        problems.push(format!("messages[{i}]: tool_call_id {id:?} answers no earlier tool call"))
                    }
                    Some(id) => {
                        open.remove(id);
                    }
                }
                if content.is_none() {
                    problems.push(format!("messages[{i}]: tool message without content"));
                }
            }
            _ if content.is_none() => problems.push(format!("messages[{i}]: {role} message without content")),
            _ => {}
        }
    }
    if !open.is_empty() {
        problems.push(format!("tool calls {open:?} were not answered by tool messages"));
    }
    if let Some(tools) = body.get("tools") {
        match tools.as_array() {
            None => problems.push("tools must be an array".to_owned()),
            Some(tools) => {
                for (i, tool) in tools.iter().enumerate() {
                    let function = &tool["function"];
                    if tool["type"] != "function" || !function.is_object() {
                        problems.push(format!("tools[{i}] must be {{type: 'function', function: {{...}}}}"));
                        continue;
                    }
                    if function["name"].as_str().is_none_or(str::is_empty) {
                        problems.push(format!("tools[{i}].function.name missing"));
                    }
                    let parameters = &function["parameters"];
                    if !parameters.is_null() && parameters["type"] != "object" {
                        problems.push(format!("tools[{i}].function.parameters must be a JSON schema of type object"));
                    }
                }
            }
        }
    }
    if body.get("stream").is_some_and(|s| !s.is_boolean()) {
        problems.push("stream must be a boolean".to_owned());
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_fake_refuses_what_the_real_service_would() {
        assert_eq!(
            validate(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})),
            Vec::<String>::new()
        );
        let problems =
            validate(&json!({"messages": [{"role": "tool", "content": "x", "tool_call_id": "nobody"}], "stream": 1}));
        assert!(problems.iter().any(|p| p.contains("model")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("answers no earlier tool call")), "{problems:?}");
        assert!(problems.iter().any(|p| p.contains("stream must be a boolean")), "{problems:?}");
        let unanswered = json!({"model": "m", "messages": [
            {"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "user", "content": "next"},
        ]});
        assert!(validate(&unanswered).iter().any(|p| p.contains("were not answered")));
    }
}
