/**
 * Helpers for the Bulk tests (RFC 7644 3.7): the message URNs, a Bulk request sent with a
 * team's token, requests with another team's token, the results of a BulkResponse, and the
 * team's directory, audit rows and feed events as the tests compare them. Nothing here decides
 * what the server should answer: the tests do.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.ts';
import { json } from './app.ts';

export const BULK_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
export const BULK_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:BulkResponse';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

export type Json = Record<string, unknown>;

/** One operation of a BulkResponse (RFC 7644 3.7.3). */
export interface BulkResult {
  readonly method: string;
  readonly bulkId?: string;
  readonly version?: string;
  readonly location?: string;
  readonly status: string;
  readonly response?: Json;
}

/** A request on `t`'s app with `token` (another team's), bodies sent as application/scim+json. */
export function requestAs(t: TestApp, token: string, method: string, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}) },
    ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}

/** A client of one team: its token, its requests. */
export interface TeamClient {
  readonly token: string;
  request(method: string, url: string, body?: unknown): Promise<LightMyRequestResponse>;
}

export const teamOf = (t: TestApp, token = t.token): TeamClient => ({ token, request: (method, url, body) => requestAs(t, token, method, url, body) });

/** A BulkRequest body of `operations` (with failOnErrors when given). */
export const bulkBody = (operations: readonly unknown[], failOnErrors?: number): Json => ({
  schemas: [BULK_REQUEST],
  ...(failOnErrors !== undefined ? { failOnErrors } : {}),
  Operations: operations,
});

/** POST /v2/scim/Bulk; asserts a 200 BulkResponse and returns its operations. */
export async function bulkOk(client: TeamClient, body: unknown): Promise<BulkResult[]> {
  const res = await client.request('POST', '/v2/scim/Bulk', body);
  assert.equal(res.statusCode, 200, `Bulk: ${res.body.slice(0, 600)}`);
  const parsed = json(res);
  assert.deepEqual(parsed.schemas, [BULK_RESPONSE]);
  assert.ok(Array.isArray(parsed.Operations), 'Operations is an array');
  return parsed.Operations as BulkResult[];
}

/** The id at the end of a location URL. */
export const idOf = (location: string | undefined): string => {
  assert.ok(location, 'a location');
  return location.slice(location.lastIndexOf('/') + 1);
};

/** Asserts a per-operation error: its status, the same status in a SCIM error response (RFC 7644 3.12), and no version. */
export function assertOpError(result: BulkResult | undefined, status: string, detail?: RegExp): Json {
  assert.ok(result, 'the operation is reported');
  assert.equal(result.status, status, JSON.stringify(result));
  assert.ok(result.response, `an error carries its response: ${JSON.stringify(result)}`);
  assert.deepEqual(result.response.schemas, [ERROR]);
  assert.equal(result.response.status, status, 'the error body repeats the status as a string');
  assert.equal(typeof result.response.detail, 'string');
  if (detail) assert.match(String(result.response.detail), detail);
  assert.equal(result.version, undefined, 'a failed operation has no version');
  return result.response;
}

/** Every resource of a list endpoint (count 1000, one page: the tests stay under it). */
export async function listAll(client: TeamClient, path: '/Users' | '/Groups', query = ''): Promise<Json[]> {
  const res = await client.request('GET', `/v2/scim${path}?count=1000${query}`);
  assert.equal(res.statusCode, 200, res.body.slice(0, 300));
  const body = json(res);
  assert.ok(Number(body.totalResults) <= 1000, 'one page holds the directory');
  return body.Resources as Json[];
}

/** The team's feed events (GET /v2/events), all of them. */
export async function feedEvents(client: TeamClient): Promise<Json[]> {
  const out: Json[] = [];
  let after = 0;
  for (;;) {
    const res = await client.request('GET', `/v2/events?after=${after}&limit=1000`);
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const page = json(res);
    out.push(...(page.events as Json[]));
    if (!page.more) return out;
    after = Number(page.next);
  }
}

/** The team's audit rows (the storage audit table), oldest first. */
export async function auditRows(t: TestApp, teamId: string): Promise<{ action: string; resource_type: string; resource_id: string | null; request_id: string | null }[]> {
  return t.storage.db
    .selectFrom('audit_events')
    .select(['action', 'resource_type', 'resource_id', 'request_id', 'at', 'id'])
    .where('team_id', '=', teamId)
    .orderBy('at')
    .orderBy('id')
    .execute();
}
