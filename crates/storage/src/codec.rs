//! How stored values are compressed: document chunks (`chunks.rs`) and finished jobs
//! (`jobs/archive.rs`). A stored value starts with a byte that names its codec, so a reader
//! reads whatever any build wrote, and a value that would not get smaller is kept as it is.

/// The first byte of a stored value: how the rest is kept.
const RAW: u8 = 0;
const LZ4: u8 = 1;
/// Deflate alone: what builds before [`DEFLATE_ARCHIVE`] wrote; still read.
const DEFLATE: u8 = 2;
/// Deflate over the preset dictionary [`ARCHIVE_DICTIONARY`].
const DEFLATE_ARCHIVE: u8 = 3;

/// The preset dictionary of [`DEFLATE_ARCHIVE`]: the JSON of three finished chat jobs' archives
/// (a reviewed edit, a question, an edit) with their texts and ids blanked, so that the keys,
/// event kinds and status words every archive repeats cost a back-reference instead of their
/// letters (a one-word edit turn's archive: 830 bytes with deflate alone, 320 with it; see
/// docs/benchmarks.md, "Soak"). Values written with it are read only with it: it never
/// changes, and a new dictionary takes a new codec byte (`the_archive_dictionary_never_changes`).
const ARCHIVE_DICTIONARY: &[u8] = include_bytes!("jobs/archive.dict");

/// How [`pack`] compresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    /// LZ4: hundreds of MB/s each way, for what every save writes (document chunks).
    Fast,
    /// Deflate over a dictionary of job archives' JSON: about half LZ4's size on JSON, and
    /// less again on a job's archive, for what is written once (finished jobs).
    Dense,
}

/// A value as stored: compressed when that makes it smaller, else as it is, behind a byte
/// that says which ([`unpack`] reads every kind, whichever codec wrote it).
pub(crate) fn pack(bytes: &[u8], codec: Codec) -> Vec<u8> {
    let (tag, compressed) = match codec {
        Codec::Fast => (LZ4, lz4_flex::compress_prepend_size(bytes)),
        // A dictionary the compressor refuses (it never does) leaves the value raw.
        Codec::Dense => (DEFLATE_ARCHIVE, deflate(bytes, ARCHIVE_DICTIONARY).unwrap_or_default()),
    };
    let mut out = Vec::with_capacity(1 + compressed.len().min(bytes.len()));
    if !compressed.is_empty() && compressed.len() < bytes.len() {
        out.push(tag);
        out.extend_from_slice(&compressed);
    } else {
        out.push(RAW);
        out.extend_from_slice(bytes);
    }
    out
}

/// A stored value's bytes, or why they cannot be read.
pub(crate) fn unpack(stored: &[u8]) -> Result<Vec<u8>, String> {
    match stored.split_first() {
        Some((&RAW, rest)) => Ok(rest.to_vec()),
        Some((&LZ4, rest)) => lz4_flex::decompress_size_prepended(rest).map_err(|e| format!("corrupt value: {e}")),
        Some((&DEFLATE, rest)) => {
            use std::io::Read;
            let mut out = Vec::with_capacity(rest.len() * 3);
            flate2::read::DeflateDecoder::new(rest).read_to_end(&mut out).map_err(|e| format!("corrupt value: {e}"))?;
            Ok(out)
        }
        Some((&DEFLATE_ARCHIVE, rest)) => inflate(rest, ARCHIVE_DICTIONARY),
        Some((codec, _)) => Err(format!("value stored with unknown codec {codec}")),
        None => Err("empty stored value".to_owned()),
    }
}

/// Raw deflate (level 6) of `bytes` over the preset `dictionary`.
fn deflate(bytes: &[u8], dictionary: &[u8]) -> Option<Vec<u8>> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    let mut c = Compress::new(Compression::new(6), false);
    c.set_dictionary(dictionary).ok()?;
    let mut out = Vec::with_capacity(bytes.len() / 2 + 64);
    loop {
        let (read, wrote) = (c.total_in(), c.total_out());
        let at = usize::try_from(read).ok()?;
        match c.compress_vec(&bytes[at..], &mut out, FlushCompress::Finish).ok()? {
            Status::StreamEnd => return Some(out),
            _ if out.len() == out.capacity() => out.reserve(out.capacity().max(64)),
            // Room to write, and neither read nor written: it would never end.
            _ if c.total_in() == read && c.total_out() == wrote => return None,
            _ => {}
        }
    }
}

/// What [`deflate`] made of a value over the same `dictionary`.
fn inflate(stored: &[u8], dictionary: &[u8]) -> Result<Vec<u8>, String> {
    use flate2::{Decompress, FlushDecompress, Status};
    let corrupt = |e: &dyn std::fmt::Display| format!("corrupt value: {e}");
    let mut d = Decompress::new(false);
    d.set_dictionary(dictionary).map_err(|e| corrupt(&e))?;
    let mut out = Vec::with_capacity(stored.len() * 4 + 64);
    loop {
        let (read, wrote) = (d.total_in(), d.total_out());
        let at = usize::try_from(read).map_err(|e| corrupt(&e))?;
        let status = d.decompress_vec(&stored[at..], &mut out, FlushDecompress::Finish).map_err(|e| corrupt(&e))?;
        match status {
            Status::StreamEnd => return Ok(out),
            _ if out.len() == out.capacity() => out.reserve(out.capacity()),
            // Room to write and nothing read or written: the value ends before its stream.
            _ if d.total_in() == read && d.total_out() == wrote => return Err(corrupt(&"it ends early")),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn html() -> String {
        (0..30)
            .map(|i| format!("<p data-chunk-id=\"c{i}\">Paragraph {i} of the notice, signed within thirty days.</p>"))
            .collect()
    }

    #[test]
    fn packed_values_unpack_to_themselves() {
        for codec in [Codec::Fast, Codec::Dense] {
            for chunk in [&b""[..], b"x", html().as_bytes(), &[7u8; 5000][..]] {
                let packed = pack(chunk, codec);
                assert_eq!(unpack(&packed).unwrap(), chunk, "{codec:?}");
            }
            assert!(pack(html().as_bytes(), codec).len() < html().len() / 2, "HTML compresses");
        }
        let doc = html();
        assert!(pack(doc.as_bytes(), Codec::Dense).len() < pack(doc.as_bytes(), Codec::Fast).len(), "denser");
        assert!(unpack(&[9, 1, 2]).is_err());
        assert!(unpack(&[]).is_err());
        let packed = pack(doc.as_bytes(), Codec::Dense);
        assert!(unpack(&packed[..packed.len() / 2]).is_err(), "a value cut short is refused");
    }

    #[test]
    fn values_of_earlier_builds_still_read() {
        use std::io::Write;
        let mut e = flate2::write::DeflateEncoder::new(vec![DEFLATE], flate2::Compression::new(6));
        e.write_all(html().as_bytes()).unwrap();
        assert_eq!(unpack(&e.finish().unwrap()).unwrap(), html().as_bytes());
    }

    /// A job archive (a one-word edit turn, as `jobs/archive.rs` writes it) takes well under
    /// half the bytes with the dictionary than with deflate alone.
    #[test]
    fn the_dictionary_shrinks_a_job_archive() {
        let archive = include_bytes!("../tests/fixtures/edit-turn-archive.json");
        let alone = {
            use std::io::Write;
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
            e.write_all(archive).unwrap();
            e.finish().unwrap()
        };
        let packed = pack(archive, Codec::Dense);
        assert_eq!(unpack(&packed).unwrap(), archive);
        assert!(packed.len() * 2 < alone.len(), "{} bytes with the dictionary, {} without", packed.len(), alone.len());
    }

    #[test]
    fn the_archive_dictionary_never_changes() {
        use sha2::Digest;
        let digest = hex::encode(sha2::Sha256::digest(ARCHIVE_DICTIONARY));
        assert_eq!(
            digest, "4b67932ece19fd95106839b75d4fcd828b8c071d34d759913004430d68224d9d",
            "values written with DEFLATE_ARCHIVE read only with this dictionary"
        );
    }
}
