//! HTML as the API answers it: the service's own pictures under the public base URL
//! (`redline_domain::image_urls`), whatever form the stored HTML holds them in (by their
//! path, or under an origin stored before that rule).

use std::borrow::Cow;

use redline_domain::image_urls::public_image_urls;
use serde_json::Value;

/// `html` with its own pictures under `base`; moved through unchanged when none needs it.
pub fn html(html: String, base: &str) -> String {
    match public_image_urls(&html, base) {
        Cow::Borrowed(_) => html,
        Cow::Owned(resolved) => resolved,
    }
}

/// Every string of `value`, at any depth, under a key that ends in `html` (`html`,
/// `updated_html`, `old_html`, `new_html`, …), as [`html`] answers it.
pub fn in_value(value: &mut Value, base: &str) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if key.ends_with("html") => {
                        if let Cow::Owned(resolved) = public_image_urls(s, base) {
                            *s = resolved;
                        }
                    }
                    _ => in_value(v, base),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| in_value(v, base)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_html_field_at_any_depth_and_no_other_is_answered_under_the_base() {
        let pic = "<img src=\"/v1/documents/images/img_0123456789abcdef0123456789abcdef\">";
        let answered = pic.replace("/v1/", "https://r.example/v1/");
        let mut v = json!({
            "html": pic,
            "result": {"document_changes": {"updated_html": pic, "changes": [{"old_html": pic, "new_html": null}]}},
            "events": [{"content": {"new_html": pic, "message": pic}}],
            "response": pic,
        });
        in_value(&mut v, "https://r.example/");
        assert_eq!(
            v,
            json!({
                "html": answered,
                "result": {"document_changes": {"updated_html": answered, "changes": [{"old_html": answered, "new_html": null}]}},
                "events": [{"content": {"new_html": answered, "message": pic}}],
                "response": pic,
            })
        );
    }
}
