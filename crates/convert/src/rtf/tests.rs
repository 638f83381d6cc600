use std::path::PathBuf;

use proptest::prelude::*;
use redline_ports::documents::ConvertError;

use super::*;

fn html(rtf: &str) -> String {
    convert(rtf.as_bytes()).expect("the RTF converts").html
}

#[test]
fn not_rtf_is_corrupt() {
    for bytes in [&b"hello"[..], b"{\\rtx1 hi}", b"\\rtf1 hi", b"{rtf1}"] {
        let err = convert(bytes).unwrap_err();
        assert!(matches!(err, ConvertError::Corrupt { ref format, .. } if format == "RTF"), "{err:?}");
    }
}

#[test]
fn a_bom_and_leading_whitespace_are_allowed() {
    assert_eq!(html("\u{FEFF}\r\n {\\rtf1 Hi\\par}"), "<p>Hi</p>\n");
}

#[test]
fn paragraphs_end_with_par() {
    assert_eq!(html("{\\rtf1\\ansi Hello\\par World\\par}"), "<p>Hello</p>\n<p>World</p>\n");
    // The last paragraph needs no \par; empty paragraphs vanish; line ends are not text.
    assert_eq!(html("{\\rtf1 One\\par\\par\r\nTw\r\no}"), "<p>One</p>\n<p>Two</p>\n");
}

#[test]
fn a_document_without_text_has_no_text() {
    assert!(matches!(convert(b"{\\rtf1{\\fonttbl{\\f0 Arial;}}\\par}").unwrap_err(), ConvertError::NoText(_)));
}

#[test]
fn bold_italic_underline_and_their_zero_forms() {
    assert_eq!(
        html("{\\rtf1 a \\b bold\\b0  \\i it\\i0  \\ul under\\ul0  \\ul again\\ulnone  \\strike gone\\strike0  z}"),
        "<p>a <strong>bold</strong> <em>it</em> <u>under</u> <u>again</u> <s>gone</s> z</p>\n"
    );
    // Groups restore the formatting.
    assert_eq!(html("{\\rtf1 {\\b\\i both} plain}"), "<p><strong><em>both</em></strong> plain</p>\n");
    // \plain resets it.
    assert_eq!(html("{\\rtf1 \\b x\\plain  y}"), "<p><strong>x</strong> y</p>\n");
}

#[test]
fn tags_change_only_where_the_formatting_does() {
    assert_eq!(html("{\\rtf1 \\b bold \\i both\\i0  bold}"), "<p><strong>bold <em>both</em> bold</strong></p>\n");
}

#[test]
fn superscript_and_subscript() {
    assert_eq!(html("{\\rtf1 x{\\super 2} H{\\sub 2}O}"), "<p>x<sup>2</sup> H<sub>2</sub>O</p>\n");
}

#[test]
fn colours_and_highlights_come_from_the_colour_table() {
    let rtf = "{\\rtf1{\\colortbl;\\red255\\green0\\blue0;\\red0\\green0\\blue255;\\red255\\green255\\blue0;}\
               \\cf1 red\\cf0  plain \\highlight3 marked\\highlight0  \\cb2 blue\\cb0 \\par}";
    assert_eq!(
        html(rtf),
        "<p><span style=\"color: #ff0000\">red</span> plain <span style=\"background-color: #ffff00\">marked</span> \
         <span style=\"background-color: #0000ff\">blue</span></p>\n"
    );
}

#[test]
fn colours_out_of_the_table_are_ignored() {
    assert_eq!(html("{\\rtf1{\\colortbl;\\red1\\green2\\blue3;}\\cf9 x\\cf-1 y}"), "<p>xy</p>\n");
    assert_eq!(
        html("{\\rtf1{\\colortbl;\\red1\\green2\\blue3;}\\cf1 x}"),
        "<p><span style=\"color: #010203\">x</span></p>\n"
    );
}

#[test]
fn unicode_escapes_skip_their_fallback() {
    assert_eq!(html("{\\rtf1 \\u8364?5}"), "<p>€5</p>\n");
    // \uc2: two fallback bytes; a negative N is N + 65536 (U+FF21).
    assert_eq!(html("{\\rtf1\\uc2 \\u-223\\'82\\'60A}"), "<p>ＡA</p>\n");
    // \uc0: no fallback.
    assert_eq!(html("{\\rtf1\\uc0 \\u233 t\\u233 }"), "<p>été</p>\n");
    // A surrogate pair.
    assert_eq!(html("{\\rtf1 \\u-10179?\\u-8704?!}"), "<p>😀!</p>\n");
    // The skip count ends with the group.
    assert_eq!(html("{\\rtf1 {\\uc3 \\u946 ab}cd}"), "<p>βcd</p>\n");
}

#[test]
fn hex_escapes_use_the_code_page() {
    assert_eq!(html("{\\rtf1\\ansi\\ansicpg1252 \\'e9t\\'e9 \\'80 \\'93q\\'94}"), "<p>été € “q”</p>\n");
    assert_eq!(html("{\\rtf1\\ansi\\ansicpg1251 \\'cf\\'f0\\'e8\\'e2\\'e5\\'f2}"), "<p>Привет</p>\n");
    assert_eq!(html("{\\rtf1\\ansi\\ansicpg932 \\'82\\'a0\\'82\\'a2}"), "<p>あい</p>\n");
    // A double-byte character whose trail byte is written as plain text.
    assert_eq!(html("{\\rtf1\\ansi\\ansicpg932 \\'83A}"), "<p>ア</p>\n");
}

#[test]
fn a_fonts_charset_sets_its_code_page() {
    let rtf = "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0\\fswiss Arial;}{\\f1\\fcharset128 MS Mincho;}}\
               \\f0 caf\\'e9 \\f1 \\'82\\'a0}";
    assert_eq!(html(rtf), "<p>café あ</p>\n");
}

#[test]
fn destinations_without_body_text_are_skipped() {
    let rtf = "{\\rtf1{\\fonttbl{\\f0 Times;}}{\\stylesheet{\\s0 Normal;}}{\\info{\\title T}{\\author A}}\
               {\\*\\generator Word;}{\\header head}{\\footer foot}{\\*\\unknown x}{\\*\\bkmkstart b}\
               {\\field{\\*\\fldinst PAGE}{\\fldrslt 1}}Body\\par}";
    assert_eq!(html(rtf), "<p>1Body</p>\n");
}

#[test]
fn a_picture_of_no_known_format_is_a_note_with_a_warning() {
    let converted =
        convert(b"{\\rtf1 before{\\pict\\pngblip\\picw10 89504e470d0a1a0a}{\\*\\shppict{\\pict 00}}after}").unwrap();
    assert_eq!(converted.html, "<p>before<img src=\"redline-image:0\" alt=\"\">[picture not shown]after</p>\n");
    assert_eq!(converted.warnings, ["a picture of an unknown format was kept as a note in its place"]);
}

#[test]
fn binary_data_is_skipped() {
    // The four bytes after `\bin4 ` are `}{\}`: the picture's group goes on after them.
    assert_eq!(html("{\\rtf1 a{\\*\\objdata\\bin4 }{\\}}b}"), "<p>ab</p>\n");
    assert_eq!(html("{\\rtf1 a\\bin3 xyzb}"), "<p>ab</p>\n");
}

#[test]
fn line_breaks_tabs_and_special_characters() {
    assert_eq!(
        html("{\\rtf1 a\\line b\\tab c\\~d\\emdash e\\endash f\\lquote g\\rquote\\ldblquote h\\rdblquote\\bullet}"),
        "<p>a<br>b\tc\u{A0}d—e–f‘g’“h”•</p>\n"
    );
    assert_eq!(html("{\\rtf1 \\{braces\\} and \\\\ backslash}"), "<p>{braces} and \\ backslash</p>\n");
}

#[test]
fn text_is_escaped() {
    assert_eq!(html("{\\rtf1 <script>&\"'}"), "<p>&lt;script&gt;&amp;&quot;&#39;</p>\n");
}

#[test]
fn hidden_text_is_left_out() {
    assert_eq!(html("{\\rtf1 shown {\\v hidden} shown\\v  gone\\v0  back}"), "<p>shown  shown back</p>\n");
}

#[test]
fn outline_levels_make_headings() {
    assert_eq!(
        html("{\\rtf1 {\\pard\\outlinelevel0 Title\\par}{\\pard\\outlinelevel1 Part\\par}\\pard Body\\par}"),
        "<h1>Title</h1>\n<h2>Part</h2>\n<p>Body</p>\n"
    );
}

#[test]
fn hyperlinks_from_fields() {
    let rtf =
        "{\\rtf1 see {\\field{\\*\\fldinst{ HYPERLINK \"https://example.com/a?b=1&c=2\" }}{\\fldrslt{\\ul site}}} now}";
    assert_eq!(html(rtf), "<p>see <a href=\"https://example.com/a?b=1&amp;c=2\"><u>site</u></a> now</p>\n");
    // Links to bookmarks are not links.
    assert_eq!(html("{\\rtf1 {\\field{\\*\\fldinst HYPERLINK \\\\l \"x\"}{\\fldrslt here}}}"), "<p>here</p>\n");
}

#[test]
fn tables() {
    let rtf = "{\\rtf1 Before\\par\\trowd\\cellx1000\\cellx2000\\pard\\intbl A\\cell B\\par B2\\cell\\row\
               \\trowd\\cellx1000\\cellx2000\\pard\\intbl C\\cell\\cell\\row\\pard After\\par}";
    assert_eq!(
        html(rtf),
        "<p>Before</p>\n<table>\n<tr><td>A</td><td>B<br>B2</td></tr>\n<tr><td>C</td><td></td></tr>\n</table>\n\
         <p>After</p>\n"
    );
}

#[test]
fn a_table_at_the_end_is_closed() {
    assert_eq!(html("{\\rtf1\\trowd\\intbl A\\cell B"), "<table>\n<tr><td>A</td><td>B</td></tr>\n</table>\n");
}

#[test]
fn nested_tables_are_flattened_into_their_cell() {
    let rtf = "{\\rtf1\\trowd\\cellx5000\\pard\\intbl\\itap2 Deep A\\nestcell Deep B\\nestcell\
               {\\*\\nesttableprops\\trowd\\cellx2000\\nestrow}{\\nonesttables FALLBACK\\par}\
               \\pard\\intbl\\itap1 Outer\\cell\\row\\pard\\itap0 Outside\\par}";
    assert_eq!(html(rtf), "<table>\n<tr><td>Deep A<br>Deep B<br>Outer</td></tr>\n</table>\n<p>Outside</p>\n");
}

#[test]
fn footnotes_are_dpub_aria_notes() {
    let rtf = "{\\rtf1 Text{\\super\\chftn}{\\footnote\\pard{\\super\\chftn} The note.\\par Its second paragraph.}, more.\\par}";
    assert_eq!(
        html(rtf),
        "<p>Text<a href=\"#fn1\" id=\"fnref1\" role=\"doc-noteref\"><sup>1</sup></a>, more.</p>\n\
         <section role=\"doc-endnotes\"><ol>\n<li id=\"fn1\"><p> The note.</p>\n<p>Its second paragraph.</p></li>\n</ol></section>\n"
    );
    // A note without `\\chftn` is referenced where its group is; a custom mark stays text;
    // notes are numbered in order, in a table cell too.
    let rtf = "{\\rtf1 One*{\\footnote\\pard * Starred.}; two{\\b\\chftn}{\\footnote\\pard {\\chftn}Second.}\\par\
               \\trowd\\cellx3000\\pard\\intbl Cell{\\footnote\\pard Third \\b bold\\b0 .}\\cell\\row\\pard After\\par}";
    let got = html(rtf);
    assert!(got.starts_with("<p>One*<a href=\"#fn1\" id=\"fnref1\" role=\"doc-noteref\"><sup>1</sup></a>; two<a href=\"#fn2\" id=\"fnref2\""), "{got}");
    assert!(got.contains("<td>Cell<a href=\"#fn3\" id=\"fnref3\" role=\"doc-noteref\"><sup>3</sup></a></td>"), "{got}");
    assert!(got.ends_with("<li id=\"fn1\"><p>* Starred.</p></li>\n<li id=\"fn2\"><p>Second.</p></li>\n<li id=\"fn3\"><p>Third <strong>bold</strong>.</p></li>\n</ol></section>\n"), "{got}");
    assert_eq!(got.matches("doc-noteref").count(), 3, "{got}");
    // The corpus's pandoc sample: two notes, referenced where `\\chftn` is.
    let sample =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/corpus/rtf/pandoc-footnote.rtf"))
            .expect("corpus file");
    let got = String::from_utf8(convert(&sample).expect("converts").html.into_bytes()).expect("utf-8");
    assert!(got.contains("annotated.<a href=\"#fn1\" id=\"fnref1\" role=\"doc-noteref\"><sup>1</sup></a>"), "{got}");
    assert!(got.contains("noted,<a href=\"#fn2\""), "{got}");
    assert!(got.contains("<li id=\"fn1\"><p>See Sahlins"), "{got}");
    assert!(got.contains("<li id=\"fn2\"><p>"), "{got}");
}

#[test]
fn deep_nesting_is_refused() {
    let mut rtf = String::from("{\\rtf1 ");
    rtf.push_str(&"{".repeat(MAX_DEPTH + 1));
    rtf.push('x');
    assert!(matches!(convert(rtf.as_bytes()).unwrap_err(), ConvertError::TooComplex(_)));
    // Just under the cap is fine.
    let mut rtf = String::from("{\\rtf1 ");
    rtf.push_str(&"{".repeat(MAX_DEPTH - 1));
    rtf.push('x');
    rtf.push_str(&"}".repeat(MAX_DEPTH));
    assert_eq!(html(&rtf), "<p>x</p>\n");
}

#[test]
fn unbalanced_and_truncated_input_is_read_as_far_as_it_goes() {
    assert_eq!(html("{\\rtf1 {\\b open"), "<p><strong>open</strong></p>\n");
    assert_eq!(html("{\\rtf1 a}} trailing text"), "<p>a</p>\n");
    assert_eq!(html("{\\rtf1 a\\'4"), "<p>a4</p>\n");
    assert_eq!(html("{\\rtf1 a\\"), "<p>a</p>\n");
}

#[test]
fn large_parameters_do_not_overflow() {
    let out = html("{\\rtf1\\uc99999999999 \\u99999999999 x\\cf-99999999999 y\\bin99999999999}");
    assert!(out.contains('\u{FFFD}'), "{out}");
}

#[test]
fn output_stays_a_small_multiple_of_the_input() {
    let mut rtf = String::from("{\\rtf1{\\colortbl;\\red1\\green2\\blue3;\\red4\\green5\\blue6;}");
    for _ in 0..10_000 {
        rtf.push_str("\\cf1\\b\\i\\ul a\\cf2 b\\line\\cell\\row");
    }
    let out = html(&rtf);
    assert!(out.len() < rtf.len() * 12, "{} bytes from {}", out.len(), rtf.len());
}

/// RTF-like fragments for the token soup.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("\\par ".to_owned()),
        Just("\\pard".to_owned()),
        Just("\\*".to_owned()),
        Just("\\cell ".to_owned()),
        Just("\\row ".to_owned()),
        Just("\\intbl ".to_owned()),
        Just("\\nestcell ".to_owned()),
        Just("{\\footnote ".to_owned()),
        Just("{\\field{\\*\\fldinst HYPERLINK \"http://x\"}{\\fldrslt ".to_owned()),
        Just("{\\colortbl;\\red9\\green8\\blue7;".to_owned()),
        Just("{\\fonttbl{\\f1\\fcharset128 X;}".to_owned()),
        Just("\\f1 ".to_owned()),
        Just("\\'".to_owned()),
        Just("\\bin".to_owned()),
        Just("\\\\".to_owned()),
        Just(";".to_owned()),
        "\\\\[a-z]{1,8}-?[0-9]{0,12} ?",
        "\\\\'[0-9a-fA-F]{0,2}",
        "\\\\u-?[0-9]{1,6}",
        "[ -~]{0,8}",
        any::<char>().prop_map(|c| c.to_string()),
    ]
}

proptest! {
    #[test]
    fn random_bytes_never_panic(mut bytes in proptest::collection::vec(any::<u8>(), 0..512), rtf_header in any::<bool>()) {
        if rtf_header {
            let mut with = b"{\\rtf1 ".to_vec();
            with.append(&mut bytes);
            bytes = with;
        }
        let _ = convert(&bytes);
    }

    #[test]
    fn rtf_token_soup_never_panics(parts in proptest::collection::vec(fragment(), 0..200)) {
        let rtf = format!("{{\\rtf1 {}", parts.concat());
        if let Ok(converted) = convert(rtf.as_bytes()) {
            prop_assert!(converted.html.len() <= rtf.len() * 40 + 64);
        }
    }
}

// ---------------------------------------------------------------------------------------
// The shared corpus.

/// `file → (features, notes)` from the corpus MANIFEST.tsv.
fn manifest() -> std::collections::HashMap<String, (Vec<String>, String)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus/MANIFEST.tsv");
    let text = std::fs::read_to_string(path).expect("the corpus MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let features = cols.get(5)?.split(',').filter(|f| !f.is_empty()).map(str::to_owned).collect();
            Some((cols[0].to_owned(), (features, cols.get(6).copied().unwrap_or("").to_owned())))
        })
        .collect()
}

#[test]
fn corpus_rtfs_convert() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus/rtf");
    assert!(dir.is_dir(), "no corpus at {}", dir.display());
    let manifest = manifest();
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("read the corpus").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut report = Vec::new();
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        let bytes = std::fs::read(&path).expect("read");
        let (features, _) = manifest.get(&format!("rtf/{name}")).cloned().unwrap_or_default();
        let has = |f: &str| features.iter().any(|x| x == f);
        let result = convert(&bytes);
        let ok = match &result {
            Err(ConvertError::Encrypted) => has("encrypted"),
            _ if has("broken") => true,
            Ok(c) => c.html.contains("</p>") || c.html.contains("</td>") || c.html.contains("</h"),
            Err(_) => false,
        };
        report.push(format!(
            "{} {name}: {}",
            if ok { "ok  " } else { "FAIL" },
            match &result {
                Ok(c) => format!("{} bytes of HTML, warnings {:?}", c.html.len(), c.warnings),
                Err(e) => format!("{e:?}"),
            }
        ));
    }
    let report = report.join("\n");
    eprintln!("{report}");
    assert!(!report.contains("FAIL"), "{report}");
}

#[test]
fn word_lists_nest_by_level_and_follow_their_markers() {
    let rtf = concat!(
        "{\\rtf1 Before\\par ",
        "{\\listtext\\pard\\plain 1.\\tab}\\pard\\ls1 One\\par ",
        "{\\listtext\\pard\\plain a.\\tab}\\pard\\ls1\\ilvl1 Nested\\par ",
        "{\\listtext\\pard\\plain 2.\\tab}\\pard\\ls1\\ilvl0 Two\\par ",
        "{\\listtext\\pard\\plain \\'b7\\tab}\\pard\\ls2 Bullet\\par ",
        "{\\listtext\\pard\\plain o\\tab}\\pard\\ls2 Courier bullet\\par ",
        "\\pard After\\par}"
    );
    assert_eq!(
        html(rtf),
        concat!(
            "<p>Before</p>\n",
            "<ol>\n<li>One<ol>\n<li>Nested</li>\n</ol>\n</li>\n<li>Two</li>\n</ol>\n",
            "<ul>\n<li>Bullet</li>\n<li>Courier bullet</li>\n</ul>\n",
            "<p>After</p>\n"
        )
    );
}

#[test]
fn old_style_numbering_and_markers_outside_lists() {
    // `\pntext` + `{\*\pn\pnlvlblt}`: a bullet item of Word 95 and older.
    let old = "{\\rtf1{\\pntext\\'b7\\tab}{\\*\\pn\\pnlvlblt{\\pntxtb\\'b7}}Old item\\par\\pard Text\\par}";
    assert_eq!(html(old), "<ul>\n<li>Old item</li>\n</ul>\n<p>Text</p>\n");
    // A marker on a heading or in a table stays text, as written.
    let heading = "{\\rtf1{\\listtext 1.\\tab}\\pard\\ls1\\outlinelevel0 Intro\\par}";
    assert_eq!(html(heading), "<h1>1.\tIntro</h1>\n");
    // A list runs until a table starts.
    let table = "{\\rtf1{\\listtext 1.\\tab}\\pard\\ls1 Item\\par\\pard\\intbl Cell\\cell\\row\\pard After\\par}";
    let out = html(table);
    assert!(out.starts_with("<ol>\n<li>Item</li>\n</ol>\n<table>"), "{out}");
}

#[test]
fn paragraph_styles_named_heading_become_headings() {
    let rtf = "{\\rtf1{\\stylesheet{\\s0 Normal;}{\\s1\\sbasedon0 Heading 1;}{\\s2 heading 2,h2;}\
               {\\s3 \\u220\\'dcberschrift 3;}{\\s4 Titre 4;}{\\s5 Text Body;}{\\*\\cs10 heading 1 Char;}}\
               \\pard\\s1 One\\par\\pard\\s2 Two\\par\\pard\\s3 Three\\par\\pard\\s4 Four\\par\\pard\\s5 Body\\par\
               \\pard\\s10 Char\\par\\pard Plain\\par}";
    assert_eq!(
        html(rtf),
        "<h1>One</h1>\n<h2>Two</h2>\n<h3>Three</h3>\n<h4>Four</h4>\n<p>Body</p>\n<p>Char</p>\n<p>Plain</p>\n"
    );
}

#[test]
fn a_paragraph_style_with_an_outline_level_is_a_heading() {
    let rtf = "{\\rtf1{\\stylesheet{\\s7\\outlinelevel1 Chapter title;}{\\s8\\outlinelevel9 Body;}}\
               \\pard\\plain\\s7 Up\\par\\pard\\s8 Down\\par}";
    assert_eq!(html(rtf), "<h2>Up</h2>\n<p>Down</p>\n");
    // A style's outline level inside the style sheet does not leak into the body.
    assert_eq!(html("{\\rtf1{\\stylesheet{\\s1\\outlinelevel0 x;}}Text\\par}"), "<p>Text</p>\n");
}

/// A picture's `\pict` group with its bytes in hex, as Word writes it.
fn pict(kind: &str, bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{{\\pict\\picw10\\pich10{kind}{{\\*\\blipuid 0123}}\r\n{}\r\n{}}}",
        &hex[..hex.len() / 2],
        &hex[hex.len() / 2..]
    )
}

#[test]
fn png_and_jpeg_pictures_are_kept_in_their_place() {
    let png = b"\x89PNG\r\n\x1a\n-fake-png".to_vec();
    let jpeg = b"\xFF\xD8\xFF\xE0-fake-jpeg".to_vec();
    let rtf = format!(
        "{{\\rtf1 Before {{\\*\\shppict{}}}{{\\nonshppict{}}} after\\par {}\\par}}",
        pict("\\pngblip", &png),
        pict("\\wmetafile8", b"wmf"),
        pict("\\jpegblip", &jpeg)
    );
    let converted = convert(rtf.as_bytes()).expect("converts");
    assert_eq!(
        converted.html,
        "<p>Before <img src=\"redline-image:0\" alt=\"\"> after</p>\n<p><img src=\"redline-image:1\" alt=\"\"></p>\n"
    );
    assert_eq!(converted.images.len(), 2);
    assert_eq!((converted.images[0].content_type.as_str(), &converted.images[0].bytes), ("image/png", &png));
    assert_eq!((converted.images[1].content_type.as_str(), &converted.images[1].bytes), ("image/jpeg", &jpeg));
    assert!(converted.warnings.is_empty(), "{:?}", converted.warnings);
}

#[test]
fn binary_picture_data_is_read_too() {
    let mut rtf = b"{\\rtf1 {\\pict\\pngblip\\bin12 ".to_vec();
    rtf.extend_from_slice(b"\x89PNG\r\n\x1a\n{}\\x");
    rtf.extend_from_slice(b"} after}");
    let converted = convert(&rtf).expect("converts");
    assert_eq!(converted.images[0].bytes, b"\x89PNG\r\n\x1a\n{}\\x");
    assert_eq!(converted.html, "<p><img src=\"redline-image:0\" alt=\"\"> after</p>\n");
}

#[test]
fn metafiles_and_false_pictures_keep_their_place_with_a_warning() {
    let rtf = format!(
        "{{\\rtf1 A {} B {} C\\par}}",
        pict("\\wmetafile8", b"\x01\x00\x09\x00"),
        pict("\\pngblip", b"not a png at all")
    );
    let converted = convert(rtf.as_bytes()).expect("converts");
    assert_eq!(converted.html, "<p>A [picture not shown] B [picture not shown] C</p>\n");
    assert!(converted.images.is_empty());
    assert_eq!(converted.warnings.len(), 2, "{:?}", converted.warnings);
    assert!(converted.warnings[0].contains("WMF"), "{:?}", converted.warnings);
}

#[test]
fn a_document_of_only_a_picture_converts() {
    let rtf = format!("{{\\rtf1 {}}}", pict("\\jpegblip", b"\xFF\xD8\xFF\xE0jpeg"));
    let converted = convert(rtf.as_bytes()).expect("converts");
    assert_eq!(converted.images.len(), 1);
    // Pictures in skipped destinations (a header) stay out.
    let rtf = format!("{{\\rtf1 {{\\header {}}}Text}}", pict("\\jpegblip", b"\xFF\xD8\xFF\xE0jpeg"));
    assert!(convert(rtf.as_bytes()).expect("converts").images.is_empty());
}
