#![no_main]
//! Sectioning in slices gives the sections of the whole document, on arbitrary text: the
//! first byte picks the slice size (1–256 bytes, so that inputs of any length are cut).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Some((&size, rest)) = bytes.split_first() else { return };
    if let Ok(html) = std::str::from_utf8(rest) {
        redline_fuzz::slices_agree(html, usize::from(size) + 1);
    }
});
