/**
 * The API reference page's own parts: its HTML, its small stylesheet and the script that starts
 * Swagger UI (swagger-ui-dist) on the OpenAPI document. No inline script or style: the page's
 * Content-Security-Policy (api-docs.ts) allows scripts and stylesheets from this site only.
 *
 * The script keeps Swagger UI on this site: the document comes from this site's URL
 * (data-url), the validator badge is off (validatorUrl null: it would send the document's URL to
 * validator.swagger.io), ?url= and ?configUrl= in the address are ignored (queryConfigEnabled
 * false), there is no top bar to load another document from, and a "Try it out" request to any
 * other origin is refused before it is sent (the CSP's connect-src 'self' would block it too, but
 * as a violation).
 */
import escapeHtml from 'escape-html';

export const API_DOCS_JS = `(function () {
  'use strict';
  var root = document.getElementById('swagger-ui');
  var refuseOtherOrigins = function (request) {
    var target = new URL(request.url, window.location.href);
    if (target.origin !== window.location.origin) {
      // An aborted signal makes fetch reject before anything is sent, with this reason, which
      // Swagger UI shows as the response (throwing here instead would break its rendering).
      request.signal = AbortSignal.abort(new Error('This page sends requests only to ' + window.location.origin + ', not to ' + target.origin + '.'));
    }
    return request;
  };
  // Swagger UI's server list is a select with no accessible name (axe-core select-name): name it.
  new MutationObserver(function () {
    var servers = root.querySelector('select#servers:not([aria-label])');
    if (servers) servers.setAttribute('aria-label', 'Server');
  }).observe(root, { childList: true, subtree: true });
  window.SwaggerUIBundle({
    url: root.getAttribute('data-url'),
    domNode: root,
    layout: 'BaseLayout',
    presets: [window.SwaggerUIBundle.presets.apis],
    validatorUrl: null,
    queryConfigEnabled: false,
    deepLinking: true,
    withCredentials: false,
    requestInterceptor: refuseOtherOrigins
  });
})();
`;

export const API_DOCS_CSS = `body { margin: 0; background: #fafafa; color: #1d2330;
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header.intro { max-width: 1460px; margin: 0 auto; padding: 1rem 20px 0; }
header.intro .brand { display: flex; align-items: center; gap: .5rem; font-weight: 600; color: #5b6474; margin: 0; }
header.intro .mark { display: inline-grid; place-items: center; width: 1.75rem; height: 1.75rem; border-radius: 6px; background: #2f5bd3; color: #fff; font-weight: 700; }
header.intro h1 { font-size: 1.5rem; margin: .5rem 0; }
header.intro p { margin: .4rem 0; max-width: 60rem; }
header.intro a { color: #2f5bd3; }
header.intro code { background: #eef0f4; padding: .1rem .3rem; border-radius: 4px; overflow-wrap: anywhere; }
.noscript { max-width: 1460px; margin: 1rem auto; padding: 0 20px; }
/* Swagger UI's colours that fall short of WCAG AA contrast (4.5:1, axe-core color-contrast). */
.swagger-ui .opblock-get .opblock-summary-method, .swagger-ui .opblock-post .opblock-summary-method,
.swagger-ui .opblock-put .opblock-summary-method, .swagger-ui .opblock-delete .opblock-summary-method,
.swagger-ui .opblock-patch .opblock-summary-method { color: #000; }
.swagger-ui .info .title small { background: #5b6474; }
.swagger-ui .info .title small.version-stamp { background: #3d6b00; }
.swagger-ui .info a, .swagger-ui .info .url { color: #2f5bd3; }
.swagger-ui .btn.authorize { color: #1e7a4f; border-color: #1e7a4f; }
.swagger-ui .btn.authorize svg { fill: #1e7a4f; }
.swagger-ui .parameter__in, .swagger-ui .json-schema-2020-12-expand-deep-button { color: #5b6474; }
.swagger-ui .json-schema-2020-12__attribute--muted { color: #4a515e; }
`;

export interface ApiDocsAssets {
  readonly css: string;
  readonly swaggerCss: string;
  readonly swaggerJs: string;
  readonly script: string;
}

/** The page: what the document is, where to download it, how to get a team's, then Swagger UI. */
export function apiDocsPage(baseUrl: string, documentUrl: string, assets: ApiDocsAssets): string {
  const document = escapeHtml(documentUrl);
  const absolute = escapeHtml(new URL(documentUrl, baseUrl).href);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Rollcall</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(assets.swaggerCss)}">
<link rel="stylesheet" href="${escapeHtml(assets.css)}">
<script src="${escapeHtml(assets.swaggerJs)}" defer></script>
<script src="${escapeHtml(assets.script)}" defer></script>
</head>
<body>
<header class="intro">
<p class="brand"><span class="mark" aria-hidden="true">R</span>Rollcall</p>
<h1>API reference</h1>
<p>Every public route of Rollcall (SCIM, OAuth, events, administration), from the OpenAPI 3.1 document
<a href="${document}" download="rollcall-openapi.json">${document}</a> (download it for your tools).
Back to the <a href="/docs">documentation</a>.</p>
<p>The document shown here has the core and enterprise schemas. Your team's document, with its schema
extensions and catalogs, is served to a team token:
<code>curl -H "Authorization: Bearer $TOKEN" ${absolute}</code></p>
</header>
<div id="swagger-ui" data-url="${document}"></div>
<noscript><p class="noscript">The interactive reference needs JavaScript; the document itself is at <a href="${document}">${document}</a>.</p></noscript>
</body>
</html>
`;
}
