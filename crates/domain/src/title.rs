//! A document's title: what people see in the list and the editor, and what an export's file
//! is named after. One set of rules for every way a title arrives (an upload's file name or
//! metadata, a save, a template, a rename).

/// Most characters a title keeps.
pub const TITLE_MAX_CHARS: usize = 200;

/// A title as given, made plain: control, bidi and zero-width characters removed, runs of
/// white space made one space, trimmed, at most [`TITLE_MAX_CHARS`] characters. `None` when
/// nothing is left.
pub fn clean(raw: &str) -> Option<String> {
    let plain = crate::account::plain_name(&raw.replace(['\n', '\r', '\t'], " "));
    let joined = plain.split_whitespace().collect::<Vec<_>>().join(" ");
    let kept: String = joined.chars().take(TITLE_MAX_CHARS).collect();
    let kept = kept.trim_end().to_owned();
    (!kept.is_empty()).then_some(kept)
}

/// The title an uploaded file's name gives: its last path component without the extension.
pub fn from_file_name(filename: &str) -> Option<String> {
    let base = filename.rsplit(['/', '\\']).next().unwrap_or(filename);
    let stem = match base.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => base,
    };
    clean(stem)
}

/// The name of a downloaded file: the title (or, without one, the session id) with the
/// characters file systems refuse (`/ \ : * ? " < > |`) and leading dots replaced, then the
/// extension. In full (UTF-8): a `Content-Disposition`'s `filename*`.
pub fn file_name(title: Option<&str>, session_id: &str, extension: &str) -> String {
    let stem = title.and_then(clean).unwrap_or_else(|| session_id.to_owned());
    let safe: String = stem
        .chars()
        .map(|c| if matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|') { '_' } else { c })
        .collect();
    let safe = safe.trim_start_matches('.').trim();
    let safe = if safe.is_empty() { session_id } else { safe };
    format!("{safe}.{extension}")
}

/// A file name's ASCII stand-in, for the `filename` read by clients that know no better:
/// every character but printable ASCII becomes `_`.
pub fn ascii_file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn titles_are_plain_and_bounded() {
        assert_eq!(clean("  Quarterly\n report\u{202e} \t 2026 "), Some("Quarterly report 2026".into()));
        assert_eq!(clean("\u{200b} \n"), None);
        assert_eq!(clean(&"é".repeat(300)).map(|t| t.chars().count()), Some(TITLE_MAX_CHARS));
    }

    #[test]
    fn file_names_give_their_stem() {
        assert_eq!(from_file_name("C:\\Users\\ann\\Q3 plan.final.docx"), Some("Q3 plan.final".into()));
        assert_eq!(from_file_name("notes/readme.md"), Some("readme".into()));
        assert_eq!(from_file_name(".profile"), Some(".profile".into()));
        assert_eq!(from_file_name("  .md"), None);
    }

    #[test]
    fn download_names_are_safe_with_an_ascii_stand_in() {
        assert_eq!(file_name(Some("Plan: Q3/Q4 \"draft\""), "s1", "docx"), "Plan_ Q3_Q4 _draft_.docx");
        assert_eq!(file_name(Some("Résumé 東京"), "s1", "pdf"), "Résumé 東京.pdf");
        assert_eq!(ascii_file_name("Résumé 東京.pdf"), "R_sum_ __.pdf");
        assert_eq!(file_name(None, "my-doc", "md"), "my-doc.md");
        assert_eq!(file_name(Some("..."), "my-doc", "txt"), "my-doc.txt");
    }

    proptest! {
        #[test]
        fn a_download_name_never_holds_a_path_or_a_control(title in ".{0,300}", ext in "[a-z]{1,4}") {
            let full = file_name(Some(&title), "s", &ext);
            let dot_ext = format!(".{ext}");
            let ascii = ascii_file_name(&full);
            for name in [&full, &ascii] {
                prop_assert!(!name.contains(['/', '\\', '"']));
                prop_assert!(!name.chars().any(char::is_control));
                prop_assert!(!name.starts_with('.'));
                prop_assert!(name.ends_with(&dot_ext));
            }
            prop_assert!(ascii.is_ascii());
        }

        #[test]
        fn cleaning_is_idempotent(raw in ".{0,300}") {
            let once = clean(&raw);
            prop_assert_eq!(once.as_deref().and_then(clean), once);
        }
    }
}
