/**
 * Asynchronous SCIM requests over HTTP (RFC 9967 section 2.5.1.1 and section 3; RFC 7240): a
 * POST, PUT, PATCH or DELETE on a route that writes one resource, or a POST /Bulk, with
 * `Prefer: respond-async` is queued (src/async/queue.ts) once the plugin has authenticated it and
 * parsed its body, and answered 202 Accepted without a body, with `Set-Txn` (its txn, the
 * completion events' `txn` claim), `Preference-Applied: respond-async`, `Location` (its status
 * URL) and `Retry-After`. With `wait=N` the answer waits up to min(N, 10) seconds for the outcome
 * and, when it came, answers it as the synchronous request would have (without
 * Preference-Applied). A request that cannot be queued (the team's cap is full, the queue does
 * not run here) goes on synchronously as if Prefer were absent: RFC 7240 section 2 has a server
 * ignore a preference it does not honour. Errors found before queueing (authentication, scope,
 * the body, a Bulk's syntax and limits) are answered synchronously by the plugin as always.
 *
 * Also the status URL, GET /AsyncRequests/{txn} (read scope, the team's own requests only).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AsyncQueue, Outcome, StoredRequest } from '../async/queue.ts';
import { BULK_PATH } from '../async/queue.ts';
import { statusDocument } from '../async/status.ts';
import type { ScimContext } from '../scim/context.ts';
import type { WriteMethod } from '../scim/dispatch.ts';
import { ScimError } from '../scim/errors.ts';
import { responseType, scimPayload } from './scim-payload.ts';
import { documented } from './openapi/route-doc.ts';
import { scimDocs } from './openapi/routes-scim.ts';

/** The routes (method and template under the prefix) a `respond-async` preference is honoured on. */
const ASYNC_ROUTES = new Set([
  'POST /Users',
  'POST /Groups',
  `POST ${BULK_PATH}`,
  'PUT /Users/:id',
  'PATCH /Users/:id',
  'DELETE /Users/:id',
  'PUT /Groups/:id',
  'PATCH /Groups/:id',
  'DELETE /Groups/:id',
  'PUT /Users/:id/activate',
]);

/** Ids as a path segment may carry them into the stored path unchanged. */
const PLAIN_ID = /^[A-Za-z0-9._~-]{1,128}$/;

export interface Preferences {
  readonly respondAsync: boolean;
  /** `wait=N` in seconds, when given as delta-seconds. */
  readonly wait?: number;
}

/** Splits on `sep` outside double-quoted strings. */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
      continue;
    }
    if (c === '"') quoted = !quoted;
    if (c === sep && !quoted) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

/**
 * The preferences of the Prefer header fields (RFC 7240 section 2): comma-separated, several
 * fields concatenated, names case-insensitive, the first occurrence of a preference counts,
 * parameters after `;` ignored. Only respond-async and wait matter here; the rest is ignored.
 */
export function parsePrefer(header: string | string[] | undefined): Preferences {
  if (header === undefined) return { respondAsync: false };
  const text = Array.isArray(header) ? header.join(',') : header;
  const seen = new Map<string, string>();
  for (const item of splitOutsideQuotes(text, ',')) {
    const [pref] = splitOutsideQuotes(item, ';');
    const at = pref!.indexOf('=');
    const name = (at < 0 ? pref! : pref!.slice(0, at)).trim().toLowerCase();
    if (name === '' || seen.has(name)) continue;
    let value = at < 0 ? '' : pref!.slice(at + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    seen.set(name, value);
  }
  const wait = seen.get('wait');
  return { respondAsync: seen.has('respond-async'), ...(wait !== undefined && /^\d{1,9}$/.test(wait) ? { wait: Number(wait) } : {}) };
}

/** Query parameters as strings (a repeated one joined with commas, as the routes read lists). */
function queryOf(query: unknown): Record<string, string> | undefined {
  if (query === null || typeof query !== 'object') return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) {
    if (typeof v === 'string') out[k] = v;
    else if (Array.isArray(v)) out[k] = v.map(String).join(',');
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The request as the worker replays it, or undefined when its path cannot be replayed as written. */
function storedRequest(request: FastifyRequest, template: string): StoredRequest | undefined {
  const params = request.params as { id?: string } | undefined;
  let path = template;
  if (template.includes(':id')) {
    const id = params?.id;
    if (id === undefined || !PLAIN_ID.test(id)) return undefined;
    path = template.replace(':id', id);
  }
  const ifMatch = request.headers['if-match'];
  const query = path === BULK_PATH ? undefined : queryOf(request.query);
  return {
    method: request.method as WriteMethod,
    path,
    ...(query ? { query } : {}),
    ...(typeof ifMatch === 'string' ? { ifMatch } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
  };
}

/** The outcome answered as the synchronous request would have been (a `wait` that saw it done). */
function sendOutcome(request: FastifyRequest, reply: FastifyReply, outcome: Outcome): FastifyReply {
  if (outcome.kind === 'bulk') return reply.code(200).header('content-type', responseType(request)).send(scimPayload(outcome.bulk));
  const w = outcome.write;
  const status = Number(w.status);
  if (status < 400 && w.version !== undefined) reply.header('etag', w.version);
  if (status === 201 && w.location !== undefined) reply.header('location', w.location);
  const body = status >= 400 ? w.response : w.resource;
  if (body === undefined) return reply.code(status).send();
  return reply.code(status).header('content-type', responseType(request)).send(scimPayload(body));
}

export interface AsyncHttpOptions {
  readonly queue: AsyncQueue;
  readonly baseUrl: string;
  readonly context: (request: FastifyRequest) => ScimContext | undefined;
  /** The hash of the access token the request came with: the worker runs it only while that token is live. */
  readonly tokenHash?: (request: FastifyRequest) => string | undefined;
}

/**
 * An AbortSignal that aborts when the client goes away before its answer is sent: the response's
 * 'close' before it ended (the request's own 'close' only says its body was read).
 */
function clientGone(request: FastifyRequest, reply: FastifyReply): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const abort = (): void => {
    if (!reply.raw.writableEnded) controller.abort();
  };
  if (request.raw.socket?.destroyed === true) controller.abort();
  reply.raw.on('close', abort);
  return { signal: controller.signal, done: () => reply.raw.off('close', abort) };
}

const doc = (d: Parameters<typeof documented>[0]) => documented(d, (message, parameter) => new ScimError(400, message, parameter === 'cursor' ? 'invalidCursor' : 'invalidValue'));

/** Registers the preHandler that queues asynchronous requests, and the status route. Before the routes. */
export function registerAsync(app: FastifyInstance, options: AsyncHttpOptions): void {
  const { queue } = options;
  app.addHook('preHandler', async (request, reply) => {
    if (request.method === 'GET' || request.method === 'HEAD') return;
    const template = request.routeOptions.url;
    if (template === undefined || !template.startsWith(app.prefix)) return;
    const route = template.slice(app.prefix.length);
    if (!ASYNC_ROUTES.has(`${request.method} ${route}`)) return;
    // The answer depends on Prefer here (RFC 7240 section 2): caches must key on it.
    reply.header('vary', 'Prefer');
    if (request.headers.prefer === undefined) return;
    const prefer = parsePrefer(request.headers.prefer);
    if (!prefer.respondAsync || !queue.running) return;
    const ctx = options.context(request);
    const stored = storedRequest(request, route);
    if (!ctx || !stored) return;
    // Not queued (the team's cap is full, or no worker runs here): the request runs now, as if
    // Prefer were absent, so it may overtake the team's requests still queued. RFC 9967 and RFC
    // 7240 want the preference ignored rather than the request refused; docs/ARCHITECTURE.md says so.
    const txn = await queue.accept(ctx.team, ctx.actor, stored, options.tokenHash?.(request));
    if (txn === undefined) return;
    if (prefer.wait !== undefined && prefer.wait > 0) {
      const gone = clientGone(request, reply);
      try {
        const outcome = await queue.waitFor(ctx.team.id, txn, prefer.wait, gone.signal);
        if (outcome) return sendOutcome(request, reply, outcome);
      } finally {
        gone.done();
      }
    }
    return reply
      .code(202)
      .header('set-txn', txn)
      .header('preference-applied', 'respond-async')
      .header('location', `${options.baseUrl}${app.prefix}/AsyncRequests/${txn}`)
      .header('retry-after', '1')
      .send();
  });

  app.get<{ Params: { txn: string } }>('/AsyncRequests/:txn', doc(scimDocs.asyncStatus), async (request, reply) => {
    const ctx = options.context(request);
    const row = ctx ? await queue.request(ctx.team.id, request.params.txn) : undefined;
    if (!row) throw new ScimError(404, `No asynchronous request ${request.params.txn}`);
    if (row.state !== 'done') reply.header('retry-after', '1');
    return reply.code(200).header('content-type', responseType(request)).send(scimPayload(statusDocument(row)));
  });
}
