#![no_main]
//! `Converters::convert(SourceFormat::Txt, bytes)`, then the sectioner on its HTML.

use libfuzzer_sys::fuzz_target;
use redline_domain::formats::SourceFormat;

fuzz_target!(|bytes: &[u8]| redline_fuzz::convert(SourceFormat::Txt, bytes));
