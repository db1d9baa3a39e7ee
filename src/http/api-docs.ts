/**
 * GET /docs/api: the API reference, Swagger UI (the swagger-ui-dist package) rendering the
 * OpenAPI 3.1 document at /v2/openapi.json, with every asset served by Rollcall itself (no CDN:
 * the page makes no request to another host, and its CSP would block one).
 *
 * Assets live under /docs/api/assets/<version>/<name>, from an allow-list: Swagger UI's bundle
 * and stylesheet under the package's version, the page's own script and stylesheet
 * (api-docs-view.ts) under a hash of their text. A URL therefore names one content forever, so
 * it is cached for a year (immutable) with an ETag; any other name or version is a 404. The
 * package's files are read (and gzipped, for clients that accept it) on first request, not when
 * the app is built.
 *
 * It owns no rule and reads no data; the document itself is another route's.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import { API_DOCS_CSS, API_DOCS_JS, apiDocsPage } from './api-docs-view.ts';

export const API_DOCS_PATH = '/docs/api';
export const OPENAPI_DOCUMENT_PATH = '/v2/openapi.json';

export interface ApiDocsOptions {
  /** The site's public base URL: the curl example names it; HSTS is sent when it is https. */
  readonly baseUrl: string;
  /** Where the page's Swagger UI loads the document from (this site's path; a test may point it at a fixed document). */
  readonly documentUrl?: string;
}

interface Asset {
  readonly contentType: string;
  /** The ETag of the plain body; the gzip body's is distinct (RFC 9110 8.8.3: one per representation). */
  readonly etag: string;
  load(): Promise<Buffer | string>;
  gzipped(): Promise<Buffer>;
}

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const YEAR = 'public, max-age=31536000, immutable';

/** The directory and version of the installed swagger-ui-dist. */
function swaggerUiDist(): { dir: string; version: string } {
  const manifest = createRequire(import.meta.url).resolve('swagger-ui-dist/package.json');
  const { version } = createRequire(import.meta.url)('swagger-ui-dist/package.json') as { version: string };
  return { dir: dirname(manifest), version };
}

const gzipAsync = promisify(gzip);

/** Whether the client accepts gzip (RFC 9110 12.5.3): gzip's own weight if named, else `*`'s; q=0 refuses. */
function acceptsGzip(header: string | undefined): boolean {
  const accepted = new Map<string, boolean>();
  for (const entry of (header ?? '').split(',')) {
    const [coding, ...params] = entry.trim().toLowerCase().split(';').map((part) => part.trim());
    if (coding) accepted.set(coding, !params.some((param) => /^q=0(\.0{0,3})?$/.test(param)));
  }
  return accepted.get('gzip') ?? accepted.get('*') ?? false;
}

/** A read done once and kept; a failed read is retried by the next caller rather than kept. */
function once<T>(read: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => {
    if (!result) {
      result = read();
      result.catch(() => (result = undefined));
    }
    return result;
  };
}

const shortHash = (text: string): string => createHash('sha256').update(text).digest('base64url').slice(0, 16);

export async function apiDocs(app: FastifyInstance, options: ApiDocsOptions): Promise<void> {
  const documentUrl = options.documentUrl ?? OPENAPI_DOCUMENT_PATH;
  const dist = swaggerUiDist();
  const assets = new Map<string, Asset>();
  /** Adds an asset at its versioned URL; returns the URL. Its body, and its gzip, are made once for the app's life. */
  const add = (version: string, name: string, contentType: string, read: () => Promise<Buffer | string>): string => {
    const load = once(read);
    assets.set(`${version}/${name}`, { contentType, etag: `"${version}-${name}"`, load, gzipped: once(async () => gzipAsync(await load())) });
    return `${API_DOCS_PATH}/assets/${version}/${name}`;
  };
  const fromPackage = (name: string, contentType: string) => add(`swagger-ui-${dist.version}`, name, contentType, () => readFile(join(dist.dir, name)));
  const own = (name: string, contentType: string, text: string) => add(shortHash(text), name, contentType, async () => text);

  const page = apiDocsPage(options.baseUrl, documentUrl, {
    swaggerJs: fromPackage('swagger-ui-bundle.js', JS),
    swaggerCss: fromPackage('swagger-ui.css', CSS),
    script: own('api-docs.js', JS, API_DOCS_JS),
    css: own('api-docs.css', CSS, API_DOCS_CSS),
  });

  // This plugin's own CSP (helmet is scoped to the plugin): the pages' default-src 'none',
  // relaxed only as far as Swagger UI needs:
  // - script-src 'self': the bundle and the initializer; no inline script and no eval (the
  //   bundle needs neither);
  // - style-src 'self', no 'unsafe-inline': Swagger UI's React sets styles through the DOM's
  //   style properties, which CSP does not govern, and injects no style element or attribute
  //   (the browser test expands operations and models and sees no violation);
  // - img-src 'self' data:: its stylesheet draws its icons as data: SVG and PNG images;
  // - connect-src 'self': the document and "Try it out" requests go to this site only.
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    hsts: options.baseUrl.startsWith('https:'),
    crossOriginEmbedderPolicy: false,
  });

  // The page names versioned assets, so it is revalidated rather than cached: after an upgrade
  // it never points at assets that are gone.
  app.get(API_DOCS_PATH, async (_request, reply) =>
    reply.code(200).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-cache').send(page),
  );

  app.get<{ Params: { version: string; name: string } }>(`${API_DOCS_PATH}/assets/:version/:name`, async (request, reply) => {
    const { version, name } = request.params;
    const asset = assets.get(`${version}/${name}`);
    if (!asset) return reply.code(404).send({ error: 'not_found', detail: `No asset ${version}/${name}` });
    // Swagger UI's bundle is large and compresses several times over.
    const gzipped = acceptsGzip(request.headers['accept-encoding']);
    const etag = gzipped ? `${asset.etag.slice(0, -1)}.gz"` : asset.etag;
    reply.header('cache-control', YEAR).header('etag', etag).header('vary', 'accept-encoding');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    reply.code(200).header('content-type', asset.contentType);
    return gzipped ? reply.header('content-encoding', 'gzip').send(await asset.gzipped()) : reply.send(await asset.load());
  });
}
