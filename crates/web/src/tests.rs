use actix_web::http::{header, StatusCode};
use actix_web::{test as web_test, App};

use super::*;

async fn app(
) -> impl actix_web::dev::Service<actix_http::Request, Response = actix_web::dev::ServiceResponse, Error = actix_web::Error>
{
    web_test::init_service(App::new().configure(service())).await
}

fn header_of(res: &actix_web::dev::ServiceResponse, name: header::HeaderName) -> String {
    res.headers().get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned()
}

#[actix_web::test]
async fn every_page_is_the_app_with_the_security_headers() {
    let svc = app().await;
    for path in ["/", "/signin", "/documents", "/documents/report-1", "/settings/keys", "/claim/ho_abc"] {
        let res = web_test::call_service(&svc, web_test::TestRequest::get().uri(path).to_request()).await;
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let csp = header_of(&res, header::CONTENT_SECURITY_POLICY);
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), "{csp}");
        assert_eq!(header_of(&res, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
        assert_eq!(header_of(&res, header::REFERRER_POLICY), "no-referrer");
        assert_eq!(header_of(&res, header::CACHE_CONTROL), "no-cache");
        assert!(header_of(&res, header::CONTENT_TYPE).starts_with("text/html"));
        let body = web_test::read_body(res).await;
        let html = String::from_utf8_lossy(&body);
        assert!(html.contains("<script type=\"importmap\">"));
        assert!(!html.contains(BASE_PLACEHOLDER), "the asset base is filled in");
    }
}

#[actix_web::test]
async fn the_import_map_is_the_only_inline_script_and_its_hash_is_allowed() {
    let web = WebApp::new();
    let html = String::from_utf8_lossy(&web.page.body).into_owned();
    let hashes = import_map_hashes(&html);
    assert_eq!(hashes.len(), 1);
    assert!(web.csp.to_str().unwrap_or_default().contains(&format!("'sha256-{}'", hashes[0])));
    // Every other script is a module loaded from a file.
    assert_eq!(html.matches("<script").count(), 2, "the import map and the entry module");
    assert!(html.contains(&format!("<script type=\"module\" src=\"/assets/{}/app.js\"></script>", web.version())));
    // Every other module is preloaded, so imports do not load one level after another.
    for (name, _) in ASSETS.iter().filter(|(n, _)| n.ends_with(".js") && *n != "app.js") {
        let link = format!("<link rel=\"modulepreload\" href=\"/assets/{}/{name}\">", web.version());
        assert!(html.contains(&link), "{name} is not preloaded");
    }
    assert!(!html.contains(PRELOAD_PLACEHOLDER));
}

#[actix_web::test]
async fn assets_are_immutable_under_their_version_and_revalidate_by_strong_etag() {
    let svc = app().await;
    let version = WebApp::new().version().to_owned();
    let uri = format!("/assets/{version}/app.js");
    let res = web_test::call_service(&svc, web_test::TestRequest::get().uri(&uri).to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(header_of(&res, header::CACHE_CONTROL), "public, max-age=31536000, immutable");
    assert!(header_of(&res, header::CONTENT_TYPE).starts_with("text/javascript"));
    let etag = header_of(&res, header::ETAG);
    assert!(etag.starts_with('"') && !etag.starts_with("W/"), "a strong ETag: {etag}");

    let again =
        web_test::TestRequest::get().uri(&uri).insert_header((header::IF_NONE_MATCH, etag.as_str())).to_request();
    let res = web_test::call_service(&svc, again).await;
    assert_eq!(res.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(header_of(&res, header::ETAG), etag);

    let other = web_test::TestRequest::get().uri(&uri).insert_header((header::IF_NONE_MATCH, "\"other\"")).to_request();
    assert_eq!(web_test::call_service(&svc, other).await.status(), StatusCode::OK);
}

#[actix_web::test]
async fn another_version_or_an_unknown_file_is_not_found() {
    let svc = app().await;
    let version = WebApp::new().version().to_owned();
    for uri in ["/assets/0000000000000000/app.js".to_owned(), format!("/assets/{version}/nothing.js")] {
        let res = web_test::call_service(&svc, web_test::TestRequest::get().uri(&uri).to_request()).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{uri}");
        assert_eq!(header_of(&res, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    }
    // The page template is served as a page, not as an asset.
    let res = web_test::call_service(
        &svc,
        web_test::TestRequest::get().uri(&format!("/assets/{version}/index.html")).to_request(),
    )
    .await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
}

#[test]
fn the_version_is_a_stable_hex_hash() {
    let web = WebApp::new();
    assert_eq!(web.version().len(), 16);
    assert!(web.version().bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(WebApp::new().version(), web.version(), "the same assets, the same version");
}

#[test]
fn base64_matches_the_standard_alphabet_and_padding() {
    assert_eq!(base64(b""), "");
    assert_eq!(base64(b"f"), "Zg==");
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(base64(b"foo"), "Zm9v");
    assert_eq!(base64(b"\xfb\xff"), "+/8=");
}

#[test]
fn every_vendored_module_is_named_in_the_third_party_file() {
    let third_party = include_str!("../THIRD_PARTY.md");
    for (name, _) in ASSETS.iter().filter(|(name, _)| name.starts_with("vendor/")) {
        assert!(third_party.contains(&format!("`assets/{name}`")), "{name} is not in THIRD_PARTY.md");
    }
}
