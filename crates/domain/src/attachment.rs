//! Attachments (docs/api.md, "Attachments"): the rules that do not need a database — what an uploaded
//! file's name may be once it is data, how extracted text is cut into passages, and which
//! words of a search query are worth looking up.

/// The longest file name kept, in characters (extension included).
pub const FILENAME_MAX_CHARS: usize = 255;

/// The name given to a file whose name is nothing once neutralised.
const FALLBACK_STEM: &str = "file";

/// Characters that reorder or hide text when a name is displayed (bidirectional overrides
/// and isolates, zero-width characters): a file name is shown to people, and
/// `invoice\u{202e}fdp.exe` must not read as `invoiceexe.pdf`.
pub(crate) fn invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// A file name made safe to store, show and log: only the last path component is kept (no
/// `../`, no folders, `/` and `\` alike), control and invisible characters are dropped,
/// surrounding spaces and leading dots are trimmed, and the result has at most
/// [`FILENAME_MAX_CHARS`] characters, keeping the extension when the stem is cut. A name that
/// is nothing once cleaned becomes `file` (plus its extension, when it had one).
pub fn neutralise_filename(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let cleaned: String = base.chars().filter(|c| !c.is_control() && !invisible(*c)).collect();
    let whole = cleaned.trim();
    let (stem, extension) = match whole.rfind('.') {
        // An extension longer than a few characters is part of the name, not a type.
        Some(i) if i + 1 < whole.len() && whole[i..].chars().count() <= 16 => (&whole[..i], &whole[i..]),
        _ => (whole, ""),
    };
    // No leading dots (hidden files, `..`) and no spaces around the stem.
    let mut stem = stem;
    loop {
        let next = stem.trim().trim_start_matches('.');
        if next == stem {
            break;
        }
        stem = next;
    }
    let room = FILENAME_MAX_CHARS.saturating_sub(extension.chars().count());
    let cut: String = stem.chars().take(room).collect();
    let mut out = match cut.trim_end() {
        "" => FALLBACK_STEM.to_owned(),
        kept => kept.to_owned(),
    };
    out.push_str(extension);
    out
}

/// One block of extracted text (a paragraph, a heading, a list, a table…), in reading order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextBlock {
    pub text: String,
    /// A heading starts a new passage, so that it stays with the text it introduces.
    pub heading: bool,
}

impl TextBlock {
    pub fn new(text: impl Into<String>, heading: bool) -> Self {
        Self { text: text.into(), heading }
    }
}

impl TextBlock {
    /// The blocks of a document's sections: each section's text, headings (`h1`–`h6`) marked.
    pub fn of_sections(sections: &[crate::document::Section]) -> Vec<TextBlock> {
        sections
            .iter()
            .filter(|s| !s.text.trim().is_empty())
            .map(|s| TextBlock::new(s.text.clone(), is_heading(&s.tag)))
            .collect()
    }

    /// The block of one section, as in [`Self::of_sections`] (`None` when it has no text);
    /// takes the section's text without copying it.
    pub fn of_section(section: crate::document::Section) -> Option<TextBlock> {
        (!section.text.trim().is_empty()).then(|| TextBlock::new(section.text, is_heading(&section.tag)))
    }
}

fn is_heading(tag: &str) -> bool {
    matches!(tag, "h1" | "h2" | "h3" | "h4" | "h5" | "h6")
}

/// How passages are cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PassageRules {
    /// Blocks are packed into a passage while it stays at most this long (characters).
    pub target_chars: usize,
    /// A block longer than this is cut at sentence ends, else at spaces, else anywhere.
    pub max_chars: usize,
    /// A heading starts a new passage only when the current one has at least this much text.
    pub min_chars: usize,
}

impl Default for PassageRules {
    /// About a paragraph or two: long enough to answer a question with its context, short
    /// enough that the answer is most of what a reader (or the AI) gets.
    fn default() -> Self {
        Self { target_chars: 700, max_chars: 1000, min_chars: 200 }
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

/// The byte index after the first `n` characters of `s` (or its length).
fn byte_at_char(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// Cuts `text` (longer than `max` characters) into pieces of at most `max` characters: at the
/// last sentence end within the limit, else the last space, else at the limit.
fn cut_long(text: &str, max: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut rest = text.trim();
    while chars(rest) > max {
        let window = &rest[..byte_at_char(rest, max)];
        let sentence_end = window
            .char_indices()
            .filter(|(i, c)| {
                matches!(c, '.' | '!' | '?' | ';') && rest[i + c.len_utf8()..].starts_with(char::is_whitespace)
                    || matches!(c, '。' | '！' | '？')
            })
            .map(|(i, c)| i + c.len_utf8())
            .rfind(|&end| end * 3 >= window.len());
        let cut = sentence_end.or_else(|| window.rfind(char::is_whitespace).filter(|&i| i > 0)).unwrap_or(window.len());
        let (piece, tail) = rest.split_at(cut);
        let piece = piece.trim();
        if !piece.is_empty() {
            pieces.push(piece.to_owned());
        }
        rest = tail.trim_start();
    }
    if !rest.is_empty() {
        pieces.push(rest.to_owned());
    }
    pieces
}

/// The longest heading carried into the passages of its section, in characters.
pub const HEADING_CONTEXT_MAX_CHARS: usize = 120;

/// A passage before it is written: its own text and, when it does not begin with a heading,
/// the heading of the section it is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassageParts {
    pub context: Option<String>,
    pub body: String,
}

impl PassageParts {
    /// The passage as indexed and shown: the heading on its own line, then the body.
    pub fn text(&self) -> String {
        match &self.context {
            Some(heading) => format!("{heading}\n{}", self.body),
            None => self.body.clone(),
        }
    }
}

/// Splits extracted text into passages for the search index, in reading order: blocks are
/// packed together up to `target_chars`, a heading starts a new passage (once the current one
/// holds `min_chars`), and no body is longer than `max_chars` (when `max_chars` ≥
/// `target_chars`). Blank blocks are skipped; no text is lost or reordered. A passage that
/// does not begin with a heading gets the last heading before it as its context (cut to
/// [`HEADING_CONTEXT_MAX_CHARS`]), so that a section cut in several passages keeps its topic
/// in each.
pub fn passage_parts(blocks: &[TextBlock], rules: PassageRules) -> Vec<PassageParts> {
    let max = rules.max_chars.max(1);
    let target = rules.target_chars.clamp(1, max);
    let mut passages = Vec::new();
    let mut heading: Option<String> = None;
    let mut context: Option<String> = None;
    let mut current = String::new();
    let mut current_chars = 0usize;
    let flush = |passages: &mut Vec<PassageParts>, context: &mut Option<String>, current: &mut String| {
        passages.push(PassageParts { context: context.take(), body: std::mem::take(current) });
    };
    for block in blocks {
        let text = block.text.trim();
        if text.is_empty() {
            continue;
        }
        if block.heading && current_chars > 0 && current_chars >= rules.min_chars {
            flush(&mut passages, &mut context, &mut current);
            current_chars = 0;
        }
        let pieces = if chars(text) > max { cut_long(text, max) } else { vec![text.to_owned()] };
        for (i, piece) in pieces.into_iter().enumerate() {
            let n = chars(&piece);
            if current_chars > 0 && current_chars + 1 + n > target {
                flush(&mut passages, &mut context, &mut current);
                current_chars = 0;
            }
            if current_chars == 0 {
                let starts_with_heading = block.heading && i == 0;
                context = if starts_with_heading { None } else { heading.clone() };
            } else {
                current.push('\n');
                current_chars += 1;
            }
            current.push_str(&piece);
            current_chars += n;
        }
        if block.heading {
            let cut: String = text.chars().take(HEADING_CONTEXT_MAX_CHARS).collect();
            heading = Some(cut);
        }
    }
    if current_chars > 0 {
        flush(&mut passages, &mut context, &mut current);
    }
    passages
}

/// The passages of [`passage_parts`], as indexed and shown.
pub fn split_passages(blocks: &[TextBlock], rules: PassageRules) -> Vec<String> {
    passage_parts(blocks, rules).iter().map(PassageParts::text).collect()
}

/// The most words of a query that are looked up (a longer query is cut).
pub const MAX_QUERY_TERMS: usize = 32;

/// Frequent English words that say nothing about what a passage is about. Leaving them out
/// of a query keeps rare words in charge of the ranking and keeps the index from walking
/// every passage for `the`.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can",
    "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "was", "we", "were", "what", "when",
    "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// Whether `c` belongs to a word: letters and digits of any script, and combining marks
/// (accents written as separate characters, Hebrew and Arabic vowel points).
fn word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c, '\u{0300}'..='\u{036f}' | '\u{0591}'..='\u{05c7}' | '\u{064b}'..='\u{065f}' | '\u{0670}')
}

/// Characters that join two words into one term when they stand between letters or digits:
/// `0.3`, `e-mail`, `don't`, `snake_case`.
pub fn joiner(c: char) -> bool {
    matches!(c, '.' | '-' | '\'' | '_' | '’')
}

/// The words of a query, in order: runs of word characters, joined across single joiners.
fn words_of(query: &str) -> Vec<String> {
    let chars: Vec<char> = query.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let joins = joiner(c)
            && !current.is_empty()
            && chars.get(i + 1).is_some_and(|n| word_char(*n))
            && chars.get(i.wrapping_sub(1)).is_some_and(|p| word_char(*p));
        if word_char(c) || joins {
            current.push(c);
        } else if !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words.into_iter().filter(|w| w.chars().any(char::is_alphanumeric)).map(|w| w.to_lowercase()).collect()
}

/// The words of a text as a search index sees them, in order: runs of word characters
/// (letters and digits of any script, combining marks) holding a letter or a digit. Joiners
/// separate: `0.3` is `0` then `3`, and the [`query_terms`] word `0.3` is asked for as the
/// phrase of its parts.
pub fn index_words(text: &str) -> IndexWords<'_> {
    IndexWords { text, at: 0 }
}

/// The iterator of [`index_words`]: a scan of the bytes, ASCII without decoding (most text
/// is, and a large attachment is millions of words).
#[derive(Debug, Clone)]
pub struct IndexWords<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> IndexWords<'a> {
    /// Whether a word character starts at byte `i` (a char boundary), and its length.
    fn word_char_at(&self, i: usize) -> (bool, usize) {
        let b = self.text.as_bytes()[i];
        if b.is_ascii() {
            return (b.is_ascii_alphanumeric(), 1);
        }
        let c = self.text[i..].chars().next().unwrap_or(' ');
        (word_char(c), c.len_utf8())
    }
}

impl<'a> Iterator for IndexWords<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let len = self.text.len();
        loop {
            while self.at < len {
                let (word, n) = self.word_char_at(self.at);
                if word {
                    break;
                }
                self.at += n;
            }
            if self.at >= len {
                return None;
            }
            let start = self.at;
            while self.at < len {
                let (word, n) = self.word_char_at(self.at);
                if !word {
                    break;
                }
                self.at += n;
            }
            let word = &self.text[start..self.at];
            // A run of combining marks alone is not a word.
            if word.as_bytes()[0].is_ascii() || word.chars().any(char::is_alphanumeric) {
                return Some(word);
            }
        }
    }
}

/// The words of a search query worth looking up, any of which may match: runs of letters
/// and digits (joined across single joiners, so that `0.3` or `e-mail` match as a phrase),
/// lower-cased, without stop words and repeats, at most [`MAX_QUERY_TERMS`]. Everything else
/// (quotes, operators such as `AND`/`NEAR(`/`*`/`col:val`, punctuation) is a separator: the
/// result is plain words, safe to quote into any full-text query language. Empty when nothing
/// is left.
pub fn query_terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in words_of(query) {
        if STOP_WORDS.contains(&word.as_str()) || terms.contains(&word) {
            continue;
        }
        terms.push(word);
        if terms.len() == MAX_QUERY_TERMS {
            break;
        }
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn filenames_are_neutralised() {
        assert_eq!(neutralise_filename("harbour.txt"), "harbour.txt");
        assert_eq!(neutralise_filename("../../etc/passwd.txt"), "passwd.txt");
        assert_eq!(neutralise_filename("C:\\Users\\ann\\Report.DOCX"), "Report.DOCX");
        assert_eq!(neutralise_filename("a\u{0}b\nc\u{7f}.md"), "abc.md");
        assert_eq!(neutralise_filename("invoice\u{202e}fdp.exe"), "invoicefdp.exe");
        assert_eq!(neutralise_filename("  .hidden.pdf "), "hidden.pdf");
        assert_eq!(neutralise_filename(".pdf"), "file.pdf");
        assert_eq!(neutralise_filename(".."), "file");
        assert_eq!(neutralise_filename(""), "file");
        assert_eq!(neutralise_filename("dir/"), "file");
        assert_eq!(neutralise_filename("noext"), "noext");
        let long = format!("{}.pdf", "x".repeat(1000));
        let safe = neutralise_filename(&long);
        assert_eq!(safe.chars().count(), FILENAME_MAX_CHARS);
        assert!(safe.ends_with("x.pdf"), "{safe}");
        let weird_ext = format!("name.{}", "y".repeat(40));
        assert_eq!(neutralise_filename(&weird_ext), weird_ext);
        assert_eq!(neutralise_filename("שלום.txt"), "שלום.txt");
    }

    #[test]
    fn passages_pack_blocks_and_keep_headings_with_their_text() {
        let rules = PassageRules { target_chars: 40, max_chars: 60, min_chars: 10 };
        let blocks = [
            TextBlock::new("Intro", true),
            TextBlock::new("First short paragraph.", false),
            TextBlock::new("   ", false),
            TextBlock::new("Second.", false),
            TextBlock::new("Next heading", true),
            TextBlock::new("Body of the second part.", false),
            TextBlock::new("A third paragraph, which goes on.", false),
        ];
        let p = split_passages(&blocks, rules);
        assert_eq!(
            p,
            vec![
                "Intro\nFirst short paragraph.\nSecond.",
                "Next heading\nBody of the second part.",
                "Next heading\nA third paragraph, which goes on.",
            ]
        );
        let parts = passage_parts(&blocks, rules);
        assert_eq!(parts[2].context.as_deref(), Some("Next heading"));
        assert_eq!(parts[1].context, None, "it begins with its heading");
    }

    #[test]
    fn long_blocks_are_cut_at_sentence_ends() {
        let rules = PassageRules { target_chars: 50, max_chars: 50, min_chars: 10 };
        let text = "One sentence here is long enough. Another sentence follows it closely. A third one.";
        let p = split_passages(&[TextBlock::new(text, false)], rules);
        assert_eq!(p[0], "One sentence here is long enough.");
        assert!(p.iter().all(|s| s.chars().count() <= 50), "{p:?}");
        let joined: String = p.join(" ");
        assert_eq!(joined.split_whitespace().collect::<Vec<_>>(), text.split_whitespace().collect::<Vec<_>>());
        // No space at all: cut at the limit.
        let p = split_passages(&[TextBlock::new("z".repeat(120), false)], rules);
        assert_eq!(p.iter().map(String::len).collect::<Vec<_>>(), vec![50, 50, 20]);
    }

    #[test]
    fn query_terms_keep_compounds() {
        let q = query_terms("When was Pandoc 0.3 announced? Access-control, e-mail; don't stop.");
        assert_eq!(q, ["pandoc", "0.3", "announced", "access-control", "e-mail", "don't", "stop"]);
        // A trailing or doubled joiner is a separator.
        assert_eq!(query_terms("end. -start x--b 'quoted'"), ["end", "start", "x", "b", "quoted"]);
        assert!(query_terms("the of and").is_empty());
    }

    #[test]
    fn index_words_split_compounds_into_parts() {
        let words: Vec<&str> = index_words("Pandoc 0.3, e-mail (don't) \u{301}x e\u{301}te\u{301} שלום").collect();
        assert_eq!(words, ["Pandoc", "0", "3", "e", "mail", "don", "t", "\u{301}x", "e\u{301}te\u{301}", "שלום"]);
        // A query word is the same parts, in the same order.
        let terms = query_terms("Pandoc 0.3 e-mail don't");
        let parts: Vec<Vec<&str>> = terms.iter().map(|t| index_words(t).collect()).collect();
        assert_eq!(parts, [vec!["pandoc"], vec!["0", "3"], vec!["e", "mail"], vec!["don", "t"]]);
        assert!(index_words(" .-\u{301} ").next().is_none());
    }

    #[test]
    fn query_terms_are_plain_words() {
        assert_eq!(
            query_terms("What is the secret ingredient of Zorblax soup?"),
            ["secret", "ingredient", "zorblax", "soup"]
        );
        assert_eq!(query_terms("\"unbalanced"), ["unbalanced"]);
        assert_eq!(query_terms("NEAR(a b"), ["near", "b"]);
        assert!(query_terms("*").is_empty());
        assert!(query_terms("a AND OR NOT").is_empty());
        assert_eq!(query_terms("col:val ^ -"), ["col", "val"]);
        assert_eq!(query_terms("text:zorblax"), ["text", "zorblax"]);
        assert!(query_terms("").is_empty());
        assert_eq!(query_terms("אצות"), ["אצות"]);
        assert_eq!(query_terms("Soup soup SOUP"), ["soup"]);
        assert_eq!(query_terms("e\u{301}te\u{301}"), ["e\u{301}te\u{301}"]);
        let many: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(query_terms(&many).len(), MAX_QUERY_TERMS);
    }

    proptest! {
        #[test]
        fn index_words_are_the_runs_of_word_characters(text in "\\PC{0,200}|[a-z0-9 .'\u{301}\u{5d0}-\u{5d4}-]{0,80}") {
            let simple: Vec<&str> =
                text.split(|c: char| !word_char(c)).filter(|w| w.chars().any(char::is_alphanumeric)).collect();
            prop_assert_eq!(index_words(&text).collect::<Vec<_>>(), simple);
        }

        #[test]
        fn neutralised_names_are_safe(raw in "\\PC{0,300}|[./\\\\a-z\u{0}-\u{1f}\u{202e}]{0,40}") {
            let name = neutralise_filename(&raw);
            prop_assert!(!name.is_empty());
            prop_assert!(name.chars().count() <= FILENAME_MAX_CHARS);
            prop_assert!(!name.contains('/') && !name.contains('\\'));
            prop_assert!(name.chars().all(|c| !c.is_control() && !invisible(c)));
            prop_assert!(!name.starts_with('.'));
            prop_assert_eq!(neutralise_filename(&name), name.clone(), "idempotent");
        }

        #[test]
        fn passages_keep_every_word_in_order(
            blocks in proptest::collection::vec(("[a-z .]{0,300}", any::<bool>()), 0..30),
            target in 1usize..400,
            extra in 0usize..400,
        ) {
            let blocks: Vec<TextBlock> = blocks.into_iter().map(|(t, h)| TextBlock::new(t, h)).collect();
            let rules = PassageRules { target_chars: target, max_chars: target + extra, min_chars: target / 3 };
            let parts = passage_parts(&blocks, rules);
            let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
            let before: Vec<String> = blocks.iter().flat_map(|b| words(&b.text)).collect();
            let after: Vec<String> = parts.iter().flat_map(|p| words(&p.body)).collect();
            // Cutting a word at the limit splits it in two: compare the letters.
            prop_assert_eq!(before.concat(), after.concat());
            let headings: Vec<String> = blocks.iter().filter(|b| b.heading && !b.text.trim().is_empty())
                .map(|b| b.text.trim().chars().take(HEADING_CONTEXT_MAX_CHARS).collect()).collect();
            for p in &parts {
                prop_assert!(!p.body.trim().is_empty());
                prop_assert!(p.body.chars().count() <= target + extra, "{} > {}", p.body.chars().count(), target + extra);
                if let Some(c) = &p.context {
                    prop_assert!(headings.contains(c), "{:?} is a heading", c);
                }
            }
            prop_assert_eq!(split_passages(&blocks, rules), parts.iter().map(PassageParts::text).collect::<Vec<_>>());
        }

        #[test]
        fn query_terms_never_hold_syntax(q in "\\PC{0,200}") {
            for t in query_terms(&q) {
                prop_assert!(t.chars().all(|c| word_char(c) || joiner(c)));
                prop_assert!(t.chars().next().is_some_and(word_char) && t.chars().last().is_some_and(word_char));
            }
        }
    }
}
