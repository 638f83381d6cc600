// @ts-check
// The API reference at /docs (`reference.html`): Swagger UI, vendored in `vendor/swagger-ui/`,
// shows the OpenAPI document named by the page's `data-url`. A classic script, like the bundle
// it follows (both deferred, so they run in order once the page is parsed); no page of the app
// loads either.
//
// What the options keep out: `validatorUrl: null`, the badge that would send the document's
// address to an online validator; `queryConfigEnabled: false`, a `?url=` that would show
// another document on this origin. `persistAuthorization` stays off: a key typed into
// Authorize lives in the page's memory only. Nothing here can reach another origin anyway: the
// policy's `connect-src` is this origin.
{
  const root = document.getElementById('reference');
  const SwaggerUIBundle = /** @type {any} */ (window).SwaggerUIBundle;
  if (root && SwaggerUIBundle) {
    SwaggerUIBundle({
      url: root.dataset.url,
      domNode: root,
      validatorUrl: null,
      queryConfigEnabled: false,
      persistAuthorization: false,
      deepLinking: true,
    });
  }
}
