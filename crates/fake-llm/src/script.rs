//! Reading a script (`{"steps": [...], "append"?: bool, "default"?: step}`) and its steps.
//!
//! A script is checked whole before any of it is queued, and a key the fake does not know is a
//! problem rather than ignored: a test that misspells `tool_calls` must fail where it scripts,
//! not later with an answer it did not expect.

use serde_json::{json, Map, Value};

/// A step, with its short forms expanded: an object of the keys in [`STEP_KEYS`].
pub(crate) type Step = Map<String, Value>;

/// The answer when nothing is queued and no default was scripted.
const DEFAULT_TEXT: &str = "OK (fake LLM: nothing scripted)";

const SCRIPT_KEYS: [&str; 3] = ["steps", "append", "default"];
const STEP_KEYS: [&str; 8] = ["text", "tool_calls", "delay_s", "match", "status", "body", "headers", "raw"];
const CALL_KEYS: [&str; 2] = ["name", "arguments"];

/// A checked script.
pub(crate) struct Script {
    pub steps: Vec<Step>,
    /// Whether `steps` extend the queue rather than replace it.
    pub append: bool,
    /// The new default step, when the script sets one.
    pub default: Option<Step>,
}

/// The step given when the queue is empty, until a script sets another.
pub(crate) fn built_in_default() -> Step {
    Map::from_iter([("text".to_owned(), json!(DEFAULT_TEXT))])
}

/// Reads a script, or says what is wrong with it.
pub(crate) fn parse(spec: Value) -> Result<Script, String> {
    let Value::Object(mut spec) = spec else {
        return Err(format!("a script is an object {{\"steps\": [...], \"append\"?, \"default\"?}}, not {spec}"));
    };
    if let Some(key) = spec.keys().find(|key| !SCRIPT_KEYS.contains(&key.as_str())) {
        return Err(format!("unknown script key {key:?}; the keys are {SCRIPT_KEYS:?}"));
    }
    let steps = match spec.remove("steps") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(steps)) => steps
            .into_iter()
            .enumerate()
            .map(|(i, step)| normalize(step).map_err(|problem| format!("steps[{i}]: {problem}")))
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(format!("steps must be an array, not {other}")),
    };
    let append = match spec.remove("append") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(append)) => append,
        Some(other) => return Err(format!("append must be true or false, not {other}")),
    };
    let default = match spec.remove("default") {
        None => None,
        Some(Value::Null) => Some(built_in_default()),
        Some(step) => Some(normalize(step).map_err(|problem| format!("default: {problem}"))?),
    };
    Ok(Script { steps, append, default })
}

/// A step in its long form: a string is `{"text"}`, a list is `{"tool_calls"}`.
fn normalize(step: Value) -> Result<Step, String> {
    let step = match step {
        Value::String(text) => Map::from_iter([("text".to_owned(), Value::String(text))]),
        Value::Array(calls) => Map::from_iter([("tool_calls".to_owned(), Value::Array(calls))]),
        Value::Object(map) => map,
        other => return Err(format!("a step is a string, a list of tool calls or an object, not {other}")),
    };
    for (key, value) in &step {
        let wanted = match key.as_str() {
            "text" if !value.is_string() && !value.is_null() => "a string",
            "match" if !value.is_string() => "a string",
            "delay_s" if !value.as_f64().is_some_and(|seconds| seconds >= 0.0) => "a number of seconds, at least 0",
            "status" if !value.as_u64().is_some_and(|status| (100..=599).contains(&status)) => {
                "an HTTP status (100 to 599)"
            }
            "headers" if !value.is_object() => "an object",
            "tool_calls" => {
                check_calls(value)?;
                continue;
            }
            "text" | "match" | "delay_s" | "status" | "headers" | "body" | "raw" => continue,
            other => return Err(format!("unknown step key {other:?}; the keys are {STEP_KEYS:?}")),
        };
        return Err(format!("{key} must be {wanted}, not {value}"));
    }
    Ok(step)
}

/// Scripted tool calls: a list of `{"name", "arguments"?}`, the arguments an object or a JSON
/// string.
fn check_calls(calls: &Value) -> Result<(), String> {
    let calls = calls.as_array().ok_or_else(|| format!("tool_calls must be a list of tool calls, not {calls}"))?;
    for (i, call) in calls.iter().enumerate() {
        let Some(call) = call.as_object() else {
            return Err(format!("tool_calls[{i}]: a tool call is an object {{\"name\", \"arguments\"?}}, not {call}"));
        };
        if let Some(key) = call.keys().find(|key| !CALL_KEYS.contains(&key.as_str())) {
            return Err(format!("tool_calls[{i}]: unknown tool call key {key:?}; the keys are {CALL_KEYS:?}"));
        }
        if call.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
            return Err(format!("tool_calls[{i}]: a tool call needs a name (a non-empty string)"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(spec: Value) -> String {
        parse(spec).err().expect("a problem")
    }

    #[test]
    fn short_forms_expand() {
        let script = parse(json!({"steps": ["Hi.", [{"name": "read_sections"}], {"text": null, "delay_s": 0.5}]}))
            .expect("a script");
        assert_eq!(Value::from(script.steps[0].clone()), json!({"text": "Hi."}));
        assert_eq!(Value::from(script.steps[1].clone()), json!({"tool_calls": [{"name": "read_sections"}]}));
        assert!(!script.append && script.default.is_none());
        let reset = parse(json!({"default": null, "append": true})).expect("a script");
        assert!(reset.steps.is_empty() && reset.append);
        assert_eq!(reset.default, Some(built_in_default()));
    }

    #[test]
    fn a_mistake_is_named_where_it_is() {
        assert!(problem(json!(["Hi."])).starts_with("a script is an object"));
        assert!(problem(json!({"step": ["Hi."]})).contains("unknown script key \"step\""));
        assert!(problem(json!({"steps": "Hi."})).contains("steps must be an array"));
        assert!(problem(json!({"steps": [], "append": "yes"})).contains("append must be true or false"));
        assert!(problem(json!({"steps": ["ok", 3]})).starts_with("steps[1]: a step is a string"));
        assert!(problem(json!({"steps": [{"tool_call": []}]})).contains("unknown step key \"tool_call\""));
        assert!(problem(json!({"steps": [{"status": 1000}]})).contains("status must be an HTTP status"));
        assert!(problem(json!({"steps": [{"delay_s": -1}]})).contains("delay_s must be a number"));
        assert!(problem(json!({"steps": [[{"arguments": {}}]]})).contains("tool_calls[0]: a tool call needs a name"));
        assert!(problem(json!({"steps": [[{"name": "f", "args": {}}]]})).contains("unknown tool call key \"args\""));
        assert!(problem(json!({"default": {"match": 1}})).starts_with("default: match must be a string"));
    }
}
