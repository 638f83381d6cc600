//! The words of a person's request that tell what it asks for: whether it asks for a change
//! (an English editing verb) or asks a question (a question mark). Shared by the edit
//! protocols and the offline model.

/// English verbs that ask for a change to a document.
pub const EDITING_VERBS: [&str; 38] = [
    "add",
    "append",
    "bold",
    "change",
    "correct",
    "delete",
    "edit",
    "expand",
    "fix",
    "format",
    "improve",
    "insert",
    "italicize",
    "link",
    "make",
    "merge",
    "move",
    "polish",
    "put",
    "remove",
    "rename",
    "reorder",
    "rephrase",
    "replace",
    "reword",
    "rewrite",
    "set",
    "shorten",
    "simplify",
    "split",
    "summarize",
    "swap",
    "tidy",
    "translate",
    "turn",
    "update",
    "write",
    "summarise",
];

/// Whether a word (lower case) is one of [`EDITING_VERBS`].
pub fn is_editing_verb(word: &str) -> bool {
    EDITING_VERBS.contains(&word)
}

/// Whether a request ends with a question mark (`?`, `？`, `؟`).
pub fn ends_with_question_mark(request: &str) -> bool {
    request.trim_end().ends_with(['?', '\u{ff1f}', '\u{61f}'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_and_question_marks() {
        assert!(is_editing_verb("shorten") && !is_editing_verb("harvest"));
        assert!(ends_with_question_mark("Why? ") && ends_with_question_mark("なぜ？"));
        assert!(!ends_with_question_mark("Fix it."));
    }
}
