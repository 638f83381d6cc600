//! File formats accepted for upload (the contract's Limits) and offered for export.

use std::fmt;

/// The extensions uploads accept, in the order error messages list them.
pub const SUPPORTED_EXTENSIONS: [&str; 7] = [".pdf", ".docx", ".txt", ".rtf", ".md", ".html", ".htm"];

/// A format an uploaded file is converted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceFormat {
    Pdf,
    Docx,
    Txt,
    Rtf,
    Markdown,
    Html,
}

/// An upload whose extension is not supported (415).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", unsupported_message(.extension))]
pub struct UnsupportedExtension {
    /// The rejected extension with its dot (`.doc`), or empty when the name has none.
    pub extension: String,
}

fn unsupported_message(extension: &str) -> String {
    let supported = SUPPORTED_EXTENSIONS.join(", ");
    let hint = if extension.eq_ignore_ascii_case(".doc") {
        " Legacy .doc files are not supported: save the file as .docx and upload it again."
    } else {
        ""
    };
    if extension.is_empty() {
        format!("The file has no extension. Supported extensions: {supported}.{hint}")
    } else {
        format!("Unsupported file extension '{extension}'. Supported extensions: {supported}.{hint}")
    }
}

impl SourceFormat {
    /// The format of a file name, by its extension (case-insensitive).
    pub fn from_filename(name: &str) -> Result<Self, UnsupportedExtension> {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let extension = match base.rfind('.') {
            Some(i) if i + 1 < base.len() => base[i..].to_owned(),
            _ => String::new(),
        };
        let lower = extension.to_ascii_lowercase();
        let format = match lower.as_str() {
            ".pdf" => SourceFormat::Pdf,
            ".docx" => SourceFormat::Docx,
            ".txt" => SourceFormat::Txt,
            ".rtf" => SourceFormat::Rtf,
            ".md" => SourceFormat::Markdown,
            ".html" | ".htm" => SourceFormat::Html,
            _ => {
                // Keep the message short and printable whatever the name held.
                let extension: String = extension.chars().filter(|c| !c.is_control()).take(32).collect();
                return Err(UnsupportedExtension { extension });
            }
        };
        Ok(format)
    }

    /// The usual MIME type.
    pub fn content_type(self) -> &'static str {
        match self {
            SourceFormat::Pdf => "application/pdf",
            SourceFormat::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            SourceFormat::Txt => "text/plain",
            SourceFormat::Rtf => "application/rtf",
            SourceFormat::Markdown => "text/markdown",
            SourceFormat::Html => "text/html",
        }
    }
}

impl fmt::Display for SourceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceFormat::Pdf => "pdf",
            SourceFormat::Docx => "docx",
            SourceFormat::Txt => "txt",
            SourceFormat::Rtf => "rtf",
            SourceFormat::Markdown => "md",
            SourceFormat::Html => "html",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn extensions() {
        assert_eq!(SourceFormat::from_filename("Report.DOCX"), Ok(SourceFormat::Docx));
        assert_eq!(SourceFormat::from_filename("a.b.htm"), Ok(SourceFormat::Html));
        assert_eq!(SourceFormat::from_filename("../../etc/notes.md"), Ok(SourceFormat::Markdown));
        let e = SourceFormat::from_filename("old.doc").unwrap_err();
        assert_eq!(e.extension, ".doc");
        let msg = e.to_string();
        assert!(msg.contains(".doc") && msg.contains(".docx") && msg.contains(".pdf") && msg.contains(".htm"), "{msg}");
        assert_eq!(SourceFormat::from_filename("noext").unwrap_err().extension, "");
        assert_eq!(SourceFormat::from_filename("trailingdot.").unwrap_err().extension, "");
        assert_eq!(SourceFormat::from_filename("x.exe").unwrap_err().extension, ".exe");
    }

    proptest! {
        #[test]
        fn never_panics_and_names_printable_extensions(name in "\\PC{0,80}") {
            if let Err(e) = SourceFormat::from_filename(&name) {
                prop_assert!(e.extension.chars().all(|c| !c.is_control()));
                prop_assert!(e.extension.chars().count() <= 32);
            }
        }
    }
}
