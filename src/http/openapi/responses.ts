/**
 * Response declarations shared by the routes-*.ts files: the error answers of each surface in its
 * own body shape, and helpers for JSON answers. Every status a route can answer is declared.
 */
import type { ErrorShape, JsonSchema, ResponseDoc } from './route-doc.ts';

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

export const SCIM_JSON = 'application/scim+json';

/** A JSON answer under the given media types (SCIM answers application/json when asked so). */
export const jsonAnswer = (description: string, schema: JsonSchema, types: readonly string[] = [SCIM_JSON, 'application/json']): ResponseDoc => ({
  description,
  content: Object.fromEntries(types.map((t) => [t, schema])),
});

const ERROR_WORDS: Record<string, string> = {
  '400': 'The request is not valid (SCIM scimType or OAuth error code says why).',
  '401': 'No token, or an invalid, expired or revoked one.',
  '403': 'The token lacks the scope or the role this request needs.',
  '404': 'No such resource.',
  '405': 'Method not allowed.',
  '409': 'A uniqueness conflict.',
  '410': 'The requested position is gone (pruned by the retention).',
  '412': 'If-Match names a version that is not the current one.',
  '413': 'The request body is too large.',
  '415': 'The body is not JSON.',
  '429': 'Too many requests or scans at once; retry after Retry-After.',
  '500': 'An unexpected server failure.',
  '503': 'The server is busy or a statement was stopped; retry after Retry-After.',
};

const ERROR_BODY: Record<ErrorShape, { schema: string; types: readonly string[] }> = {
  scim: { schema: 'ScimError', types: [SCIM_JSON, 'application/json'] },
  oauth: { schema: 'OAuthError', types: ['application/json'] },
  poll: { schema: 'PollError', types: ['application/json'] },
};

/** The given error statuses with the surface's error body. */
export function errors(shape: ErrorShape, statuses: readonly number[]): Record<string, ResponseDoc> {
  const body = ERROR_BODY[shape];
  const out: Record<string, ResponseDoc> = {};
  for (const status of statuses) out[String(status)] = jsonAnswer(ERROR_WORDS[String(status)] ?? 'An error.', ref(body.schema), body.types);
  return out;
}

export const NO_CONTENT: ResponseDoc = { description: 'Done; no body.' };
