//! Query strings, decoded, with FastAPI-style 422s (`[query, <name>]`).

use actix_web::{web, HttpRequest};
use redline_domain::page::{Cursor, PageRequest};
use serde_json::json;

use crate::error::{ApiError, ApiResult};
use crate::validation::ValidationItem;

/// Items a page of a listing holds when the caller does not say (listings without a default
/// of their own): enough that callers with few items see them all at once.
pub(crate) const DEFAULT_PAGE: usize = 100;
/// Most items a page of a listing holds (listings without a maximum of their own).
pub(crate) const MAX_PAGE: usize = 1000;

/// Query parameters, decoded, with FastAPI-style 422s.
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
    errors: Vec<ValidationItem>,
}

impl Query {
    pub(crate) fn parse(req: &HttpRequest) -> Self {
        let pairs = web::Query::<Vec<(String, String)>>::from_query(req.query_string())
            .map(|q| q.into_inner())
            .unwrap_or_default();
        Self { pairs, errors: Vec::new() }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub(crate) fn problem(&mut self, name: &str, kind: &str, msg: &str, input: &str) {
        self.errors.push(ValidationItem::new(kind, vec![json!("query"), json!(name)], msg, json!(input)));
    }

    /// An optional literal parameter: `None` when absent or empty, else what `parse` makes of
    /// it; a value it refuses is a `literal_error` with `msg`.
    pub(crate) fn literal<T>(&mut self, name: &str, parse: impl Fn(&str) -> Option<T>, msg: &str) -> Option<T> {
        let value = self.get(name).filter(|s| !s.is_empty())?.to_owned();
        let parsed = parse(&value);
        if parsed.is_none() {
            self.problem(name, "literal_error", msg, &value);
        }
        parsed
    }

    pub(crate) fn int(&mut self, name: &str, default: i64, min: i64, max: i64) -> i64 {
        let Some(raw) = self.get(name).map(str::to_owned) else {
            return default;
        };
        match raw.trim().parse::<i64>() {
            Ok(v) if v < min => {
                self.problem(
                    name,
                    "greater_than_equal",
                    &format!("Input should be greater than or equal to {min}"),
                    &raw,
                );
                default
            }
            Ok(v) => v.min(max),
            Err(_) => {
                self.problem(
                    name,
                    "int_parsing",
                    "Input should be a valid integer, unable to parse string as an integer",
                    &raw,
                );
                default
            }
        }
    }

    pub(crate) fn boolean(&mut self, name: &str) -> bool {
        let Some(raw) = self.get(name).map(str::to_owned) else {
            return false;
        };
        match raw.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" | "t" | "y" => true,
            "false" | "0" | "no" | "off" | "f" | "n" => false,
            _ => {
                self.problem(name, "bool_parsing", "Input should be a valid boolean, unable to interpret input", &raw);
                false
            }
        }
    }

    /// `limit` (from 1; above `max` counts as `max`) and `cursor` (a cursor from a previous
    /// page; empty means the first page).
    pub(crate) fn page(&mut self, default: usize, max: usize) -> PageRequest {
        let cap = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        let limit = usize::try_from(self.int("limit", cap(default), 1, cap(max))).unwrap_or(default);
        let after = match self.get("cursor").filter(|c| !c.is_empty()).map(str::to_owned) {
            None => None,
            Some(raw) => match Cursor::decode(&raw) {
                Ok(cursor) => Some(cursor),
                Err(e) => {
                    self.problem("cursor", "value_error", &e.to_string(), &raw);
                    None
                }
            },
        };
        PageRequest { limit, after }
    }

    /// The problems found, to report with others.
    pub(crate) fn into_errors(self) -> Vec<ValidationItem> {
        self.errors
    }

    pub(crate) fn finish(self) -> ApiResult<()> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation(self.errors))
        }
    }
}
