//! What an element and its attributes say about the content: the text style (tags such as
//! `b` and `a`, and the `style` attribute), block alignment, list numbering, pictures.

use std::rc::Rc;

use html5ever::Attribute;

use crate::build::is_html_space;
use crate::css;
use crate::model::{Align, ImageRef, Numbering, Script, Style};

pub(crate) fn attr<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a str> {
    attrs.iter().find(|a| a.name.ns.is_empty() && &*a.name.local == name).map(|a| &*a.value)
}

/// `text-align` of a block.
pub(crate) fn block_align(attrs: &[Attribute]) -> Option<Align> {
    let style = attr(attrs, "style")?;
    css::declarations(style).filter(|(n, _)| n == "text-align").last().and_then(|(_, v)| {
        match v.to_ascii_lowercase().as_str() {
            "center" => Some(Align::Center),
            "right" | "end" => Some(Align::End),
            "left" | "start" => Some(Align::Start),
            "justify" => Some(Align::Justify),
            _ => None,
        }
    })
}

/// The style of an element's content: the parent's, changed by the element and its `style`.
pub(crate) fn element_style(tag: &str, attrs: &[Attribute], parent: &Style) -> Style {
    let mut s = parent.clone();
    match tag {
        "b" | "strong" | "th" => s.bold = true,
        "i" | "em" | "cite" | "dfn" | "var" => s.italic = true,
        "u" | "ins" => s.underline = true,
        "s" | "strike" | "del" => s.strike = true,
        "code" | "kbd" | "samp" | "tt" => s.code = true,
        "sup" => s.script = Script::Super,
        "sub" => s.script = Script::Sub,
        "mark" => s.mark = true,
        "a" => {
            if let Some(href) = attr(attrs, "href").and_then(link_target) {
                s.link = Some(Rc::from(href.as_str()));
            }
        }
        "font" => {
            if let Some(c) = attr(attrs, "color").and_then(css::color) {
                s.color = Some(c);
            }
        }
        _ => {}
    }
    if let Some(style) = attr(attrs, "style") {
        for (name, value) in css::declarations(style) {
            let v = value.to_ascii_lowercase();
            match name.as_str() {
                "color" => {
                    if let Some(c) = css::color(value) {
                        s.color = Some(c);
                    }
                }
                "background-color" | "background" if !matches!(tag, "td" | "th" | "table" | "tr") => {
                    if let Some(c) = css::background_color(value) {
                        s.background = Some(c);
                    }
                }
                "font-weight" => match v.as_str() {
                    "bold" | "bolder" | "600" | "700" | "800" | "900" => s.bold = true,
                    "normal" | "lighter" | "100" | "200" | "300" | "400" | "500" => s.bold = false,
                    _ => {}
                },
                "font-style" => match v.as_str() {
                    "italic" | "oblique" => s.italic = true,
                    "normal" => s.italic = false,
                    _ => {}
                },
                "text-decoration" | "text-decoration-line" => {
                    if v.split_whitespace().any(|w| w == "none") {
                        s.underline = false;
                        s.strike = false;
                    }
                    if v.contains("underline") {
                        s.underline = true;
                    }
                    if v.contains("line-through") {
                        s.strike = true;
                    }
                }
                "vertical-align" => match v.as_str() {
                    "super" => s.script = Script::Super,
                    "sub" => s.script = Script::Sub,
                    "baseline" => s.script = Script::Normal,
                    _ => {}
                },
                "font-size" => {
                    if let Some(pt) = css::font_size_pt(value) {
                        s.size_pt = Some(pt);
                    }
                }
                _ => {}
            }
        }
    }
    s
}

/// Link targets kept: absolute `http`, `https` and `mailto` URLs.
/// White space inside is percent-encoded.
pub(crate) fn link_target(href: &str) -> Option<String> {
    let href = href.trim();
    let scheme = href.split_once(':')?.0.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https" | "mailto") {
        return None;
    }
    Some(
        href.chars()
            .filter(|c| !c.is_control() || c.is_whitespace())
            .map(|c| if c.is_whitespace() { "%20".to_string() } else { c.to_string() })
            .collect(),
    )
}

/// A pixel length attribute (`120`, `120px`).
pub(crate) fn pixels(value: Option<&str>) -> Option<u32> {
    let v = value?.trim();
    let v = v.strip_suffix("px").unwrap_or(v).trim();
    let n: f64 = v.parse().ok()?;
    (n.is_finite() && n >= 1.0).then(|| n.min(100_000.0) as u32)
}

pub(crate) fn image(attrs: &[Attribute], style: &Style) -> Option<ImageRef> {
    let src = attr(attrs, "src").unwrap_or("").trim().to_string();
    let alt: String =
        attr(attrs, "alt").unwrap_or("").split(is_html_space).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    if src.is_empty() && alt.is_empty() {
        return None;
    }
    Some(ImageRef {
        src,
        alt,
        width: pixels(attr(attrs, "width")),
        height: pixels(attr(attrs, "height")),
        link: style.link.clone(),
    })
}

pub(crate) fn numbering(tag: &str, attrs: &[Attribute]) -> Numbering {
    let mut n = if tag == "ol" { Numbering::Decimal } else { Numbering::Bullet };
    if tag == "ol" {
        match attr(attrs, "type").map(str::trim) {
            Some("a") => n = Numbering::LowerAlpha,
            Some("A") => n = Numbering::UpperAlpha,
            Some("i") => n = Numbering::LowerRoman,
            Some("I") => n = Numbering::UpperRoman,
            Some("1") => n = Numbering::Decimal,
            _ => {}
        }
    }
    if let Some(style) = attr(attrs, "style") {
        for (name, value) in css::declarations(style) {
            if name == "list-style-type" || name == "list-style" {
                for word in value.to_ascii_lowercase().split_whitespace() {
                    n = match word {
                        "disc" | "circle" | "square" | "none" => Numbering::Bullet,
                        "decimal" | "decimal-leading-zero" => Numbering::Decimal,
                        "lower-alpha" | "lower-latin" => Numbering::LowerAlpha,
                        "upper-alpha" | "upper-latin" => Numbering::UpperAlpha,
                        "lower-roman" => Numbering::LowerRoman,
                        "upper-roman" => Numbering::UpperRoman,
                        _ => continue,
                    };
                }
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_keep_only_absolute_web_and_mail_targets() {
        assert_eq!(link_target(" https://x.test/a b "), Some("https://x.test/a%20b".to_string()));
        assert_eq!(link_target("mailto:a@b.test"), Some("mailto:a@b.test".to_string()));
        assert_eq!(link_target("javascript:alert(1)"), None);
        assert_eq!(link_target("/relative"), None);
    }
}
