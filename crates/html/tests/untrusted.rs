//! Documents are untrusted content: they show pictures only from the service itself (or
//! `data:` images), and their `style` lengths are bounded, so that opening one neither tells
//! a third party who read it nor lets one link cover the page.

mod common;

use common::{all_html, all_text, ids, to_html};
use redline_domain::document::Section;
use redline_html::Html5everSections;
use redline_ports::HtmlSections;

const BASE: &str = "https://redline.example";
const ID: &str = "img_0123456789abcdef0123456789abcdef";
const PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn adapter() -> Html5everSections {
    Html5everSections::with_public_base_url(BASE)
}

/// Sections `html` with the service's base URL, checks that a second pass changes nothing
/// and reports no remote picture, and answers the sections and the first pass's count.
fn sanitized(html: &str) -> (Vec<Section>, usize) {
    let a = adapter();
    let mut first = Vec::new();
    let report = a
        .sectionize_reporting(html, &mut ids("n"), &mut |s| {
            first.push(s);
            Ok(())
        })
        .expect("first pass");
    let mut second = Vec::new();
    let again = a
        .sectionize_reporting(&to_html(&first), &mut ids("m"), &mut |s| {
            second.push(s);
            Ok(())
        })
        .expect("second pass");
    assert_eq!(first, second, "not idempotent for input {html:?}");
    assert_eq!(again.remote_images, 0, "a placeholder is not counted again: {html:?}");
    (first, report.remote_images)
}

fn html_of(html: &str) -> (String, usize) {
    let (s, n) = sanitized(html);
    (all_html(&s), n)
}

/// No attribute of the output names anything a browser would fetch, but the service's own
/// images and data images.
fn assert_no_remote_fetch(out: &str, input: &str) {
    let lower = out.to_ascii_lowercase();
    for attr in ["srcset", "background=", "poster", "href=\"//", "xlink", "url(", "<source", "<input", "<svg", "<image"]
    {
        assert!(!lower.contains(attr), "{attr:?} in {out} (input {input:?})");
    }
    for src in out.split(" src=\"").skip(1) {
        let src = &src[..src.find('"').unwrap_or(src.len())];
        let own = src == format!("/v1/documents/images/{ID}");
        assert!(own || src.starts_with("data:image/png;base64,"), "src {src:?} kept in {out} (input {input:?})");
    }
}

#[test]
fn own_and_data_pictures_are_kept_own_ones_by_their_path() {
    let path = format!("/v1/documents/images/{ID}");
    for (src, kept) in
        [(path.clone(), path.clone()), (format!("{BASE}{path}"), path.clone()), (PNG.to_owned(), PNG.to_owned())]
    {
        let input = format!("<p><img src=\"{src}\" alt=\"a\"></p>");
        let (out, n) = html_of(&input);
        assert_eq!(n, 0, "{out}");
        assert!(out.contains(&format!("<img alt=\"a\" src=\"{kept}\">")), "{out}");
    }
    // A base URL given with a trailing slash matches the links written without one.
    let a = Html5everSections::with_public_base_url("https://redline.example/");
    let s = a.sectionize(&format!("<img src=\"{BASE}/v1/documents/images/{ID}\">"), &mut ids("n")).expect("sections");
    assert!(s[0].html.contains(&format!("<img src=\"{path}\">")) && !s[0].html.contains(BASE), "{}", s[0].html);
    // Without a base URL only the relative form is the service's.
    let s = Html5everSections::new()
        .sectionize(&format!("<img src=\"{BASE}/v1/documents/images/{ID}\">"), &mut ids("n"))
        .expect("sections");
    assert!(s[0].html.contains("remote-image"), "{}", s[0].html);
}

#[test]
fn remote_pictures_become_placeholders() {
    let payloads = [
        ("https://evil.example/pixel.gif", "https://evil.example/pixel.gif"),
        ("http://evil.example/pixel.gif", "http://evil.example/pixel.gif"),
        ("HTTPS://EVIL.EXAMPLE/p", "HTTPS://EVIL.EXAMPLE/p"),
        ("//evil.example/p", "//evil.example/p"),
        ("\\\\evil.example\\p", "\\\\evil.example\\p"),
        ("/\\evil.example/p", "/\\evil.example/p"),
        ("\\/evil.example/p", "\\/evil.example/p"),
        ("  https://evil.example/p  ", "https://evil.example/p"),
        ("\thttps://evil.example/p", "https://evil.example/p"),
        ("ht\ttps://evil.example/p", "https://evil.example/p"),
        ("https://evil.example/p&#10;", "https://evil.example/p"),
        ("&#x68;ttps://evil.example/p", "https://evil.example/p"),
        ("%2F%2Fevil.example/p", "%2F%2Fevil.example/p"),
        ("x", "x"),
        ("pixel.gif", "pixel.gif"),
        ("/other/path.png", "/other/path.png"),
        ("/v1/documents/images/abc123", "/v1/documents/images/abc123"),
        (&format!("/v1/documents/images/{ID}?track=1"), &format!("/v1/documents/images/{ID}?track=1")),
        (&format!("/v1/documents/images/{ID}#x"), &format!("/v1/documents/images/{ID}#x")),
        (&format!("/v1/documents/images/{ID}/../../../x"), &format!("/v1/documents/images/{ID}/../../../x")),
        (&format!("/v1/documents/images/%69mg_{}", &ID[4..]), &format!("/v1/documents/images/%69mg_{}", &ID[4..])),
        (&format!("//evil.example/v1/documents/images/{ID}"), &format!("//evil.example/v1/documents/images/{ID}")),
        (
            &format!("https://evil.example/v1/documents/images/{ID}"),
            &format!("https://evil.example/v1/documents/images/{ID}"),
        ),
        (
            &format!("https://redline.example.evil.example/v1/documents/images/{ID}"),
            &format!("https://redline.example.evil.example/v1/documents/images/{ID}"),
        ),
        (
            &format!("https://redline.example@evil.example/v1/documents/images/{ID}"),
            &format!("https://redline.example@evil.example/v1/documents/images/{ID}"),
        ),
        (
            &format!("http://redline.example/v1/documents/images/{ID}"),
            &format!("http://redline.example/v1/documents/images/{ID}"),
        ),
        (&format!("{BASE}\\v1/documents/images/{ID}"), &format!("{BASE}\\v1/documents/images/{ID}")),
        (&format!("{BASE}/other/{ID}"), &format!("{BASE}/other/{ID}")),
    ];
    for (src, shown) in payloads {
        let input = format!("<p>before <img src=\"{src}\" alt=\"alt\" width=\"1\" height=\"1\"> after</p>");
        let (s, n) = sanitized(&input);
        let out = all_html(&s);
        assert_eq!(n, 1, "{out} (input {input:?})");
        assert!(!out.contains("<img"), "{out} (input {input:?})");
        assert_no_remote_fetch(&out, &input);
        let text = all_text(&s);
        assert_eq!(text, format!("before [remote image: {shown}] after"), "input {input:?}");
        assert!(out.contains("<span class=\"remote-image\">[remote image: "), "{out}");
    }
}

#[test]
fn placeholders_are_text_and_counted() {
    // The address is text: markup in it is escaped, a long one is cut.
    let (out, n) = html_of("<img src='https://e.example/?a=\"><script>alert(1)</script>'>");
    assert_eq!(n, 1);
    assert!(!out.contains("<script"), "{out}");
    assert!(out.contains("&lt;script&gt;"), "{out}");
    let long = format!("https://e.example/{}", "a".repeat(500));
    let (s, _) = sanitized(&format!("<img src=\"{long}\">"));
    let text = all_text(&s);
    assert!(text.ends_with("…]") && text.chars().count() < 240, "{text}");
    // Several, at any depth, in tables and links; the count is the document's.
    let (out, n) = html_of(
        "<table><tr><td><img src=//a.example/1></td></tr></table><p><a href=\"https://x.example\"><img src=//a.example/2></a></p>\
         <ul><li><b><i><img src=//a.example/3></i></b></li></ul><img src=//a.example/4>",
    );
    assert_eq!(n, 4, "{out}");
    assert_eq!(out.matches("remote-image").count(), 4, "{out}");
    // Across the slices of a large document too.
    let big: String = (0..2000).map(|i| format!("<p>paragraph {i} <img src=\"https://t.example/{i}\"></p>")).collect();
    let a = Html5everSections::with_slice_bytes(4096);
    let report = a.sectionize_reporting(&big, &mut ids("n"), &mut |_| Ok(())).expect("sections");
    assert_eq!(report.remote_images, 2000);
    // A picture without an address, or with one no browser can fetch (not a URL, or not
    // http), fetches nothing and stays, without it.
    let (out, n) = html_of(
        "<p><img alt=\"x\"><img src=\"\"><img src=\"javascript:alert(1)\"><img src=\"https:%2F%2Fevil.example/p\">\
         <img src=\"ftp://evil.example/p\"><img src=\"http://[evil\"></p>",
    );
    assert_eq!((out.matches("<img").count(), n), (6, 0), "{out}");
    assert!(!out.contains("src="), "{out}");
    // The placeholder's class is the only one kept.
    let (out, _) = html_of("<p><span class=\"remote-image x\">a</span><b class=\"remote-image\">b</b></p>");
    assert!(out.contains("<span class=\"remote-image\">a</span><b>b</b>"), "{out}");
}

#[test]
fn no_other_way_fetches_a_remote_picture() {
    let payloads = [
        "<img srcset=\"https://e.example/a.png 1x, https://e.example/b.png 2x\">",
        &format!("<img src=\"{PNG}\" srcset=\"https://e.example/a.png 2x\">"),
        "<picture><source srcset=\"https://e.example/a.webp\"><img src=\"https://e.example/a.png\"></picture>",
        "<picture><source srcset=\"//e.example/a.webp\" media=\"(min-width: 1px)\"></picture>",
        "<input type=\"image\" src=\"https://e.example/a.png\">",
        "<image src=\"https://e.example/a.png\">",
        "<body background=\"https://e.example/a.png\"><p>x</p></body>",
        "<table background=\"https://e.example/a.png\"><tr><td background=\"//e.example/b.png\">x</td></tr></table>",
        "<video poster=\"https://e.example/a.png\" src=\"https://e.example/v.mp4\"></video>",
        "<audio src=\"https://e.example/a.mp3\"></audio>",
        "<svg><image href=\"https://e.example/a.png\"/><image xlink:href=\"https://e.example/b.png\"/></svg>",
        "<svg><use href=\"https://e.example/s.svg#x\"/></svg>",
        "<math><mglyph src=\"https://e.example/a.png\"/></math>",
        "<object data=\"https://e.example/a.png\"></object><embed src=\"https://e.example/a.png\">",
        "<iframe src=\"https://e.example/\"></iframe>",
        "<link rel=\"stylesheet\" href=\"https://e.example/a.css\"><link rel=\"preload\" as=\"image\" href=\"//e.example/a.png\">",
        "<meta http-equiv=\"refresh\" content=\"0;url=https://e.example/\"><base href=\"https://e.example/\">",
        "<p style=\"background: url(https://e.example/a.png)\">x</p>",
        "<p style=\"background-image: url('//e.example/a.png')\">x</p>",
        "<p style=\"background: image-set('https://e.example/a.png' 1x)\">x</p>",
        "<p style=\"background: u\\rl(https://e.example/a.png)\">x</p>",
        "<p style=\"list-style-image: url(https://e.example/a.png)\">x</p>",
        "<p style=\"cursor: url(https://e.example/a.cur), auto\">x</p>",
        "<p style=\"border-image: url(https://e.example/a.png) 30\">x</p>",
        "<p style=\"content: url(https://e.example/a.png)\">x</p>",
        "<p style=\"font-family: url(https://e.example/f.woff)\">x</p>",
        "<p style=\"background: src(https://e.example/a.png)\">x</p>",
        "<style>@import 'https://e.example/a.css'; p { background: url(//e.example/a.png) }</style><p>x</p>",
        "<a href=\"https://e.example/\" ping=\"https://e.example/ping\">x</a>",
        "<img lowsrc=\"https://e.example/a.png\" dynsrc=\"https://e.example/a.avi\" longdesc=\"https://e.example/d\">",
    ];
    for input in payloads {
        let (out, _) = html_of(input);
        assert_no_remote_fetch(&out, input);
        assert!(!out.contains("ping="), "{out}");
    }
}

#[test]
fn picture_sizes_are_bounded_in_proportion() {
    for (attrs, height, width) in [
        ("width=\"10\" height=\"20\"", "20", "10"),
        ("width=\"5000\" height=\"2500\"", "480", "960"),
        ("width=\"100\" height=\"100000\"", "960", "1"),
        ("width=\"4000\"", "", "960"),
        ("width=\"500%\" height=\"50%\"", "50%", "100%"),
        ("width=\"-5\" height=\"1e9\"", "", ""),
        ("width=\"calc(100vw)\" height=\"20\"", "20", ""),
    ] {
        let (out, _) = html_of(&format!("<p><img {attrs} src=\"{PNG}\"></p>"));
        let height = if height.is_empty() { String::new() } else { format!(" height=\"{height}\"") };
        let width = if width.is_empty() { String::new() } else { format!(" width=\"{width}\"") };
        assert!(out.contains(&format!("<img{height} src=\"{PNG}\"{width}>")), "{attrs}: {out}");
    }
}

/// The `style` a `<p><a>` keeps.
fn style_of(style: &str) -> String {
    let (out, _) = html_of(&format!("<p><a href=\"https://x.example\" style=\"{style}\">link</a></p>"));
    match out.split_once("style=\"") {
        Some((_, rest)) => rest[..rest.find('"').unwrap_or(rest.len())].to_owned(),
        None => String::new(),
    }
}

#[test]
fn styles_cannot_make_a_link_cover_the_page() {
    for (style, kept) in [
        // Within bounds: as written.
        ("padding: 4px 8px; margin: 0 auto; width: 100%", "padding: 4px 8px; margin: 0 auto; width: 100%"),
        ("font-size: 12pt; line-height: 1.5; text-indent: 2em", "font-size: 12pt; line-height: 1.5; text-indent: 2em"),
        (
            "border: 1px solid rgb(0, 0, 0); vertical-align: super",
            "border: 1px solid rgb(0, 0, 0); vertical-align: super",
        ),
        // The clickjacking link: huge padding, negative margins, a transparent colour.
        ("padding: 5000px; margin: -5000px; color: transparent", "padding: 24px; margin: 0px; color: transparent"),
        ("padding: 0 0 0 99999em", "padding: 0 0 0 1.5em"),
        ("padding-top: 1e6px; padding-left: 100%", "padding-top: 24px; padding-left: 5%"),
        (
            "margin-top: -1px; margin-left: -50%; margin-right: 9in",
            "margin-top: 0px; margin-left: 0%; margin-right: 2.5in",
        ),
        ("text-indent: -9999px", "text-indent: 0px"),
        ("width: 10000px; height: 200%", "width: 960px; height: 100%"),
        ("width: 2000pt; height: 99in", "width: 720pt; height: 10in"),
        ("width: 30cm", "width: 25.4cm"),
        ("font-size: 500px", "font-size: 96px"),
        ("font-size: 1000pt", "font-size: 72pt"),
        ("font-size: 40em", "font-size: 6rem"),
        ("font-size: 2em", "font-size: 2rem"),
        ("font-size: 150%", "font-size: 1.5rem"),
        ("font-size: 1000%", "font-size: 6rem"),
        ("font-size: x-large; font-weight: bold", "font-size: x-large; font-weight: bold"),
        ("line-height: 100; font-size: 10px", "line-height: 4; font-size: 10px"),
        ("line-height: 5000px", "line-height: 96px"),
        ("border: 500px solid red", "border: 16px solid red"),
        ("border-width: 1px 99px; border-left-width: 1e3em", "border-width: 1px 16px; border-left-width: 1em"),
        ("border-spacing: 1000px", "border-spacing: 24px"),
        ("vertical-align: -5000px", "vertical-align: -16px"),
        ("vertical-align: 900%", "vertical-align: 50%"),
        ("text-decoration: underline 300px", "text-decoration: underline 8px"),
        ("padding: 10000", "padding: 24"),
        // Unboundable or invalid: the declaration goes.
        ("width: 100vw; height: 100vh; color: red", "color: red"),
        ("width: max-content; padding: 2vmax", ""),
        ("font-size: larger", ""),
        ("width: -10px; padding: -1px; font-size: -2px", ""),
        ("border-width: 10%", ""),
        ("padding: 1.px", ""),
        ("margin: 10q", "margin: 10q"),
    ] {
        assert_eq!(style_of(style), kept, "{style}");
    }
}

#[test]
fn nested_font_sizes_do_not_compound() {
    let nested = "<span style=\"font-size: 6em\">".repeat(50) + "x" + &"</span>".repeat(50);
    let (out, _) = html_of(&format!("<p>{nested}</p>"));
    assert!(!out.contains("6em"), "{out}");
    assert_eq!(out.matches("font-size: 6rem").count(), 50, "{out}");
}
