//! Export formats and their names.

use std::fmt;

/// A format a document can be exported to. RTF is input only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    Docx,
    Pdf,
    Html,
    Markdown,
    Txt,
}

/// What the caller asked for: a format, and whether it came through the deprecated `doc`
/// alias (served as DOCX with `Deprecation: true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestedFormat {
    pub format: ExportFormat,
    pub deprecated_alias: bool,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 5] =
        [ExportFormat::Docx, ExportFormat::Pdf, ExportFormat::Html, ExportFormat::Markdown, ExportFormat::Txt];

    /// The legacy name of DOCX, accepted with `Deprecation: true`.
    pub const LEGACY_ALIAS: &'static str = "doc";

    /// The strict enum of the API's `format`: every format's name, then the legacy alias.
    /// The HTTP check and the OpenAPI document both take it from here.
    pub const API_NAMES: [&'static str; ExportFormat::ALL.len() + 1] = {
        let mut names = [Self::LEGACY_ALIAS; ExportFormat::ALL.len() + 1];
        let mut i = 0;
        while i < ExportFormat::ALL.len() {
            names[i] = ExportFormat::ALL[i].as_str();
            i += 1;
        }
        names
    };

    /// The enum value as the API spells it.
    pub const fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Docx => "docx",
            ExportFormat::Pdf => "pdf",
            ExportFormat::Html => "html",
            ExportFormat::Markdown => "markdown",
            ExportFormat::Txt => "txt",
        }
    }

    /// The file extension of a download.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            other => other.as_str(),
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            ExportFormat::Pdf => "application/pdf",
            ExportFormat::Html => "text/html; charset=utf-8",
            ExportFormat::Markdown => "text/markdown; charset=utf-8",
            ExportFormat::Txt => "text/plain; charset=utf-8",
        }
    }

    /// Parses the API's strict enum (case-sensitive, no trimming), accepting `doc` as the
    /// legacy alias of `docx`.
    pub fn parse(value: &str) -> Option<RequestedFormat> {
        if value == Self::LEGACY_ALIAS {
            return Some(RequestedFormat { format: ExportFormat::Docx, deprecated_alias: true });
        }
        let format = ExportFormat::ALL.into_iter().find(|f| f.as_str() == value)?;
        Some(RequestedFormat { format, deprecated_alias: false })
    }
}

impl fmt::Display for ExportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_names_are_every_format_then_the_alias() {
        assert_eq!(ExportFormat::API_NAMES, ["docx", "pdf", "html", "markdown", "txt", "doc"]);
        for name in ExportFormat::API_NAMES {
            assert!(ExportFormat::parse(name).is_some(), "{name}");
        }
        assert_eq!(ExportFormat::parse("DOCX"), None);
    }

    #[test]
    fn the_enum_is_strict_and_doc_is_an_alias() {
        for f in ExportFormat::ALL {
            assert_eq!(ExportFormat::parse(f.as_str()).map(|r| r.format), Some(f));
        }
        assert_eq!(
            ExportFormat::parse("doc"),
            Some(RequestedFormat { format: ExportFormat::Docx, deprecated_alias: true })
        );
        for bad in ["PDF", "Docx", "doc ", "", "rtf", "xlsx", "md"] {
            assert_eq!(ExportFormat::parse(bad), None, "{bad:?}");
        }
    }
}
