//! Pictures: a document shows only the service's own images and `data:` images of an allowed
//! type. Any other picture would be fetched by every reader's browser from wherever the
//! document says (a tracking pixel that tells its owner who opened the document, when and
//! from which address), so it becomes a visible placeholder that names the address as text:
//! `<span class="remote-image">[remote image: https://…]</span>`.
//!
//! Ammonia keeps the `src` of such pictures (it cannot turn an element into another); this
//! pass, on the parsed result, replaces them. It writes the service's own pictures by their
//! path alone (`/v1/documents/images/{id}`, `redline_domain::image_urls`): stored HTML holds
//! no origin of the service. It also bounds `width` and `height`, keeping the picture's
//! proportions.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::{namespace_url, ns, Attribute, LocalName, QualName};
use markup5ever_rcdom::{Handle, Node, NodeData};

use redline_domain::image_urls::{relative_image_id, IMAGE_PATH};

use crate::sanitize::{data_image_ok, trim_url};
use crate::sections::element;

/// The class of the placeholder of a remote picture.
pub(crate) const REMOTE_IMAGE_CLASS: &str = "remote-image";

/// The longest address a placeholder shows (longer ones are cut, with `…`).
const MAX_SHOWN_ADDRESS: usize = 200;

/// The largest `width` or `height` of a picture, in pixels.
const MAX_IMAGE_PX: f64 = 960.0;

/// Which image URLs are the service's own: `/v1/documents/images/{image_id}`, relative or
/// under the public base URL, written exactly as the service writes them (no query, no
/// fragment, no other spelling: anything else is a remote picture).
#[derive(Debug, Clone, Default)]
pub(crate) struct OwnImages {
    /// scheme://host[:port][/path] without a trailing slash.
    base: Option<String>,
}

impl OwnImages {
    pub(crate) fn at(public_base_url: &str) -> Self {
        let base = public_base_url.trim().trim_end_matches('/');
        Self { base: (!base.is_empty()).then(|| base.to_owned()) }
    }

    /// The image id of an own picture's address.
    pub(crate) fn own_id<'a>(&self, src: &'a str) -> Option<&'a str> {
        let rest = match &self.base {
            Some(base) => src.strip_prefix(base.as_str()).unwrap_or(src),
            None => src,
        };
        relative_image_id(rest)
    }

    #[cfg(test)]
    fn is_own(&self, src: &str) -> bool {
        self.own_id(src).is_some()
    }
}

/// Replaces the remote pictures under `root` by placeholders, writes the own ones by their
/// path and bounds the sizes of all; answers how many were replaced.
pub(crate) fn fix_images(root: &Handle, own: &OwnImages) -> usize {
    let mut replaced = 0;
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        let mut children = node.children.borrow_mut();
        for child in children.iter_mut() {
            let NodeData::Element { name, attrs, .. } = &child.data else { continue };
            if name.ns != ns!(html) || &*name.local != "img" {
                stack.push(child.clone());
                continue;
            }
            let src = attrs.borrow().iter().find(|a| &*a.name.local == "src").map(|a| trim_url(&a.value).to_owned());
            match src {
                Some(src) if src.is_empty() => attrs.borrow_mut().retain(|a| &*a.name.local != "src"),
                Some(src) => match own.own_id(&src) {
                    Some(id) => {
                        let path = StrTendril::from(format!("{IMAGE_PATH}{id}"));
                        for a in attrs.borrow_mut().iter_mut().filter(|a| &*a.name.local == "src") {
                            a.value = path.clone();
                        }
                    }
                    None if data_image_ok(&src) => {}
                    None => {
                        *child = placeholder(&src);
                        replaced += 1;
                        continue;
                    }
                },
                None => {}
            }
            bound_size(&mut attrs.borrow_mut());
        }
    }
    replaced
}

/// `<span class="remote-image">[remote image: {address}]</span>`.
fn placeholder(src: &str) -> Handle {
    let mut address: String = src.chars().filter(|c| !c.is_control()).take(MAX_SHOWN_ADDRESS).collect();
    if src.chars().filter(|c| !c.is_control()).nth(MAX_SHOWN_ADDRESS).is_some() {
        address.push('…');
    }
    let text =
        Node::new(NodeData::Text { contents: RefCell::new(StrTendril::from(format!("[remote image: {address}]"))) });
    let class = Attribute {
        name: QualName::new(None, ns!(), LocalName::from("class")),
        value: StrTendril::from_slice(REMOTE_IMAGE_CLASS),
    };
    element("span", vec![class], vec![text])
}

/// A `width` or `height` attribute: pixels or a percentage.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Dimension {
    Px(f64),
    Percent(f64),
}

fn dimension(value: &str) -> Option<Dimension> {
    let v = value.trim_matches(|c: char| c.is_ascii_whitespace());
    let (digits, percent) = match v.strip_suffix('%') {
        Some(d) => (d, true),
        None => (v, false),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, "0"));
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) {
        return None;
    }
    let n: f64 = digits.parse().ok().filter(|n: &f64| n.is_finite())?;
    Some(if percent { Dimension::Percent(n) } else { Dimension::Px(n) })
}

/// Keeps `width` and `height` readable and at most [`MAX_IMAGE_PX`] (or 100%), scaling the
/// other one in proportion when one is reduced; an unreadable one goes.
fn bound_size(attrs: &mut Vec<Attribute>) {
    let get =
        |attrs: &Vec<Attribute>, name: &str| attrs.iter().find(|a| &*a.name.local == name).map(|a| dimension(&a.value));
    let (w, h) = (get(attrs, "width"), get(attrs, "height"));
    attrs.retain(|a| !matches!(&*a.name.local, "width" | "height") || dimension(&a.value).is_some());
    let (mut w, mut h) = (w.flatten(), h.flatten());
    let (w0, h0) = (w, h);
    shrink(&mut w, &mut h);
    shrink(&mut h, &mut w);
    for (name, old, new) in [("width", w0, w), ("height", h0, h)] {
        if old == new {
            continue;
        }
        let value = match new {
            Some(Dimension::Px(n)) => format!("{n}"),
            Some(Dimension::Percent(p)) => format!("{p}%"),
            None => continue,
        };
        if let Some(a) = attrs.iter_mut().find(|a| &*a.name.local == name) {
            a.value = StrTendril::from(value);
        }
    }
}

/// Brings `this` within bounds, scaling `other` in proportion when both are pixels.
fn shrink(this: &mut Option<Dimension>, other: &mut Option<Dimension>) {
    match *this {
        Some(Dimension::Percent(p)) if p > 100.0 => *this = Some(Dimension::Percent(100.0)),
        Some(Dimension::Px(n)) if n > MAX_IMAGE_PX => {
            *this = Some(Dimension::Px(MAX_IMAGE_PX));
            if let Some(Dimension::Px(o)) = *other {
                *other = Some(Dimension::Px((o * MAX_IMAGE_PX / n).round()));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_images() {
        let id = "img_0123456789abcdef0123456789ABCDEF";
        let own = OwnImages::at("https://r.example/");
        assert!(own.is_own(&format!("/v1/documents/images/{id}")));
        assert!(own.is_own(&format!("https://r.example/v1/documents/images/{id}")));
        for other in [
            format!("https://evil.example/v1/documents/images/{id}"),
            format!("//evil.example/v1/documents/images/{id}"),
            format!("https://r.example.evil.example/v1/documents/images/{id}"),
            format!("https://r.example@evil.example/v1/documents/images/{id}"),
            format!("http://r.example/v1/documents/images/{id}"),
            format!("https://r.example/v1/documents/images/{id}?x=1"),
            format!("https://r.example/v1/documents/images/{id}#x"),
            format!("https://r.example/v1/documents/images/{id}/../../x"),
            format!("https://r.example/v1/documents/images/%69mg_{}", &id[4..]),
            format!("https://r.example\\v1/documents/images/{id}"),
            format!("/v1/documents/images/{id}0"),
            "/v1/documents/images/img_".to_owned(),
            "/v1/documents/export/x".to_owned(),
            "https://r.example/".to_owned(),
            "https://r.example".to_owned(),
        ] {
            assert!(!own.is_own(&other), "{other}");
        }
        let relative_only = OwnImages::default();
        assert!(relative_only.is_own(&format!("/v1/documents/images/{id}")));
        assert!(!relative_only.is_own(&format!("https://r.example/v1/documents/images/{id}")));
    }

    #[test]
    fn dimensions() {
        assert_eq!(dimension(" 10 "), Some(Dimension::Px(10.0)));
        assert_eq!(dimension("12.5"), Some(Dimension::Px(12.5)));
        assert_eq!(dimension("50%"), Some(Dimension::Percent(50.0)));
        for bad in ["", "-1", "1e9", "10px", "abc", ".5", "1.", "NaN", "inf"] {
            assert_eq!(dimension(bad), None, "{bad}");
        }
    }
}
