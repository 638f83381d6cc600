//! Paged listings: `limit` and `cursor` in, `Link: <…>; rel="next"` out (RFC 8288, the
//! convention GitHub's API made familiar). The next page's address is absolute, on the public
//! base URL, with the request's own query and the new cursor, so that a client follows it as
//! it is.

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, HttpResponseBuilder};
use redline_domain::page::{Cursor, Page, PageRequest};
use serde::Serialize;

use crate::error::ApiResult;
use crate::query::{Query, DEFAULT_PAGE, MAX_PAGE};

/// The address of the page after this one: the request's path and query with `cursor`
/// replaced, on `base_url`.
pub(crate) fn next_url(req: &HttpRequest, base_url: &str, next: &Cursor) -> String {
    let pairs = actix_web::web::Query::<Vec<(String, String)>>::from_query(req.query_string())
        .map(|q| q.into_inner())
        .unwrap_or_default();
    let mut pairs: Vec<(String, String)> = pairs.into_iter().filter(|(k, _)| k != "cursor").collect();
    pairs.push(("cursor".to_owned(), next.encode()));
    let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
    format!("{}{}?{}", base_url.trim_end_matches('/'), req.uri().path(), query)
}

/// Sets `Link: <next>; rel="next"` when another page follows.
fn link_next(builder: &mut HttpResponseBuilder, req: &HttpRequest, base_url: &str, next: Option<&Cursor>) {
    if let Some(next) = next {
        builder.insert_header((header::LINK, format!("<{}>; rel=\"next\"", next_url(req, base_url, next))));
    }
}

/// The `limit` and `cursor` of a listing of [`DEFAULT_PAGE`] items a page, at most
/// [`MAX_PAGE`]: the OpenAPI document's one description of them (`params(PageParams)`).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[expect(dead_code, reason = "describes the query in the OpenAPI document only; page_of reads it")]
pub struct PageParams {
    /// Most items returned (default 100; above 1000 counts as 1000)
    #[param(minimum = 1)]
    limit: Option<i64>,
    /// Where the page starts: `next_cursor` of the page before (the cursor of the `Link`
    /// header's address)
    #[param(pattern = "^[A-Za-z0-9_-]*$", max_length = 1024)]
    cursor: Option<String>,
}

/// The page a listing's query asks for (`limit`, `cursor`), the listings' defaults; 422 for a
/// bad one.
pub(crate) fn page_of(req: &HttpRequest) -> ApiResult<PageRequest> {
    let mut q = Query::parse(req);
    let page = q.page(DEFAULT_PAGE, MAX_PAGE);
    q.finish()?;
    Ok(page)
}

/// A page's JSON answer: `body` made of its items and its `next_cursor`, with `Link` when
/// another page follows.
pub(crate) fn paged_json<T, B: Serialize>(
    req: &HttpRequest,
    base_url: &str,
    page: Page<T>,
    body: impl FnOnce(Vec<T>, Option<String>) -> B,
) -> HttpResponse {
    let json = serde_json::to_vec(&body(page.items, page.next.as_ref().map(Cursor::encode))).unwrap_or_default();
    paged(req, base_url, page.next.as_ref(), json)
}

/// A page's answer already written as JSON (`json`), with `Link` when a page follows it
/// (`next`): what [`paged_json`] answers, for listings that write their own bytes.
pub(crate) fn paged(req: &HttpRequest, base_url: &str, next: Option<&Cursor>, json: impl Into<Bytes>) -> HttpResponse {
    let mut res = HttpResponse::Ok();
    link_next(&mut res, req, base_url, next);
    res.content_type("application/json").body(json.into())
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;
    use actix_web::HttpResponse;

    use super::*;

    #[test]
    fn the_next_page_keeps_the_query_and_replaces_the_cursor() {
        let req = TestRequest::get().uri("/v1/jobs?status=completed&cursor=old&limit=5").to_http_request();
        let next = Cursor::new(7, "job-1");
        let url = next_url(&req, "https://redline.example/", &next);
        assert_eq!(url, format!("https://redline.example/v1/jobs?status=completed&limit=5&cursor={}", next.encode()));
    }

    #[test]
    fn the_link_header_is_set_only_when_a_page_follows() {
        let req = TestRequest::get().uri("/v1/sessions").to_http_request();
        let mut last = HttpResponse::Ok();
        link_next(&mut last, &req, "http://127.0.0.1:8080", None);
        assert!(last.finish().headers().get(header::LINK).is_none());
        let mut more = HttpResponse::Ok();
        let next = Cursor::new(1, "s");
        link_next(&mut more, &req, "http://127.0.0.1:8080", Some(&next));
        let res = more.finish();
        let link = res.headers().get(header::LINK).unwrap().to_str().unwrap();
        assert_eq!(link, format!("<http://127.0.0.1:8080/v1/sessions?cursor={}>; rel=\"next\"", next.encode()));
    }
}
