#![no_main]
//! The HTML sanitizer and sectioner (`Html5everSections::sectionize`) on arbitrary text.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Ok(html) = std::str::from_utf8(bytes) {
        redline_fuzz::sectionize(html);
    }
});
