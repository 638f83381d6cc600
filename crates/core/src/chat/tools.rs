//! The tools of the AI (docs/api.md, "Chat and jobs") and the working copy they act on. Edits change
//! the working copy at once (so later reads see them) and are recorded as `Change`s: applied
//! at the end of the turn, or proposed for approval.

use std::collections::{HashMap, HashSet};

use redline_domain::document::{ChunkId, Document, Section};
use redline_domain::job::{Change, ChangeOp};
use redline_ports::attachments::Passage;
use redline_ports::llm::ToolSpec;
use schemars::generate::SchemaSettings;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{json, Value};

/// Most sections one `read_sections` answers.
pub const MAX_READ: usize = 50;
/// Most results one `search_document` answers.
pub const MAX_SEARCH: usize = 1000;
/// Characters of section HTML a tool answer carries at most (the rest is cut with a note).
pub const MAX_TOOL_CHARS: usize = 200_000;

/// The six tools, with JSON Schemas of their arguments (derived from the structs that parse
/// them, so the two cannot drift apart).
pub fn specs() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, parameters: Value| ToolSpec {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
    };
    vec![
        spec("read_sections", "Full HTML of sections by chunk id.", parameters::<ReadArgs>()),
        spec(
            "search_document",
            "Sections matching words or a phrase, with their HTML, best first. The answer's `total` counts every match; when more follow, `next_offset` is the `offset` to ask for them (several pages may be asked for at once).",
            parameters::<SearchDocumentArgs>(),
        ),
        spec(
            "search_attachments",
            "Ranked passages of the files attached to the session.",
            parameters::<SearchAttachmentsArgs>(),
        ),
        spec(
            "edit_section",
            "Replace a section with new HTML (one or more blocks).",
            parameters::<EditArgs>(),
        ),
        spec(
            "create_section",
            "Insert sections after a chunk id (null: at the start).",
            parameters::<CreateArgs>(),
        ),
        spec("delete_section", "Delete one section.", parameters::<DeleteArgs>()),
        spec(
            "replace_text",
            "Replace exact text in one section, or anywhere without chunk_id; all: every occurrence.",
            parameters::<ReplaceArgs>(),
        ),
    ]
}

/// The names of the tools, in the order of [`specs`].
pub const NAMES: [&str; 7] = [
    "read_sections",
    "search_document",
    "search_attachments",
    "edit_section",
    "create_section",
    "delete_section",
    "replace_text",
];

/// The JSON Schema of a tool's arguments as the model gets it: an optional argument is simply
/// left out (its type is not also `null`), and there is no `$schema`, no struct name as
/// `title` (the tool has its own) and no `int64` format of integers (their bounds say what
/// matters).
fn parameters<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().with(|s| s.meta_schema = None).into_generator();
    let mut schema: Value = generator.into_root_schema_for::<T>().into();
    let Some(root) = schema.as_object_mut() else { return schema };
    root.remove("title");
    let required: Vec<Value> = root.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    let properties = root.get_mut("properties").and_then(Value::as_object_mut);
    for (name, property) in properties.into_iter().flatten() {
        let Some(property) = property.as_object_mut() else { continue };
        property.remove("format");
        if required.iter().any(|r| r == name.as_str()) {
            continue;
        }
        if let Some(Value::Array(types)) = property.get_mut("type") {
            types.retain(|t| t != "null");
            if let [only] = types.as_slice() {
                let only = only.clone();
                property.insert("type".to_owned(), only);
            }
        }
    }
    schema
}

/// A JSON Schema of a string or `null` (a field the model must give, possibly as `null`).
fn string_or_null(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": ["string", "null"]})
}

/// A tool call parsed from the model's JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolRequest {
    Read { chunk_ids: Vec<String> },
    SearchDocument { query: String, limit: usize, offset: usize },
    SearchAttachments { query: String, limit: i64 },
    Edit { chunk_id: String, new_html: String, explanation: Option<String> },
    Create { after: Option<String>, new_html: String, explanation: Option<String> },
    Delete { chunk_id: String, explanation: Option<String> },
    Replace { chunk_id: Option<String>, search: String, replace: String, all: bool, explanation: Option<String> },
}

// The arguments of each tool. No doc comments: they would become the schemas' descriptions.
// A field the schema requires may still be missing from a call (`explanation`): the parse is
// lenient where the model is asked to be thorough.

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    chunk_ids: Vec<String>,
}
#[derive(Deserialize, JsonSchema)]
struct SearchDocumentArgs {
    query: String,
    #[schemars(range(min = 1, max = MAX_SEARCH))]
    limit: Option<i64>,
    #[schemars(range(min = 0))]
    offset: Option<i64>,
}
#[derive(Deserialize, JsonSchema)]
struct SearchAttachmentsArgs {
    query: String,
    #[schemars(range(min = 1, max = 50))]
    limit: Option<i64>,
}
#[derive(Deserialize, JsonSchema)]
struct EditArgs {
    chunk_id: String,
    new_html: String,
    #[schemars(required)]
    explanation: Option<String>,
}
#[derive(Deserialize, JsonSchema)]
struct CreateArgs {
    #[schemars(required, schema_with = "string_or_null")]
    after_chunk_id: Option<String>,
    new_html: String,
    #[schemars(required)]
    explanation: Option<String>,
}
#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    chunk_id: String,
    #[schemars(required)]
    explanation: Option<String>,
}
#[derive(Deserialize, JsonSchema)]
struct ReplaceArgs {
    chunk_id: Option<String>,
    search: String,
    replace: String,
    all: Option<bool>,
    #[schemars(required)]
    explanation: Option<String>,
}

/// Parses a call's arguments; the error text goes back to the model.
pub fn parse(name: &str, arguments: &str) -> Result<ToolRequest, String> {
    let raw = if arguments.trim().is_empty() { "{}" } else { arguments };
    let bad = |e: serde_json::Error| format!("invalid arguments for {name}: {e}");
    Ok(match name {
        "read_sections" => {
            let a: ReadArgs = serde_json::from_str(raw).map_err(bad)?;
            ToolRequest::Read { chunk_ids: a.chunk_ids }
        }
        "search_document" => {
            let a: SearchDocumentArgs = serde_json::from_str(raw).map_err(bad)?;
            let limit = a.limit.unwrap_or(10).clamp(1, MAX_SEARCH as i64) as usize;
            let offset = usize::try_from(a.offset.unwrap_or(0).max(0)).unwrap_or(usize::MAX);
            ToolRequest::SearchDocument { query: a.query, limit, offset }
        }
        "search_attachments" => {
            let a: SearchAttachmentsArgs = serde_json::from_str(raw).map_err(bad)?;
            ToolRequest::SearchAttachments { query: a.query, limit: a.limit.unwrap_or(5).clamp(1, 50) }
        }
        "edit_section" => {
            let a: EditArgs = serde_json::from_str(raw).map_err(bad)?;
            ToolRequest::Edit { chunk_id: a.chunk_id, new_html: a.new_html, explanation: a.explanation }
        }
        "create_section" => {
            let a: CreateArgs = serde_json::from_str(raw).map_err(bad)?;
            ToolRequest::Create { after: a.after_chunk_id, new_html: a.new_html, explanation: a.explanation }
        }
        "delete_section" => {
            let a: DeleteArgs = serde_json::from_str(raw).map_err(bad)?;
            ToolRequest::Delete { chunk_id: a.chunk_id, explanation: a.explanation }
        }
        "replace_text" => {
            let a: ReplaceArgs = serde_json::from_str(raw).map_err(bad)?;
            if a.search.is_empty() {
                return Err("invalid arguments for replace_text: search is empty".to_owned());
            }
            ToolRequest::Replace {
                chunk_id: a.chunk_id.filter(|c| !c.trim().is_empty()),
                search: a.search,
                replace: a.replace,
                all: a.all.unwrap_or(false),
                explanation: a.explanation,
            }
        }
        other => return Err(format!("unknown tool {other:?}; the tools are {}", NAMES.join(", "))),
    })
}

/// Words of a query worth matching (lower case, without punctuation and short words).
pub fn terms(query: &str) -> Vec<String> {
    const STOP: [&str; 24] = [
        "the", "and", "for", "are", "was", "what", "who", "how", "why", "when", "where", "which", "this", "that",
        "with", "from", "does", "did", "is", "of", "in", "a", "an", "to",
    ];
    query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(|w| w.to_lowercase())
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

/// Sections matching a query, best first: the exact phrase first, then by matched terms (in
/// document order among equals, so pages of the same document follow each other).
pub fn search_sections<'a>(doc: &'a Document, query: &str, limit: usize) -> Vec<&'a Section> {
    let phrase = query.trim().to_lowercase();
    let words = terms(query);
    let mut scored: Vec<(usize, f64, &Section)> = doc
        .sections()
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let text = s.text.to_lowercase();
            let mut score = 0.0;
            if !phrase.is_empty() && text.contains(&phrase) {
                score += 10.0;
            }
            let tokens: HashSet<&str> = text.split(|c: char| !c.is_alphanumeric()).collect();
            let hits = words.iter().filter(|w| tokens.contains(w.as_str())).count();
            if !words.is_empty() {
                score += hits as f64 / words.len() as f64;
            }
            (score > 0.0).then_some((i, score, s))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().take(limit).map(|(_, _, s)| s).collect()
}

/// Section HTML for a tool answer, cut to the budget; a section that references footnotes
/// also carries them (`notes`, see `notes.rs`).
fn sections_json(doc: &Document, sections: &[&Section]) -> Value {
    let mut used = 0usize;
    let mut out = Vec::new();
    let mut omitted = 0usize;
    for s in sections {
        if used + s.html.len() > MAX_TOOL_CHARS && !out.is_empty() {
            omitted += 1;
            continue;
        }
        used += s.html.len();
        let mut section = json!({"chunk_id": s.id.as_str(), "html": s.html});
        let notes = super::notes::notes_of(doc, s);
        if !notes.is_empty() {
            section["notes"] = json!(notes);
        }
        out.push(section);
    }
    json!({"sections": out, "omitted": omitted})
}

/// Answers to read-only tools.
pub fn read(doc: &Document, chunk_ids: &[String]) -> Value {
    let mut found = Vec::new();
    let mut unknown = Vec::new();
    for id in chunk_ids.iter().take(MAX_READ) {
        match ChunkId::parse(id).and_then(|c| doc.get(&c)) {
            Some(s) => found.push(s),
            None => unknown.push(id.clone()),
        }
    }
    let mut v = sections_json(doc, &found);
    if !unknown.is_empty() {
        v["unknown_chunk_ids"] = json!(unknown);
    }
    if chunk_ids.len() > MAX_READ {
        v["note"] = json!(format!("only the first {MAX_READ} ids were read"));
    }
    v
}

/// One page of a search: at most `limit` matches from `offset` on, and fewer when their HTML
/// would pass the answer's budget (at least one, cut), so that `next_offset` (present while
/// matches remain) leaves none out.
pub fn search(doc: &Document, query: &str, limit: usize, offset: usize) -> Value {
    let hits = search_sections(doc, query, usize::MAX);
    let total = hits.len();
    let mut page = Vec::new();
    let mut used = 0usize;
    for s in hits.iter().skip(offset).take(limit) {
        if used + s.html.len() > MAX_TOOL_CHARS && !page.is_empty() {
            break;
        }
        used += s.html.len();
        page.push(*s);
    }
    let mut v = sections_json(doc, &page);
    v["query"] = json!(query);
    v["offset"] = json!(offset);
    v["total"] = json!(total);
    let next = offset.saturating_add(page.len());
    if next < total {
        v["next_offset"] = json!(next);
    }
    v
}

pub fn passages_json(passages: &[Passage]) -> Value {
    json!({"passages": passages.iter().map(|p| json!({
        "attachment_id": p.attachment_id,
        "filename": p.filename,
        "chunk_index": p.chunk_index,
        "text": p.text,
        "score": p.score,
    })).collect::<Vec<_>>()})
}

/// `html` with `search` replaced by `replace` (once, or every time with `all`), matched in
/// the text between tags unless `search` holds markup (then in the HTML as written); tried as
/// typed, then with `&`, `<` and `>` escaped as the HTML writes them. `Ok(None)` when it does
/// not occur; `Err(n)` when it occurs `n > 1` times and `all` is false.
pub fn replace_in(html: &str, search: &str, replace: &str, all: bool) -> Result<Option<String>, usize> {
    let escaped = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let candidates: Vec<(String, String)> = if search.contains('<') {
        vec![(search.to_owned(), replace.to_owned())]
    } else {
        vec![(escaped(search), escaped(replace)), (search.to_owned(), replace.to_owned())]
    };
    for (pattern, with) in candidates {
        let in_markup = pattern.contains('<');
        let mut out = String::with_capacity(html.len());
        let mut count = 0usize;
        // Text runs and tags, in order; the pattern is replaced in text runs only.
        let mut rest = html;
        while !rest.is_empty() {
            let (text, tag, tail) = match rest.find('<') {
                Some(lt) if !in_markup => {
                    let gt = rest[lt..].find('>').map_or(rest.len(), |g| lt + g + 1);
                    (&rest[..lt], &rest[lt..gt], &rest[gt..])
                }
                _ => (rest, "", ""),
            };
            count += text.matches(pattern.as_str()).count();
            out.push_str(&text.replace(pattern.as_str(), &with));
            out.push_str(tag);
            rest = tail;
        }
        match count {
            0 => continue,
            1 => return Ok(Some(out)),
            _ if all => return Ok(Some(out)),
            n => return Err(n),
        }
    }
    Ok(None)
}

/// The turn's edits so far: the working copy, the document the turn started from, and the
/// changes (at most one per section: a second edit of a section updates the first).
/// Recording an edit costs the same however many changes came before.
pub struct Workspace {
    pub base: Document,
    pub working: Document,
    changes: Vec<Change>,
    /// Where in `changes` the edit or creation of a section is.
    by_chunk: HashMap<ChunkId, usize>,
}

impl Workspace {
    pub fn new(doc: Document) -> Self {
        Self { base: doc.clone(), working: doc, changes: Vec::new(), by_chunk: HashMap::new() }
    }

    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    /// Records an edit of `chunk_id` (already applied to the working copy); the change's
    /// index in [`Self::changes`].
    pub fn record_edit(
        &mut self,
        chunk_id: &ChunkId,
        new: Vec<Section>,
        explanation: Option<String>,
        change_id: String,
    ) -> usize {
        if let Some(&i) = self.by_chunk.get(chunk_id) {
            let c = &mut self.changes[i];
            c.new_sections = new;
            if explanation.is_some() {
                c.explanation = explanation;
            }
            return i;
        }
        let old_html = self.base.get(chunk_id).map(|s| s.html.clone());
        self.push(Change {
            change_id,
            op: ChangeOp::Edit,
            chunk_id: chunk_id.clone(),
            after: None,
            old_html,
            new_sections: new,
            explanation,
            edited: false,
        })
    }

    /// Records new sections (already inserted in the working copy); the change's index.
    pub fn record_create(
        &mut self,
        after: Option<ChunkId>,
        new: Vec<Section>,
        explanation: Option<String>,
        change_id: String,
    ) -> usize {
        let chunk_id = new[0].id.clone();
        self.push(Change {
            change_id,
            op: ChangeOp::Create,
            chunk_id,
            after,
            old_html: None,
            new_sections: new,
            explanation,
            edited: false,
        })
    }

    /// Records a deletion (already applied to the working copy): its change id, and its index
    /// unless the section was made in this turn, whose creation is then just dropped.
    pub fn record_delete(
        &mut self,
        chunk_id: &ChunkId,
        explanation: Option<String>,
        change_id: String,
    ) -> (String, Option<usize>) {
        let made_here = self.by_chunk.get(chunk_id).copied().filter(|&i| self.changes[i].op == ChangeOp::Create);
        let dropped = match made_here {
            Some(i) => Some(self.changes.remove(i).change_id),
            None => {
                self.changes.retain(|c| &c.chunk_id != chunk_id);
                None
            }
        };
        self.by_chunk = self
            .changes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.op != ChangeOp::Delete)
            .map(|(i, c)| (c.chunk_id.clone(), i))
            .collect();
        if let Some(change_id) = dropped {
            return (change_id, None);
        }
        let old_html = self.base.get(chunk_id).map(|s| s.html.clone());
        let i = self.push(Change {
            change_id: change_id.clone(),
            op: ChangeOp::Delete,
            chunk_id: chunk_id.clone(),
            after: None,
            old_html,
            new_sections: Vec::new(),
            explanation,
            edited: false,
        });
        (change_id, Some(i))
    }

    fn push(&mut self, change: Change) -> usize {
        let i = self.changes.len();
        if change.op != ChangeOp::Delete {
            self.by_chunk.insert(change.chunk_id.clone(), i);
        }
        self.changes.push(change);
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sec(id: &str, text: &str) -> Section {
        Section {
            id: ChunkId::parse(id).unwrap(),
            tag: "p".into(),
            html: format!("<p data-chunk-id=\"{id}\">{text}</p>"),
            text: text.into(),
        }
    }

    #[test]
    fn arguments_are_checked() {
        assert!(matches!(parse("read_sections", r#"{"chunk_ids": ["a"]}"#), Ok(ToolRequest::Read { .. })));
        assert!(parse("read_sections", "not json").unwrap_err().contains("invalid arguments"));
        assert!(parse("edit_section", r#"{"chunk_id": 3}"#).is_err());
        assert!(parse("format_disk", "{}").unwrap_err().contains("unknown tool"));
        assert_eq!(
            parse("create_section", r#"{"after_chunk_id": null, "new_html": "<p>x</p>", "explanation": "e"}"#),
            Ok(ToolRequest::Create { after: None, new_html: "<p>x</p>".into(), explanation: Some("e".into()) })
        );
    }

    /// The schemas as they were written by hand beside the argument structs: what the model
    /// is told must not change with the derive.
    #[test]
    fn the_derived_schemas_are_the_hand_written_ones() {
        let expected = [
            (
                "read_sections",
                json!({"type": "object", "properties": {
                    "chunk_ids": {"type": "array", "items": {"type": "string"}}
                }, "required": ["chunk_ids"]}),
            ),
            (
                "search_document",
                json!({"type": "object", "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH},
                    "offset": {"type": "integer", "minimum": 0}
                }, "required": ["query"]}),
            ),
            (
                "search_attachments",
                json!({"type": "object", "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50}
                }, "required": ["query"]}),
            ),
            (
                "edit_section",
                json!({"type": "object", "properties": {
                    "chunk_id": {"type": "string"},
                    "new_html": {"type": "string"},
                    "explanation": {"type": "string"}
                }, "required": ["chunk_id", "new_html", "explanation"]}),
            ),
            (
                "create_section",
                json!({"type": "object", "properties": {
                    "after_chunk_id": {"type": ["string", "null"]},
                    "new_html": {"type": "string"},
                    "explanation": {"type": "string"}
                }, "required": ["after_chunk_id", "new_html", "explanation"]}),
            ),
            (
                "delete_section",
                json!({"type": "object", "properties": {
                    "chunk_id": {"type": "string"},
                    "explanation": {"type": "string"}
                }, "required": ["chunk_id", "explanation"]}),
            ),
            (
                "replace_text",
                json!({"type": "object", "properties": {
                    "chunk_id": {"type": "string"},
                    "search": {"type": "string"},
                    "replace": {"type": "string"},
                    "all": {"type": "boolean"},
                    "explanation": {"type": "string"}
                }, "required": ["search", "replace", "explanation"]}),
            ),
        ];
        let specs = specs();
        assert_eq!(specs.len(), expected.len());
        for (spec, (name, parameters)) in specs.iter().zip(expected) {
            assert_eq!(spec.name, name);
            assert_eq!(spec.parameters, parameters, "{name}: {}", spec.parameters);
        }
    }

    #[test]
    fn optional_arguments_may_be_left_out() {
        assert_eq!(
            parse("search_document", r#"{"query": "q"}"#),
            Ok(ToolRequest::SearchDocument { query: "q".into(), limit: 10, offset: 0 })
        );
        assert_eq!(
            parse("search_attachments", r#"{"query": "q", "offset": 3}"#),
            Ok(ToolRequest::SearchAttachments { query: "q".into(), limit: 5 })
        );
        assert_eq!(
            parse("create_section", r#"{"new_html": "<p>x</p>"}"#),
            Ok(ToolRequest::Create { after: None, new_html: "<p>x</p>".into(), explanation: None })
        );
        assert_eq!(
            parse("delete_section", r#"{"chunk_id": "a"}"#),
            Ok(ToolRequest::Delete { chunk_id: "a".into(), explanation: None })
        );
    }

    #[test]
    fn replace_text_matches_text_not_markup() {
        let html = "<p data-chunk-id=\"data\">Acme &amp; Co. make <b>Acme</b> anvils.</p>";
        assert_eq!(replace_in(html, "Acme", "Zenith", false), Err(2));
        assert_eq!(
            replace_in(html, "Acme", "Zenith", true),
            Ok(Some("<p data-chunk-id=\"data\">Zenith &amp; Co. make <b>Zenith</b> anvils.</p>".into()))
        );
        // Typed with a bare `&`, found as written; the attribute's "data" is not text.
        assert_eq!(
            replace_in(html, "Acme & Co.", "A & B", false),
            Ok(Some("<p data-chunk-id=\"data\">A &amp; B make <b>Acme</b> anvils.</p>".into()))
        );
        assert_eq!(replace_in(html, "data", "x", true), Ok(None));
        // Markup in the search text: matched in the HTML as written.
        assert_eq!(
            replace_in(html, "<b>Acme</b>", "<i>Acme</i>", false),
            Ok(Some("<p data-chunk-id=\"data\">Acme &amp; Co. make <i>Acme</i> anvils.</p>".into()))
        );
        assert_eq!(
            replace_in("<p>日本語のテキスト</p>", "日本語", "英語", false),
            Ok(Some("<p>英語のテキスト</p>".into()))
        );
    }

    #[test]
    fn replace_text_arguments() {
        assert_eq!(
            parse("replace_text", r#"{"search": "a", "replace": "b", "all": true, "chunk_id": ""}"#),
            Ok(ToolRequest::Replace {
                chunk_id: None,
                search: "a".into(),
                replace: "b".into(),
                all: true,
                explanation: None
            })
        );
        assert!(parse("replace_text", r#"{"search": "", "replace": "b"}"#).is_err());
    }

    #[test]
    fn search_ranks_the_phrase_first() {
        let doc = Document::new(vec![
            sec("a", "capital cities"),
            sec("b", "The capital of Freedonia is Fredville"),
            sec("c", "nothing"),
        ])
        .unwrap();
        let hits = search_sections(&doc, "capital of Freedonia", 10);
        assert_eq!(hits.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        assert!(search_sections(&doc, "zebra", 10).is_empty());
    }

    #[test]
    fn search_pages_leave_no_match_out() {
        // 30 matches: pages of 7 by limit, then pages cut by the answer's budget.
        let doc =
            Document::new((0..30).map(|i| sec(&format!("s{i}"), &format!("match number {i}"))).collect()).unwrap();
        let ids = |v: &Value| -> Vec<String> {
            v["sections"].as_array().unwrap().iter().map(|s| s["chunk_id"].as_str().unwrap().to_owned()).collect()
        };
        let (mut seen, mut offset) = (Vec::new(), 0);
        loop {
            let page = search(&doc, "match", 7, offset);
            assert_eq!(page["total"], 30);
            assert!(ids(&page).len() <= 7);
            seen.extend(ids(&page));
            match page["next_offset"].as_u64() {
                Some(next) => offset = next as usize,
                None => break,
            }
        }
        assert_eq!(seen, (0..30).map(|i| format!("s{i}")).collect::<Vec<_>>());
        assert_eq!(search(&doc, "match", 7, 1000)["sections"], json!([]), "past the end: an empty page");

        let big = "word ".repeat(MAX_TOOL_CHARS / 12);
        let doc = Document::new((0..5).map(|i| sec(&format!("b{i}"), &format!("match {big}"))).collect()).unwrap();
        let first = search(&doc, "match", 100, 0);
        assert_eq!((ids(&first).len(), first["next_offset"].as_u64()), (2, Some(2)), "cut by the budget, not skipped");
        let last = search(&doc, "match", 100, 4);
        assert_eq!((ids(&last), last.get("next_offset")), (vec!["b4".to_owned()], None));
    }
}
