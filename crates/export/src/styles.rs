//! What an element and its attributes say about the content: the text style (tags such as
//! `b` and `a`, and the `style` attribute), block alignment, list numbering, pictures.

use std::rc::Rc;

use html5ever::Attribute;

use crate::build::is_html_space;
use crate::css;
use crate::model::{Align, Dir, ImageRef, Numbering, Script, Style};

/// The most ids a run carries (those of the elements around it, innermost last).
const MAX_IDS: usize = 8;

pub(crate) fn attr<'a>(attrs: &'a [Attribute], name: &str) -> Option<&'a str> {
    attrs.iter().find(|a| a.name.ns.is_empty() && &*a.name.local == name).map(|a| &*a.value)
}

/// The alignment of a block (`style="text-align: …"`, else the `align` attribute), in the
/// block's direction `dir`: `left` and `right` are the start and the end of a left-to-right
/// block, the end and the start of a right-to-left one.
pub(crate) fn block_align(attrs: &[Attribute], dir: Option<Dir>) -> Option<Align> {
    let from_style = attr(attrs, "style")
        .and_then(|style| css::declarations(style).filter(|(n, _)| n == "text-align").last().map(|(_, v)| v));
    let value = from_style.or_else(|| attr(attrs, "align"))?.trim().to_ascii_lowercase();
    let rtl = dir == Some(Dir::Rtl);
    match value.as_str() {
        "center" | "middle" => Some(Align::Center),
        "end" => Some(Align::End),
        "start" => Some(Align::Start),
        "right" => Some(if rtl { Align::Start } else { Align::End }),
        "left" => Some(if rtl { Align::End } else { Align::Start }),
        "justify" => Some(Align::Justify),
        _ => None,
    }
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
            let href = attr(attrs, "href").unwrap_or("").trim();
            let noteref = attr(attrs, "role").is_some_and(|r| r.trim() == "doc-noteref");
            if let Some(id) = href.strip_prefix('#').filter(|id| !id.is_empty()) {
                if noteref {
                    s.note = Some(Rc::from(id));
                } else {
                    s.anchor = Some(Rc::from(id));
                    s.link = None;
                }
            } else if let Some(href) = link_target(href) {
                s.link = Some(Rc::from(href.as_str()));
                s.anchor = None;
            }
        }
        "font" => {
            if let Some(c) = attr(attrs, "color").and_then(css::color) {
                s.color = Some(c);
            }
        }
        _ => {}
    }
    match attr(attrs, "dir").map(|d| d.trim().to_ascii_lowercase()).as_deref() {
        Some("rtl") => s.dir = Some(Dir::Rtl),
        Some("ltr") => s.dir = Some(Dir::Ltr),
        Some("auto") => s.dir = None,
        _ => {}
    }
    if let Some(id) = attr(attrs, "id").map(str::trim).filter(|id| !id.is_empty()) {
        if s.ids.len() < MAX_IDS {
            s.ids.push(Rc::from(id));
        }
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

/// Link targets kept: absolute `http`, `https`, `mailto` and `tel` URLs.
/// White space inside is percent-encoded.
pub(crate) fn link_target(href: &str) -> Option<String> {
    let href = href.trim();
    let scheme = href.split_once(':')?.0.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "http" | "https" | "mailto" | "tel") {
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
    let mut img = ImageRef {
        src,
        alt,
        width: pixels(attr(attrs, "width")),
        height: pixels(attr(attrs, "height")),
        width_pct: attr(attrs, "width").and_then(percent),
        link: style.link.clone(),
        rev: None,
    };
    // `style` wins over the attributes, as in a browser.
    if let Some(css) = attr(attrs, "style") {
        for (name, value) in css::declarations(css) {
            match name.as_str() {
                "width" => {
                    if let Some(pct) = percent(value) {
                        img.width_pct = Some(pct);
                        img.width = None;
                    } else if let Some(px) = css_px(value) {
                        img.width = Some(px);
                        img.width_pct = None;
                    }
                }
                "height" => {
                    if let Some(px) = css_px(value) {
                        img.height = Some(px);
                    }
                }
                _ => {}
            }
        }
    }
    if img.width_pct.is_some() && img.width.is_none() && css_height_only(attrs) {
        img.height = None;
    }
    Some(img)
}

/// Whether only a percentage width (no pixel height from `style`) sizes the picture: then
/// the height follows the width (a `height` attribute would distort it).
fn css_height_only(attrs: &[Attribute]) -> bool {
    !attr(attrs, "style").is_some_and(|css| css::declarations(css).any(|(n, v)| n == "height" && css_px(v).is_some()))
}

/// A percentage (`50%`), within 1..=100.
fn percent(value: &str) -> Option<f32> {
    let n: f32 = value.trim().strip_suffix('%')?.trim().parse().ok()?;
    (n.is_finite() && n > 0.0).then(|| n.clamp(1.0, 100.0))
}

/// A CSS length in CSS pixels (`px`, `pt`, `cm`, `mm`, `in`; a bare number is pixels).
fn css_px(value: &str) -> Option<u32> {
    let v = value.trim().to_ascii_lowercase();
    let (number, factor) = [("px", 1.0), ("pt", 96.0 / 72.0), ("cm", 96.0 / 2.54), ("mm", 96.0 / 25.4), ("in", 96.0)]
        .iter()
        .find_map(|(unit, f)| v.strip_suffix(unit).map(|n| (n.trim().to_string(), *f)))
        .unwrap_or((v.clone(), 1.0));
    let n: f64 = number.parse().ok()?;
    let px = n * factor;
    (px.is_finite() && px >= 1.0).then(|| px.min(100_000.0) as u32)
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
        assert_eq!(link_target("tel:+1555"), Some("tel:+1555".to_string()));
    }

    #[test]
    fn lengths_and_alignment() {
        assert_eq!(css_px("120px"), Some(120));
        assert_eq!(css_px("72pt"), Some(96));
        assert_eq!(css_px("2.54cm"), Some(96));
        assert_eq!(css_px("auto"), None);
        assert_eq!(percent("50%"), Some(50.0));
        assert_eq!(percent("500%"), Some(100.0));
        assert_eq!(percent("50"), None);
    }
}
