/**
 * Router failures under /v2/access and /v2/admin (review 31 #7): a path parameter longer than the
 * router takes and a malformed percent-encoding are met before any plugin runs; they answer in
 * the SCIM error shape like every other /v2/access and /v2/admin error (RFC 7644 3.12), not the
 * router's generic body, and never echo the path back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
// Longer than any path parameter the router accepts (256 characters percent-encoded, and then some).
const LONG = 'x'.repeat(5000);

describe('router failures under /v2/access and /v2/admin answer in the SCIM error shape', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.token}` } });
  const scimError = (res: { statusCode: number; body: string; headers: Record<string, unknown> }, status: number) => {
    assert.equal(res.statusCode, status, res.body);
    const body = json(res as never) as { schemas: string[]; status: string; detail: string; scimType?: string };
    assert.deepEqual(body.schemas, [ERROR], res.body);
    assert.equal(body.status, String(status));
    assert.equal(typeof body.detail, 'string');
    assert.equal(res.body.includes(LONG), false, 'the path is not echoed');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    return body;
  };

  it('a path parameter too long for the router: 404 SCIM error', async () => {
    for (const url of [`/v2/access/users/${LONG}`, `/v2/access/roles/${LONG}/users`, `/v2/access/entitlements/License/${LONG}/users`, `/v2/admin/Schemas/${LONG}`]) {
      scimError(await get(url), 404);
    }
  });

  it('a malformed percent-encoding: 400 SCIM error invalidSyntax', async () => {
    for (const url of ['/v2/access/users/%E0%A4%A', '/v2/access/roles/%ZZ/users', '/v2/access/entitlements/License/%E0%A4%A/users', '/v2/admin/Schemas/%ZZ']) {
      assert.equal(scimError(await get(url), 400).scimType, 'invalidSyntax', url);
    }
  });

  it('other paths keep their own shapes (OAuth under /oauth, the generic body elsewhere)', async () => {
    const other = await get('/nowhere/%ZZ');
    assert.equal(other.statusCode, 400);
    assert.equal((json(other) as { error: string }).error, 'bad_request');
  });
});
