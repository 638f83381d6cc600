use std::path::PathBuf;

use lopdf::{dictionary, Document, Object, Stream};
use pdf_extract::{MediaBox, OutputDev, Transform};
use redline_ports::documents::ConvertError;

use super::layout::{blocks, Block, Collector};
use super::*;

/// A PDF whose pages have the given content streams, drawn with Helvetica as /F1.
pub(super) fn pdf(pages: &[&str]) -> Vec<u8> {
    pdf_with(pages, |_| {})
}

/// Like [`pdf`], letting the caller change the document before it is saved.
fn pdf_with(pages: &[&str], edit: impl FnOnce(&mut Document)) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for content in pages {
        let content_id = doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
        });
        kids.push(Object::from(page_id));
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    edit(&mut doc);
    let mut out = Vec::new();
    doc.save_to(&mut out).expect("save the test PDF");
    out
}

/// Text lines at the given sizes, one under the other (each `(size, gap before, text)`).
fn page_of(lines: &[(u32, u32, &str)]) -> String {
    let mut content = String::new();
    let mut y = 800;
    for (size, gap, text) in lines {
        y -= gap;
        content.push_str(&format!("BT /F1 {size} Tf 72 {y} Td ({text}) Tj ET\n"));
    }
    content
}

pub(super) fn html_of(bytes: &[u8]) -> String {
    convert(bytes).expect("the PDF converts").html
}

#[test]
fn big_lines_become_headings_and_body_lines_paragraphs() {
    let page = page_of(&[
        (24, 0, "Annual Report"),
        (16, 40, "Introduction"),
        (11, 30, "The first line of the body text"),
        (11, 14, "goes on here and ends."),
        (11, 30, "A second paragraph after a gap."),
        (16, 40, "Results"),
        (11, 30, "More body text follows the heading."),
    ]);
    let html = html_of(&pdf(&[&page]));
    assert!(html.contains("<h1>Annual Report</h1>"), "{html}");
    assert!(html.contains("<h2>Introduction</h2>"), "{html}");
    assert!(html.contains("<h2>Results</h2>"), "{html}");
    assert!(html.contains("<p>The first line of the body text goes on here and ends.</p>"), "{html}");
    assert!(html.contains("<p>A second paragraph after a gap.</p>"), "{html}");
    assert!(html.contains("<p>More body text follows the heading.</p>"), "{html}");
}

#[test]
fn without_larger_lines_there_are_only_paragraphs() {
    let page = page_of(&[(11, 0, "One line"), (11, 14, "and its next line."), (11, 40, "Another paragraph.")]);
    let html = html_of(&pdf(&[&page]));
    assert_eq!(html, "<p>One line and its next line.</p>\n<p>Another paragraph.</p>\n");
}

#[test]
fn text_is_escaped() {
    // (Helvetica's standard encoding has no straight apostrophe: code 0x27 is ’.)
    let page = page_of(&[(11, 0, "a <b> & \"c\"")]);
    let html = html_of(&pdf(&[&page]));
    assert_eq!(html, "<p>a &lt;b&gt; &amp; &quot;c&quot;</p>\n");
}

#[test]
fn pages_are_read_in_order() {
    let one = page_of(&[(11, 0, "Page one ends here.")]);
    let two = page_of(&[(11, 0, "Page two.")]);
    let html = html_of(&pdf(&[&one, &two]));
    assert_eq!(html, "<p>Page one ends here.</p>\n<p>Page two.</p>\n");
}

#[test]
fn a_paragraph_runs_on_to_the_next_page_mid_sentence() {
    let one = page_of(&[(11, 0, "This sentence does not")]);
    let two = page_of(&[(11, 0, "end on the first page.")]);
    let html = html_of(&pdf(&[&one, &two]));
    assert_eq!(html, "<p>This sentence does not end on the first page.</p>\n");
}

#[test]
fn a_file_without_the_header_is_corrupt() {
    let err = convert(b"hello, this is not a PDF").unwrap_err();
    assert!(matches!(err, ConvertError::Corrupt { ref format, .. } if format == "PDF"), "{err:?}");
}

#[test]
fn damaged_files_are_corrupt_not_a_panic() {
    for bytes in [&b"%PDF-1.4\n"[..], b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF", b"%PDF-"]
    {
        let err = convert(bytes).unwrap_err();
        assert!(matches!(err, ConvertError::Corrupt { .. }), "{err:?}");
    }
    // Truncated anywhere in a real file: refused or read, never a panic, and either way the
    // answer says the file lost its end (rather than blaming its fonts).
    let page = page_of(&[(11, 0, "Some text")]);
    let mut files = vec![pdf(&[&page])];
    let dir = corpus_dir("pdf");
    files.extend(["pdfjs-TAMReview.pdf", "pdfjs-REDHAT-1531897-0.pdf"].map(|f| std::fs::read(dir.join(f)).unwrap()));
    for full in files {
        for cut in (1..20).map(|i| full.len() * i / 20) {
            match convert(&full[..cut]) {
                Ok(c) => assert!(c.warnings.iter().any(|w| w.contains("cut short")), "cut at {cut}: {:?}", c.warnings),
                Err(ConvertError::Corrupt { reason, .. }) if cut >= 10 => {
                    assert!(reason.contains("cut short"), "cut at {cut} of {}: {reason}", full.len())
                }
                Err(e) => {
                    assert!(matches!(e, ConvertError::Corrupt { .. }), "cut at {cut} of {}: {e:?}", full.len())
                }
            }
        }
    }
}

#[test]
fn a_page_without_text_but_with_an_image_is_a_scan() {
    let bytes = pdf_with(&["q 100 0 0 100 0 0 cm /Im1 Do Q"], |doc| {
        let image = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject",
                "Subtype" => "Image",
                "Width" => 1,
                "Height" => 1,
                "ColorSpace" => "DeviceGray",
                "BitsPerComponent" => 8,
            },
            vec![0],
        ));
        add_page_resource(doc, "XObject", "Im1", image);
    });
    let err = convert(&bytes).unwrap_err();
    assert!(matches!(err, ConvertError::NoText(ref m) if m.contains("only images")), "{err:?}");
}

#[test]
fn a_blank_page_has_no_text() {
    let err = convert(&pdf(&["0 0 m 10 10 l S"])).unwrap_err();
    assert!(matches!(err, ConvertError::NoText(_)), "{err:?}");
}

/// Adds `name => id` to the `kind` dictionary of the shared page resources.
fn add_page_resource(doc: &mut Document, kind: &str, name: &str, id: lopdf::ObjectId) {
    let resources_id = doc
        .objects
        .iter()
        .find(|(_, o)| matches!(o, Object::Dictionary(d) if d.has(b"Font") && !d.has(b"Type")))
        .map(|(id, _)| *id)
        .expect("the resources");
    let Some(Object::Dictionary(resources)) = doc.objects.get_mut(&resources_id) else { unreachable!() };
    if !resources.has(kind.as_bytes()) {
        resources.set(kind, dictionary! {});
    }
    if let Ok(Object::Dictionary(d)) = resources.get_mut(kind.as_bytes()) {
        d.set(name, id);
    }
}

#[test]
fn an_encrypted_pdf_is_refused() {
    let page = page_of(&[(11, 0, "Secret text")]);
    let bytes = pdf_with(&[&page], |doc| {
        doc.trailer
            .set("ID", vec![Object::string_literal("0123456789abcdef"), Object::string_literal("0123456789abcdef")]);
        let state = lopdf::EncryptionState::try_from(lopdf::EncryptionVersion::V2 {
            document: doc,
            owner_password: "owner",
            user_password: "user",
            key_length: 128,
            permissions: lopdf::Permissions::all(),
        })
        .expect("an encryption state");
        doc.encrypt(&state).expect("encrypt");
    });
    assert_eq!(convert(&bytes).unwrap_err(), ConvertError::Encrypted);
}

#[test]
fn a_form_that_draws_itself_is_refused_not_a_stack_overflow() {
    let bytes = pdf_with(&["/X1 Do"], |doc| {
        let form_id = doc.new_object_id();
        let form = Stream::new(
            dictionary! {
                "Type" => "XObject",
                "Subtype" => "Form",
                "BBox" => vec![0.into(), 0.into(), 10.into(), 10.into()],
                "Resources" => dictionary! { "XObject" => dictionary! { "X1" => form_id } },
            },
            b"BT /F1 11 Tf 0 0 Td (loop) Tj ET /X1 Do".to_vec(),
        );
        doc.objects.insert(form_id, Object::Stream(form));
        add_page_resource(doc, "XObject", "X1", form_id);
    });
    let err = convert(&bytes).unwrap_err();
    assert!(matches!(err, ConvertError::TooComplex(ref m) if m.contains("draws itself")), "{err:?}");
}

#[test]
fn a_form_without_resources_drawing_itself_through_the_page_is_refused() {
    let bytes = pdf_with(&["/X1 Do"], |doc| {
        let form_id =
            doc.add_object(Stream::new(dictionary! { "Type" => "XObject", "Subtype" => "Form" }, b"/X1 Do".to_vec()));
        add_page_resource(doc, "XObject", "X1", form_id);
    });
    assert!(matches!(convert(&bytes).unwrap_err(), ConvertError::TooComplex(_)));
}

#[test]
fn forms_that_fan_out_exponentially_are_refused() {
    let bytes = pdf_with(&["/X0 Do"], |doc| {
        // X0 draws X1 ten times, X1 draws X2 ten times… 10^8 runs.
        let ids: Vec<_> = (0..9).map(|_| doc.new_object_id()).collect();
        for (i, id) in ids.iter().enumerate() {
            let (content, resources) = match ids.get(i + 1) {
                Some(next) => (
                    format!("/X{} Do ", i + 1).repeat(10),
                    dictionary! { "XObject" => dictionary! { format!("X{}", i + 1) => *next } },
                ),
                None => ("BT /F1 11 Tf (leaf) Tj ET".to_owned(), dictionary! {}),
            };
            let form = Stream::new(
                dictionary! { "Type" => "XObject", "Subtype" => "Form", "Resources" => resources },
                content.into_bytes(),
            );
            doc.objects.insert(*id, Object::Stream(form));
        }
        add_page_resource(doc, "XObject", "X0", ids[0]);
    });
    assert!(matches!(convert(&bytes).unwrap_err(), ConvertError::TooComplex(_)));
}

#[test]
fn forms_nested_up_to_the_cap_are_read_on_a_small_stack() {
    // 2 MiB, as the threads of tokio's blocking pool have.
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let bytes = pdf_with(&["/X0 Do"], |doc| {
                // Forms without resources of their own: they all use the page's.
                for i in 0..prepare::MAX_FORM_DEPTH {
                    let content = if i + 1 < prepare::MAX_FORM_DEPTH {
                        format!("q /X{} Do Q", i + 1)
                    } else {
                        "BT /F1 11 Tf 72 700 Td (deep) Tj ET".to_owned()
                    };
                    let id = doc.add_object(Stream::new(
                        dictionary! { "Type" => "XObject", "Subtype" => "Form" },
                        content.into_bytes(),
                    ));
                    add_page_resource(doc, "XObject", &format!("X{i}"), id);
                }
            });
            convert(&bytes)
        })
        .expect("spawn");
    let converted = handle.join().expect("no stack overflow").expect("converts");
    assert_eq!(converted.html, "<p>deep</p>\n");
}

#[test]
fn forms_that_draw_text_are_read() {
    let bytes = pdf_with(&["/X1 Do"], |doc| {
        let form_id = doc.add_object(Stream::new(
            dictionary! { "Type" => "XObject", "Subtype" => "Form" },
            b"BT /F1 11 Tf 72 700 Td (Text in a form) Tj ET".to_vec(),
        ));
        add_page_resource(doc, "XObject", "X1", form_id);
    });
    assert_eq!(html_of(&bytes), "<p>Text in a form</p>\n");
}

#[test]
fn a_decompression_bomb_is_refused() {
    let bytes = pdf_with(&[""], |doc| {
        let mut bomb = Stream::new(dictionary! {}, vec![b' '; 40 << 20]);
        bomb.compress().expect("compress");
        let bomb_id = doc.add_object(bomb);
        let page_id = *doc.get_pages().values().next().expect("a page");
        if let Ok(page) = doc.get_dictionary_mut(page_id) {
            page.set("Contents", bomb_id);
        }
    });
    assert!(bytes.len() < 1 << 20, "the bomb is small: {}", bytes.len());
    let err = convert(&bytes).unwrap_err();
    assert!(matches!(err, ConvertError::TooComplex(_)), "{err:?}");
}

#[test]
fn text_drawn_too_many_times_is_refused() {
    let page = "/X1 Do ".repeat(20_000);
    let bytes = pdf_with(&[&page], |doc| {
        let text = format!("BT /F1 11 Tf 72 700 Td ({}) Tj ET", "x".repeat(100));
        let form_id =
            doc.add_object(Stream::new(dictionary! { "Type" => "XObject", "Subtype" => "Form" }, text.into_bytes()));
        add_page_resource(doc, "XObject", "X1", form_id);
    });
    let err = convert(&bytes).unwrap_err();
    assert!(matches!(err, ConvertError::TooComplex(ref m) if m.contains("characters")), "{err:?}");
}

#[test]
fn too_many_pages_are_refused() {
    let pages = vec!["BT /F1 11 Tf 72 700 Td (x) Tj ET"; prepare::MAX_PAGES + 1];
    let err = convert(&pdf(&pages)).unwrap_err();
    assert!(
        matches!(err, ConvertError::TooComplex(ref m) if m.contains("2001 pages") && m.contains("nothing was converted")),
        "{err:?}"
    );
}

#[test]
fn a_cyclic_page_tree_without_media_box_does_not_overflow_the_stack() {
    let page = page_of(&[(11, 0, "Still readable")]);
    let bytes = pdf_with(&[&page], |doc| {
        let page_id = *doc.get_pages().values().next().expect("a page");
        let pages_id = doc.catalog().expect("catalog").get(b"Pages").expect("pages").as_reference().expect("ref");
        // The page tree root names itself as its parent and has no media box.
        let Ok(root) = doc.get_dictionary_mut(pages_id) else { unreachable!() };
        root.remove(b"MediaBox");
        root.set("Parent", pages_id);
        let Ok(page) = doc.get_dictionary_mut(page_id) else { unreachable!() };
        page.set("Parent", pages_id);
    });
    assert_eq!(html_of(&bytes), "<p>Still readable</p>\n");
}

#[test]
fn fonts_that_make_pdf_extract_panic_are_repaired() {
    let page = "BT /F2 11 Tf 72 700 Td (Widths) Tj ET BT /F3 11 Tf 72 680 Td (Encoding) Tj ET";
    let bytes = pdf_with(&[page], |doc| {
        // Widths that disagree with LastChar (an assert in pdf-extract), and an encoding
        // name it does not know (a panic), and Differences with a code out of range.
        let f2 = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
            "FirstChar" => 32, "LastChar" => 40, "Widths" => vec![500.into(); 100],
        });
        let f3 = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
            "Encoding" => dictionary! {
                "BaseEncoding" => "StandardEncoding",
                "Differences" => vec![Object::Integer(300), "A".into(), Object::Integer(65), "A".into()],
            },
        });
        add_page_resource(doc, "Font", "F2", f2);
        add_page_resource(doc, "Font", "F3", f3);
    });
    let converted = convert(&bytes).expect("converts");
    assert!(converted.html.contains("Widths"), "{}", converted.html);
    assert!(converted.html.contains("Encoding"), "{}", converted.html);
}

/// A Type0 font with a predefined CMap named `cmap` drawing `codes` (hex) on line two.
fn cjk_pdf(cmap: &str, codes: &str) -> Vec<u8> {
    let page = format!("BT /F1 11 Tf 72 720 Td (Latin text) Tj ET BT /F4 11 Tf 72 700 Td <{codes}> Tj ET");
    pdf_with(&[page.as_str()], |doc| {
        let f4 = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "MS-Mincho",
            "Encoding" => cmap,
            "DescendantFonts" => vec![Object::Dictionary(dictionary! {
                "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "MS-Mincho",
                "W" => vec![Object::Integer(0), Object::Integer(i64::MAX), Object::Integer(1000)],
            })],
        });
        add_page_resource(doc, "Font", "F4", f4);
    })
}

#[test]
fn text_of_predefined_cjk_cmaps_is_read_through_their_legacy_encodings() {
    for (cmap, codes, text) in [
        // 日本語 in Shift_JIS, with an ASCII letter between.
        ("90ms-RKSJ-H", "93FA41967B8CEA", "日A本語"),
        ("ETen-B5-H", "A4A4A4E5", "中文"),
        ("GBK-EUC-H", "D6D0CEC4", "中文"),
        ("KSCms-UHC-H", "C7D1B1DB", "한글"),
    ] {
        let converted = convert(&cjk_pdf(cmap, codes)).expect("converts");
        let html: String = converted.html.chars().filter(|c| !c.is_whitespace()).collect();
        assert!(html.contains(text) && html.contains("Latintext"), "{cmap}: {}", converted.html);
        assert!(converted.warnings.is_empty(), "{cmap}: {:?}", converted.warnings);
    }
}

#[test]
fn a_chinese_font_drawing_gbk_bytes_as_one_byte_codes_reads_as_chinese() {
    let page = "BT /F4 11 Tf 72 700 Td <D6D0CEC4> Tj ET BT /F1 11 Tf 72 680 Td (plain text) Tj ET";
    let bytes = pdf_with(&[page], |doc| {
        let f4 = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "TrueType",
            // 宋体 in GBK.
            "BaseFont" => Object::Name(b"\xCB\xCE\xCC\xE5".to_vec()),
            "Encoding" => "WinAnsiEncoding", "FirstChar" => 0, "LastChar" => 255,
            "Widths" => vec![Object::Integer(500); 256],
        });
        add_page_resource(doc, "Font", "F4", f4);
    });
    let converted = convert(&bytes).expect("converts");
    assert!(converted.html.contains("中文"), "{}", converted.html);
    assert!(converted.html.contains("plain text"), "a Latin font is read as it was: {}", converted.html);
}

/// A Type 0 font drawing `codes` with `Identity-H`, no `ToUnicode`, its descendant of the
/// character collection `ordering`.
fn identity_pdf(ordering: &str, codes: &str) -> Vec<u8> {
    let page = format!("BT /F4 11 Tf 72 700 Td <{codes}> Tj ET");
    pdf_with(&[page.as_str()], |doc| {
        let f4 = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "Ryumin-Light-Identity-H",
            "Encoding" => "Identity-H",
            "DescendantFonts" => vec![Object::Dictionary(dictionary! {
                "Type" => "Font", "Subtype" => "CIDFontType0", "BaseFont" => "Ryumin-Light",
                "CIDSystemInfo" => dictionary! {
                    "Registry" => Object::string_literal("Adobe"),
                    "Ordering" => Object::string_literal(ordering),
                    "Supplement" => 2,
                },
                "DW" => 1000,
            })],
        });
        add_page_resource(doc, "Font", "F4", f4);
    })
}

#[test]
fn a_cid_font_of_an_adobe_collection_without_a_map_reads_through_the_collections_table() {
    // Adobe-Japan1 CIDs 843, 844 and 3284: あぃ日 (CID 844 is the small i).
    let converted = convert(&identity_pdf("Japan1", "034B034C0CD4")).expect("converts");
    assert!(converted.html.contains("あぃ日"), "{}", converted.html);
    // A font whose CIDs are its own (ordering Identity) and without a map says nothing of
    // its characters: refused with the reason, not read as mojibake.
    match convert(&identity_pdf("Identity", "034B034C")) {
        Err(ConvertError::NoText(why)) => assert!(why.contains("do not say which characters"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_embedded_truetype_cid_font_without_a_map_reads_through_its_own_cmap() {
    // DejaVu Sans (the exporter's font), embedded whole, its glyph ids drawn as CIDs.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../export/fonts/DejaVuSans.ttf");
    let ttf = std::fs::read(path).expect("the font");
    let face = ttf_parser::Face::parse(&ttf, 0).expect("a font");
    let codes: String =
        "Hello world".chars().map(|c| format!("{:04X}", face.glyph_index(c).map_or(0, |g| g.0))).collect();
    // The second font draws CIDs 1, 2, 3, … through a CIDToGIDMap to the glyphs of "again".
    let again: Vec<u8> = std::iter::once(0u16)
        .chain("again".chars().map(|c| face.glyph_index(c).map_or(0, |g| g.0)))
        .flat_map(u16::to_be_bytes)
        .collect();
    let page = format!("BT /F4 11 Tf 72 700 Td <{codes}> Tj ET BT /F5 11 Tf 72 680 Td <00010002000300040005> Tj ET");
    let bytes = pdf_with(&[page.as_str()], |doc| {
        for (name, map) in [("F4", None), ("F5", Some(again.clone()))] {
            let file = doc.add_object(lopdf::Stream::new(dictionary! { "Length1" => ttf.len() as i64 }, ttf.clone()));
            let mut cid_font = dictionary! {
                "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "DejaVuSans",
                "CIDSystemInfo" => dictionary! {
                    "Registry" => Object::string_literal("Adobe"),
                    "Ordering" => Object::string_literal("Identity"),
                    "Supplement" => 0,
                },
                "FontDescriptor" => dictionary! { "Type" => "FontDescriptor", "FontName" => "DejaVuSans", "FontFile2" => file },
                "DW" => 600,
            };
            if let Some(map) = map {
                cid_font.set("CIDToGIDMap", doc.add_object(lopdf::Stream::new(dictionary! {}, map)));
            }
            let font = doc.add_object(dictionary! {
                "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "DejaVuSans", "Encoding" => "Identity-H",
                "DescendantFonts" => vec![Object::Dictionary(cid_font)],
            });
            add_page_resource(doc, "Font", name, font);
        }
    });
    let converted = convert(&bytes).expect("converts");
    assert!(converted.html.contains("Hello world") && converted.html.contains("again"), "{}", converted.html);
}

#[test]
fn the_maps_made_for_many_fonts_are_kept_once() {
    // Two hundred fonts of the same CMap: one encoding map and one ToUnicode map in all.
    let page = "BT /F1 11 Tf 72 720 Td (x) Tj ET";
    let bytes = pdf_with(&[page], |doc| {
        for i in 0..200 {
            let font = doc.add_object(dictionary! {
                "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "MS-Mincho", "Encoding" => "90ms-RKSJ-H",
                "DescendantFonts" => vec![Object::Dictionary(dictionary! {
                    "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "MS-Mincho",
                })],
            });
            add_page_resource(doc, "Font", &format!("J{i}"), font);
        }
    });
    let doc = Document::load_mem(&bytes).expect("a pdf");
    let prepared = prepare::prepare(doc, bytes.len()).unwrap_or_else(|e| panic!("{e}"));
    let maps = prepared
        .doc
        .objects
        .values()
        .filter(|o| matches!(o, pdf_extract::Object::Stream(s) if s.content.starts_with(b"/CIDInit")))
        .count();
    assert_eq!(maps, 2);
}

#[test]
fn a_cjk_font_with_an_unsupported_cmap_is_left_out_with_a_warning() {
    let converted = convert(&cjk_pdf("GBK2K-H", "8140")).expect("converts");
    assert!(converted.html.contains("Latin text"), "{}", converted.html);
    assert!(
        converted.warnings.iter().any(|w| w.contains("GBK2K-H") && w.ends_with("was left out (page 1)")),
        "{:?}",
        converted.warnings
    );
}

// ---------------------------------------------------------------------------------------
// The collector and the layout, fed characters directly.

fn feed(collector: &mut Collector, x: f64, y: f64, size: f64, text: &str) {
    for (i, c) in text.chars().enumerate() {
        let trm = Transform::row_major(1.0, 0.0, 0.0, 1.0, x + i as f64 * size * 0.5, y);
        let mut buf = [0u8; 4];
        collector.output_character(&trm, 0.5, 0.0, size, c.encode_utf8(&mut buf)).expect("collects");
    }
}

fn collected(lines: &[(f64, f64, &str)]) -> Vec<Block> {
    let mut collector = Collector::default();
    collector.begin_page(1, &MediaBox { llx: 0.0, lly: 0.0, urx: 600.0, ury: 800.0 }, None).expect("page");
    for (y, size, text) in lines {
        feed(&mut collector, 72.0, *y, *size, text);
    }
    collector.end_page().expect("end");
    blocks(&collector.lines)
}

#[test]
fn cjk_characters_drawn_each_with_a_space_after_it_are_one_line_without_spaces() {
    // As Chinese word processors write them: a character, then a space the next character is
    // drawn over (here the space is an em wide, as in a font whose widths are per byte).
    let mut collector = Collector::default();
    collector.begin_page(1, &MediaBox { llx: 0.0, lly: 0.0, urx: 600.0, ury: 800.0 }, None).expect("page");
    let size = 10.0;
    for (i, c) in "（一九三七年）".chars().enumerate() {
        let x = 72.0 + i as f64 * size;
        for (at, text) in [(x, c.to_string()), (x + size, " ".to_owned())] {
            let trm = Transform::row_major(1.0, 0.0, 0.0, 1.0, at, 700.0);
            collector.output_character(&trm, 1.0, 0.0, size, &text).expect("collects");
        }
    }
    collector.end_page().expect("end");
    assert_eq!(collector.lines.len(), 1, "one line");
    assert_eq!(blocks(&collector.lines), [Block::Paragraph("（一九三七年）".into())]);
}

#[test]
fn ligatures_are_expanded() {
    assert_eq!(collected(&[(700.0, 10.0, "e\u{FB03}cient \u{FB01}ne")]), [Block::Paragraph("efficient fine".into())]);
}

#[test]
fn words_broken_at_line_ends_are_joined() {
    let blocks =
        collected(&[(700.0, 10.0, "a hyphen\u{AD}"), (688.0, 10.0, "ated word, a bro-"), (676.0, 10.0, "ken one")]);
    assert_eq!(blocks, [Block::Paragraph("a hyphenated word, a broken one".into())]);
}

#[test]
fn soft_hyphens_inside_a_line_vanish() {
    assert_eq!(collected(&[(700.0, 10.0, "hy\u{AD}phen")]), [Block::Paragraph("hyphen".into())]);
}

#[test]
fn list_items_make_lists_and_their_next_lines_join_them() {
    let blocks = collected(&[
        (700.0, 10.0, "Steps:"),
        (688.0, 10.0, "1. first step"),
        (676.0, 10.0, "which goes on"),
        (664.0, 10.0, "2) second"),
        (652.0, 10.0, "\u{2022} a bullet"),
        (640.0, 10.0, "\u{2022} another"),
    ]);
    let mut html = super::layout::Html::default();
    for block in &blocks {
        html.block(block);
    }
    html.close_lists();
    assert_eq!(
        html.html,
        "<p>Steps:</p>\n<ol>\n<li>first step which goes on</li>\n<li>second</li>\n</ol>\n\
         <ul>\n<li>a bullet</li>\n<li>another</li>\n</ul>\n"
    );
}

#[test]
fn text_drawn_twice_is_kept_once() {
    let mut collector = Collector::default();
    collector.begin_page(1, &MediaBox { llx: 0.0, lly: 0.0, urx: 600.0, ury: 800.0 }, None).expect("page");
    feed(&mut collector, 72.0, 700.0, 10.0, "Bold");
    feed(&mut collector, 72.3, 700.0, 10.0, "Bold");
    collector.end_page().expect("end");
    assert_eq!(blocks(&collector.lines), [Block::Paragraph("Bold".into())]);
}

// ---------------------------------------------------------------------------------------
// The shared corpus.

fn corpus_dir(kind: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/corpus").join(kind);
    assert!(dir.is_dir(), "no corpus at {}", dir.display());
    dir
}

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
fn corpus_encrypted_and_image_only_pdfs() {
    let dir = corpus_dir("pdf");
    let read = |name: &str| std::fs::read(dir.join(name)).expect("corpus file");
    assert_eq!(convert(&read("pdfjs-print_protection.pdf")).unwrap_err(), ConvertError::Encrypted);
    assert_eq!(convert(&read("pdfminer-encryption-aes-256.pdf")).unwrap_err(), ConvertError::Encrypted);
    // A scan: its page's picture, and a warning that no text could be read (no OCR here).
    let scan = convert(&read("tika-testOCR.pdf")).expect("a scan converts");
    assert_eq!(scan.html, "<p><img src=\"redline-image:0\" alt=\"\"></p>\n");
    assert_eq!(scan.images.len(), 1);
    assert!(scan.warnings[0].starts_with("no text could be read from page 1"), "{:?}", scan.warnings);
    // Encrypted with an empty user password: readable.
    let opened = convert(&read("tika-testPDF_protected.pdf")).expect("opens");
    assert!(opened.html.len() > 1000);
}

/// Files whose outcome the manifest's features do not tell.
const PDF_EXCEPTIONS: &[(&str, &str)] = &[
    // One blank page.
    ("pdfjs-empty.pdf", "notext"),
    ("pdfjs-empty_protected.pdf", "notext"),
];

#[test]
fn corpus_pdfs_convert_as_the_manifest_says() {
    let dir = corpus_dir("pdf");
    let manifest = manifest();
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("read the corpus").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut report = Vec::new();
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
        let bytes = std::fs::read(&path).expect("read");
        let (features, notes) = manifest.get(&format!("pdf/{name}")).cloned().unwrap_or_default();
        let has = |f: &str| features.iter().any(|x| x == f);
        let result = convert(&bytes);
        let exception = PDF_EXCEPTIONS.iter().find(|(n, _)| *n == name).map(|(_, e)| *e);
        let ok = match (&result, exception) {
            (Err(ConvertError::NoText(_)), Some("notext")) => true,
            (Ok(c), Some("warning")) => !c.warnings.is_empty(),
            (_, Some(_)) => false,
            (Err(ConvertError::Encrypted), _) => has("encrypted") && !notes.contains("empty user password"),
            (Ok(c), _) if has("encrypted") => notes.contains("empty user password") && !c.html.is_empty(),
            (Err(ConvertError::NoText(m)), _) if has("scanned-image-only") => m.contains("only images"),
            (Ok(c), _) if has("scanned-image-only") => {
                !c.images.is_empty() && c.warnings.iter().any(|w| w.starts_with("no text could be read"))
            }
            (_, _) if has("scanned-image-only") => false,
            // Broken on purpose: any clean answer will do.
            (_, _) if has("broken") => true,
            (Ok(c), _) => c.html.contains("</p>") || c.html.contains("</h"),
            (Err(_), _) => false,
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

/// Found by `fuzz/` (target `pdf`): the 90ms-RKSJ sample of the corpus with its CID font's
/// object number mangled, so that `/F1` names a missing object. `pdf-extract` panics on the
/// dangling reference; the panic is caught, the text drawn before it is kept and the page is
/// named in a warning.
#[test]
fn fuzz_dangling_font_reference_keeps_the_text_before_it() {
    let bytes = include_bytes!("testdata/fuzz-dangling-font-reference.pdf");
    let out = convert(bytes).expect("the text before the missing font");
    assert!(out.html.contains("Hello ASCII"), "{}", out.html);
    assert!(out.warnings.iter().any(|w| w.contains("page 1")), "{:?}", out.warnings);
}
