/**
 * Checks every response of a test app against the OpenAPI document the app serves
 * (GET /v2/openapi.json): the status must be declared for the operation the request matched,
 * and a JSON body must be valid against the schema declared for that status and media type
 * (ajv, JSON Schema 2020-12, with formats). createTestApp (app.ts) installs it on every app, so
 * every test that uses createTestApp is checked.
 *
 * Rule for what is checked: requests made with `app.inject(options)` (a promise; the chained and
 * callback forms are not wrapped), and requests over real sockets to an app served by
 * `installSocketCheck` (client-server.ts: the typed client's tests), whose method and path match
 * an operation of the document.
 * Requests to paths the document does not describe (console and sign-in pages, /health,
 * unknown routes answered by a not-found handler) are counted as skipped. HEAD is checked
 * against the GET operation, status only.
 *
 * A mismatch is recorded, not thrown (the test's own assertions run unchanged); a root-level
 * `after` hook of node:test (registered in test files' processes only) fails the test file with
 * every mismatch listed. OPENAPI_CHECK_REPORT=1
 * prints the counts when the process exits.
 */
import { appendFileSync } from 'node:fs';
import { after } from 'node:test';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> };

export interface Mismatch {
  readonly request: string;
  readonly status: number;
  readonly problem: string;
}

export const stats = { checked: 0, skipped: 0 };
export const mismatches: Mismatch[] = [];

const DOC_ID = 'https://rollcall.test/openapi.json';

/** The checker of one document: compiled validators and path matchers, kept per process. */
export class ResponseChecker {
  readonly #doc: Doc;
  readonly #ajv: Ajv2020;
  readonly #matchers: { template: string; regex: RegExp; params: number }[];
  readonly #validators = new Map<string, ValidateFunction>();

  constructor(doc: unknown) {
    this.#doc = doc as Doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
    addFormats(this.#ajv);
    this.#ajv.addSchema({ ...(doc as object), $id: DOC_ID });
    // Static segments win over parameters (/Users/.search before /Users/{id}).
    this.#matchers = Object.keys(this.#doc.paths)
      .map((template) => ({
        template,
        regex: new RegExp(`^${template.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+')}$`),
        params: (template.match(/\{/g) ?? []).length,
      }))
      .sort((a, b) => a.params - b.params || b.template.length - a.template.length);
  }

  /** The problems of one response; undefined when the request matches no operation (skipped). */
  check(method: string, url: string, status: number, contentType: string | undefined, payload: string): string[] | undefined {
    let path = url.split('?')[0] ?? '/';
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const matched = this.#matchers.find((m) => m.regex.test(path) && this.#doc.paths[m.template]?.[verb] !== undefined);
    if (!matched) return undefined;
    const op = this.#doc.paths[matched.template]![verb]!;
    const declared = op.responses[String(status)];
    if (!declared) return [`status ${status} is not declared for ${verb.toUpperCase()} ${matched.template} (declared: ${Object.keys(op.responses).join(', ')})`];
    if (verb !== method.toLowerCase() || payload.length === 0) return [];
    const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (!declared.content) return [`status ${status} of ${verb.toUpperCase()} ${matched.template} declares no body, but one came (${media})`];
    if (!declared.content[media]) return [`media type ${media} is not declared for ${status} of ${verb.toUpperCase()} ${matched.template}`];
    if (!/(^application\/json$|\+json$)/.test(media)) return [];
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      return [`the ${media} body is not JSON`];
    }
    const pointer = ['paths', matched.template, verb, 'responses', String(status), 'content', media, 'schema']
      .map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1')))
      .join('/');
    const key = `${DOC_ID}#/${pointer}`;
    let validate = this.#validators.get(key);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: key });
      this.#validators.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).slice(0, 3).map((e) => `body${e.instancePath} ${e.message ?? 'invalid'} (${e.schemaPath})`);
  }
}

let checker: Promise<ResponseChecker> | undefined;

/** Forgets the process's document, so the next answer loads it again (the checker's own tests). */
export function forgetDocument(): void {
  checker = undefined;
}

/** Records the outcome of one response (exported for the checker's own tests). */
export function record(request: string, status: number, problems: string[] | undefined): void {
  if (problems === undefined) {
    stats.skipped += 1;
    return;
  }
  stats.checked += 1;
  for (const problem of problems) mismatches.push({ request, status, problem });
}

/** Wraps the app's inject() so that every answer is checked against the app's own document. */
export function installResponseCheck(app: FastifyInstance): void {
  const original = app.inject.bind(app) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const checked = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const response = await original(options);
    // One document per process: every test app registers the same routes (a team's extensions
    // only add properties, which the resource schemas admit).
    checker ??= original({ method: 'GET', url: '/v2/openapi.json' }).then((r) => new ResponseChecker(r.json()));
    const c = await checker;
    const method = typeof options === 'string' ? 'GET' : (options.method ?? 'GET');
    const url = typeof options === 'string' ? options : String(options.url ?? (options as { path?: string }).path ?? '/');
    const type = response.headers['content-type'];
    record(`${method} ${url.slice(0, 200)}`, response.statusCode, c.check(method, url, response.statusCode, typeof type === 'string' ? type : undefined, response.payload));
    return response;
  };
  const originalInject = app.inject;
  // The chained form (no options) and the callback form are passed through unchecked.
  (app as unknown as { inject: unknown }).inject = function inject(options?: InjectOptions | string, callback?: unknown) {
    if (options === undefined || callback !== undefined) return (originalInject as (...a: unknown[]) => unknown).call(app, options, callback);
    return checked(options);
  };
}

/**
 * Checks every answer the app gives over the sockets of `server` (requests that do not come
 * through inject): the response's writes are collected and checked when it finishes.
 */
export function installSocketCheck(app: FastifyInstance, server: Server): void {
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    const keep = (chunk: unknown, encoding?: unknown): void => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array));
    };
    const write = response.write.bind(response) as (...a: unknown[]) => boolean;
    const end = response.end.bind(response) as (...a: unknown[]) => ServerResponse;
    // Fastify hands its headers to writeHead, where getHeader cannot see them: keep them.
    const headers: Record<string, unknown> = {};
    const writeHead = response.writeHead.bind(response) as (...a: unknown[]) => ServerResponse;
    (response as unknown as { writeHead: unknown }).writeHead = (...a: unknown[]) => {
      const given = a.find((x) => typeof x === 'object' && x !== null && !Array.isArray(x)) as Record<string, unknown> | undefined;
      for (const [name, value] of Object.entries(given ?? {})) headers[name.toLowerCase()] = value;
      return writeHead(...a);
    };
    (response as unknown as { write: unknown }).write = (chunk: unknown, ...rest: unknown[]) => (keep(chunk, rest[0]), write(chunk, ...rest));
    (response as unknown as { end: unknown }).end = (chunk?: unknown, ...rest: unknown[]) => (keep(chunk, rest[0]), end(chunk, ...rest));
    response.on('finish', () => {
      const method = request.method ?? 'GET';
      const url = request.url ?? '/';
      // The chained form of inject is not wrapped by installResponseCheck (which awaits `checker`).
      checker ??= app.inject().get('/v2/openapi.json').end().then((r) => new ResponseChecker(r.json()));
      void checker.then((c) => {
        const type = headers['content-type'] ?? response.getHeader('content-type');
        // A compressed body cannot be read here; its status is still checked.
        const encoded = (headers['content-encoding'] ?? response.getHeader('content-encoding')) !== undefined;
        record(`${method} ${url.slice(0, 200)} (socket)`, response.statusCode, c.check(method, url, response.statusCode, typeof type === 'string' ? type : undefined, encoded ? '' : Buffer.concat(chunks).toString('utf8')));
      });
    });
  });
}

// Only in a test file's process: a helper process that imports the test app (heap-probe.ts)
// must not start node:test's harness, whose report would mix with its own output.
if (/\.(test|fixture)\.ts$/.test(process.argv[1] ?? '')) after(() => {
  if (mismatches.length === 0) return;
  const lines = mismatches.slice(0, 50).map((m) => `  ${m.request} -> ${m.status}: ${m.problem}`);
  throw new Error(`${mismatches.length} response(s) do not match the OpenAPI document:\n${lines.join('\n')}`);
});

process.on('exit', () => {
  const to = process.env.OPENAPI_CHECK_REPORT;
  if (!to) return;
  const line = `openapi-check: ${stats.checked} responses checked against the document, ${stats.skipped} skipped (no operation), ${mismatches.length} mismatches\n`;
  // 1: stderr; anything else: a file the counts of every test process are appended to.
  if (to === '1') process.stderr.write(line);
  else appendFileSync(to, `${process.argv[1] ?? ''} ${line}`);
});
