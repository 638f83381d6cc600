//! The routes, one module per area. Handlers extract, convert to domain types, make one call
//! into `core`, and map the answer to a response type.

pub mod account;
pub mod agents;
pub mod attachments;
pub mod auth;
pub mod chat;
pub mod documents;
pub mod exports;
pub mod invitations;
pub mod job_body;
pub mod jobs;
pub mod meta;
pub mod sessions;
pub mod templates;
pub mod usage;
pub mod users;
pub mod webhooks;

use actix_web::dev::ResourceDef;
use actix_web::http::Method;
use actix_web::{web, FromRequest, Handler, Responder};

/// Registers every route of the service, and leaves in the app data the [`KnownPaths`] that
/// the default service answers 405 from.
pub fn configure(cfg: &mut web::ServiceConfig) {
    let mut routes = Routes { cfg, known: KnownPaths(Vec::new()) };
    meta::configure(&mut routes);
    // The hottest authenticated reads next: actix tries routes in order, and every route with
    // a `{param}` before a match costs a regex run (about 6 % of the CPU of `GET /v1/sessions`
    // when it came after twenty others). No pattern of these two overlaps one registered later.
    sessions::configure(&mut routes);
    jobs::configure(&mut routes);
    auth::configure(&mut routes);
    users::configure(&mut routes);
    account::configure(&mut routes);
    invitations::configure(&mut routes);
    agents::configure(&mut routes);
    // Before `documents`: `/v1/documents/export…` must not be taken for `/v1/documents/{session_id}`.
    exports::configure(&mut routes);
    documents::configure(&mut routes);
    templates::configure(&mut routes);
    chat::configure(&mut routes);
    attachments::configure(&mut routes);
    usage::configure(&mut routes);
    webhooks::configure(&mut routes);
    let Routes { cfg, known } = routes;
    cfg.app_data(known);
}

/// Registers routes with actix and remembers each one's pattern and method.
pub struct Routes<'a> {
    cfg: &'a mut web::ServiceConfig,
    known: KnownPaths,
}

impl Routes<'_> {
    fn add<F, Args>(&mut self, method: Method, path: &'static str, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        let route = web::method(method.clone()).to(handler);
        if crate::idempotency::honoured(&method, path) {
            let middleware = actix_web::middleware::from_fn(crate::idempotency::middleware);
            // Guarded by the method, as `cfg.route` guards its resource: another method of the
            // path falls through to the other routes and the default service (its 405's JSON).
            let resource = web::resource(path).guard(actix_web::guard::Method(method.clone()));
            self.cfg.service(resource.wrap(middleware).route(route));
        } else {
            self.cfg.route(path, route);
        }
        match self.known.0.iter_mut().find(|(pattern, _)| pattern.pattern() == Some(path)) {
            Some((_, methods)) => methods.push(method),
            None => self.known.0.push((ResourceDef::new(path), vec![method])),
        }
        self
    }

    pub fn get<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.add(Method::GET, path, handler)
    }

    pub fn post<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.add(Method::POST, path, handler)
    }

    pub fn put<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.add(Method::PUT, path, handler)
    }

    pub fn patch<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.add(Method::PATCH, path, handler)
    }

    pub fn delete<F, Args>(&mut self, path: &'static str, handler: F) -> &mut Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.add(Method::DELETE, path, handler)
    }
}

/// Every route's pattern with its methods, in the order they were registered.
pub struct KnownPaths(Vec<(ResourceDef, Vec<Method>)>);

impl KnownPaths {
    /// Each registered pattern with its methods.
    pub fn routes(&self) -> impl Iterator<Item = (&str, &[Method])> {
        self.0.iter().filter_map(|(pattern, methods)| Some((pattern.pattern()?, methods.as_slice())))
    }

    /// The methods `path` answers to, for an `Allow` header: empty when no route has the path.
    /// A path may match more than one pattern (`/v1/documents/export` is also a
    /// `/v1/documents/{session_id}`): it answers to the methods of all of them. HEAD goes with
    /// GET (the `head_as_get` middleware), and OPTIONS with any.
    pub fn allowed(&self, path: &str) -> Vec<Method> {
        let mut found: Vec<Method> = Vec::new();
        for (pattern, methods) in &self.0 {
            if pattern.is_match(path) {
                found.extend(methods.iter().cloned());
            }
        }
        if found.is_empty() {
            return found;
        }
        if found.contains(&Method::GET) {
            found.push(Method::HEAD);
        }
        found.push(Method::OPTIONS);
        const ORDER: [Method; 7] =
            [Method::GET, Method::HEAD, Method::POST, Method::PUT, Method::PATCH, Method::DELETE, Method::OPTIONS];
        ORDER.into_iter().filter(|m| found.contains(m)).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use actix_web::{test, App, HttpRequest, HttpResponse};

    use super::*;

    /// The paths that are not part of the API: operations and the document itself.
    const UNDOCUMENTED: [&str; 4] = ["/healthz", "/readyz", "/metrics", "/openapi.json"];

    #[actix_web::test]
    async fn every_route_is_in_the_openapi_document_and_nothing_else_is() {
        async fn list(req: HttpRequest) -> HttpResponse {
            let known = req.app_data::<KnownPaths>().expect("registered by configure");
            let routes: Vec<String> = known
                .routes()
                .flat_map(|(path, methods)| {
                    methods.iter().map(move |m| format!("{} {path}", m.as_str().to_lowercase()))
                })
                .collect();
            HttpResponse::Ok().json(routes)
        }
        let app = test::init_service(App::new().configure(configure).route("/test/routes", web::get().to(list))).await;
        let served: Vec<String> =
            test::call_and_read_body_json(&app, test::TestRequest::get().uri("/test/routes").to_request()).await;
        let served: BTreeSet<String> =
            served.into_iter().filter(|r| !UNDOCUMENTED.iter().any(|p| r.ends_with(&format!(" {p}")))).collect();

        let doc = serde_json::to_value(crate::openapi::document()).expect("the document as JSON");
        let mut documented = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().expect("paths") {
            for method in item.as_object().expect("path item").keys() {
                documented.insert(format!("{method} {path}"));
            }
        }
        assert_eq!(served, documented, "routes served (left) and documented in the OpenAPI document (right)");
        assert!(served.len() > 40, "{served:?}");
    }
}
