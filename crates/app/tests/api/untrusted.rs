//! Documents are untrusted content: whatever path HTML enters by, a picture from elsewhere
//! than the service becomes a placeholder naming its address (with an upload warning), and
//! `style` lengths are bounded.

use serde_json::json;

use crate::files::{upload, upload_with};
use crate::helpers::*;

const ID: &str = "img_0123456789abcdef0123456789abcdef";

#[tokio::test]
async fn saved_documents_show_no_remote_picture_and_no_page_sized_link() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let own = format!("{}/v1/documents/images/{ID}", app.base);
    let html = format!(
        "<p>Hello <img src=\"https://tracker.example/pixel.gif?u=1\" width=\"1\" height=\"1\"> \
         <img src=\"//tracker.example/p\"><img src=\"{own}\" alt=\"ours\"><img src=\"/v1/documents/images/{ID}\"></p>\
         <p><a href=\"https://phish.example\" style=\"padding: 5000px; margin: -5000px; color: transparent; font-size: 900px\">win</a></p>"
    );
    let r = app
        .send(app.client.put(app.url("/v1/documents/untrusted")).bearer_auth(&key).json(&json!({"html": html})))
        .await;
    r.expect_status(200);

    let r = app.send(app.get("/v1/documents/untrusted").bearer_auth(&key)).await;
    r.expect_status(200);
    let stored = r.json["html"].as_str().unwrap_or_else(|| panic!("html: {r:?}")).to_owned();
    assert!(!stored.contains("tracker.example/pixel.gif?u=1\""), "no remote src: {stored}");
    assert!(
        stored.contains("<span class=\"remote-image\">[remote image: https://tracker.example/pixel.gif?u=1]</span>"),
        "{stored}"
    );
    assert!(stored.contains("<span class=\"remote-image\">[remote image: //tracker.example/p]</span>"), "{stored}");
    assert!(stored.contains(&format!("<img alt=\"ours\" src=\"{own}\">")), "the service's own image: {stored}");
    // The relative form is answered under the base URL too (docs/api.md, "Images").
    assert!(stored.contains(&format!("<img src=\"{own}\">")), "{stored}");
    assert!(
        stored.contains("style=\"padding: 24px; margin: 0px; color: transparent; font-size: 96px\""),
        "bounded style: {stored}"
    );
}

#[tokio::test]
async fn uploads_warn_of_the_remote_pictures_they_replace() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let page = b"<html><body><h1>Report</h1><p><img src=\"https://tracker.example/a.png\"></p>\
                 <p><img src=\"\\\\tracker.example\\b.png\"></p></body></html>";
    let r = upload(&app, &key, "up", "page.html", page).await;
    r.expect_status(200);
    let warnings = r.json["warnings"].as_array().unwrap_or_else(|| panic!("warnings: {r:?}"));
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().is_some_and(|w| w.starts_with("2 pictures from other addresses were replaced"))),
        "{r:?}"
    );
    let html = r.json["html"].as_str().unwrap();
    assert_eq!(html.matches("class=\"remote-image\"").count(), 2, "{html}");
    assert!(!html.contains("<img"), "{html}");

    // Markdown, appended: one picture, one warning; the placeholders already there are not
    // counted again.
    let md = b"# More\n\n![chart](https://tracker.example/chart.png)\n";
    let r = upload_with(&app, &key, &[("session_id", "up"), ("open_mode", "append")], "more.md", md).await;
    r.expect_status(200);
    let warnings: Vec<&str> = r.json["warnings"].as_array().unwrap().iter().filter_map(|w| w.as_str()).collect();
    assert!(warnings.iter().any(|w| w.starts_with("1 picture from another address was replaced")), "{warnings:?}");
    let html = r.json["html"].as_str().unwrap();
    assert_eq!(html.matches("class=\"remote-image\"").count(), 3, "{html}");
    assert!(html.contains("[remote image: https://tracker.example/chart.png]"), "{html}");

    // A file with no remote picture has no such warning.
    let r = upload(&app, &key, "clean", "clean.md", b"# Clean\n\ntext\n").await;
    r.expect_status(200);
    assert!(!r.json["warnings"].to_string().contains("picture"), "{r:?}");
}
