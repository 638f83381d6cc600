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

/// Every page the app's router names (`path === '/…'` and `href` of its navigation in
/// `app.js`) is served, so that a link opened in a new tab or a reload finds the app.
#[actix_web::test]
async fn every_path_the_router_names_is_a_served_page() {
    let svc = app().await;
    let js = ASSETS
        .iter()
        .find(|(n, _)| *n == "app.js")
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .expect("app.js");
    let named: Vec<&str> = js
        .split(['\'', '`'])
        .filter(|s| s.starts_with('/') && !s.starts_with("/v1/") && !s.ends_with('/') && !s.contains(['$', ' ', '(']))
        .collect();
    assert!(named.contains(&"/settings/webhooks") && named.contains(&"/usage"), "{named:?}");
    for path in named {
        let res = web_test::call_service(&svc, web_test::TestRequest::get().uri(path).to_request()).await;
        assert_eq!(res.status(), StatusCode::OK, "{path} is named by app.js and not served");
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
    for (name, _) in ASSETS.iter().filter(|(n, _)| is_app_module(n)) {
        let link = format!("<link rel=\"modulepreload\" href=\"/assets/{}/{name}\">", web.version());
        assert!(html.contains(&link), "{name} is not preloaded");
    }
    assert!(!html.contains(PRELOAD_PLACEHOLDER));
    // The API reference's scripts are not the app's: its pages neither load nor preload them.
    for name in REFERENCE_SCRIPTS {
        assert!(ASSETS.iter().any(|(n, _)| n == name), "{name} is an asset");
        assert!(!html.contains(name), "{name} is on the app's page");
    }
}

#[actix_web::test]
async fn the_api_reference_is_a_page_of_its_own_under_the_same_policy() {
    let svc = app().await;
    let version = WebApp::new().version().to_owned();
    let res = web_test::call_service(&svc, web_test::TestRequest::get().uri(REFERENCE_PATH).to_request()).await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(header_of(&res, header::CONTENT_TYPE).starts_with("text/html"));
    assert_eq!(header_of(&res, header::CACHE_CONTROL), "no-cache");
    let csp = header_of(&res, header::CONTENT_SECURITY_POLICY);
    assert_eq!(csp, WebApp::new().csp.to_str().unwrap_or_default(), "the app's policy");
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("script-src 'self'"), "{csp}");
    assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), "{csp}");
    assert_eq!(header_of(&res, header::X_FRAME_OPTIONS), "DENY");
    assert_eq!(header_of(&res, header::X_CONTENT_TYPE_OPTIONS), "nosniff");
    assert_eq!(header_of(&res, header::REFERRER_POLICY), "no-referrer");
    let body = web_test::read_body(res).await;
    let html = String::from_utf8_lossy(&body);
    assert!(html.contains("data-url=\"/openapi.json\""), "{html}");
    assert!(!html.contains("://") && !html.contains("\"//"), "no address of another origin: {html}");
    assert!(!html.contains(BASE_PLACEHOLDER));
    // Every script is one of ours, from a file under this version: no inline script.
    assert_eq!(html.matches("<script").count(), REFERENCE_SCRIPTS.len());
    for name in REFERENCE_SCRIPTS {
        assert!(html.contains(&format!("<script src=\"/assets/{version}/{name}\" defer></script>")), "{name}");
    }
    for name in ["vendor/swagger-ui/swagger-ui-bundle.js", "vendor/swagger-ui/swagger-ui.css", "reference.js"] {
        let uri = format!("/assets/{version}/{name}");
        let res = web_test::call_service(&svc, web_test::TestRequest::get().uri(&uri).to_request()).await;
        assert_eq!(res.status(), StatusCode::OK, "{uri}");
        assert_eq!(header_of(&res, header::CACHE_CONTROL), "public, max-age=31536000, immutable");
    }
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
    // The page templates are served as pages, not as assets.
    for template in [APP_TEMPLATE, REFERENCE_TEMPLATE] {
        let uri = format!("/assets/{version}/{template}");
        let res = web_test::call_service(&svc, web_test::TestRequest::get().uri(&uri).to_request()).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{uri}");
    }
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
