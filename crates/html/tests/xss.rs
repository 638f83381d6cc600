//! Known XSS vectors: the dangerous part goes, the text around it stays.

mod common;

use common::{all_html, all_text, round_trip};

/// Sections `html` and checks that none of `gone` (lower case) is in the output HTML and that
/// the text is `text`.
fn check(html: &str, gone: &[&str], text: &str) -> String {
    let s = round_trip(html);
    let out = all_html(&s);
    let lower = out.to_lowercase();
    for g in gone {
        assert!(!lower.contains(g), "{g:?} survived in {out} (input {html:?})");
    }
    assert_eq!(all_text(&s), text, "text of {out} (input {html:?})");
    out
}

#[test]
fn script_elements() {
    check("<p>before <script>alert(1)</script> after</p>", &["script", "alert"], "before after");
    check("<script src=\"https://evil.example/x.js\"></script><p>ok</p>", &["script", "evil"], "ok");
    check(
        "<p>a<SCRIPT>alert(1)</SCRIPT>b</p><scr<script>ipt>alert(2)</script>",
        &["<script", "alert(1)"],
        "ab ipt>alert(2)",
    );
    // mXSS through <noscript>: parsed as a browser with scripting does, the <img> is a real
    // element and loses its handler (and, not being one of the service's images, becomes a
    // placeholder).
    check(
        "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">t</p></noscript><p>ok</p>",
        &["onerror", "alert", "noscript", "<img"],
        "[remote image: x]\">t ok",
    );
}

#[test]
fn event_handlers() {
    let out =
        check("<p>pic <img src=x onerror=alert(1)> here</p>", &["onerror", "alert"], "pic [remote image: x] here");
    assert!(out.contains("<span class=\"remote-image\">[remote image: x]</span>"), "{out}");
    check("<div onclick=\"alert(1)\" onmouseover='x()'>click</div>", &["onclick", "onmouseover", "alert"], "click");
    check("<body onload=alert(1)><p>x</p></body>", &["onload", "alert"], "x");
    check("<svg onload=alert(1)><text>svg text</text></svg><p>after</p>", &["svg", "onload", "alert"], "after");
    check("<p><a href=\"/x\" onfocus=\"alert(1)\" autofocus>link</a></p>", &["onfocus", "autofocus"], "link");
}

#[test]
fn javascript_urls() {
    for href in [
        "javascript:alert(1)",
        " JaVaScRiPt:alert(1)",
        "\tjavascript:alert(1)",
        "java\tscript:alert(1)",
        "java&#x09;script:alert(1)",
        "&#106;avascript:alert(1)",
        "javascript&colon;alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    ] {
        let out = check(
            &format!("<p><a href=\"{href}\">click</a></p>"),
            &["javascript", "vbscript", "data:", "href"],
            "click",
        );
        assert!(out.contains("<a rel=\"noopener noreferrer\">click</a>"), "{out}");
    }
    check("<img src=\"javascript:alert(1)\">", &["javascript"], "");
    check("<p><img src=\"data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+\"></p>", &["data:", "svg"], "");
}

#[test]
fn embedded_documents_and_forms() {
    check("<p>a</p><iframe src=\"https://evil.example\">inner</iframe><p>b</p>", &["iframe", "evil", "inner"], "a b");
    check("<object data=\"x.swf\"><embed src=\"x.swf\"></object><p>b</p>", &["object", "embed", "swf"], "b");
    check(
        "<form action=\"javascript:alert(1)\"><label>Name</label> <input name=n onfocus=alert(1) autofocus><button formaction=javascript:alert(2)>Go</button></form>",
        &["form", "input", "button", "javascript", "alert"],
        "Name Go",
    );
    check("<base href=\"https://evil.example/\"><meta http-equiv=refresh content=\"0;url=javascript:alert(1)\"><link rel=stylesheet href=x.css><p>ok</p>", &["base", "meta", "link", "javascript"], "ok");
    check("<template><img src=x onerror=alert(1)></template><p>ok</p>", &["template", "onerror"], "ok");
}

#[test]
fn style_elements_and_attributes() {
    check(
        "<style>body { background: url(javascript:alert(1)) }</style><p>styled</p>",
        &["<style", "javascript", "background"],
        "styled",
    );
    check("<p style=\"background:url(javascript:alert(1))\">bg</p>", &["javascript", "url("], "bg");
    check("<p style=\"background-image: url('javascript:alert(1)'); color: red\">bg</p>", &["javascript"], "bg");
    let out = check("<p style=\"width: expression(alert(1)); color: #00ff00\">w</p>", &["expression", "alert"], "w");
    assert!(out.contains("style=\"color: #00ff00\""), "{out}");
    check("<p style=\"width: expr\\65ssion(alert(1))\">w</p>", &["expression", "ssion(", "alert"], "w");
    check(
        "<p style=\"behavior: url(x.htc); -moz-binding: url(x.xml#xss)\">b</p>",
        &["behavior", "binding", "htc"],
        "b",
    );
    check("<p style=\"background: url(data:text/html,x)\">d</p>", &["data:"], "d");
    check(
        "<p style=\"position: fixed; top: 0; z-index: 9999\">overlay</p>",
        &["position", "z-index", "style"],
        "overlay",
    );
}

#[test]
fn math_and_namespace_confusion() {
    check("<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math><p>m</p>", &["math", "onerror", "<img"], "m");
    check("<math href=\"javascript:alert(1)\">x</math><p>after</p>", &["math", "javascript"], "after");
    check(
        "<svg><foreignObject><p onclick=alert(1)>fo</p></foreignObject></svg><p>after</p>",
        &["svg", "onclick"],
        "after",
    );
    check(
        "<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>",
        &["onerror", "math", "form"],
        "",
    );
}

#[test]
fn chunk_ids_cannot_inject() {
    let s = round_trip("<p data-chunk-id='\"><script>alert(1)</script>'>t</p>");
    assert!(!s[0].html.contains("<script"));
    assert_eq!(s[0].id.as_str(), "n1");
}
