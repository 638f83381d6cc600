//! How stored values are compressed: document chunks (`chunks.rs`) and finished jobs
//! (`jobs/archive.rs`). A stored value starts with a byte that names its codec, so a reader
//! reads whatever any build wrote, and a value that would not get smaller is kept as it is.

/// The first byte of a stored value: how the rest is kept.
const RAW: u8 = 0;
const LZ4: u8 = 1;
const DEFLATE: u8 = 2;

/// How [`pack`] compresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codec {
    /// LZ4: hundreds of MB/s each way, for what every save writes (document chunks).
    Fast,
    /// Deflate: about half LZ4's size on JSON, for what is written once (finished jobs).
    Dense,
}

/// A value as stored: compressed when that makes it smaller, else as it is, behind a byte
/// that says which ([`unpack`] reads every kind, whichever codec wrote it).
pub(crate) fn pack(bytes: &[u8], codec: Codec) -> Vec<u8> {
    let (tag, compressed) = match codec {
        Codec::Fast => (LZ4, lz4_flex::compress_prepend_size(bytes)),
        Codec::Dense => {
            use std::io::Write;
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(6));
            // Writing into a Vec cannot fail.
            let compressed = e.write_all(bytes).and_then(|()| e.finish()).unwrap_or_default();
            (DEFLATE, compressed)
        }
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
        Some((codec, _)) => Err(format!("value stored with unknown codec {codec}")),
        None => Err("empty stored value".to_owned()),
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
    }
}
