//! How a version's HTML is stored: cut into content-defined chunks, each kept once per
//! session under its hash and compressed; a version is the list of its chunks' hashes (its
//! manifest). A save that changes one word stores the one chunk that holds it and a new
//! manifest; the chunks before and after it are cut at the same places as before (a cut
//! depends on the 64 bytes before it, not on where the document starts) and are there already.
//!
//! The cuts follow a gear hash (FastCDC's rolling hash): a cut falls after a byte where the
//! hash's top bits are all zero, no sooner than `min` and no later than `max` bytes into the
//! chunk. Chunk sizes grow with the document ([`Sizes::for_len`]), so that a version has at
//! most 256 chunks up to 32 MiB and at most one per 256 KiB beyond: reading any
//! version is one manifest and that many chunk rows, whatever its history.
//!
//! The cut points are not part of any stored format: a chunk is found by its hash, so a
//! build that cut differently reads every version written before it (it only stores more).

use sha2::{Digest, Sha256};

/// Bytes of a chunk's hash (SHA-256, truncated): 128 bits, within one session.
pub(crate) const HASH_LEN: usize = 16;

/// A chunk's hash.
pub(crate) type Hash = [u8; HASH_LEN];

/// The chunks a version of up to 32 MiB has at most: every chunk but the last is at least
/// `min` bytes, and `min` is at least a 256th of the document's length.
#[cfg(test)]
const MAX_CHUNKS: usize = 256;

/// Chunk sizes for a document: a cut falls between `min` and `max` bytes into a chunk, after
/// about `avg` bytes past `min` on average.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sizes {
    min: usize,
    avg: usize,
    max: usize,
}

impl Sizes {
    /// The smallest average chunk: a one-word change stores about this much.
    const AVG_FLOOR: usize = 512;
    /// The largest average chunk.
    const AVG_CEIL: usize = 1 << 20;

    /// Sizes for a document of `len` bytes: an average of about a 32nd of it (a power of
    /// two, between 512 bytes and 1 MiB), `min` a quarter of that and `max` four times.
    /// Powers of two keep the sizes of a document the same from one save to the next unless
    /// its length doubles or halves.
    pub(crate) fn for_len(len: usize) -> Self {
        let target = (len / 32).max(1);
        // The power of two at or below the target.
        let avg = (1usize << (usize::BITS - 1 - target.leading_zeros())).clamp(Self::AVG_FLOOR, Self::AVG_CEIL);
        Self { min: avg / 4, avg, max: avg * 4 }
    }
}

/// The gear hash's table: a fixed pseudo-random value for each byte (splitmix64 from a fixed
/// seed, so every build cuts alike).
const GEAR: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut state: u64 = 0x5265_646c_696e_6521;
    let mut i = 0;
    while i < 256 {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        table[i] = z ^ (z >> 31);
        i += 1;
    }
    table
};

/// The length of the chunk that starts `data`.
fn cut(data: &[u8], sizes: Sizes) -> usize {
    if data.len() <= sizes.min {
        return data.len();
    }
    let end = data.len().min(sizes.max);
    // A cut where the hash's top log2(avg) bits are zero: about one byte in `avg`.
    let bits = sizes.avg.trailing_zeros();
    let shift = u64::BITS - bits;
    // The hash of a byte depends on the 64 bytes up to it: start that far before `min` so a
    // cut depends on the bytes before it only.
    let mut h: u64 = 0;
    for (i, &b) in data.iter().enumerate().take(end).skip(sizes.min.saturating_sub(64)) {
        h = (h << 1).wrapping_add(GEAR[usize::from(b)]);
        if i >= sizes.min && h >> shift == 0 {
            return i + 1;
        }
    }
    end
}

/// The chunks of `data`, in order.
pub(crate) fn split(data: &[u8]) -> Vec<&[u8]> {
    let sizes = Sizes::for_len(data.len());
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let n = cut(rest, sizes);
        let (chunk, tail) = rest.split_at(n);
        out.push(chunk);
        rest = tail;
    }
    out
}

/// A chunk's hash.
pub(crate) fn hash(chunk: &[u8]) -> Hash {
    let digest = Sha256::digest(chunk);
    let mut h = [0u8; HASH_LEN];
    h.copy_from_slice(&digest[..HASH_LEN]);
    h
}

/// A manifest: its chunks' hashes, one after the other.
pub(crate) fn manifest(hashes: &[Hash]) -> Vec<u8> {
    hashes.concat()
}

/// The hashes a manifest lists, or `None` when its length is not a whole number of them.
pub(crate) fn hashes(manifest: &[u8]) -> Option<Vec<Hash>> {
    if !manifest.len().is_multiple_of(HASH_LEN) {
        return None;
    }
    Some(manifest.chunks_exact(HASH_LEN).map(|c| c.try_into().unwrap_or([0; HASH_LEN])).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Paragraphs of words drawn from a fixed list (varied like prose, the same every run).
    fn document(paragraphs: usize) -> String {
        const WORDS: [&str; 16] = [
            "river", "contract", "the", "of", "signed", "between", "parties", "notice", "within", "thirty", "days",
            "shall", "a", "written", "term", "and",
        ];
        let mut seed: u64 = 7;
        (0..paragraphs)
            .map(|i| {
                let words: Vec<&str> = (0..10)
                    .map(|_| {
                        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                        WORDS[(seed >> 60) as usize]
                    })
                    .collect();
                format!("<p data-chunk-id=\"c{i}\">{}, number {i}.</p>", words.join(" "))
            })
            .collect()
    }

    #[test]
    fn chunks_put_back_together_are_the_document() {
        for n in [0, 1, 5, 40, 2000] {
            let doc = document(n);
            assert_eq!(split(doc.as_bytes()).concat(), doc.as_bytes(), "{n} paragraphs");
        }
    }

    #[test]
    fn a_one_word_change_leaves_all_but_one_or_two_chunks_as_they_were() {
        let before = document(80);
        let after = before.replacen("number 41.", "number 41!", 1);
        let old: std::collections::HashSet<Hash> = split(before.as_bytes()).into_iter().map(hash).collect();
        let new: Vec<&[u8]> = split(after.as_bytes()).into_iter().filter(|c| !old.contains(&hash(c))).collect();
        assert!(split(before.as_bytes()).len() >= 8, "a 6 KB document is cut into several chunks");
        assert!((1..=2).contains(&new.len()), "new chunks: {}", new.len());
        let new_bytes: usize = new.iter().map(|c| c.len()).sum();
        assert!(new_bytes <= 2 * 4 * Sizes::AVG_FLOOR, "new bytes: {new_bytes}");
    }

    #[test]
    fn chunks_stay_within_their_sizes_and_their_number_is_bounded() {
        for len in [100, 5_000, 100_000, 3_000_000] {
            let doc: Vec<u8> = document(len / 60 + 1).into_bytes();
            let sizes = Sizes::for_len(doc.len());
            let chunks = split(&doc);
            assert!(chunks.iter().all(|c| c.len() <= sizes.max), "{len}");
            assert!(chunks[..chunks.len() - 1].iter().all(|c| c.len() >= sizes.min), "{len}");
            assert!(chunks.len() <= MAX_CHUNKS, "{len}: {} chunks", chunks.len());
        }
    }

    #[test]
    fn sizes_follow_the_length_in_powers_of_two() {
        assert_eq!(Sizes::for_len(0), Sizes { min: 128, avg: 512, max: 2048 });
        assert_eq!(Sizes::for_len(40_000), Sizes { min: 256, avg: 1024, max: 4096 });
        assert_eq!(Sizes::for_len(1 << 40).avg, 1 << 20);
    }

    #[test]
    fn a_manifest_lists_its_hashes_back() {
        let hs = vec![hash(b"a"), hash(b"b"), hash(b"a")];
        assert_eq!(hashes(&manifest(&hs)), Some(hs));
        assert_eq!(hashes(&[1, 2, 3]), None);
    }
}
