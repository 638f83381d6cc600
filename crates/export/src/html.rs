//! HTML: a standalone UTF-8 document around the stored body. The body is sanitized HTML
//! and is written as given, except that `/v1/documents/images/{id}` pictures are embedded
//! as `data:` URLs so that the file shows them without the service.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use html5ever::serialize::{serialize, SerializeOpts, TraversalScope};
use html5ever::tendril::StrTendril;
use markup5ever_rcdom::{Handle, NodeData, SerializableHandle};
use redline_ports::ImageSource;

use crate::image::{self, IMAGE_PATH};
use crate::parse;
use crate::xml::escape_html;

const CSS: &str = "\
body { font-family: system-ui, -apple-system, \"Segoe UI\", Roboto, \"Helvetica Neue\", Arial, sans-serif; \
line-height: 1.5; color: #222; max-width: 50em; margin: 2em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #999; padding: .3em .6em; vertical-align: top; }
th { background: #f2f2f2; }
img { max-width: 100%; height: auto; }
pre { background: #f5f5f5; padding: .6em; overflow-x: auto; }
blockquote { border-left: 3px solid #ccc; margin-left: 0; padding-left: 1em; color: #555; }
";

pub(crate) fn export(body: &str, title: &str, images: &dyn ImageSource) -> Vec<u8> {
    let body = embed_images(body, images);
    let mut out = String::with_capacity(body.len() + CSS.len() + title.len() + 256);
    out.push_str("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    out.push_str(&escape_html(title));
    out.push_str("</title>\n<style>\n");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n");
    out.push_str(body.trim_end());
    out.push_str("\n</body>\n</html>\n");
    out.into_bytes()
}

/// The body with the service's image URLs replaced by `data:` URLs (as given when it has
/// none, or none the source knows).
fn embed_images(body: &str, images: &dyn ImageSource) -> String {
    if !body.contains(IMAGE_PATH) {
        return body.to_string();
    }
    let fragment = parse::parse_fragment(body);
    let root = fragment.root();
    let mut changed = false;
    let mut stack: Vec<Handle> = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if let NodeData::Element { name, attrs, .. } = &node.data {
            if &*name.local == "img" {
                for a in attrs.borrow_mut().iter_mut().filter(|a| &*a.name.local == "src") {
                    if image::image_id(&a.value).is_none() {
                        continue;
                    }
                    if let Some(pic) = image::resolve(&a.value, images) {
                        let url = format!("data:{};base64,{}", pic.kind.content_type(), STANDARD.encode(&pic.bytes));
                        a.value = StrTendril::from(url);
                        changed = true;
                    }
                }
            }
        }
        stack.extend(node.children.borrow().iter().cloned());
    }
    if !changed {
        return body.to_string();
    }
    let mut out = Vec::with_capacity(body.len() * 2);
    let opts = SerializeOpts { traversal_scope: TraversalScope::ChildrenOnly(None), ..SerializeOpts::default() };
    if serialize(&mut out, &SerializableHandle::from(root), opts).is_err() {
        return body.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|_| body.to_string())
}
