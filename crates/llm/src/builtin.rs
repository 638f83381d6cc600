//! `builtin`: the deterministic, offline editor of docs/api.md, "Chat and jobs". It reads the request the
//! way a model would (the outline in the system message, the user's instruction, the tool
//! results so far) and answers with tool calls or text, so it goes through exactly the same
//! loop and tools as a real model. Used for demos, tests and zero-setup installs.
//!
//! It understands:
//! - `replace "X" with "Y"`: every occurrence in the text of every section;
//! - `delete section <chunk_id>`;
//! - `append a section: <text>` (at the end);
//! - `rewrite <chunk_id>: <html>`;
//! - `summarize`;
//! - anything else is a question, answered by quoting the best-matching section or
//!   attachment passage.

use redline_domain::request::{ends_with_question_mark, is_editing_verb};
use redline_ports::llm::{Completion, CompletionRequest, DeltaSink, LanguageModel, LlmError, Message, Role, ToolCall};
use serde_json::{json, Value};

#[derive(Debug, Default, Clone, Copy)]
pub struct Builtin;

#[derive(Debug, Clone, PartialEq)]
enum Instruction {
    Replace {
        from: String,
        to: String,
    },
    Delete {
        chunk_id: String,
    },
    Append {
        text: String,
    },
    Rewrite {
        chunk_id: String,
        html: String,
    },
    Summarize,
    Question(String),
    /// A request in words of its own, which only a real model can follow.
    Unsupported(String),
}

/// Whether a request that is no command asks for a change in words of its own, which only a
/// real model can follow: it opens with an editing verb and is not a question (a question mark,
/// or a question word first). Anything else is looked up in the document: a question, or bare
/// words to find.
fn asks_for_a_change(s: &str) -> bool {
    const QUESTION_WORDS: [&str; 22] = [
        "what", "when", "where", "who", "whom", "whose", "why", "how", "which", "is", "are", "was", "were", "do",
        "does", "did", "has", "have", "find", "quote", "search", "tell",
    ];
    let first = s.split_whitespace().next().unwrap_or_default().trim_end_matches([',', ':']).to_lowercase();
    let question = ends_with_question_mark(s) || QUESTION_WORDS.contains(&first.as_str());
    !question && is_editing_verb(&first)
}

/// The text between the first pair of straight or curly double quotes, and the rest after it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let start = s.find(['"', '\u{201c}'])?;
    let open_len = s[start..].chars().next()?.len_utf8();
    let body = &s[start + open_len..];
    let end = body.find(['"', '\u{201d}'])?;
    let close_len = body[end..].chars().next()?.len_utf8();
    Some((body[..end].to_owned(), &body[end + close_len..]))
}

fn strip_prefix_ci<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    (s.len() >= prefix.len() && s.is_char_boundary(prefix.len()) && s[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &s[prefix.len()..])
}

fn parse(instruction: &str) -> Instruction {
    let s = instruction.trim();
    if let Some(rest) = strip_prefix_ci(s, "replace") {
        if let Some((from, after)) = quoted(rest) {
            if let Some(after_with) = strip_prefix_ci(after.trim_start(), "with") {
                if let Some((to, _)) = quoted(after_with) {
                    if !from.is_empty() {
                        return Instruction::Replace { from, to };
                    }
                }
            }
        }
    }
    if let Some(rest) = strip_prefix_ci(s, "delete section") {
        let id = rest.trim().trim_end_matches('.');
        if !id.is_empty() && !id.contains(char::is_whitespace) {
            return Instruction::Delete { chunk_id: id.to_owned() };
        }
    }
    if let Some(rest) = strip_prefix_ci(s, "append a section:") {
        return Instruction::Append { text: rest.trim().to_owned() };
    }
    if let Some(rest) = strip_prefix_ci(s, "rewrite ") {
        if let Some((id, html)) = rest.split_once(':') {
            let id = id.trim();
            if !id.is_empty() && !id.contains(char::is_whitespace) {
                return Instruction::Rewrite { chunk_id: id.to_owned(), html: html.trim().to_owned() };
            }
        }
    }
    if strip_prefix_ci(s, "summarize").or_else(|| strip_prefix_ci(s, "summarise")).is_some() {
        return Instruction::Summarize;
    }
    if asks_for_a_change(s) {
        Instruction::Unsupported(s.to_owned())
    } else {
        Instruction::Question(s.to_owned())
    }
}

/// What the offline model can do, with examples made from the document's outline: the answer
/// to a request it cannot follow.
fn help(request: &str, outline: &Value) -> String {
    let sections = outline.get("sections").and_then(Value::as_array).cloned().unwrap_or_default();
    let word = sections
        .iter()
        .filter_map(|s| s.get("first_words").and_then(Value::as_str))
        .flat_map(str::split_whitespace)
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .find(|w| w.chars().count() >= 4)
        .unwrap_or("draft")
        .to_owned();
    let last = sections.last().and_then(|s| s.get("id")).and_then(Value::as_str).unwrap_or("<section id>");
    let asked: String = request.chars().take(80).collect();
    format!(
        "Redline's offline model follows a few exact commands, so it cannot do \"{asked}\". It can: \
         replace \"{word}\" with \"new words\" (everywhere in the document); delete section {last}; \
         append a section: your text; rewrite {last}: <p>new text</p>; summarize; and answer a question \
         by quoting the document, such as \"What does it say about {word}?\". Requests in your own words \
         need a language model: the operator connects one with REDLINE_LLM_PROVIDER=openai (README.md)."
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Replaces `from` with `to` in the text of an HTML fragment, never inside tags.
fn replace_in_text(html: &str, from: &str, to: &str) -> (String, usize) {
    let (from, to) = (escape(from), escape(to));
    let mut out = String::with_capacity(html.len());
    let mut count = 0;
    let mut rest = html;
    while !rest.is_empty() {
        if rest.starts_with('<') {
            let end = rest.find('>').map_or(rest.len(), |i| i + 1);
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        } else {
            let end = rest.find('<').unwrap_or(rest.len());
            let text = &rest[..end];
            count += text.matches(from.as_str()).count();
            out.push_str(&text.replace(from.as_str(), &to));
            rest = &rest[end..];
        }
    }
    (out, count)
}

/// Elements inside a line of text: their tags do not separate words (`ita<b>li</b>c` is one).
const INLINE: [&str; 18] = [
    "a", "abbr", "b", "code", "del", "em", "font", "i", "ins", "kbd", "mark", "s", "small", "span", "strong", "sub",
    "sup", "u",
];

/// The text of an HTML fragment (tags dropped, a block's or a line break's as a space, common
/// entities decoded, spaces collapsed).
fn text_of(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('>') else {
            rest = "";
            break;
        };
        let tag = &rest[open + 1..open + close];
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        if !INLINE.contains(&name.as_str()) {
            out.push(' ');
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() > 2).map(str::to_lowercase).collect()
}

/// How well a passage answers a question: the share of the question's words it contains.
fn overlap(question: &str, text: &str) -> f64 {
    let q = words(question);
    if q.is_empty() {
        return 0.0;
    }
    let t: std::collections::HashSet<String> = words(text).into_iter().collect();
    q.iter().filter(|w| t.contains(*w)).count() as f64 / q.len() as f64
}

fn outline(request: &CompletionRequest) -> Value {
    request
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .filter_map(|m| m.content.as_deref())
        .find_map(|c| {
            let start = c.find("<outline>")? + "<outline>".len();
            let end = c[start..].find("</outline>")? + start;
            serde_json::from_str(c[start..end].trim()).ok()
        })
        .unwrap_or(Value::Null)
}

fn call(stage: usize, i: usize, name: &str, args: Value) -> ToolCall {
    ToolCall { id: format!("call_builtin_{stage}_{i}"), name: name.to_owned(), arguments: args.to_string() }
}

fn text(s: impl Into<String>) -> Completion {
    Completion { content: Some(s.into()), ..Default::default() }
}

fn calls(calls: Vec<ToolCall>) -> Completion {
    Completion { tool_calls: calls, ..Default::default() }
}

/// The tool answers since the instruction, parsed.
fn results(after: &[Message]) -> Vec<Value> {
    after
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m| m.content.as_deref())
        .map(|c| serde_json::from_str(c).unwrap_or(Value::Null))
        .collect()
}

fn errors(results: &[Value]) -> Vec<String> {
    results.iter().filter_map(|r| r.get("error").and_then(Value::as_str)).map(str::to_owned).collect()
}

fn sections(results: &[Value]) -> Vec<(String, String)> {
    results
        .iter()
        .filter_map(|r| r.get("sections").and_then(Value::as_array))
        .flatten()
        .filter_map(|s| Some((s.get("chunk_id")?.as_str()?.to_owned(), s.get("html")?.as_str()?.to_owned())))
        .collect()
}

fn finish_edit(results: &[Value], done: &str) -> Completion {
    let errs = errors(results);
    if errs.is_empty() {
        text(done)
    } else {
        text(format!("I could not do that: {}", errs.join("; ")))
    }
}

/// `replace "from" with "to"`: the document's matches are searched (the first page, then
/// every unread page at once, again until none is left, all before any edit so that edits do
/// not move the pages), then every section holding `from` is edited in one round, then the
/// answer says how many were.
fn replace(after: &[Message], stage: usize, from: &str, to: &str) -> Completion {
    if stage == 0 {
        return calls(vec![search_call(stage, 0, from, 0, SEARCH_PAGE)]);
    }
    let last_round = after.iter().rposition(|m| m.role == Role::Assistant).map_or(after, |i| &after[i + 1..]);
    let last = results(last_round);
    if last.iter().all(|r| r.get("sections").is_some()) {
        let unread = unread_pages(&results(after));
        if !unread.is_empty() {
            return calls(
                unread
                    .into_iter()
                    .enumerate()
                    .map(|(i, (offset, limit))| search_call(stage, i, from, offset, limit))
                    .collect(),
            );
        }
        let mut seen = std::collections::HashSet::new();
        let edits: Vec<ToolCall> = sections(&results(after))
            .into_iter()
            .filter(|(id, _)| seen.insert(id.clone()))
            .filter_map(|(id, html)| {
                let (new_html, n) = replace_in_text(&html, from, to);
                (n > 0).then_some((id, new_html))
            })
            .enumerate()
            .map(|(i, (id, new_html))| {
                call(
                    stage,
                    i,
                    "edit_section",
                    json!({
                        "chunk_id": id,
                        "new_html": new_html,
                        "explanation": format!("Replace \"{from}\" with \"{to}\"."),
                    }),
                )
            })
            .collect();
        return if edits.is_empty() {
            text(format!("I found no \"{from}\" in the document, so nothing was changed."))
        } else {
            calls(edits)
        };
    }
    let ok = last.iter().filter(|r| r.get("ok").is_some()).count();
    finish_edit(&last, &format!("Replaced \"{from}\" with \"{to}\" in {ok} section{}.", if ok == 1 { "" } else { "s" }))
}

/// Matches asked for per search (the tool's most).
const SEARCH_PAGE: u64 = 1000;
/// Searches asked for in one round at most.
const PAGES_PER_ROUND: usize = 128;

fn search_call(stage: usize, i: usize, query: &str, offset: u64, limit: u64) -> ToolCall {
    call(stage, i, "search_document", json!({"query": query, "limit": limit, "offset": offset}))
}

/// The pages (`offset`, `limit`) of matches no search answer has held yet: the gaps in
/// `0..total` between the answers' `offset..offset + sections`. A page cut short by the
/// answer's budget leaves a gap that the next round asks for.
fn unread_pages(answers: &[Value]) -> Vec<(u64, u64)> {
    let pages: Vec<&Value> = answers.iter().filter(|r| r.get("total").is_some()).collect();
    let total = pages.iter().filter_map(|r| r["total"].as_u64()).max().unwrap_or(0);
    let mut read: Vec<(u64, u64)> = pages
        .iter()
        .map(|r| {
            let offset = r.get("offset").and_then(Value::as_u64).unwrap_or(0);
            (offset, offset + r["sections"].as_array().map_or(0, |s| s.len() as u64))
        })
        .collect();
    read.sort_unstable();
    let mut unread = Vec::new();
    let mut at = 0;
    for (start, end) in read.into_iter().chain([(total, total)]) {
        let mut gap = at;
        while gap < start.min(total) {
            let limit = SEARCH_PAGE.min(start - gap);
            unread.push((gap, limit));
            gap += limit;
        }
        at = at.max(end);
    }
    unread.truncate(PAGES_PER_ROUND);
    unread
}

impl Builtin {
    fn answer(&self, request: &CompletionRequest) -> Completion {
        let Some(last_user) = request.messages.iter().rposition(|m| m.role == Role::User) else {
            return text("There is nothing to answer.");
        };
        let raw = request.messages[last_user].content.clone().unwrap_or_default();
        // Reviewer feedback after rejected changes is read as a new instruction.
        let instruction = raw.strip_prefix("Reviewer feedback on the rejected changes: ").unwrap_or(&raw).to_owned();
        let after = &request.messages[last_user + 1..];
        let stage = after.iter().filter(|m| m.role == Role::Assistant).count();
        let res = results(after);
        match parse(&instruction) {
            Instruction::Replace { from, to } => replace(after, stage, &from, &to),
            Instruction::Delete { chunk_id } => match stage {
                0 => calls(vec![call(
                    0,
                    0,
                    "delete_section",
                    json!({"chunk_id": chunk_id, "explanation": "Deleted as requested."}),
                )]),
                _ => finish_edit(&res, &format!("Deleted section {chunk_id}.")),
            },
            Instruction::Append { text: body } => match stage {
                0 => {
                    let last = outline(request).get("last_chunk_id").cloned().unwrap_or(Value::Null);
                    calls(vec![call(
                        0,
                        0,
                        "create_section",
                        json!({
                            "after_chunk_id": last,
                            "new_html": format!("<p>{}</p>", escape(&body)),
                            "explanation": "Added at the end as requested.",
                        }),
                    )])
                }
                _ => finish_edit(&res, "Added a section at the end of the document."),
            },
            Instruction::Rewrite { chunk_id, html } => match stage {
                0 => calls(vec![call(
                    0,
                    0,
                    "edit_section",
                    json!({
                        "chunk_id": chunk_id,
                        "new_html": html,
                        "explanation": "Rewritten as requested.",
                    }),
                )]),
                _ => finish_edit(&res, &format!("Rewrote section {chunk_id}.")),
            },
            Instruction::Summarize => match stage {
                0 => {
                    let ids: Vec<Value> = outline(request)
                        .get("sections")
                        .and_then(Value::as_array)
                        .map(|s| s.iter().filter_map(|e| e.get("id").cloned()).take(20).collect())
                        .unwrap_or_default();
                    if ids.is_empty() {
                        text("The document is empty: there is nothing to summarize yet.")
                    } else {
                        calls(vec![call(0, 0, "read_sections", json!({"chunk_ids": ids}))])
                    }
                }
                _ => {
                    let first_sentences: Vec<String> = sections(&res)
                        .iter()
                        .map(|(_, html)| text_of(html))
                        .filter(|t| !t.is_empty())
                        .map(|t| {
                            let end = t.find(['.', '!', '?']).map_or(t.len(), |i| i + 1);
                            t[..end].to_owned()
                        })
                        .take(8)
                        .collect();
                    let n = outline(request).get("section_count").and_then(Value::as_u64).unwrap_or(0);
                    text(format!("Summary of the document ({n} sections): {}", first_sentences.join(" ")))
                }
            },
            Instruction::Unsupported(asked) => text(help(&asked, &outline(request))),
            Instruction::Question(q) => match stage {
                0 => calls(vec![
                    call(0, 0, "search_document", json!({"query": q, "limit": 5})),
                    call(0, 1, "search_attachments", json!({"query": q, "limit": 5})),
                ]),
                _ => {
                    // Every section and passage the searches found answers in part (their
                    // stemming and tokens see more than a literal match: "harvest" finds
                    // "harvested", and words of one or two letters count). The share of
                    // the question's words a text holds ranks them, and the searches' own
                    // order breaks ties; a document section wins a tie with a passage.
                    let found = |rank: usize| 1e-3 / (rank as f64 + 1.0);
                    let mut best: Option<(f64, String)> = None;
                    for (rank, (_, html)) in sections(&res).into_iter().enumerate() {
                        let t = text_of(&html);
                        let score = overlap(&q, &t) + found(rank);
                        if best.as_ref().is_none_or(|(b, _)| score > *b) {
                            best = Some((score, format!("The document says: \"{t}\"")));
                        }
                    }
                    let passages = res.iter().filter_map(|r| r.get("passages").and_then(Value::as_array)).flatten();
                    for (rank, p) in passages.enumerate() {
                        let t = p.get("text").and_then(Value::as_str).unwrap_or_default();
                        let file = p.get("filename").and_then(Value::as_str).unwrap_or("an attachment");
                        let score = overlap(&q, t) + found(rank);
                        if best.as_ref().is_none_or(|(b, _)| score > *b) {
                            best = Some((score, format!("From {file}: \"{}\"", t.trim())));
                        }
                    }
                    match best {
                        Some((_, answer)) => text(answer),
                        None => text("I could not find anything about that in the document or its attachments."),
                    }
                }
            },
        }
    }
}

#[async_trait::async_trait]
impl LanguageModel for Builtin {
    fn name(&self) -> String {
        "builtin".to_owned()
    }

    async fn complete(&self, request: &CompletionRequest, deltas: &dyn DeltaSink) -> Result<Completion, LlmError> {
        let completion = self.answer(request);
        if let Some(t) = &completion.content {
            deltas.text(t);
        }
        Ok(completion)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redline_ports::llm::NoDeltas;

    #[test]
    fn text_keeps_words_whole_across_inline_tags() {
        assert_eq!(text_of("<p>An <s>ita<b>li</b>c</s> word &amp; more</p><p>Next</p>"), "An italic word & more Next");
        assert_eq!(text_of("<li>one<br>two</li><li>three</li>"), "one two three");
        assert_eq!(text_of("<p>cut <a href=\"x\">li</a>nk"), "cut link");
        assert_eq!(text_of("broken <b"), "broken");
    }

    #[test]
    fn instructions() {
        assert_eq!(parse(r#"replace "fox" with "cat""#), Instruction::Replace { from: "fox".into(), to: "cat".into() });
        assert_eq!(parse(r#"Replace “a b” with “”"#), Instruction::Replace { from: "a b".into(), to: "".into() });
        assert_eq!(parse("delete section c12"), Instruction::Delete { chunk_id: "c12".into() });
        assert_eq!(parse("append a section: Hello there"), Instruction::Append { text: "Hello there".into() });
        assert_eq!(
            parse("rewrite c1: <p>New: text</p>"),
            Instruction::Rewrite { chunk_id: "c1".into(), html: "<p>New: text</p>".into() }
        );
        assert_eq!(parse("summarize"), Instruction::Summarize);
        assert_eq!(parse("What is it?"), Instruction::Question("What is it?".into()));
        assert_eq!(parse("when does it start"), Instruction::Question("when does it start".into()));
        assert_eq!(parse("harvest"), Instruction::Question("harvest".into()));
        assert_eq!(parse("Make it shorter?"), Instruction::Question("Make it shorter?".into()));
        assert_eq!(parse("Summarize the document"), Instruction::Summarize);
        assert_eq!(
            parse("Make the introduction more formal"),
            Instruction::Unsupported("Make the introduction more formal".into())
        );
        assert_eq!(parse("shorten section 2"), Instruction::Unsupported("shorten section 2".into()));
    }

    #[test]
    fn replacing_never_touches_markup() {
        let (out, n) = replace_in_text(r#"<p data-chunk-id="p1" class="p">a p and <b>p</b></p>"#, "p", "q");
        assert_eq!(out, r#"<p data-chunk-id="p1" class="p">a q and <b>q</b></p>"#);
        assert_eq!(n, 2);
        let (out, _) = replace_in_text("<p>x &amp; y</p>", "&", "and");
        assert_eq!(out, "<p>x and y</p>");
    }

    fn page(offset: u64, n: usize, total: u64) -> Value {
        json!({"offset": offset, "total": total, "sections": vec![json!({"chunk_id": "c", "html": "x"}); n]})
    }

    #[test]
    fn unread_pages_are_the_gaps_between_the_answers() {
        // After the first page: every other page at once.
        assert_eq!(unread_pages(&[page(0, 1000, 3500)]), vec![(1000, 1000), (2000, 1000), (3000, 500)]);
        // A page cut by the budget leaves a gap that is asked for again; nothing read twice.
        let answers = [page(0, 1000, 3500), page(1000, 400, 3500), page(2000, 1000, 3500), page(3000, 500, 3500)];
        assert_eq!(unread_pages(&answers), vec![(1400, 600)]);
        let answers = [page(0, 1000, 3500), page(1000, 1000, 3500), page(2000, 1000, 3500), page(3000, 500, 3500)];
        assert!(unread_pages(&answers).is_empty());
        assert!(unread_pages(&[page(0, 0, 0)]).is_empty());
        // Answers that are not search pages count for nothing.
        assert_eq!(unread_pages(&[json!({"ok": true}), page(0, 2, 3)]), vec![(2, 1)]);
        assert_eq!(unread_pages(&[page(0, 1, 1_000_000)]).len(), PAGES_PER_ROUND);
    }

    fn system(outline: Value) -> Message {
        Message::system(format!("intro\n<outline>\n{outline}\n</outline>\n"))
    }

    #[tokio::test]
    async fn a_replace_goes_search_edit_answer() {
        let sys = system(json!({"last_chunk_id": "b", "sections": []}));
        let mut req =
            CompletionRequest { messages: vec![sys, Message::user(r#"replace "fox" with "cat""#)], tools: vec![] };
        let c = Builtin.complete(&req, &NoDeltas).await.unwrap();
        assert_eq!(c.tool_calls[0].name, "search_document");
        req.messages.push(Message::assistant(None, c.tool_calls.clone()));
        let found = json!({"sections": [
            {"chunk_id": "a", "html": "<p data-chunk-id=\"a\">The fox</p>"},
            {"chunk_id": "b", "html": "<p data-chunk-id=\"b\">Foxes</p>"},
        ]});
        req.messages.push(Message::tool(c.tool_calls[0].id.clone(), found.to_string()));
        let c = Builtin.complete(&req, &NoDeltas).await.unwrap();
        assert_eq!(c.tool_calls.len(), 1, "case-sensitive: only the first section has \"fox\"");
        let args: Value = serde_json::from_str(&c.tool_calls[0].arguments).unwrap();
        assert_eq!(args["new_html"], "<p data-chunk-id=\"a\">The cat</p>");
        req.messages.push(Message::assistant(None, c.tool_calls.clone()));
        req.messages.push(Message::tool(c.tool_calls[0].id.clone(), json!({"ok": true}).to_string()));
        let c = Builtin.complete(&req, &NoDeltas).await.unwrap();
        assert_eq!(c.content.as_deref(), Some("Replaced \"fox\" with \"cat\" in 1 section."));
    }

    #[tokio::test]
    async fn append_goes_after_the_last_section() {
        let sys = system(json!({"last_chunk_id": "z9", "sections": []}));
        let req = CompletionRequest { messages: vec![sys, Message::user("append a section: A & B")], tools: vec![] };
        let c = Builtin.complete(&req, &NoDeltas).await.unwrap();
        let args: Value = serde_json::from_str(&c.tool_calls[0].arguments).unwrap();
        assert_eq!(args["after_chunk_id"], "z9");
        assert_eq!(args["new_html"], "<p>A &amp; B</p>");
    }

    #[tokio::test]
    async fn a_request_it_cannot_follow_is_answered_with_what_it_can_do() {
        let sys = system(json!({"sections": [
            {"id": "h1", "h1": "Plans"},
            {"id": "p2", "chars": 40, "first_words": "We meet in spring"},
        ]}));
        let req = CompletionRequest {
            messages: vec![sys, Message::user("Make the introduction more formal")],
            tools: vec![],
        };
        let c = Builtin.complete(&req, &NoDeltas).await.unwrap();
        assert!(c.tool_calls.is_empty(), "it searches nothing");
        let answer = c.content.unwrap();
        assert!(answer.contains("cannot do \"Make the introduction more formal\""), "{answer}");
        assert!(answer.contains("replace \"meet\" with") && answer.contains("delete section p2"), "{answer}");
        assert!(answer.contains("REDLINE_LLM_PROVIDER=openai"), "{answer}");
    }

    #[tokio::test]
    async fn questions_quote_the_best_match() {
        let sys = system(json!({"sections": []}));
        let mut req = CompletionRequest {
            messages: vec![sys, Message::user("What is the capital of Freedonia?")],
            tools: vec![],
        };
        let c = Builtin.complete(&req, &NoDeltas).await.unwrap();
        req.messages.push(Message::assistant(None, c.tool_calls.clone()));
        let doc = json!({"sections": [
            {"chunk_id": "a", "html": "<p>Freedonia exports cheese.</p>"},
            {"chunk_id": "b", "html": "<p>The capital of Freedonia is Fredville.</p>"},
        ]});
        req.messages.push(Message::tool("call_builtin_0_0", doc.to_string()));
        req.messages.push(Message::tool("call_builtin_0_1", json!({"passages": []}).to_string()));
        let c = Builtin.complete(&req, &NoDeltas).await.unwrap();
        assert!(c.content.unwrap().contains("Fredville"));
    }
}
