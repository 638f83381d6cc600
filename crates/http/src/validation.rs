//! FastAPI-compatible validation errors (the contract's HTTPValidationError): every problem of
//! a request is reported at once as `{type, loc, msg, input}`, with the same `type` names a
//! FastAPI service would use (`missing`, `string_type`, `string_pattern_mismatch`, …).

use redline_domain::session::{SessionIdError, SESSION_ID_MAX_LEN, SESSION_ID_PATTERN};
use redline_domain::SessionId;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// One validation problem.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
pub struct ValidationItem {
    /// What is wrong, in pydantic's words: `missing`, `string_type`, `json_invalid`, …
    #[serde(rename = "type")]
    pub kind: String,
    /// Where: `body`, `query` or `path`, then the field (or, for malformed JSON, the byte
    /// offset of the problem).
    #[schema(value_type = Vec<LocStep>)]
    pub loc: Vec<Value>,
    pub msg: String,
    /// The value refused, as sent (any JSON; `null` for a secret or an absent value).
    #[schema(value_type = Value)]
    pub input: Value,
    /// The rule broken, e.g. `{"max_length": 256}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub ctx: Option<Value>,
}

/// One step of a [`ValidationItem`]'s `loc`: a name, or a position (the OpenAPI document's
/// description of `loc`; the items themselves are built as JSON values).
#[derive(utoipa::ToSchema)]
#[serde(untagged)]
pub enum LocStep {
    Name(String),
    Position(u64),
}

impl ValidationItem {
    pub fn new(kind: &str, loc: Vec<Value>, msg: impl Into<String>, input: Value) -> Self {
        Self { kind: kind.to_owned(), loc, msg: msg.into(), input: clipped(input), ctx: None }
    }

    pub fn with_ctx(mut self, ctx: Value) -> Self {
        self.ctx = Some(ctx);
        self
    }
}

/// A 422 for a new password the rules refuse, at `field` of the body.
pub fn password_refused(field: &str, e: &redline_domain::account::PasswordError) -> crate::error::ApiError {
    let mut f = Fields { object: &EMPTY_OBJECT, root: "body", errors: Vec::new() };
    f.password_problem(field, e);
    crate::error::ApiError::Validation(f.errors)
}

static EMPTY_OBJECT: std::sync::LazyLock<serde_json::Map<String, Value>> =
    std::sync::LazyLock::new(serde_json::Map::new);

/// Characters of a string echoed in `input`; a longer one is cut there and ends with `…`.
pub const ECHO_CHARS: usize = 1_000;

/// `input` with its long strings cut to [`ECHO_CHARS`]: a 50 MB field is not sent back whole
/// (nor held twice while its answer is written).
fn clipped(input: Value) -> Value {
    match input {
        Value::String(s) => match s.char_indices().nth(ECHO_CHARS) {
            Some((at, _)) => Value::String(format!("{}…", &s[..at])),
            None => Value::String(s),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(clipped).collect()),
        Value::Object(fields) => Value::Object(fields.into_iter().map(|(k, v)| (k, clipped(v))).collect()),
        other => other,
    }
}

/// The problem with a session id at `loc`, or the parsed id.
pub fn session_id_at(value: &str, loc: Vec<Value>) -> Result<SessionId, Box<ValidationItem>> {
    SessionId::parse(value).map_err(|e| {
        let input = Value::String(value.to_owned());
        Box::new(match e {
            SessionIdError::Empty => {
                ValidationItem::new("string_too_short", loc, e.to_string(), input).with_ctx(json!({"min_length": 1}))
            }
            SessionIdError::TooLong => ValidationItem::new("string_too_long", loc, e.to_string(), input)
                .with_ctx(json!({"max_length": SESSION_ID_MAX_LEN})),
            SessionIdError::Pattern => ValidationItem::new("string_pattern_mismatch", loc, e.to_string(), input)
                .with_ctx(json!({"pattern": SESSION_ID_PATTERN})),
        })
    })
}

/// Reads the fields of a JSON object body, collecting every problem.
///
/// ```ignore
/// let mut f = Fields::body(&value)?;           // 422 unless the body is an object
/// let sid = f.session_id("session_id");
/// let msg = f.required_str("message");
/// f.finish()?;                                 // 422 with every item collected
/// ```
/// Body fields never echoed back in a 422's `input`: passwords, and the code of an agent's
/// handoff (what gives the account away).
pub const SECRET_FIELDS: &[&str] = &["password", "code"];

pub struct Fields<'a> {
    object: &'a Map<String, Value>,
    root: &'static str,
    errors: Vec<ValidationItem>,
}

/// A shared empty object, for optional bodies that were absent.
static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl<'a> Fields<'a> {
    /// A required JSON object body.
    pub fn body(value: &'a Value) -> Result<Self, Vec<ValidationItem>> {
        match value {
            Value::Object(object) => Ok(Self { object, root: "body", errors: Vec::new() }),
            Value::Null => {
                Err(vec![ValidationItem::new("missing", vec![json!("body")], "Field required", Value::Null)])
            }
            other => Err(vec![ValidationItem::new(
                "model_attributes_type",
                vec![json!("body")],
                "Input should be a valid dictionary or object to extract fields from",
                other.clone(),
            )]),
        }
    }

    /// A body whose fields are all optional: absent means `{}`.
    pub fn optional_body(value: &'a Value) -> Result<Self, Vec<ValidationItem>> {
        match value {
            Value::Null => Ok(Self { object: &EMPTY, root: "body", errors: Vec::new() }),
            other => Self::body(other),
        }
    }

    fn loc(&self, field: &str) -> Vec<Value> {
        vec![json!(self.root), json!(field)]
    }

    /// The body, echoed as the `input` of a problem of the body as a whole (a missing field):
    /// secrets in it ([`SECRET_FIELDS`]) are `null`, as they are in their own problems.
    fn input(&self) -> Value {
        let mut object = self.object.clone();
        for field in SECRET_FIELDS {
            if let Some(v) = object.get_mut(*field) {
                *v = Value::Null;
            }
        }
        Value::Object(object)
    }

    /// A password that [`Password::parse`](redline_domain::account::Password::parse) refused.
    pub fn password_problem(&mut self, field: &str, e: &redline_domain::account::PasswordError) {
        let kind = match e {
            redline_domain::account::PasswordError::TooShort => "string_too_short",
            redline_domain::account::PasswordError::TooLong => "string_too_long",
            redline_domain::account::PasswordError::Common | redline_domain::account::PasswordError::FromEmail => {
                "value_error"
            }
        };
        self.problem(field, kind, e.to_string(), Value::Null);
    }

    /// A required e-mail address at `field`, parsed (`value_error` when it is not one).
    pub fn email(&mut self, field: &str) -> Option<redline_domain::Email> {
        let raw = self.required_str(field)?;
        let parsed = redline_domain::Email::parse(raw).ok();
        if parsed.is_none() {
            self.problem(field, "value_error", "value is not a valid email address", serde_json::json!(raw));
        }
        parsed
    }

    /// A password being set (sign-up, claim, change, reset) for the account of `email`: the
    /// rules of `Password::new_for`, each refusal a problem at `field`.
    pub fn new_password(
        &mut self,
        field: &str,
        raw: Option<&str>,
        email: Option<&redline_domain::Email>,
    ) -> Option<redline_domain::Password> {
        match redline_domain::Password::new_for(raw?, email) {
            Ok(p) => Some(p),
            Err(e) => {
                self.password_problem(field, &e);
                None
            }
        }
    }

    fn push(&mut self, item: ValidationItem) {
        self.errors.push(item);
    }

    /// The raw value of a field, `None` when absent.
    pub fn raw(&self, field: &str) -> Option<&'a Value> {
        self.object.get(field)
    }

    fn missing(&mut self, field: &str) {
        let item = ValidationItem::new("missing", self.loc(field), "Field required", self.input());
        self.push(item);
    }

    /// A required string (empty allowed).
    pub fn required_str(&mut self, field: &str) -> Option<&'a str> {
        match self.object.get(field) {
            None => {
                self.missing(field);
                None
            }
            Some(v) => self.string_value(field, v),
        }
    }

    /// An optional string; `null` counts as absent.
    pub fn optional_str(&mut self, field: &str) -> Option<&'a str> {
        match self.object.get(field) {
            None | Some(Value::Null) => None,
            Some(v) => self.string_value(field, v),
        }
    }

    /// A secret string: like `required_str`, but never echoed back in `input`.
    pub fn required_secret(&mut self, field: &str) -> Option<&'a str> {
        match self.object.get(field) {
            None => {
                let item = ValidationItem::new("missing", self.loc(field), "Field required", Value::Null);
                self.push(item);
                None
            }
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => {
                let item =
                    ValidationItem::new("string_type", self.loc(field), "Input should be a valid string", Value::Null);
                self.push(item);
                None
            }
        }
    }

    fn string_value(&mut self, field: &str, v: &'a Value) -> Option<&'a str> {
        match v {
            Value::String(s) => Some(s.as_str()),
            other => {
                let item = ValidationItem::new(
                    "string_type",
                    self.loc(field),
                    "Input should be a valid string",
                    other.clone(),
                );
                self.push(item);
                None
            }
        }
    }

    /// An optional string bounded in length.
    pub fn optional_bounded_str(&mut self, field: &str, max_chars: usize) -> Option<&'a str> {
        let s = self.optional_str(field)?;
        if s.chars().count() > max_chars {
            let item = ValidationItem::new(
                "string_too_long",
                self.loc(field),
                format!("String should have at most {max_chars} characters"),
                json!(s),
            )
            .with_ctx(json!({"max_length": max_chars}));
            self.push(item);
            return None;
        }
        Some(s)
    }

    /// A required session id (the contract's Limits).
    pub fn session_id(&mut self, field: &str) -> Option<SessionId> {
        let s = self.required_str(field)?;
        match session_id_at(s, self.loc(field)) {
            Ok(id) => Some(id),
            Err(item) => {
                self.push(*item);
                None
            }
        }
    }

    /// An optional value out of a fixed set (a `Literal[...]` in FastAPI terms).
    pub fn optional_literal(&mut self, field: &str, allowed: &[&'static str]) -> Option<&'static str> {
        let v = self.object.get(field)?;
        if v.is_null() {
            return None;
        }
        self.literal_value(field, v, allowed)
    }

    /// A required value out of a fixed set.
    pub fn required_literal(&mut self, field: &str, allowed: &[&'static str]) -> Option<&'static str> {
        match self.object.get(field) {
            None => {
                self.missing(field);
                None
            }
            Some(v) => self.literal_value(field, v, allowed),
        }
    }

    fn literal_value(&mut self, field: &str, v: &Value, allowed: &[&'static str]) -> Option<&'static str> {
        if let Some(found) = v.as_str().and_then(|s| allowed.iter().find(|a| **a == s)) {
            return Some(found);
        }
        let expected = literal_list(allowed);
        let item =
            ValidationItem::new("literal_error", self.loc(field), format!("Input should be {expected}"), v.clone())
                .with_ctx(json!({"expected": expected}));
        self.push(item);
        None
    }

    /// An optional boolean (JSON `true`/`false` only).
    pub fn optional_bool(&mut self, field: &str) -> Option<bool> {
        match self.object.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(other) => {
                let item =
                    ValidationItem::new("bool_type", self.loc(field), "Input should be a valid boolean", other.clone());
                self.push(item);
                None
            }
        }
    }

    /// Adds a problem found by the caller (e.g. a domain parser) at `field`.
    pub fn problem(&mut self, field: &str, kind: &str, msg: impl Into<String>, input: Value) {
        let item = ValidationItem::new(kind, self.loc(field), msg, input);
        self.push(item);
    }

    /// A problem of one key of an object field (`[root, field, key]`).
    pub fn problem_in(&mut self, field: &str, key: &str, kind: &str, msg: impl Into<String>, input: Value) {
        let mut loc = self.loc(field);
        loc.push(json!(key));
        self.push(ValidationItem::new(kind, loc, msg, input));
    }

    /// `Err` with every problem collected, if any.
    pub fn finish(self) -> Result<(), Vec<ValidationItem>> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(self.errors)
        }
    }
}

/// `'a', 'b' or 'c'`, as pydantic words a literal error.
pub fn literal_list(allowed: &[&str]) -> String {
    let quoted: Vec<String> = allowed.iter().map(|a| format!("'{a}'")).collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_every_problem() {
        let body = json!({"session_id": "has space", "message": 5, "mode": "verbose"});
        let mut f = Fields::body(&body).unwrap();
        assert!(f.session_id("session_id").is_none());
        assert!(f.required_str("message").is_none());
        assert!(f.optional_literal("mode", &["full", "compact"]).is_none());
        assert!(f.required_str("absent").is_none());
        let errors = f.finish().unwrap_err();
        let kinds: Vec<_> = errors.iter().map(|e| (e.kind.as_str(), e.loc[1].as_str().unwrap())).collect();
        assert_eq!(
            kinds,
            [
                ("string_pattern_mismatch", "session_id"),
                ("string_type", "message"),
                ("literal_error", "mode"),
                ("missing", "absent")
            ]
        );
        assert_eq!(errors[2].msg, "Input should be 'full' or 'compact'");
    }

    #[test]
    fn body_shapes() {
        assert_eq!(Fields::body(&Value::Null).err().unwrap()[0].kind, "missing");
        assert_eq!(Fields::body(&json!([1])).err().unwrap()[0].kind, "model_attributes_type");
        assert!(Fields::optional_body(&Value::Null).is_ok());
    }

    #[test]
    fn secrets_are_not_echoed() {
        let body = json!({"password": 12345});
        let mut f = Fields::body(&body).unwrap();
        f.required_secret("password");
        let errors = f.finish().unwrap_err();
        assert_eq!(errors[0].input, Value::Null);
        // A missing field echoes the body, without its secrets.
        let body = json!({"password": "hunter22", "code": "123456", "name": "x"});
        let mut f = Fields::body(&body).unwrap();
        f.required_str("email");
        let errors = f.finish().unwrap_err();
        assert_eq!(errors[0].input, json!({"password": null, "code": null, "name": "x"}));
    }

    #[test]
    fn long_inputs_are_cut() {
        let long = "é".repeat(ECHO_CHARS + 5);
        let item = ValidationItem::new("x", vec![], "m", json!({"a": [long.clone()], "b": "short", "n": 3}));
        let cut = item.input["a"][0].as_str().unwrap();
        assert_eq!(cut.chars().count(), ECHO_CHARS + 1);
        assert!(cut.ends_with('…') && long.starts_with(cut.trim_end_matches('…')));
        assert_eq!((&item.input["b"], &item.input["n"]), (&json!("short"), &json!(3)));
        let exact = "a".repeat(ECHO_CHARS);
        assert_eq!(ValidationItem::new("x", vec![], "m", json!(exact)).input, json!(exact));
    }

    #[test]
    fn literal_wording() {
        assert_eq!(literal_list(&["a"]), "'a'");
        assert_eq!(literal_list(&["a", "b", "c"]), "'a', 'b' or 'c'");
    }
}
