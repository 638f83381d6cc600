//! The [`Ocr`] adapter on Debian's `tesseract` command (packages `tesseract-ocr` and
//! `tesseract-ocr-<lang>`): the picture is written to a private temporary file and read with
//! `tesseract <file> - -l <langs>`, one thread (`OMP_THREAD_LIMIT=1`), killed past its time
//! limit.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use redline_ports::{Ocr, OcrError};

/// How long one picture may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The most text taken from one picture.
const MAX_TEXT: usize = 1 << 20;

/// Runs `tesseract` for each picture.
#[derive(Debug, Clone)]
pub struct TesseractOcr {
    program: PathBuf,
    languages: String,
    timeout: Duration,
}

impl TesseractOcr {
    /// `program` (normally `tesseract`, found on the `PATH`) reading `languages` (Tesseract's
    /// form: `eng`, `eng+deu`).
    pub fn new(program: impl Into<PathBuf>, languages: &str, timeout: Duration) -> Self {
        let languages: String =
            languages.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '_')).take(200).collect();
        let languages = if languages.is_empty() { "eng".to_owned() } else { languages };
        TesseractOcr { program: program.into(), languages, timeout }
    }

    /// The languages asked for.
    pub fn languages(&self) -> &str {
        &self.languages
    }
}

/// A temporary file removed when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn temp_file(bytes: &[u8]) -> std::io::Result<TempFile> {
    use std::io::Write;
    let mut random = [0u8; 16];
    getrandom(&mut random);
    let name: String = random.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::env::temp_dir().join(format!("redline-ocr-{name}.img"));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path)?;
    let temp = TempFile(path);
    file.write_all(bytes)?;
    Ok(temp)
}

/// Bytes unlikely to repeat (the name of a temporary file, opened with `create_new`).
fn getrandom(out: &mut [u8]) {
    use std::hash::{BuildHasher, Hasher};
    for chunk in out.chunks_mut(8) {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
        );
        hasher.write_u32(std::process::id());
        let value = hasher.finish().to_le_bytes();
        chunk.copy_from_slice(&value[..chunk.len()]);
    }
}

impl Ocr for TesseractOcr {
    fn read(&self, picture: &[u8]) -> Result<String, OcrError> {
        let input = temp_file(picture).map_err(|e| OcrError::Failed(format!("writing the picture: {e}")))?;
        let mut child = Command::new(&self.program)
            .arg(&input.0)
            .arg("-")
            .arg("-l")
            .arg(&self.languages)
            .env("OMP_THREAD_LIMIT", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| OcrError::Unavailable(format!("{}: {e}", self.program.display())))?;
        // The pipes are drained while the program runs, so that it never blocks on them.
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let out = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = (&mut stdout).take(MAX_TEXT as u64).read_to_end(&mut text);
            let _ = std::io::copy(&mut stdout, &mut std::io::sink());
            text
        });
        let err = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = (&mut stderr).take(4096).read_to_end(&mut text);
            let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            text
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(OcrError::TimedOut { seconds: self.timeout.as_secs() });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(OcrError::Failed(e.to_string())),
            }
        };
        let text = out.join().unwrap_or_default();
        let errors = String::from_utf8_lossy(&err.join().unwrap_or_default()).trim().to_owned();
        if !status.success() {
            // A missing language pack is the operator's to install, not this picture's fault.
            if errors.contains("Failed loading language") || errors.contains("Could not initialize tesseract") {
                return Err(OcrError::Unavailable(errors));
            }
            return Err(OcrError::Failed(if errors.is_empty() { status.to_string() } else { errors }));
        }
        Ok(String::from_utf8_lossy(&text).replace('\u{c}', "").trim().to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_program_is_unavailable() {
        let ocr = TesseractOcr::new("/nonexistent/tesseract", "eng", DEFAULT_TIMEOUT);
        assert!(matches!(ocr.read(b"\x89PNG\r\n\x1a\n"), Err(OcrError::Unavailable(_))));
    }

    #[test]
    fn languages_are_kept_to_tesseracts_form() {
        assert_eq!(TesseractOcr::new("t", "eng+deu", DEFAULT_TIMEOUT).languages(), "eng+deu");
        assert_eq!(TesseractOcr::new("t", "eng; rm -rf /", DEFAULT_TIMEOUT).languages(), "engrmrf");
        assert_eq!(TesseractOcr::new("t", "", DEFAULT_TIMEOUT).languages(), "eng");
    }

    #[cfg(unix)]
    #[test]
    fn a_program_that_runs_too_long_is_stopped() {
        // `sleep` takes the picture's path as an argument it cannot read: it is the program
        // that outlives its time, not the picture.
        let dir = std::env::temp_dir().join(format!("redline-ocr-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let script = dir.join("slow-ocr");
        std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").expect("script");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let ocr = TesseractOcr::new(&script, "eng", Duration::from_millis(200));
        assert_eq!(ocr.read(b"x"), Err(OcrError::TimedOut { seconds: 0 }));
        std::fs::remove_dir_all(&dir).ok();
    }
}
