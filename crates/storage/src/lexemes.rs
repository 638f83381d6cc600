//! The lexemes of the attachment index, computed here rather than by the database. Tokenizing
//! inside the database (`to_tsvector('english', …)` on PostgreSQL, FTS5's porter tokenizer
//! on SQLite) runs on one core, in the inserting transaction, and was most of the indexing
//! time. The passages are normalised in Rust (on several threads when there are many) and the
//! index gets them ready: a `tsvector` on PostgreSQL, the lexemes as plain words for FTS5 on
//! SQLite. A query goes through the same normalisation, so both sides always agree, and both
//! backends index the same lexemes.
//!
//! The rules follow PostgreSQL's `english` configuration: words are the runs of letters and
//! digits of [`redline_domain::attachment::index_words`] (a word with inner joiners, `0.3` or
//! `e-mail`, is its parts at consecutive positions, and a query asks for them as a phrase),
//! lower-cased; PostgreSQL's English stop words are left out (they carry no meaning and were
//! a third of the index's postings); words without digits go through the English Snowball
//! stemmer (the one PostgreSQL uses).

use redline_domain::attachment::{index_words, joiner};
use rust_stemmers::{Algorithm, Stemmer};

/// PostgreSQL's `english` stop words (`share/tsearch_data/english.stop`), sorted.
const STOP_WORDS: [&str; 127] = [
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "did",
    "do",
    "does",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "me",
    "more",
    "most",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "s",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// The longest lexeme PostgreSQL stores (bytes); a longer word is not indexed, as with
/// `to_tsvector`.
const MAX_LEXEME_BYTES: usize = 2047;
/// The highest position a `tsvector` records; later words share it.
const MAX_POSITION: u16 = 16_383;
/// The most positions a `tsvector` keeps for one lexeme.
const MAX_POSITIONS: usize = 255;
/// Words a thread's [`Lexer`] remembers before it starts afresh (a few MB)…
const LEXER_MAX_WORDS: usize = 100_000;
/// … or bytes of words and lexemes (a text of long unique tokens, base64 say).
const LEXER_MAX_BYTES: usize = 16 << 20;

/// FxHash (rustc's, from `rustc-hash`): the words are short and not chosen by an adversary who
/// could exploit collisions in a cache bounded by [`LEXER_MAX_WORDS`]; SipHash was a tenth of
/// the time.
type FxMap<K, V> = rustc_hash::FxHashMap<K, V>;

/// Turns words into lexemes, remembering the words it has seen: a text repeats most of its
/// words, and so do the attachments of one deployment; stemming is the costly part. Each
/// thread has one ([`with_lexer`]); lexemes are named by their number in it.
pub(crate) struct Lexer {
    stemmer: Stemmer,
    /// The words seen of at most [`SHORT_WORD_BYTES`] bytes, by [`short_key`]: most words,
    /// looked up without a byte-wise comparison.
    seen_short: FxMap<u128, Option<u32>>,
    /// The longer words seen.
    seen_long: FxMap<Box<str>, Option<u32>>,
    ids: FxMap<Box<str>, u32>,
    lexemes: Vec<Box<str>>,
    bytes: usize,
}

/// The longest word [`short_key`] packs.
const SHORT_WORD_BYTES: usize = 15;

/// A word of at most [`SHORT_WORD_BYTES`] bytes as one integer: its bytes, zero-padded, and
/// its length in the last byte (so no two words share one, whatever bytes they hold). The
/// cache then hashes and compares a word in a few instructions rather than through `memcmp`,
/// which was most of its lookup.
fn short_key(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    let len = u8::try_from(bytes.len()).ok().filter(|&n| usize::from(n) <= SHORT_WORD_BYTES)?;
    let mut key = [0u8; 16];
    key[..bytes.len()].copy_from_slice(bytes);
    key[15] = len;
    Some(u128::from_le_bytes(key))
}

impl Lexer {
    fn new() -> Self {
        Self {
            stemmer: Stemmer::create(Algorithm::English),
            seen_short: FxMap::default(),
            seen_long: FxMap::default(),
            ids: FxMap::default(),
            lexemes: Vec::new(),
            bytes: 0,
        }
    }

    /// How many words it remembers.
    fn words(&self) -> usize {
        self.seen_short.len() + self.seen_long.len()
    }

    /// The lexeme of one word of [`index_words`]: `None` for a stop word or a word too long
    /// to index.
    pub(crate) fn lexeme(&mut self, word: &str) -> Option<u32> {
        let short = short_key(word);
        let known = match short {
            Some(key) => self.seen_short.get(&key),
            None => self.seen_long.get(word),
        };
        if let Some(known) = known {
            return *known;
        }
        // Words with one stem share one number.
        self.bytes += word.len();
        let id = lexeme_of(&self.stemmer, word).map(|lexeme| {
            *self.ids.entry(lexeme).or_insert_with_key(|lexeme| {
                self.bytes += 2 * lexeme.len();
                self.lexemes.push(lexeme.clone());
                u32::try_from(self.lexemes.len() - 1).unwrap_or(u32::MAX)
            })
        });
        match short {
            Some(key) => self.seen_short.insert(key, id),
            None => self.seen_long.insert(word.into(), id),
        };
        id
    }

    pub(crate) fn text(&self, id: u32) -> &str {
        &self.lexemes[id as usize]
    }
}

thread_local! {
    static LEXER: std::cell::RefCell<Lexer> = std::cell::RefCell::new(Lexer::new());
}

/// Runs `f` with this thread's [`Lexer`] (started afresh once it holds [`LEXER_MAX_WORDS`]
/// words or [`LEXER_MAX_BYTES`]; within one call it holds at most about twice the texts).
pub(crate) fn with_lexer<R>(f: impl FnOnce(&mut Lexer) -> R) -> R {
    LEXER.with(|cell| {
        let mut lexer = cell.borrow_mut();
        if lexer.words() > LEXER_MAX_WORDS || lexer.bytes > LEXER_MAX_BYTES {
            *lexer = Lexer::new();
        }
        f(&mut lexer)
    })
}

/// Whether accents are folded off `c`: Latin and Greek letters (as PostgreSQL's `unaccent`
/// and FTS5's `remove_diacritics` do for Latin). Cyrillic keeps its marks: `й` is not `и`.
fn folds(c: char) -> bool {
    matches!(c, '\u{00c0}'..='\u{024f}' | '\u{1e00}'..='\u{1eff}' | '\u{0370}'..='\u{03ff}' | '\u{1f00}'..='\u{1fff}')
        || c.is_ascii_alphabetic()
}

/// `lower` without the accents of its Latin and Greek letters (`café` → `cafe`, `αθήνα` →
/// `αθηνα`, `ø` → `o`, `ł` → `l`, final `ς` → `σ`) and without Hebrew and Arabic vowel
/// points, so a query typed without them finds the text written with them, and the other
/// way round.
fn unaccented(lower: &str) -> std::borrow::Cow<'_, str> {
    use unicode_normalization::char::{decompose_canonical, is_combining_mark};
    if lower.is_ascii() {
        return std::borrow::Cow::Borrowed(lower);
    }
    let points = |c: char| matches!(c, '\u{0591}'..='\u{05c7}' | '\u{064b}'..='\u{065f}' | '\u{0670}');
    let mut out = String::with_capacity(lower.len());
    // Whether the last letter kept takes its marks off (a mark written apart follows it).
    let mut folding = false;
    for c in lower.chars() {
        match c {
            _ if points(c) => {}
            '\u{0300}'..='\u{036f}' if folding => {}
            'ø' => out.push('o'),
            'ł' => out.push('l'),
            'đ' => out.push('d'),
            'ς' => out.push('σ'),
            _ if folds(c) => {
                decompose_canonical(c, |d| {
                    if !is_combining_mark(d) {
                        out.push(d);
                    }
                });
                folding = true;
                continue;
            }
            _ => out.push(c),
        }
        folding = (folding && is_combining_mark(c)) || matches!(c, 'ø' | 'ł' | 'đ' | 'ς');
    }
    std::borrow::Cow::Owned(out)
}

fn lexeme_of(stemmer: &Stemmer, word: &str) -> Option<Box<str>> {
    let lower = word.to_lowercase();
    let lower = match unaccented(&lower) {
        std::borrow::Cow::Borrowed(_) => lower,
        std::borrow::Cow::Owned(folded) => folded,
    };
    if STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
        return None;
    }
    let lexeme: Box<str> =
        if lower.chars().any(char::is_numeric) { lower.into() } else { stemmer.stem(&lower).as_ref().into() };
    (!lexeme.is_empty() && lexeme.len() <= MAX_LEXEME_BYTES).then_some(lexeme)
}

/// Appends `lexeme` as a quoted `tsvector`/`tsquery` value: `'…'`, quotes and backslashes
/// escaped (a lexeme is letters and digits, so this is a safeguard).
fn push_quoted(out: &mut String, lexeme: &str) {
    out.push('\'');
    for c in lexeme.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
}

/// The lexemes of one passage, with their positions counted from 1 over every word (stop
/// words too), in reading order. With `compounds`, a word made of parts joined by single
/// joiners (`0.3`, `e-mail`, `don't`) is also a lexeme of its own, at its first part's
/// position, as PostgreSQL's parser did: a query for it then matches one rare lexeme, which
/// `ts_rank` weighs as such, rather than a phrase of common parts (`0`, `3`).
fn lexemes(lexer: &mut Lexer, text: &str, compounds: bool) -> Vec<(u32, u16)> {
    let mut entries: Vec<(u32, u16)> = Vec::new();
    let mut position: u16 = 0;
    // The compound being read: its first byte and position, its parts so far, its end.
    let (mut start, mut start_position, mut parts, mut end) = (0usize, 0u16, 0usize, 0usize);
    let base = text.as_ptr() as usize;
    for word in index_words(text) {
        position = position.saturating_add(1).min(MAX_POSITION);
        if compounds {
            let at = word.as_ptr() as usize - base;
            let mut between = text[end..at].chars();
            let joined = parts > 0 && between.next().is_some_and(joiner) && between.next().is_none();
            if !joined {
                if parts > 1 {
                    if let Some(id) = lexer.lexeme(&text[start..end]) {
                        entries.push((id, start_position));
                    }
                }
                (start, start_position, parts) = (at, position, 0);
            }
            parts += 1;
            end = at + word.len();
        }
        if let Some(id) = lexer.lexeme(word) {
            entries.push((id, position));
        }
    }
    if parts > 1 {
        if let Some(id) = lexer.lexeme(&text[start..end]) {
            entries.push((id, start_position));
        }
    }
    entries
}

/// Appends `n` in decimal (no allocation: a 10 MB attachment has a million positions).
#[cfg(test)]
fn push_number(out: &mut String, n: u16) {
    let mut digits = [0u8; 5];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[i..] {
        out.push(char::from(d));
    }
}

/// The lexemes of one passage as a `tsvector` holds them: the entries of [`lexemes`] grouped
/// by lexeme, the groups in `tsvector` order (the lexemes' bytes compared; a prefix first).
fn tsvector_groups(lexer: &mut Lexer, text: &str) -> (Vec<(u32, u16)>, Vec<std::ops::Range<usize>>) {
    let mut entries = lexemes(lexer, text, true);
    // Group by lexeme number (integers), then order the groups by lexeme text.
    entries.sort_unstable();
    let mut groups = Vec::new();
    let mut start = 0;
    for (i, window) in entries.windows(2).enumerate() {
        if window[0].0 != window[1].0 {
            groups.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < entries.len() {
        groups.push(start..entries.len());
    }
    groups.sort_unstable_by(|a, b| lexer.text(entries[a.start].0).cmp(lexer.text(entries[b.start].0)));
    (entries, groups)
}

/// The positions a `tsvector` keeps of one lexeme's entries (sorted): each once, at most
/// [`MAX_POSITIONS`].
fn kept_positions(group: &[(u32, u16)]) -> impl Iterator<Item = u16> + '_ {
    let mut last = 0u16;
    group
        .iter()
        .filter_map(move |&(_, pos)| {
            let new = pos != last;
            last = pos;
            new.then_some(pos)
        })
        .take(MAX_POSITIONS)
}

/// The `tsvector` of one passage, in PostgreSQL's text form (`'lexeme':1,4 'other':2`):
/// lexemes sorted and unique, with their positions.
#[cfg(test)]
pub(crate) fn tsvector(lexer: &mut Lexer, text: &str) -> String {
    let (entries, groups) = tsvector_groups(lexer, text);
    let mut out = String::with_capacity(text.len());
    for group in groups {
        if !out.is_empty() {
            out.push(' ');
        }
        push_quoted(&mut out, lexer.text(entries[group.start].0));
        for (kept, pos) in kept_positions(&entries[group]).enumerate() {
            out.push(if kept == 0 { ':' } else { ',' });
            push_number(&mut out, pos);
        }
    }
    out
}

/// The `tsvector` of one passage in PostgreSQL's binary form (what `tsvectorrecv` reads):
/// the number of lexemes (int32), then each lexeme as a NUL-terminated string, its number of
/// positions (uint16) and the positions (uint16, weight D), all big-endian. The same vector
/// as [`tsvector`]'s text, without the server parsing quoted text.
pub(crate) fn tsvector_binary(lexer: &mut Lexer, text: &str) -> Vec<u8> {
    let (entries, groups) = tsvector_groups(lexer, text);
    let mut out = Vec::with_capacity(text.len());
    out.extend_from_slice(&[0; 4]);
    let mut count: i32 = 0;
    for group in groups {
        let lexeme = lexer.text(entries[group.start].0);
        // A NUL would end the string early; the word rules never make one, but be sure.
        if lexeme.contains('\0') {
            continue;
        }
        out.extend_from_slice(lexeme.as_bytes());
        out.push(0);
        let npos_at = out.len();
        out.extend_from_slice(&[0; 2]);
        let mut npos: u16 = 0;
        for pos in kept_positions(&entries[group]) {
            out.extend_from_slice(&pos.to_be_bytes());
            npos += 1;
        }
        out[npos_at..npos_at + 2].copy_from_slice(&npos.to_be_bytes());
        count += 1;
    }
    out[..4].copy_from_slice(&count.to_be_bytes());
    out
}

/// The text FTS5 indexes for one passage: its lexemes in reading order, one space apart.
pub(crate) fn fts_text(lexer: &mut Lexer, text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (id, _) in lexemes(lexer, text, false) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(lexer.text(id));
    }
    out
}

/// `index` ([`tsvector`] or [`fts_text`]) of each of `texts`, in order, with this thread's
/// lexer (the store spreads large attachments over several blocking threads).
#[cfg(test)]
pub(crate) fn index_texts<T>(texts: &[String], index: fn(&mut Lexer, &str) -> T) -> Vec<T> {
    with_lexer(|lexer| texts.iter().map(|t| index(lexer, t)).collect())
}

/// The lexemes of a query word in order, each with the number of words from the previous
/// one (1: adjacent; more: stop words left out between them).
pub(crate) type Phrase = Vec<(String, usize)>;

/// One word of a query as the index knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueryWord {
    /// Its lexemes, a phrase for a compound (empty when all its parts are stop words).
    pub(crate) phrase: Phrase,
    /// A compound's own lexeme (see [`lexemes`]: PostgreSQL's vectors hold compounds whole).
    pub(crate) whole: Option<String>,
}

/// The words any of which a query for `terms` (the plain words of
/// `redline_domain::attachment::query_terms`) matches, without repeats; empty when no term
/// has a lexeme left.
pub(crate) fn query_words(terms: &[String]) -> Vec<QueryWord> {
    with_lexer(|lexer| words_of(lexer, terms))
}

fn words_of(lexer: &mut Lexer, terms: &[String]) -> Vec<QueryWord> {
    let mut words: Vec<QueryWord> = Vec::new();
    for term in terms {
        let mut phrase: Phrase = Vec::new();
        let (mut gap, mut parts) = (0usize, 0usize);
        for word in index_words(term) {
            gap += 1;
            parts += 1;
            if let Some(id) = lexer.lexeme(word) {
                phrase.push((lexer.text(id).to_owned(), if phrase.is_empty() { 1 } else { gap }));
                gap = 0;
            }
        }
        let whole = if parts > 1 { lexer.lexeme(term).map(|id| lexer.text(id).to_owned()) } else { None };
        let word = QueryWord { phrase, whole };
        if (!word.phrase.is_empty() || word.whole.is_some()) && !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// The `tsquery` (text form) of `words`: any of them, a compound as its own lexeme (or, if it
/// has none, as a phrase: lexemes joined by `<->`, `<N>` over left-out stop words). `None`
/// when there is none.
pub(crate) fn tsquery(words: &[QueryWord]) -> Option<String> {
    let alternatives: Vec<String> = words
        .iter()
        .filter_map(|word| {
            let mut out = String::new();
            if let Some(whole) = &word.whole {
                push_quoted(&mut out, whole);
                return Some(out);
            }
            for (i, (lexeme, gap)) in word.phrase.iter().enumerate() {
                match (i, gap) {
                    (0, _) => {}
                    (_, 1) => out.push_str(" <-> "),
                    (_, n) => out.push_str(&format!(" <{n}> ")),
                }
                push_quoted(&mut out, lexeme);
            }
            match word.phrase.len() {
                0 => None,
                1 => Some(out),
                _ => Some(format!("({out})")),
            }
        })
        .collect();
    (!alternatives.is_empty()).then(|| alternatives.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(q: &str) -> Vec<String> {
        redline_domain::attachment::query_terms(q)
    }

    #[test]
    fn stop_words_are_sorted_for_the_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn passages_become_sorted_tsvectors_with_positions() {
        let mut lexer = Lexer::new();
        let v = tsvector(&mut lexer, "The Cats chased the cat's toys: Pandoc 0.3, e-mail; O'Brien \\ it's");
        assert_eq!(
            v,
            "'0':9 '0.3':9 '3':10 'brien':14 'cat':2,5 'chase':3 'e':11 'e-mail':11 'it':15 'mail':12 'o':13 \
             'o''brien':13 'pandoc':8 'toy':7",
            "the possessive `'s` is stemmed away"
        );
    }

    #[test]
    fn fts_text_is_the_lexemes_in_order() {
        let mut lexer = Lexer::new();
        assert_eq!(fts_text(&mut lexer, "The Cats chased the cat's toys, in 2024!"), "cat chase cat toy 2024");
        assert_eq!(fts_text(&mut lexer, "Grüße aus Köln, אצות סגולות"), "gruße aus koln אצות סגולות");
        assert_eq!(fts_text(&mut lexer, "the of and -- ."), "");
    }

    #[test]
    fn accents_of_latin_and_greek_letters_and_vowel_points_are_folded() {
        for (written, folded) in [
            ("café", "cafe"),
            ("cafe\u{301}", "cafe"),
            ("αθήνα", "αθηνα"),
            ("ελλάς", "ελλασ"),
            ("øre", "ore"),
            ("łódź", "lodz"),
            ("ảnh", "anh"),
            ("שָׁלוֹם", "שלום"),
            ("كَتَبَ", "كتب"),
            // Cyrillic keeps its marks, also written apart; other scripts are left alone.
            ("йод", "йод"),
            ("и\u{306}од", "и\u{306}од"),
            ("東京", "東京"),
            ("plain", "plain"),
        ] {
            assert_eq!(unaccented(written), folded, "{written}");
        }
        // Queries and passages meet whatever the accents and the letter case.
        let mut lexer = Lexer::new();
        for (a, b) in [("Αθήνα", "αθηνα"), ("Café", "cafe"), ("CAFÉS", "cafe"), ("Ελλάς", "ελλασ")]
        {
            assert_eq!(lexer.lexeme(a), lexer.lexeme(b), "{a} / {b}");
        }
        let words = query_words(&terms("αθηνα"));
        let mut lexer = Lexer::new();
        assert!(tsvector(&mut lexer, "Η Αθήνα είναι").contains(&format!("'{}'", words[0].phrase[0].0)));
    }

    #[test]
    fn queries_and_passages_agree() {
        let words = query_words(&terms("Harvested soups: pandoc 0.3 e-mail, don't, a-b-c, soup"));
        let flat: Vec<Vec<&str>> = words.iter().map(|w| w.phrase.iter().map(|(l, _)| l.as_str()).collect()).collect();
        assert_eq!(
            flat,
            [vec!["harvest"], vec!["soup"], vec!["pandoc"], vec!["0", "3"], vec!["e", "mail"], vec![], vec!["b", "c"]]
        );
        let q = tsquery(&words).unwrap();
        assert_eq!(q, "'harvest' | 'soup' | 'pandoc' | '0.3' | 'e-mail' | 'don''t' | 'a-b-c'");
        // The compounds are in the passages' vectors too.
        let mut lexer = Lexer::new();
        let v = tsvector(&mut lexer, "Say A-B-C; don't.");
        assert!(v.contains("'a-b-c':2") && v.contains("'don''t':5"), "{v}");
        // Without a lexeme of its own, a compound is a phrase; a left-out stop word leaves a gap.
        let gapped = QueryWord { phrase: vec![("x".into(), 1), ("y".into(), 2)], whole: None };
        assert_eq!(tsquery(&[gapped]).unwrap(), "('x' <2> 'y')");
        assert!(tsquery(&[QueryWord { phrase: vec![], whole: None }]).is_none());
        assert!(tsquery(&[]).is_none());
    }

    #[test]
    fn quotes_are_escaped_and_positions_capped() {
        let mut out = String::new();
        push_quoted(&mut out, "a'b\\c");
        assert_eq!(out, "'a''b\\\\c'");
        let long = "word ".repeat(20_000);
        let mut lexer = Lexer::new();
        let v = tsvector(&mut lexer, &long);
        assert_eq!(v.matches(',').count(), MAX_POSITIONS - 1, "at most 255 positions");
        let many: String = (0..20_000).map(|i| format!("w{i} ")).collect();
        let v = tsvector(&mut lexer, &many);
        assert!(v.contains("'w19999':16383"), "late words share the last position");
        assert!(tsvector(&mut lexer, &"x".repeat(3000)).is_empty(), "too long to index");
    }

    /// `tsvectorrecv`'s reading of a binary vector, written out as `tsvectorout` would.
    fn binary_as_text(bytes: &[u8]) -> String {
        let (count, mut rest) = bytes.split_at(4);
        let count = i32::from_be_bytes(count.try_into().unwrap());
        let mut out = Vec::new();
        for _ in 0..count {
            let nul = rest.iter().position(|&b| b == 0).expect("NUL-terminated lexeme");
            let lexeme = std::str::from_utf8(&rest[..nul]).unwrap();
            let npos = u16::from_be_bytes([rest[nul + 1], rest[nul + 2]]);
            rest = &rest[nul + 3..];
            let mut entry = String::new();
            push_quoted(&mut entry, lexeme);
            for i in 0..usize::from(npos) {
                let pos = u16::from_be_bytes([rest[2 * i], rest[2 * i + 1]]);
                assert_eq!(pos >> 14, 0, "weight D, position below 16384");
                entry.push_str(&format!("{}{pos}", if i == 0 { ':' } else { ',' }));
            }
            rest = &rest[2 * usize::from(npos)..];
            out.push(entry);
        }
        assert!(rest.is_empty(), "nothing after the last lexeme");
        out.join(" ")
    }

    #[test]
    fn binary_vectors_say_what_the_text_form_says() {
        let mut lexer = Lexer::new();
        let many: String = (0..20_000).map(|i| format!("w{} ", i % 300)).collect();
        for text in [
            "The Cats chased the cat's toys: Pandoc 0.3, e-mail; O'Brien \\ it's",
            "Say A-B-C; don't.",
            "",
            "the of and",
            "Grüße aus Köln, אצות סגולות",
            &"word ".repeat(20_000),
            &many,
        ] {
            let binary = tsvector_binary(&mut lexer, text);
            assert_eq!(binary_as_text(&binary), tsvector(&mut lexer, text), "{:?}", &text[..text.len().min(40)]);
        }
        assert_eq!(tsvector_binary(&mut lexer, "the"), [0, 0, 0, 0], "no lexemes");
        assert_eq!(
            tsvector_binary(&mut lexer, "kelp, kelp"),
            [0, 0, 0, 1, b'k', b'e', b'l', b'p', 0, 0, 2, 0, 1, 0, 2],
            "one lexeme at positions 1 and 2"
        );
    }

    #[test]
    fn short_keys_name_one_word_each() {
        let words = ["a", "a\0", "ab", "ba", "é", "e\u{301}", "fifteen-bytes!!", "sixteen-bytes!!!", ""];
        let keys: Vec<Option<u128>> = words.iter().map(|w| short_key(w)).collect();
        assert_eq!(keys[7], None, "sixteen bytes go to the long words");
        let short: Vec<u128> = keys.iter().flatten().copied().collect();
        assert_eq!(short.len(), words.len() - 1);
        let mut unique = short.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), short.len(), "two words share a key: {words:?}");
    }

    #[test]
    fn words_either_side_of_the_short_key_length_get_their_lexemes() {
        // 14 to 17 bytes, some with a two-byte character across the 15th byte.
        let words = [
            "internationaliz",
            "internationalize",
            "internationalized",
            "summarizations",
            "déconstructionné",
            "naïvetés-naïveté",
        ];
        let text = words.join(" ");
        let mut warm = Lexer::new();
        let first = fts_text(&mut warm, &text);
        assert_eq!(fts_text(&mut warm, &text), first, "remembered words give what they gave");
        assert_eq!(fts_text(&mut Lexer::new(), &text), first);
        assert_eq!(first, "internationaliz internation internation summar deconstructionn naivet naivet");
    }

    #[test]
    fn a_thread_lexer_gives_the_same_lexemes_as_a_fresh_one() {
        let texts: Vec<String> =
            (0..1000).map(|i| format!("Passage {i} talks about harvesting kelp {}", i % 7)).collect();
        let once = index_texts(&texts, tsvector);
        assert_eq!(index_texts(&texts, tsvector), once, "with the words remembered");
        let mut fresh = Lexer::new();
        assert_eq!(texts.iter().map(|t| tsvector(&mut fresh, t)).collect::<Vec<_>>(), once);
        assert_eq!(once[3], "'3':2,7 'harvest':5 'kelp':6 'passag':1 'talk':3");
        assert_eq!(
            index_texts(&texts[..2], fts_text),
            ["passag 0 talk harvest kelp 0", "passag 1 talk harvest kelp 1"]
        );
    }
}
