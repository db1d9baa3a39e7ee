/**
 * The API reference page at /docs/api over HTTP (issue 34 item 1, DESIGN.md section 15): the page
 * names the document and how to get a team's, loads only this site's assets (no CDN, no URL of
 * another host), has no inline script, and sends a CSP that allows scripts, styles and fetches
 * from this site only; its assets come from an allow-list at versioned URLs with their content
 * types, cached a year with an ETag, gzipped for a client that accepts it; anything else under
 * /docs/api/assets is a 404.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { BASE_URL, createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const require = createRequire(import.meta.url);
const DIST = dirname(require.resolve('swagger-ui-dist/package.json'));
const VERSION = (require('swagger-ui-dist/package.json') as { version: string }).version;

/** The CSP header as a map of directive to its sources. */
function csp(header: unknown): Map<string, string[]> {
  assert.equal(typeof header, 'string', 'a Content-Security-Policy header is sent');
  return new Map(
    String(header)
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

describe('GET /docs/api: the API reference page', () => {
  let t: TestApp;
  let html: string;
  let headers: Record<string, unknown>;
  const assetUrls = (): string[] => [...html.matchAll(/(?:src|href)="(\/docs\/api\/assets\/[^"]+)"/g)].map((m) => m[1]!);

  before(async () => {
    t = await createTestApp();
    const response = await t.app.inject({ method: 'GET', url: '/docs/api' });
    assert.equal(response.statusCode, 200);
    html = response.body;
    headers = response.headers;
  });
  after(() => t.close());

  it('is HTML that names the document, links its download and says how to get a team document', () => {
    assert.match(String(headers['content-type']), /^text\/html; charset=utf-8/);
    assert.match(html, /<a href="\/v2\/openapi.json" download="rollcall-openapi.json">/);
    assert.match(html, /data-url="\/v2\/openapi.json"/);
    assert.ok(html.includes(`Authorization: Bearer $TOKEN" ${BASE_URL}/v2/openapi.json`), 'the curl example sends a team token to this site');
    assert.match(html, /<a href="\/docs">/);
  });

  it('loads only this site\'s assets: no URL of another host, no inline script', () => {
    const absolute = [...html.matchAll(/https?:\/\/[^\s"'<>]+/g)].map((m) => m[0]).filter((url) => !url.startsWith(`${BASE_URL}/`));
    assert.deepEqual(absolute, [], 'no http(s) URL of another host in the page');
    assert.doesNotMatch(html, /\/\/[a-z0-9.-]*(unpkg|jsdelivr|cdnjs|cloudflare)/i);
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 2, 'the Swagger UI bundle and the page\'s initializer');
    for (const [, attributes, body] of scripts) {
      assert.match(attributes!, /src="\/docs\/api\/assets\//);
      assert.equal(body!.trim(), '', 'no inline script');
    }
    assert.doesNotMatch(html, /\sstyle=|<style/, 'no inline style');
    assert.equal(assetUrls().length, 4);
  });

  it('sends a CSP of default-src none that allows only this site for scripts, styles and fetches', () => {
    const policy = csp(headers['content-security-policy']);
    assert.deepEqual(policy.get('default-src'), ["'none'"]);
    assert.deepEqual(policy.get('script-src'), ["'self'"]);
    assert.deepEqual(policy.get('style-src'), ["'self'"]);
    assert.deepEqual(policy.get('connect-src'), ["'self'"]);
    assert.deepEqual(policy.get('img-src'), ["'self'", 'data:']);
    assert.deepEqual(policy.get('frame-ancestors'), ["'none'"]);
    assert.deepEqual(policy.get('base-uri'), ["'none'"]);
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.equal(headers['cache-control'], 'no-cache', 'the page names versioned assets: it is revalidated');
  });

  it('serves each asset with its content type, cached a year under a versioned URL with an ETag', async () => {
    const expected = new Map([
      ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['api-docs.js', 'text/javascript; charset=utf-8'],
      ['api-docs.css', 'text/css; charset=utf-8'],
    ]);
    const urls = assetUrls();
    assert.deepEqual(urls.map((url) => url.split('/').pop()).sort(), [...expected.keys()].sort());
    for (const url of urls) {
      const name = url.split('/').pop()!;
      const response = await t.app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 200, url);
      assert.equal(response.headers['content-type'], expected.get(name), url);
      assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable', url);
      const etag = String(response.headers.etag);
      assert.match(etag, /^"[^"]+"$/, url);
      assert.ok(response.body.length > 0, url);
      if (name.startsWith('swagger-ui')) {
        assert.ok(url.includes(`/swagger-ui-${VERSION}/`), `${url} carries the package's version`);
        assert.equal(response.body, readFileSync(join(DIST, name), 'utf8'), `${url} is the package's own file`);
      }
      const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': etag } });
      assert.equal(again.statusCode, 304, `${url} revalidates with its ETag`);
      assert.equal(again.body, '');
    }
  });

  it('sends an asset gzipped to a client that accepts gzip, with its own ETag, and plain otherwise', async () => {
    const bundle = assetUrls().find((u) => u.endsWith('/swagger-ui-bundle.js'))!;
    const original = readFileSync(join(DIST, 'swagger-ui-bundle.js'));
    const zipped = await t.app.inject({ method: 'GET', url: bundle, headers: { 'accept-encoding': 'br, gzip;q=0.8' } });
    assert.equal(zipped.statusCode, 200);
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.equal(zipped.headers.vary, 'accept-encoding');
    assert.equal(zipped.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.ok(gunzipSync(zipped.rawPayload).equals(original), 'the gzip body is the package\'s file');
    assert.ok(zipped.rawPayload.length < original.length / 2);
    for (const refused of [undefined, 'gzip;q=0', 'gzip;q=0, *', 'identity']) {
      const plain = await t.app.inject({ method: 'GET', url: bundle, headers: refused === undefined ? {} : { 'accept-encoding': refused } });
      assert.equal(plain.headers['content-encoding'], undefined, String(refused));
      assert.ok(plain.rawPayload.equals(original), String(refused));
      assert.notEqual(plain.headers.etag, zipped.headers.etag, 'each representation has its own ETag');
    }
    const again = await t.app.inject({ method: 'GET', url: bundle, headers: { 'accept-encoding': 'gzip', 'if-none-match': String(zipped.headers.etag) } });
    assert.equal(again.statusCode, 304);
  });

  it('the initializer turns the validator off and ignores a document URL in the address', async () => {
    const url = assetUrls().find((u) => u.endsWith('/api-docs.js'))!;
    const script = (await t.app.inject({ method: 'GET', url })).body;
    assert.match(script, /validatorUrl: null/);
    assert.match(script, /queryConfigEnabled: false/);
    assert.doesNotMatch(script, /https?:\/\//);
  });

  it('answers 404 for a file of the package that is not allowed, an unknown name or another version', async () => {
    const bundle = assetUrls().find((u) => u.endsWith('/swagger-ui-bundle.js'))!;
    const folder = bundle.slice(0, bundle.lastIndexOf('/'));
    for (const url of [
      `${folder}/index.html`,
      `${folder}/swagger-ui-bundle.js.map`,
      `${folder}/package.json`,
      `${folder}/..%2Fpackage.json`,
      `${folder}/nothing.js`,
      '/docs/api/assets/swagger-ui-0.0.1/swagger-ui-bundle.js',
      '/docs/api/assets/swagger-ui-bundle.js',
    ]) {
      const response = await t.app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 404, url);
      assert.doesNotMatch(response.body, /swagger-ui-dist|SwaggerUI/, url);
    }
  });

  it('is linked from the documentation page', async () => {
    const docs = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.equal(docs.statusCode, 200);
    assert.match(docs.body, /<a href="\/docs\/api">API reference<\/a>/);
  });
});
