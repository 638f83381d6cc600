//! How the model edits (`REDLINE_EDIT_PROTOCOL`, docs/api.md "Edit protocols"):
//!
//! - `tools`: function calling (the six tools and `replace_text`); tool calls written as text
//!   are recognized too (`textcalls.rs`). For models with strong tool calling.
//! - `blocks`: no function calling; the model sees the sections in view with their chunk ids
//!   and answers with SEARCH/REPLACE blocks (`blocks.rs`).
//! - `rewrite`: no function calling; the model returns the revised HTML of the sections in
//!   view and Redline diffs it into section edits (`rewrite.rs`). For small local models.
//!
//! Every protocol's edits go through the same tool requests, changes, approval and redlines.

use redline_domain::document::Document;
use redline_domain::request::{ends_with_question_mark, is_editing_verb};
use redline_ports::attachments::Passage;

use super::rewrite::without_chunk_id;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EditProtocol {
    #[default]
    Tools,
    Blocks,
    Rewrite,
}

impl EditProtocol {
    pub const ALL: [EditProtocol; 3] = [Self::Tools, Self::Blocks, Self::Rewrite];

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == value)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tools => "tools",
            Self::Blocks => "blocks",
            Self::Rewrite => "rewrite",
        }
    }

    /// The protocol `REDLINE_EDIT_PROTOCOL=auto` (the default) picks for an OpenAI-compatible
    /// model: `rewrite` for a model whose name states a size of at most
    /// [`SMALL_MODEL_BILLIONS`] billion parameters (`qwen2.5-coder-1.5b`, `llama3.1:8b`): the
    /// local models measured in docs/benchmarks.md §11, which follow no tool-calling format
    /// reliably; `tools` for every other name (hosted models with strong function calling).
    pub fn for_model(model: &str) -> Self {
        match stated_billions(model) {
            Some(b) if b <= SMALL_MODEL_BILLIONS => Self::Rewrite,
            _ => Self::Tools,
        }
    }

    /// Whether the model gets function-calling tools.
    pub fn uses_tools(self) -> bool {
        self == Self::Tools
    }

    /// What the model is told when its answer claimed an edit that did not happen.
    pub fn how_to_edit(self) -> &'static str {
        match self {
            Self::Tools => "To change the document, call edit_section, replace_text, create_section or delete_section.",
            Self::Blocks => "To change the document, answer with SEARCH/REPLACE blocks as described.",
            Self::Rewrite => "To change the document, answer with the revised HTML in one ```html block as described.",
        }
    }
}

/// The largest model, in billions of parameters, that `auto` gives the `rewrite` protocol.
pub const SMALL_MODEL_BILLIONS: f64 = 14.0;

/// The size a model's name states, in billions of parameters: a number followed by `b` that
/// stands alone between separators (`1.5b`, `:7b`, `-0.5B-`, `8x7b` counts 8×7). `None` when
/// the name states none (`gpt-4o-mini`, `claude-sonnet-4`).
pub fn stated_billions(model: &str) -> Option<f64> {
    let lower = model.to_ascii_lowercase();
    lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter_map(|word| {
            let number = word.strip_suffix('b')?;
            match number.split_once('x') {
                Some((n, each)) => Some(n.parse::<f64>().ok()? * each.parse::<f64>().ok()?),
                None => number.parse::<f64>().ok(),
            }
        })
        .find(|b| b.is_finite() && *b > 0.0)
}

const BLOCKS_INSTRUCTIONS: &str = "You are Redline, an editor of an HTML document. The sections below are the \
part of the document that matters for the user's request; each starts with its chunk id in brackets.\n\
To change the document, answer with one block per change, in this exact form:\n\
chunk_id\n<<<<<<< SEARCH\nexact text copied from that section\n=======\nthe replacement\n>>>>>>> REPLACE\n\
Keep SEARCH short but unique. To add a new paragraph or item after a section, SEARCH its whole HTML and \
REPLACE it with the same HTML followed by the new block. To delete a section, SEARCH its whole HTML and leave \
the replacement empty. After the blocks, say in one sentence what you changed.\n\
If the request is a question or asks for nothing that can be done to this document, answer in plain text \
without blocks, and never say you changed something you did not.";

const REWRITE_INSTRUCTIONS: &str = "You are Redline, an editor of an HTML document. The sections below are the \
part of the document that matters for the user's request.\n\
To change the document, answer with the revised HTML of ALL these sections in one ```html block: every \
section in order, changed or not, each keeping its data-chunk-id attribute; leave a section out only to \
delete it; new sections have no data-chunk-id. Change only what the request asks for. After the block, say \
in one sentence what you changed.\n\
If the request is a question or asks for nothing that can be done to this document, answer in plain text \
without an html block, and never say you changed something you did not.";

const QUESTION_INSTRUCTIONS: &str = "You are Redline, an assistant for an HTML document. The sections below \
are the part of the document that matters for the user's question. Answer the question from them in plain \
words, briefly. Do not write HTML and do not change the document.";

/// Whether a request is a question rather than an edit: it ends with a question mark (`?`,
/// `？`, `؟`) and holds no English editing verb ("Can you fix the typo?" is an edit). A text
/// protocol answers a question with its own instructions: given the editing ones, a small
/// model rewrote the document to answer "Which plan includes phone support?".
pub fn is_question(request: &str) -> bool {
    let lower = request.trim_end().to_lowercase();
    ends_with_question_mark(request) && !lower.split(|c: char| !c.is_alphanumeric()).any(is_editing_verb)
}

/// The system message of a text protocol: instructions (for an edit, or for a question:
/// `question`), the sections in view (`view`, indices into `doc`), and passages of the
/// session's attachments that match the request.
pub fn text_system(
    protocol: EditProtocol,
    question: bool,
    doc: &Document,
    view: &[usize],
    passages: &[Passage],
) -> String {
    let sections = doc.sections();
    let mut out = String::from(match protocol {
        _ if question => QUESTION_INSTRUCTIONS,
        EditProtocol::Blocks => BLOCKS_INSTRUCTIONS,
        _ => REWRITE_INSTRUCTIONS,
    });
    if view.len() < sections.len() {
        out.push_str(&format!(
            "\n\nThe document has {} sections; these {} match the request.",
            sections.len(),
            view.len()
        ));
    }
    out.push_str("\n\nSections:\n");
    for &i in view {
        let s = &sections[i];
        match protocol {
            EditProtocol::Blocks if !question => {
                out.push_str(&format!("[{}]\n{}\n", s.id.as_str(), without_chunk_id(&s.html)));
            }
            _ => {
                out.push_str(&s.html);
                out.push('\n');
            }
        }
    }
    if sections.is_empty() {
        out.push_str("(the document is empty)\n");
    }
    if !passages.is_empty() {
        out.push_str("\nFrom the files attached to this session:\n");
        for p in passages {
            out.push_str(&format!("[{}] {}\n", p.filename, p.text));
        }
    }
    out
}

/// Whether an answer shows revised HTML as text (a fenced block of markup, ```html or
/// another fence whose lines hold tags): under `tools` and `blocks` that is an edit proposed
/// and not made, since only a tool call or a block changes the document. Small models do
/// this often ("Here's the updated HTML: …").
pub fn proposes_html(answer: &str) -> bool {
    let mut in_fence = false;
    let mut html_fence = false;
    for line in answer.lines() {
        let t = line.trim();
        if let Some(info) = t.strip_prefix("```") {
            if in_fence {
                in_fence = false;
            } else {
                in_fence = true;
                html_fence = info.trim().eq_ignore_ascii_case("html");
            }
            continue;
        }
        if in_fence && (html_fence || markup_line(t)) {
            return true;
        }
    }
    false
}

/// A line that is HTML markup: it opens with a tag of a block or inline element.
fn markup_line(line: &str) -> bool {
    const TAGS: [&str; 14] =
        ["<p", "<h1", "<h2", "<h3", "<h4", "<li", "<ul", "<ol", "<table", "<tr", "<td", "<div", "<strong", "<em"];
    let lower = line.to_ascii_lowercase();
    TAGS.iter().any(|tag| lower.starts_with(tag) && lower[tag.len()..].starts_with(['>', ' ']))
}

/// Whether an answer tells the person that the document was changed: a sentence with a
/// verb of editing in the past tense that says who did it or that it is done ("I added",
/// "we've replaced", "you added Tea", "The paragraph has been updated", or the verb first:
/// "Updated the heading"), with no negation, modal or condition ("not", "cannot", "would",
/// "if", "sorry"), outside quotations and code fences (the document's text, not the model's
/// claim). A summary that says "the team added two engineers" is no claim. Used only when
/// nothing was changed and the request is not a question, to catch a claim that would be
/// false. English only.
pub fn claims_an_edit(answer: &str) -> bool {
    const VERBS: [&str; 25] = [
        "added",
        "appended",
        "bolded",
        "changed",
        "converted",
        "corrected",
        "deleted",
        "edited",
        "fixed",
        "inserted",
        "italicised",
        "italicized",
        "made",
        "modified",
        "moved",
        "removed",
        "renamed",
        "replaced",
        "revised",
        "rewritten",
        "rewrote",
        "translated",
        "underlined",
        "updated",
        "applied",
    ];
    const NEGATIONS: [&str; 19] = [
        "not",
        "no",
        "never",
        "nothing",
        "unable",
        "cannot",
        "without",
        "neither",
        "nor",
        "would",
        "could",
        "can",
        "should",
        "if",
        "please",
        "unfortunately",
        "sorry",
        "need",
        "needs",
    ];
    let lower = unquoted(&answer.to_lowercase().replace('’', "'"));
    lower.split(['.', '!', '?', '\n']).any(|sentence| {
        let words: Vec<&str> =
            sentence.split(|c: char| !(c.is_alphanumeric() || c == '\'')).filter(|w| !w.is_empty()).collect();
        let verb = words.iter().position(|w| VERBS.contains(w));
        let said_done = ["i", "i've", "we", "we've", "you", "you've", "done"].iter().any(|p| words.contains(p))
            || sentence.contains("has been")
            || sentence.contains("have been")
            || sentence.contains("here is the revised")
            || sentence.contains("here's the revised")
            || verb == Some(0);
        verb.is_some() && said_done && !words.iter().any(|w| NEGATIONS.contains(w) || w.ends_with("n't"))
    })
}

/// The text outside code fences and double quotes.
fn unquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["```", "\"", "“"].iter().filter_map(|open| rest.find(open).map(|i| (i, *open))).min();
        let Some((i, open)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..i]);
        out.push(' ');
        let after = &rest[i + open.len()..];
        let close = match open {
            "“" => "”",
            other => other,
        };
        rest = after.find(close).map_or("", |j| &after[j + close.len()..]);
    }
}

/// Phrases of Redline's own instructions to the model: an answer holding one repeats them
/// (seen from Qwen2.5-Coder-0.5B) and must not reach the person.
const INSTRUCTION_PHRASES: [&str; 7] = [
    "to change the document, answer with",
    "answer again without claiming one",
    "match the request.\n\nsections:",
    "each keeping its data-chunk-id attribute",
    "search/replace blocks as described",
    "answer the question in plain words, without html",
    "you are redline, an",
];

/// Whether an answer repeats Redline's instructions to the model.
pub fn echoes_instructions(answer: &str) -> bool {
    let lower = answer.to_lowercase();
    INSTRUCTION_PHRASES.iter().any(|p| lower.contains(p))
}

/// Whether an answer is (or holds) a raw tool call that must not reach the person.
pub fn looks_like_a_tool_call(answer: &str) -> bool {
    let t = answer.trim();
    t.contains("<tool_call>")
        || t.contains("\"arguments\"")
        || (t.starts_with('{') && t.contains("\"name\""))
        || t.contains("<function name=")
        || t.contains("<tools>")
        || super::tools::NAMES.iter().any(|n| t.contains(&format!("<{n} ")) || t.contains(&format!("<{n}>")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_parse_by_name() {
        for p in EditProtocol::ALL {
            assert_eq!(EditProtocol::parse(p.as_str()), Some(p));
        }
        assert_eq!(EditProtocol::parse("whole"), None);
    }

    #[test]
    fn auto_gives_small_local_models_the_rewrite_protocol() {
        for (model, billions) in [
            ("qwen2.5-coder-1.5b", Some(1.5)),
            ("Qwen2.5-Coder-0.5B-Instruct-Q4_K_M.gguf", Some(0.5)),
            ("llama3.1:8b", Some(8.0)),
            ("mixtral-8x7b-instruct", Some(56.0)),
            ("meta-llama/Llama-3.3-70B-Instruct", Some(70.0)),
            ("gpt-4o-mini", None),
            ("claude-sonnet-4-5", None),
            ("gemini-2.5-pro", None),
        ] {
            assert_eq!(stated_billions(model), billions, "{model}");
        }
        assert_eq!(EditProtocol::for_model("qwen2.5-coder-1.5b"), EditProtocol::Rewrite);
        assert_eq!(EditProtocol::for_model("qwen2.5:14b"), EditProtocol::Rewrite);
        assert_eq!(EditProtocol::for_model("Llama-3.3-70B-Instruct"), EditProtocol::Tools);
        assert_eq!(EditProtocol::for_model("gpt-4o-mini"), EditProtocol::Tools);
    }

    #[test]
    fn questions_are_told_from_edits() {
        for q in [
            "Which plan includes phone support?",
            "How many items are on the shopping list? ",
            "Qui doit-on prévenir ?",
            "谁负责这个项目？",
            "מתי מתחילה ההרשמה?",
        ] {
            assert!(is_question(q), "{q}");
        }
        for edit in
            ["Can you fix the typo in the title?", "Could you make the deadline bold?", "Rename Acme to Zenith."]
        {
            assert!(!is_question(edit), "{edit}");
        }
    }

    #[test]
    fn claims_of_edits_are_caught() {
        for yes in [
            "I added Bananas to the list.",
            "I've replaced Acme with Zenith throughout.",
            "Updated the heading.",
            "Done! I removed the second paragraph.",
            "The maintenance paragraph has been updated to reflect the new inspection frequency.",
            "To change the document, you added Tea to the shopping list.",
        ] {
            assert!(claims_an_edit(yes), "{yes}");
        }
        for no in [
            "The capital is Paris.",
            "I could not find a table in the document, so no change was made.",
            "The text was not changed.",
            "I cannot do that.",
            "Sorry, I can't email documents.",
            "If you want, I can add a paragraph.",
            "The title says \"Revenue changed\".",
            "```html\n<p>Updated prices</p>\n```",
            "Summary of the document (3 sections): The team added two engineers in May.",
        ] {
            assert!(!claims_an_edit(no), "{no}");
        }
    }

    #[test]
    fn answers_repeating_the_instructions_are_recognized() {
        assert!(echoes_instructions(
            "To change the document, answer with the revised HTML in one ```html block as described."
        ));
        assert!(echoes_instructions("The document has 50 sections; these 3 match the request.\n\nSections:\n<p>x</p>"));
    }

    #[test]
    fn html_shown_as_text_is_a_proposal() {
        for yes in [
            "Here's the updated HTML:\n\n```html\n<p>Customers will receive it.</p>\n```",
            "Try this:\n```\n<h2>Contact</h2>\n```\nThis change fixes it.",
            "```HTML\nplain words in an html fence\n```",
        ] {
            assert!(proposes_html(yes), "{yes}");
        }
        for no in [
            "The Lyon office opened in June.",
            "Use the `<p>` tag for paragraphs.",
            "```json\n{\"name\": \"edit_section\"}\n```",
            "```\nplain code, no markup\n```",
            "<p>outside any fence</p>",
        ] {
            assert!(!proposes_html(no), "{no}");
        }
        assert!(!echoes_instructions("I changed May to June."));
    }

    #[test]
    fn raw_tool_calls_are_recognized() {
        assert!(looks_like_a_tool_call("<tool_call>{\"name\": \"x\"}</tool_call>"));
        assert!(looks_like_a_tool_call("{\"name\": \"edit_section\", \"arguments\": {}}"));
        assert!(looks_like_a_tool_call("<edit_section chunk_id=\"a\">x</edit_section>"));
        assert!(!looks_like_a_tool_call("I renamed the heading to \"Budget\"."));
    }
}
