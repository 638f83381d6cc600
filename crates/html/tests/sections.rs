mod common;
// Ids, internal links and footnotes.
#[path = "sections/anchors.rs"]
mod anchors;

use std::time::Instant;

use common::{all_html, all_text, ids, round_trip, sections, to_html, try_sections};
use redline_domain::document::{ChunkId, Section};
use redline_html::{text_of, Html5everSections, MAX_DEPTH};
use redline_ports::documents::HtmlError;
use redline_ports::HtmlSections;

fn htmls(s: &[Section]) -> Vec<&str> {
    s.iter().map(|s| s.html.as_str()).collect()
}

fn tags(s: &[Section]) -> Vec<&str> {
    s.iter().map(|s| s.tag.as_str()).collect()
}

fn id_list(s: &[Section]) -> Vec<&str> {
    s.iter().map(|s| s.id.as_str()).collect()
}

#[test]
fn usable_as_the_port() {
    let port: Box<dyn HtmlSections> = Box::new(Html5everSections::default());
    assert_eq!(port.sectionize("<p>x</p>", &mut ids("a")).unwrap().len(), 1);
}

#[test]
fn blocks_are_sections() {
    let s = round_trip("<h1>Title</h1>\n<p>One <b>two</b></p><ul><li>a</li><li>b</li></ul><hr><pre>code</pre>");
    assert_eq!(tags(&s), ["h1", "p", "ul", "hr", "pre"]);
    assert_eq!(
        htmls(&s),
        [
            r#"<h1 data-chunk-id="n1">Title</h1>"#,
            r#"<p data-chunk-id="n2">One <b>two</b></p>"#,
            r#"<ul data-chunk-id="n3"><li>a</li><li>b</li></ul>"#,
            r#"<hr data-chunk-id="n4">"#,
            r#"<pre data-chunk-id="n5">code</pre>"#,
        ]
    );
    assert_eq!(s[1].text, "One two");
    assert_eq!(s[2].text, "a b");
    assert_eq!(s[3].text, "");
}

#[test]
fn every_section_tag() {
    let html = "<h1>1</h1><h2>2</h2><h3>3</h3><h4>4</h4><h5>5</h5><h6>6</h6><p>p</p><ul><li>u</li></ul>\
                <ol><li>o</li></ol><table><tr><td>t</td></tr></table><blockquote>q</blockquote><pre>pre</pre>\
                <figure><img src=\"/a.png\"><figcaption>cap</figcaption></figure><hr><div>d</div>";
    let s = round_trip(html);
    assert_eq!(
        tags(&s),
        ["h1", "h2", "h3", "h4", "h5", "h6", "p", "ul", "ol", "table", "blockquote", "pre", "figure", "hr", "div"]
    );
    assert_eq!(s[9].html, r#"<table data-chunk-id="n10"><tbody><tr><td>t</td></tr></tbody></table>"#);
}

#[test]
fn blank_input_gives_no_sections() {
    for html in
        ["", " ", "\n\t  \r\n", "<!-- only a comment -->", "<script>x()</script>", "<html><body> </body></html>"]
    {
        assert!(sections(html).is_empty(), "{html:?}");
    }
}

#[test]
fn inline_runs_are_wrapped_in_p() {
    let s = round_trip("Hello <b>world</b>\n<h2>T</h2>  tail <a href=\"https://example.com/\">link</a><br>more  ");
    assert_eq!(
        htmls(&s),
        [
            r#"<p data-chunk-id="n1">Hello <b>world</b></p>"#,
            r#"<h2 data-chunk-id="n2">T</h2>"#,
            r#"<p data-chunk-id="n3">tail <a href="https://example.com/" rel="noopener noreferrer">link</a><br>more</p>"#,
        ]
    );
    assert_eq!(s[2].text, "tail link more");
}

#[test]
fn containers_are_unwrapped_in_order() {
    let html = "<!DOCTYPE html><html><head><title>Doc title</title><meta charset=utf-8><style>p{}</style></head>\
                <body><article><header><h1>T</h1></header><section><p>a</p>loose <i>text</i><aside>side</aside>\
                </section><main><nav>n</nav><footer><p>f</p></footer></main></article></body></html>";
    let s = round_trip(html);
    assert_eq!(tags(&s), ["h1", "p", "p", "p", "p", "p"]);
    assert_eq!(s.iter().map(|s| s.text.as_str()).collect::<Vec<_>>(), ["T", "a", "loose text", "side", "n", "f"]);
    assert_eq!(s[2].html, r#"<p data-chunk-id="n3">loose <i>text</i></p>"#);
    assert!(!all_html(&s).contains("Doc title"));

    // Deeper down, containers and other blocks become divs (lists: ul), keeping word breaks.
    let s = round_trip(
        "<div><section>one</section><section>two</section></div><dl><dt>Term</dt><dd>Definition</dd></dl><menu><li>m</li></menu>",
    );
    assert_eq!(
        htmls(&s),
        [
            r#"<div data-chunk-id="n1"><div>one</div><div>two</div></div>"#,
            r#"<div data-chunk-id="n2"><div>Term</div><div>Definition</div></div>"#,
            r#"<ul data-chunk-id="n3"><li>m</li></ul>"#,
        ]
    );
    assert_eq!(s[1].text, "Term Definition");
}

#[test]
fn stray_items_and_blocks_in_inline_keep_their_text() {
    let s = round_trip("<li>a</li> <li>b</li><p>c</p><li>d</li>");
    assert_eq!(tags(&s), ["ul", "p", "ul"]);
    assert_eq!(s[0].html, r#"<ul data-chunk-id="n1"><li>a</li><li>b</li></ul>"#);
    assert_eq!(all_text(&s), "a b c d");

    // A block inside an inline element cannot live in a <p>: the run becomes a <div>.
    let s = round_trip("<b>bold <li>item</li> <div>block</div></b> after<figcaption>cap</figcaption>");
    assert_eq!(tags(&s), ["div"]);
    assert_eq!(s[0].text, "bold item block after cap");

    // Table parts out of place lose their tags (the HTML parser ignores them), never their text.
    let s = round_trip("<td>cell</td> <tr><th>head</th></tr> <caption>cap</caption> <col><tbody>body</tbody>");
    assert_eq!(all_text(&s), "cell head cap body");
}

#[test]
fn ids_are_kept_deduplicated_and_assigned() {
    let s = round_trip(
        "<p data-chunk-id=\"keep-1\">a</p><p data-chunk-id=\"keep-1\">dup</p><p data-chunk-id=\"bad id\">bad</p>\
         <p>none</p><h2 data-chunk-id=\"Z_9\">h<span data-chunk-id=\"inner\">s</span></h2>",
    );
    assert_eq!(id_list(&s), ["keep-1", "n1", "n2", "n3", "Z_9"]);
    assert_eq!(s[4].html, r#"<h2 data-chunk-id="Z_9">h<span>s</span></h2>"#);

    // The attribute comes first, the others follow by name.
    let s = sections(r#"<p style="color: red" dir="rtl" data-chunk-id="x1">t</p>"#);
    assert_eq!(s[0].html, r#"<p data-chunk-id="x1" dir="rtl" style="color: red">t</p>"#);

    // Too long an id is replaced.
    let long = "a".repeat(65);
    assert_eq!(id_list(&sections(&format!("<p data-chunk-id=\"{long}\">t</p>"))), ["n1"]);
}

#[test]
fn fresh_ids_never_take_a_kept_id() {
    // The generator's first answer (n1) is used later in the input: the first block must not take it.
    let s = sections(r#"<p>a</p><p data-chunk-id="n1">b</p>"#);
    assert_eq!(id_list(&s), ["n2", "n1"]);

    // A generator that always answers the same id still gives unique ids.
    let mut same = || ChunkId::parse("same").unwrap();
    let s = Html5everSections::new().sectionize("<p>a</p><p>b</p><p>c</p>", &mut same).unwrap();
    assert_eq!(id_list(&s), ["same", "same-1", "same-2"]);
}

#[test]
fn styles_and_colours_are_kept() {
    let s = round_trip(
        r#"<p><span style="color: #ff0000">red</span> <span style="COLOR:blue;position:fixed;font-weight:bold">b</span></p>"#,
    );
    assert!(s[0].html.contains(r#"<span style="color: #ff0000">red</span>"#), "{}", s[0].html);
    assert!(s[0].html.contains(r#"<span style="color: blue; font-weight: bold">b</span>"#), "{}", s[0].html);
    let s = round_trip(
        r#"<table style="border-collapse: collapse; width: 100%"><tr><td style="background-color: rgb(255, 0, 0); border: 1px solid #000; padding: 4px">x</td></tr></table>"#,
    );
    assert!(s[0].html.contains(r#"style="border-collapse: collapse; width: 100%""#), "{}", s[0].html);
    assert!(
        s[0].html.contains(r#"style="background-color: rgb(255, 0, 0); border: 1px solid #000; padding: 4px""#),
        "{}",
        s[0].html
    );
    let s = round_trip(r#"<p style="text-align: center; font-family: 'Times New Roman', serif">c</p>"#);
    assert!(s[0].html.contains("text-align: center"), "{}", s[0].html);
    assert!(s[0].html.contains("font-family: 'Times New Roman', serif"), "{}", s[0].html);
}

#[test]
fn tables_keep_spans() {
    let s = round_trip(
        "<table><caption>Cap</caption><colgroup><col span=\"2\"></colgroup><thead><tr><th colspan=\"2\">H</th></tr></thead>\
         <tbody><tr><td rowspan=\"2\">a</td><td>b</td></tr><tr><td>c</td></tr></tbody><tfoot><tr><td colspan=2>f</td></tr></tfoot></table>",
    );
    assert_eq!(s.len(), 1);
    let h = &s[0].html;
    for part in
        [r#"<th colspan="2">H</th>"#, r#"<td rowspan="2">a</td>"#, r#"<col span="2">"#, r#"<td colspan="2">f</td>"#]
    {
        assert!(h.contains(part), "{part} missing in {h}");
    }
    assert_eq!(s[0].text, "Cap H a b c f");
}

#[test]
fn unicode_and_rtl_survive_byte_for_byte() {
    let samples = [
        "שָׁלוֹם עוֹלָם",
        "مرحبا بالعالم",
        "\u{200F}עברית\u{200E} and English",
        "👩\u{200D}👩\u{200D}👧\u{200D}👦 family, 🏳\u{FE0F}\u{200D}🌈 flag",
        "e\u{0301}te\u{0301} 日本語 한국어 Ελληνικά",
        "\u{202B}embedded\u{202C}",
    ];
    for text in samples {
        let s = round_trip(&format!("<p dir=\"rtl\" lang=\"he\">{text}</p><h1>{text}</h1>{text}"));
        assert_eq!(s.len(), 3);
        for sec in &s {
            assert!(sec.html.contains(text), "{text:?} not in {}", sec.html);
            assert_eq!(sec.text, text);
        }
        assert!(s[0].html.starts_with(r#"<p data-chunk-id="n1" dir="rtl" lang="he">"#));
    }
}

#[test]
fn escaping_is_right() {
    let s = round_trip("<p>a &lt; b &amp;&amp; c &gt; d &quot;q&quot; &nbsp;x</p>a < b & c");
    assert_eq!(s[0].html, r#"<p data-chunk-id="n1">a &lt; b &amp;&amp; c &gt; d "q" &nbsp;x</p>"#);
    assert_eq!(s[0].text, "a < b && c > d \"q\" x");
    assert_eq!(s[1].html, r#"<p data-chunk-id="n2">a &lt; b &amp; c</p>"#);
    let s = round_trip(r#"<a href="/x?a=1&b=&quot;2&quot;" title='say "hi"'>l</a>"#);
    assert!(s[0].html.contains(r#"href="/x?a=1&amp;b=&quot;2&quot;""#), "{}", s[0].html);
}

#[test]
fn text_uses_spaces_at_breaks_cells_and_items() {
    let s = sections(
        "<p>a<br>b<br/>c</p><ul><li>one</li><li>two<ul><li>three</li></ul></li></ul>\
                      <table><tr><td>x</td><td>y</td></tr><tr><td>z</td></tr></table><p>  lots \n\t of   space </p>",
    );
    assert_eq!(s[0].text, "a b c");
    assert_eq!(s[1].text, "one two three");
    assert_eq!(s[2].text, "x y z");
    assert_eq!(s[3].text, "lots of space");
}

#[test]
fn pre_keeps_its_content_across_round_trips() {
    let s = round_trip("<pre>\n\n  indented\n\tline</pre><pre><code>\nx</code></pre>");
    assert_eq!(s[0].html, "<pre data-chunk-id=\"n1\">  indented\n\tline</pre>");
    assert_eq!(s[1].html, "<pre data-chunk-id=\"n2\"><code>\nx</code></pre>");
}

#[test]
fn images_and_links() {
    let png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let html = format!(
        "<p><img src=\"/v1/documents/images/img_0123456789abcdef0123456789abcdef\" alt=\"A\" width=\"10\" height=\"20\"><img src=\"{png}\">\
         <img src=\"https://example.com/x.png\"><img src=\"data:image/svg+xml;base64,PHN2Zz4=\"><img src=\"data:text/html,<script>\">\
         <img src=\"mailto:a@b.c\"><a href=\"mailto:a@b.c\">m</a><a href=\"/rel\">r</a><a href=\"data:text/html,x\">d</a>\
         <a href=\"https://example.com\" rel=\"opener\" target=\"_blank\">h</a></p>"
    );
    let s = round_trip(&html);
    let h = &s[0].html;
    assert!(
        h.contains(
            r#"<img alt="A" height="20" src="/v1/documents/images/img_0123456789abcdef0123456789abcdef" width="10">"#
        ),
        "{h}"
    );
    assert!(h.contains(&format!("<img src=\"{png}\">")), "{h}");
    // A picture from elsewhere is a placeholder (tests/untrusted.rs).
    assert!(h.contains(r#"<span class="remote-image">[remote image: https://example.com/x.png]</span>"#), "{h}");
    assert_eq!(h.matches("<img>").count(), 3, "{h}");
    assert!(h.contains(r#"<a href="mailto:a@b.c" rel="noopener noreferrer">m</a>"#), "{h}");
    assert!(h.contains(r#"<a href="/rel" rel="noopener noreferrer">r</a>"#), "{h}");
    assert!(h.contains(r#"<a rel="noopener noreferrer">d</a>"#), "{h}");
    assert!(h.contains(r#"<a href="https://example.com" rel="noopener noreferrer">h</a>"#), "{h}");
    assert!(!h.contains("svg") && !h.contains("data:text") && !h.contains("target"), "{h}");
}

#[test]
fn lists_keep_start_and_type() {
    let s = round_trip(r#"<ol start="3" type="a" reversed><li>x</li></ol>"#);
    assert_eq!(s[0].html, r#"<ol data-chunk-id="n1" start="3" type="a"><li>x</li></ol>"#);
}

#[test]
fn comments_and_unknown_elements_go_but_text_stays() {
    let s =
        round_trip("<p>a<!-- hidden -->b <font color=red>c</font> <custom-el x=1>d</custom-el> <center>e</center></p>");
    // `<center>` closes the <p> and becomes a div; the stray `</p>` then makes an empty <p>.
    assert_eq!(tags(&s), ["p", "div", "p"]);
    assert_eq!(all_text(&s), "ab c d e");
    assert!(!all_html(&s).contains("hidden"));
    assert!(!all_html(&s).contains("font"));
}

#[test]
fn nesting_is_limited() {
    let nested = |n: usize, tag: &str| format!("{}x{}", format!("<{tag}>").repeat(n), format!("</{tag}>").repeat(n));
    let s = round_trip(&nested(MAX_DEPTH, "div"));
    assert_eq!(s.len(), 1);
    assert_eq!(try_sections(&nested(MAX_DEPTH + 1, "div")), Err(HtmlError::TooDeep));
    // A run is wrapped in a <p>, one level more.
    round_trip(&nested(MAX_DEPTH - 1, "span"));
    assert_eq!(try_sections(&nested(MAX_DEPTH, "span")), Err(HtmlError::TooDeep));
    // Unclosed and mis-nested tags count as nesting.
    assert_eq!(try_sections(&"<b><i>".repeat(200)), Err(HtmlError::TooDeep));
    assert_eq!(try_sections(&format!("<table>{}", "<div>".repeat(1000))), Err(HtmlError::TooDeep));
    // Long flat documents are fine.
    assert_eq!(sections(&"<p>x".repeat(5000)).len(), 5000);
}

#[test]
fn html_bombs_are_refused_quickly() {
    // Unbounded, html5ever would take minutes on these (its tree builder is quadratic in depth).
    for bomb in ["<div>".repeat(1_000_000), "<span><b>".repeat(300_000), format!("<table>{}", "<div>".repeat(300_000))]
    {
        let t = Instant::now();
        assert_eq!(try_sections(&bomb), Err(HtmlError::TooDeep));
        let took = t.elapsed();
        eprintln!("bomb of {} bytes refused in {took:?}", bomb.len());
        assert!(took.as_secs() < 5, "took {took:?}");
        let t = Instant::now();
        let text = text_of(&bomb);
        assert!(text.is_empty());
        assert!(t.elapsed().as_secs() < 5);
    }
}

#[test]
fn ten_thousand_paragraphs() {
    let mut html = String::new();
    for i in 0..10_000 {
        html.push_str(&format!("<p>Paragraph {i} with <b>bold</b>, <a href=\"https://example.com/{i}\">a link</a> and \"quotes\" &amp; more.</p>\n"));
    }
    let adapter = Html5everSections::new();
    let t = Instant::now();
    let s = adapter.sectionize(&html, &mut ids("n")).unwrap();
    let first = t.elapsed();
    assert_eq!(s.len(), 10_000);
    assert_eq!(s[9_999].text, "Paragraph 9999 with bold, a link and \"quotes\" & more.");
    let again = to_html(&s);
    let t = Instant::now();
    let s2 = adapter.sectionize(&again, &mut ids("m")).unwrap();
    let second = t.elapsed();
    assert_eq!(s, s2);
    eprintln!(
        "10,000 paragraphs ({} bytes): {first:?}; again with ids ({} bytes): {second:?}",
        html.len(),
        again.len()
    );
    assert!(first.as_secs() < 10 && second.as_secs() < 10);
}

#[test]
fn text_of_reads_text() {
    assert_eq!(text_of("<h1>Title</h1><p>a<br>b <b>c</b>d</p><script>x()</script><style>p{}</style>"), "Title a b cd");
    assert_eq!(text_of("plain &amp; simple"), "plain & simple");
    assert_eq!(text_of(""), "");
}
