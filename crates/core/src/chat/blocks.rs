//! The `blocks` protocol's answer: SEARCH/REPLACE blocks keyed by chunk id, which need no
//! function calling (docs/api.md, "Edit protocols"):
//!
//! ```text
//! c1a2b3
//! <<<<<<< SEARCH
//! exact text of that section
//! =======
//! its replacement
//! >>>>>>> REPLACE
//! ```
//!
//! The chunk id line is optional (the text must then occur once in the whole document). An
//! empty replacement of a whole section deletes it; a replacement that holds new blocks after
//! the text adds sections. Each block is a `replace_text` request.

use super::tools::ToolRequest;

/// The blocks of an answer, and its text outside them.
pub fn parse(answer: &str) -> (Vec<ToolRequest>, String) {
    let lines: Vec<&str> = answer.lines().collect();
    let mut requests = Vec::new();
    let mut text = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_marker(lines[i], '<') {
            text.push(lines[i]);
            i += 1;
            continue;
        }
        // The chunk id: the last non-empty text line before the marker, when it is one word.
        let chunk_id = match text.iter().rposition(|l| !l.trim().is_empty()) {
            Some(k) if is_chunk_id_line(text[k]) => {
                let id = id_of(text[k]);
                text.truncate(k);
                Some(id)
            }
            _ => None,
        };
        let Some(mid) = (i + 1..lines.len()).find(|&k| is_marker(lines[k], '=')) else {
            text.extend(&lines[i..]);
            break;
        };
        let end = (mid + 1..lines.len()).find(|&k| is_marker(lines[k], '>')).unwrap_or(lines.len());
        let search = lines[i + 1..mid].join("\n");
        let replace = lines[mid + 1..end].join("\n");
        if !search.trim().is_empty() {
            requests.push(ToolRequest::Replace {
                chunk_id,
                search: search.trim().to_owned(),
                replace: replace.trim().to_owned(),
                all: false,
                explanation: None,
            });
        }
        i = end + 1;
    }
    let text = text.join("\n");
    (requests, strip_fences(&text))
}

/// `<<<<<<< SEARCH`, `=======`, `>>>>>>> REPLACE` (five or more of the character, any word).
fn is_marker(line: &str, c: char) -> bool {
    let t = line.trim();
    let run = t.chars().take_while(|&x| x == c).count();
    run >= 5 && (c != '=' || t.chars().all(|x| x == '='))
}

/// A line that is only a chunk id (`c1a2b3`, `[c1a2b3]`, `chunk_id: c1a2b3`, `` `c1a2b3` ``).
fn is_chunk_id_line(line: &str) -> bool {
    let id = id_of(line);
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn id_of(line: &str) -> String {
    let t = line.trim().trim_start_matches("chunk_id:").trim_start_matches("chunk:").trim();
    t.trim_matches(|c| c == '[' || c == ']' || c == '`' || c == '*' || c == '#' || c == ':').trim().to_owned()
}

/// The text with ``` fence lines (left around the blocks) taken out.
fn strip_fences(text: &str) -> String {
    text.lines().filter(|l| !l.trim_start().starts_with("```")).collect::<Vec<_>>().join("\n").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_with_and_without_chunk_ids() {
        let answer = "I fixed both.\n```\nc1\n<<<<<<< SEARCH\nteh cat\n=======\nthe cat\n>>>>>>> REPLACE\n```\n<<<<<<< SEARCH\nAcme\n=======\nZenith\n>>>>>>> REPLACE\nDone.";
        let (reqs, text) = parse(answer);
        assert_eq!(
            reqs,
            vec![
                ToolRequest::Replace {
                    chunk_id: Some("c1".into()),
                    search: "teh cat".into(),
                    replace: "the cat".into(),
                    all: false,
                    explanation: None
                },
                ToolRequest::Replace {
                    chunk_id: None,
                    search: "Acme".into(),
                    replace: "Zenith".into(),
                    all: false,
                    explanation: None
                },
            ]
        );
        assert_eq!(text, "I fixed both.\nDone.");
    }

    #[test]
    fn an_answer_without_blocks_is_text() {
        let (reqs, text) = parse("The capital is Paris.");
        assert!(reqs.is_empty());
        assert_eq!(text, "The capital is Paris.");
        // An unfinished block is text too.
        let (reqs, _) = parse("<<<<<<< SEARCH\nabc");
        assert!(reqs.is_empty());
    }

    #[test]
    fn bracketed_ids_and_empty_replacements() {
        let (reqs, _) = parse("[c9]\n<<<<<<< SEARCH\n<p>Old paragraph.</p>\n=======\n>>>>>>> REPLACE");
        assert_eq!(
            reqs,
            vec![ToolRequest::Replace {
                chunk_id: Some("c9".into()),
                search: "<p>Old paragraph.</p>".into(),
                replace: String::new(),
                all: false,
                explanation: None
            }]
        );
    }
}
