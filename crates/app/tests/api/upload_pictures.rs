//! Pictures of uploads that are not DOCX files (docs/api.md, "Images"): `data:` pictures of
//! HTML and Markdown files and RTF `\pict` pictures go to the blob store and are served like
//! every other picture, listed in the upload's `images`.

use crate::files::{image_srcs, upload};
use crate::helpers::*;

/// The bytes of a PNG header and more: what is stored is served back unchanged.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
        out.push_str(&"=".repeat(3 - chunk.len()));
    }
    out
}

async fn served(app: &TestApp, html: &str) -> Vec<u8> {
    let srcs = image_srcs(html);
    assert_eq!(srcs.len(), 1, "{html}");
    assert!(srcs[0].contains("/v1/documents/images/img_"), "{html}");
    let r = app.client.get(&srcs[0]).send().await.expect("the picture's answer");
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.headers().get("content-type").and_then(|v| v.to_str().ok()), Some("image/png"));
    // An account's picture: kept by the browser, never by a shared cache.
    let header = |name: &str| r.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
    assert_eq!(header("cache-control").as_deref(), Some("private, max-age=31536000, immutable"));
    assert_eq!(header("x-content-type-options").as_deref(), Some("nosniff"));
    r.bytes().await.expect("the picture's bytes").to_vec()
}

#[tokio::test]
async fn data_pictures_of_html_and_markdown_go_to_the_blob_store() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let url = format!("data:image/png;base64,{}", base64(PNG));
    for (name, file) in [
        ("page.html", format!("<h1>Title</h1><p>Look: <img alt=\"dot\" src='{url}'></p>")),
        ("notes.md", format!("# Title\n\nLook: ![dot]({url})\n")),
    ] {
        let r = upload(&app, &key, "pics", name, file.as_bytes()).await;
        r.expect_status(200);
        let html = r.json["html"].as_str().unwrap();
        assert!(!html.contains("data:"), "{html}");
        assert_eq!(r.json["images"][0]["content_type"], "image/png", "{r:?}");
        assert_eq!(served(&app, html).await, PNG);
    }
}

#[tokio::test]
async fn rtf_pictures_go_to_the_blob_store() {
    let app = spawn_app().await;
    let key = app.agent_key().await;
    let hex: String = PNG.iter().map(|b| format!("{b:02x}")).collect();
    let rtf = format!("{{\\rtf1 Look: {{\\pict\\pngblip\\picw1\\pich1 {hex}}} there.\\par}}");
    let r = upload(&app, &key, "rtf", "pic.rtf", rtf.as_bytes()).await;
    r.expect_status(200);
    let html = r.json["html"].as_str().unwrap();
    assert_eq!(r.json["images"].as_array().map(Vec::len), Some(1), "{r:?}");
    assert_eq!(served(&app, html).await, PNG);
}
