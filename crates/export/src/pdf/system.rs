//! The system's fonts, the fallback for characters the bundled fonts lack: every font file
//! under the folders given (`/usr/share/fonts` and the binary's `REDLINE_FONT_DIRS`). They
//! are scanned once per set, the first time a character needs them (each face's `cmap`
//! coverage is kept as ranges, the file itself is not); a face chosen for a character is
//! read once and kept for the life of the process, so installing Debian's `fonts-noto-cjk`
//! makes CJK render with no other step.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use super::fonts::Loaded;

/// Where Debian installs fonts.
pub const SYSTEM_FONT_DIR: &str = "/usr/share/fonts";

/// Font files larger than this are skipped (the largest CJK collections are ~30 MB).
const MAX_FILE: u64 = 64 << 20;
/// Files looked at at most, and folder depth.
const MAX_FILES: usize = 20_000;
const MAX_DEPTH: usize = 8;

/// A face found on the system and the characters it covers.
#[derive(Debug)]
struct SystemFace {
    path: PathBuf,
    index: u32,
    family: String,
    bold: bool,
    /// Sorted, disjoint ranges of covered code points.
    ranges: Vec<(u32, u32)>,
}

impl SystemFace {
    fn covers(&self, c: char) -> bool {
        let c = u32::from(c);
        let i = self.ranges.partition_point(|&(_, hi)| hi < c);
        self.ranges.get(i).is_some_and(|&(lo, _)| lo <= c)
    }
}

/// The system's fonts as fallback (see the module docs).
#[derive(Debug)]
pub struct SystemFonts {
    dirs: Vec<PathBuf>,
    faces: OnceLock<Vec<SystemFace>>,
    choice: Mutex<HashMap<(char, bool), Option<usize>>>,
}

/// File data read once per process, by path (never freed: bounded by the installed fonts).
fn file_data(path: &Path) -> Option<&'static [u8]> {
    static FILES: OnceLock<Mutex<HashMap<PathBuf, &'static [u8]>>> = OnceLock::new();
    let files = FILES.get_or_init(Mutex::default);
    let mut files = files.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(data) = files.get(path) {
        return Some(data);
    }
    let data: &'static [u8] = Box::leak(std::fs::read(path).ok()?.into_boxed_slice());
    files.insert(path.to_path_buf(), data);
    Some(data)
}

impl SystemFonts {
    /// The process-wide set of [`SYSTEM_FONT_DIR`].
    pub fn shared() -> Arc<SystemFonts> {
        static SHARED: OnceLock<Arc<SystemFonts>> = OnceLock::new();
        SHARED.get_or_init(|| SystemFonts::from_dirs(vec![PathBuf::from(SYSTEM_FONT_DIR)])).clone()
    }

    /// Fonts from these folders only (an empty list: no system fonts).
    pub fn from_dirs(dirs: Vec<PathBuf>) -> Arc<SystemFonts> {
        Arc::new(SystemFonts { dirs, faces: OnceLock::new(), choice: Mutex::default() })
    }

    fn faces(&self) -> &[SystemFace] {
        self.faces.get_or_init(|| {
            let started = std::time::Instant::now();
            let mut files = Vec::new();
            for dir in &self.dirs {
                collect_files(dir, 0, &mut files);
            }
            files.sort();
            files.dedup();
            let mut faces: Vec<SystemFace> = files.iter().flat_map(|f| scan_file(f)).collect();
            // Upright regular sans faces first, then by name (a stable, predictable order).
            faces.sort_by(|a, b| {
                let key = |f: &SystemFace| (!f.family.contains("Sans"), f.family.contains("Mono"), f.family.clone());
                key(a).cmp(&key(b))
            });
            tracing::info!(faces = faces.len(), ms = started.elapsed().as_millis() as u64, "pdf: system fonts scanned");
            faces
        })
    }

    /// The index of the system face that draws `c` (a bold one first when `bold`).
    pub(crate) fn face_for(&self, c: char, bold: bool) -> Option<usize> {
        if self.dirs.is_empty() {
            return None;
        }
        let mut choice = self.choice.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = choice.get(&(c, bold)) {
            return *found;
        }
        let faces = self.faces();
        let covering = || faces.iter().enumerate().filter(|(_, f)| f.covers(c));
        let found = covering().find(|(_, f)| f.bold == bold).or_else(|| covering().next()).map(|(i, _)| i);
        choice.insert((c, bold), found);
        found
    }

    /// The face at `index`, read (once per process) and parsed.
    pub(crate) fn load(&self, index: usize) -> Option<Loaded> {
        let face = self.faces().get(index)?;
        let data = file_data(&face.path)?;
        let parsed = ttf_parser::Face::parse(data, face.index).ok()?;
        let name = postscript_name(&parsed).unwrap_or_else(|| face.family.replace(' ', ""));
        Loaded::new(data, face.index, name)
    }
}

fn collect_files(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() {
            collect_files(&path, depth + 1, out);
        } else if meta.len() <= MAX_FILE && out.len() < MAX_FILES {
            let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            if matches!(ext.as_deref(), Some("ttf" | "otf" | "ttc" | "otc")) {
                out.push(path);
            }
        }
    }
}

/// The usable faces of a font file: outlines (TrueType or CFF), not variable (the subsetter
/// keeps the default instance only), not italic.
fn scan_file(path: &Path) -> Vec<SystemFace> {
    let Ok(data) = std::fs::read(path) else { return Vec::new() };
    let count = ttf_parser::fonts_in_collection(&data).unwrap_or(1).min(64);
    let mut faces = Vec::new();
    for index in 0..count {
        let Ok(face) = ttf_parser::Face::parse(&data, index) else { continue };
        let tables = face.tables();
        if (tables.glyf.is_none() && tables.cff.is_none()) || face.is_variable() || face.is_italic() {
            continue;
        }
        let mut points = Vec::new();
        if let Some(cmap) = tables.cmap {
            for sub in cmap.subtables {
                if sub.is_unicode() {
                    sub.codepoints(|cp| points.push(cp));
                }
            }
        }
        points.sort_unstable();
        points.dedup();
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for cp in points {
            match ranges.last_mut() {
                Some((_, hi)) if *hi + 1 == cp => *hi = cp,
                _ => ranges.push((cp, cp)),
            }
        }
        let family = face
            .names()
            .into_iter()
            .find(|n| n.name_id == ttf_parser::name_id::FAMILY && n.is_unicode())
            .and_then(|n| n.to_string())
            .unwrap_or_default();
        faces.push(SystemFace { path: path.to_path_buf(), index, family, bold: face.is_bold(), ranges });
    }
    faces
}

fn postscript_name(face: &ttf_parser::Face<'_>) -> Option<String> {
    let name = face
        .names()
        .into_iter()
        .find(|n| n.name_id == ttf_parser::name_id::POST_SCRIPT_NAME && n.is_unicode())
        .and_then(|n| n.to_string())?;
    let clean: String = name.chars().filter(|c| c.is_ascii_graphic() && !"[](){}<>/%#".contains(*c)).collect();
    (!clean.is_empty()).then_some(clean)
}
