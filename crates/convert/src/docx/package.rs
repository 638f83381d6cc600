//! The OPC package: a zip of parts, read with hard limits on what it may cost, and the
//! relationship parts (`_rels/*.rels`) that tie the parts together.

use std::collections::HashMap;
use std::io::{Cursor, Read};

use redline_ports::documents::ConvertError;
use zip::result::ZipError;
use zip::ZipArchive;

use super::xml::{attr, local, Ev, Xml};
use super::{corrupt, Limits};

/// A part read under a cap.
pub(super) enum Part {
    Missing,
    TooBig,
    Bytes(Vec<u8>),
}

pub(super) struct Package<'b> {
    zip: ZipArchive<Cursor<&'b [u8]>>,
    /// Lower-cased part name → entry index (part names are case-insensitive).
    names: HashMap<String, usize>,
    /// Bytes that may still be decompressed, of `total`.
    budget: u64,
    total: u64,
    pub(super) limits: Limits,
}

/// The number of entries the end-of-central-directory record declares, when it can be
/// found (`None` for zip64 counts or no record: the archive parser decides).
fn declared_entries(bytes: &[u8]) -> Option<u64> {
    const EOCD: &[u8] = b"PK\x05\x06";
    let tail_start = bytes.len().saturating_sub(22 + 0xFFFF);
    let tail = &bytes[tail_start..];
    let pos = tail.windows(4).rposition(|w| w == EOCD)?;
    let rec = tail.get(pos..pos + 22)?;
    let total = u16::from_le_bytes([rec[10], rec[11]]);
    (total != 0xFFFF).then_some(u64::from(total))
}

fn zip_error(e: ZipError) -> ConvertError {
    match e {
        ZipError::UnsupportedArchive(msg) if msg.to_ascii_lowercase().contains("password") => ConvertError::Encrypted,
        ZipError::InvalidPassword => ConvertError::Encrypted,
        e => corrupt(format!("not a readable zip archive ({e})")),
    }
}

impl<'b> Package<'b> {
    pub(super) fn open(bytes: &'b [u8], limits: Limits) -> Result<Self, ConvertError> {
        if declared_entries(bytes).is_some_and(|n| n > limits.max_entries as u64) {
            return Err(too_many_entries(limits));
        }
        let zip = ZipArchive::new(Cursor::new(bytes)).map_err(zip_error)?;
        if zip.len() > limits.max_entries {
            return Err(too_many_entries(limits));
        }
        let mut names = HashMap::with_capacity(zip.len());
        for (i, name) in zip.file_names_raw().enumerate() {
            let name = String::from_utf8_lossy(name).replace('\\', "/").to_lowercase();
            names.entry(name).or_insert(i);
        }
        let total = limits.total_budget(bytes.len());
        Ok(Package { zip, names, budget: total, total, limits })
    }

    fn index(&self, name: &str) -> Option<usize> {
        let name = name.trim_start_matches('/').to_lowercase();
        self.names.get(&name).copied()
    }

    pub(super) fn has(&self, name: &str) -> bool {
        self.index(name).is_some()
    }

    /// The decompressed bytes of a part, `None` when there is no such part. Reads at most
    /// `cap` bytes (and what is left of the total budget); more is `TooComplex`, whatever
    /// the entry's header claims.
    pub(super) fn read(&mut self, name: &str, cap: u64) -> Result<Option<Vec<u8>>, ConvertError> {
        match self.read_part(name, cap)? {
            Part::Missing => Ok(None),
            Part::Bytes(bytes) => Ok(Some(bytes)),
            Part::TooBig => Err(ConvertError::TooComplex(format!(
                "the part {name} decompresses to more than {cap} bytes (a zip bomb?)"
            ))),
        }
    }

    /// Like `read`, but a part over its own cap is answered (`Part::TooBig`) rather than
    /// refused; the total budget still refuses.
    pub(super) fn read_part(&mut self, name: &str, cap: u64) -> Result<Part, ConvertError> {
        let Some(index) = self.index(name) else { return Ok(Part::Missing) };
        let limit = cap.min(self.budget);
        let file = self.zip.by_index(index).map_err(zip_error)?;
        if file.is_dir() {
            return Ok(Part::Missing);
        }
        // The declared size is only a hint for the first allocation, never trusted beyond it.
        let hint = file.size().min(limit).min(1 << 20) as usize;
        let mut out = Vec::with_capacity(hint);
        file.take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| corrupt(format!("the part {name} cannot be decompressed ({e})")))?;
        let read = out.len() as u64;
        self.budget = self.budget.saturating_sub(read);
        if read > limit {
            if limit < cap {
                return Err(ConvertError::TooComplex(format!(
                    "the archive decompresses to more than {} bytes in total (a zip bomb?)",
                    self.total
                )));
            }
            return Ok(Part::TooBig);
        }
        Ok(Part::Bytes(out))
    }

    /// An XML part as text (UTF-8 or UTF-16 with BOM; a UTF-8 BOM is dropped).
    pub(super) fn read_xml(&mut self, name: &str) -> Result<Option<String>, ConvertError> {
        let cap = self.limits.max_part_bytes;
        Ok(self.read(name, cap)?.map(decode_text))
    }

    /// The relationships of a part (`word/document.xml` → `word/_rels/document.xml.rels`).
    pub(super) fn rels_of(&mut self, part: &str) -> Result<Rels, ConvertError> {
        let (dir, file) = split_dir(part);
        let rels_name = format!("{dir}_rels/{file}.rels");
        match self.read_xml(&rels_name)? {
            Some(text) => Rels::parse(&text, &rels_name, dir, self.limits.max_depth),
            None => Ok(Rels::default()),
        }
    }
}

fn too_many_entries(limits: Limits) -> ConvertError {
    ConvertError::TooComplex(format!("the archive has more than {} entries", limits.max_entries))
}

/// Decodes an XML part's bytes. Invalid UTF-8 is replaced rather than refused: one bad byte
/// should not lose the document.
pub(super) fn decode_text(bytes: Vec<u8>) -> String {
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    let mut text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    if text.starts_with('\u{feff}') {
        text.drain(..3);
    }
    text
}

/// `word/document.xml` → (`word/`, `document.xml`).
fn split_dir(part: &str) -> (&str, &str) {
    match part.rfind('/') {
        Some(i) => (&part[..=i], &part[i + 1..]),
        None => ("", part),
    }
}

/// Resolves a relationship target against the directory of its source part.
pub(super) fn resolve(dir: &str, target: &str) -> String {
    let target = target.split('#').next().unwrap_or("");
    let full = if let Some(abs) = target.strip_prefix('/') { abs.to_owned() } else { format!("{dir}{target}") };
    let mut parts: Vec<&str> = Vec::new();
    for seg in full.split(['/', '\\']) {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    if joined.contains('%') {
        percent_decode(&joined)
    } else {
        joined
    }
}

fn percent_decode(s: &str) -> String {
    fn hex(b: u8) -> Option<u8> {
        (b as char).to_digit(16).map(|d| d as u8)
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Debug, Clone)]
pub(super) struct Rel {
    /// The last segment of the relationship type (`image`, `hyperlink`, `styles`, …).
    pub(super) kind: String,
    /// For internal targets, the part name resolved against the source part; for external
    /// ones, the target as written.
    pub(super) target: String,
    pub(super) external: bool,
}

#[derive(Debug, Default)]
pub(super) struct Rels {
    by_id: HashMap<String, Rel>,
}

impl Rels {
    pub(super) fn parse(text: &str, part: &str, dir: &str, max_depth: usize) -> Result<Self, ConvertError> {
        let mut x = Xml::new(text, part, max_depth);
        let mut by_id = HashMap::new();
        loop {
            match x.next()? {
                Ev::Start(e) | Ev::Empty(e) if local(&e) == "Relationship" => {
                    let (Some(id), Some(kind), Some(target)) = (attr(&e, "Id"), attr(&e, "Type"), attr(&e, "Target"))
                    else {
                        continue;
                    };
                    let external = attr(&e, "TargetMode").is_some_and(|m| m.eq_ignore_ascii_case("External"));
                    let kind = kind.rsplit('/').next().unwrap_or("").to_owned();
                    let target = if external { target.trim().to_owned() } else { resolve(dir, target.trim()) };
                    by_id.entry(id.into_owned()).or_insert(Rel { kind, target, external });
                }
                Ev::Eof => break,
                _ => {}
            }
        }
        Ok(Rels { by_id })
    }

    pub(super) fn get(&self, id: &str) -> Option<&Rel> {
        self.by_id.get(id)
    }

    /// The first internal target of a relationship type.
    pub(super) fn first_of(&self, kind: &str) -> Option<&str> {
        let mut found: Vec<(&String, &Rel)> =
            self.by_id.iter().filter(|(_, r)| !r.external && r.kind.eq_ignore_ascii_case(kind)).collect();
        found.sort_by(|a, b| a.0.cmp(b.0));
        found.first().map(|(_, r)| r.target.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_resolve_against_the_source_part() {
        assert_eq!(resolve("word/", "media/image1.png"), "word/media/image1.png");
        assert_eq!(resolve("word/", "../customXml/item1.xml"), "customXml/item1.xml");
        assert_eq!(resolve("word/", "/word/media/a.png"), "word/media/a.png");
        assert_eq!(resolve("word/", "media/image%201.png"), "word/media/image 1.png");
        assert_eq!(resolve("", "word/document.xml"), "word/document.xml");
        assert_eq!(resolve("word/", "../../../etc/passwd"), "etc/passwd");
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%41%zz"), "A%zz");
    }
}
