/**
 * GET /docs: the page ServiceProviderConfig's documentationUri names (RFC 7643 5), so that an
 * identity provider's "documentation" link lands somewhere useful: the SCIM base URL, how to get
 * a token, and where the console is. Static text in the OAuth pages' look; no data, no scripts.
 */
import escapeHtml from 'escape-html';
import type { FastifyInstance } from 'fastify';
import { layout } from '../oauth/views.ts';

export function docsPage(baseUrl: string): string {
  const base = escapeHtml(baseUrl);
  return layout(
    'Rollcall documentation',
    `<h1 id="title">Rollcall</h1>
<p class="lead">A SCIM 2.0 service (RFC 7643, RFC 7644) with its own OAuth 2.0 authorization server.</p>
<h2>Connect an identity provider</h2>
<p>SCIM base URL (Tenant URL in Entra ID, SCIM connector base URL in Okta):</p>
<p><code>${base}/v2/scim</code></p>
<p>Authenticate with a bearer token. A team admin issues one in the console
(<a href="/console/connections">Connections</a>) or on the server with
<code>rollcall token issue --team NAME --user-name ADMIN --name "Entra ID" --expires-in 180d</code>.</p>
<h2>API reference</h2>
<p>Every public route, its parameters and answers: the <a href="/docs/api">API reference</a>, from the
OpenAPI 3.1 document <a href="/v2/openapi.json">/v2/openapi.json</a>.</p>
<h2>Discovery</h2>
<ul>
<li><a href="/v2/scim/ServiceProviderConfig">ServiceProviderConfig</a></li>
<li><a href="/v2/scim/ResourceTypes">ResourceTypes</a></li>
<li><a href="/v2/scim/Schemas">Schemas</a></li>
<li><a href="/.well-known/oauth-authorization-server">OAuth authorization server metadata</a> (RFC 8414)</li>
</ul>
<p class="note">The project's README covers installation, the command line and the per-provider guides.</p>`,
  );
}

export function registerDocs(app: FastifyInstance, baseUrl: string): void {
  const page = docsPage(baseUrl);
  app.get('/docs', async (_request, reply) =>
    reply
      .code(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('content-security-policy', "default-src 'none'; style-src 'self'; base-uri 'none'; frame-ancestors 'none'")
      .header('x-frame-options', 'DENY')
      .send(page),
  );
}
