/**
 * Issue 9 item 4: attribute forms that RFC 7643 / 7644 allow and real clients send.
 * - RFC 7643 3: a `schemas` member inside an extension object is ignored (create, PUT, PATCH);
 * - RFC 7644 3.10: core attributes nested under the core schema URN key count as top-level;
 * - RFC 7644 3.4.2.5: excludedAttributes naming an attribute returned `always` (id, schemas)
 *   has no effect and is not an error;
 * - the Entra ID quirk (compat.ts `nullUnprefixedExtensionAttribute`, fixture entra-legacy.json):
 *   `"manager": null` at the top level, when `schemas` declares the enterprise extension, is
 *   "not set"; not a general leniency (a value there, or a null without the declaration, is 400).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('attribute forms RFC 7643/7644 allow', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const ext = (body: Record<string, unknown>) => body[ENTERPRISE] as Record<string, unknown> | undefined;

  it('RFC 7643 3: a schemas member inside an extension object is ignored on create, PUT and PATCH values', async () => {
    const created = await t.request('POST', '/v2/scim/Users', {
      schemas: [USER, ENTERPRISE],
      userName: 'ext@example.com',
      [ENTERPRISE]: { schemas: [ENTERPRISE], employeeNumber: '1' },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = String(json(created).id);
    assert.deepEqual(ext(json(created)), { employeeNumber: '1' });

    const put = await t.request('PUT', `/v2/scim/Users/${id}`, {
      schemas: [USER, ENTERPRISE],
      userName: 'ext@example.com',
      [ENTERPRISE]: { schemas: [ENTERPRISE], employeeNumber: '2', department: 'Ops' },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(ext(json(put)), { employeeNumber: '2', department: 'Ops' });

    for (const op of [
      { op: 'replace', path: ENTERPRISE, value: { schemas: [ENTERPRISE], employeeNumber: '3' } },
      { op: 'add', value: { [ENTERPRISE]: { schemas: [ENTERPRISE], department: 'Sales' } } },
    ]) {
      const res = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [op] });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(ext(json(res))?.schemas, undefined);
    }
    const got = json(await t.request('GET', `/v2/scim/Users/${id}`));
    assert.deepEqual(ext(got), { employeeNumber: '3', department: 'Sales' });
  });

  it('RFC 7644 3.10: core attributes nested under the core schema URN are taken as top-level (create, PUT, PATCH)', async () => {
    const created = await t.request('POST', '/v2/scim/Users', {
      schemas: [USER],
      [USER]: { userName: 'nested@example.com', name: { givenName: 'Nes' }, active: true },
    });
    assert.equal(created.statusCode, 201, created.body);
    const body = json(created);
    assert.equal(body.userName, 'nested@example.com');
    assert.deepEqual(body.name, { givenName: 'Nes' });
    assert.equal(body[USER], undefined);
    const id = String(body.id);

    const put = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER], [USER]: { userName: 'nested2@example.com' }, displayName: 'Top' });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(json(put).userName, 'nested2@example.com');
    assert.equal(json(put).displayName, 'Top');

    const patched = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { [USER]: { nickName: 'Nessie' } } }] });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.equal(json(patched).nickName, 'Nessie');

    const group = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], [GROUP]: { displayName: 'Nested group' } });
    assert.equal(group.statusCode, 201, group.body);
    assert.equal(json(group).displayName, 'Nested group');

    // The same attribute both nested and top-level with different values is a contradiction.
    const twice = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'a@example.com', [USER]: { userName: 'b@example.com' } });
    assert.equal(twice.statusCode, 400, twice.body);
    assert.equal(json(twice).scimType, 'invalidSyntax');
    // Not an object: a clear 400.
    const bad = await t.request('POST', '/v2/scim/Users', { schemas: [USER], [USER]: 'x' });
    assert.equal(bad.statusCode, 400, bad.body);
  });

  it('RFC 7644 3.4.2.5: excludedAttributes naming id or schemas (returned always) is ignored, not a 400', async () => {
    const created = json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'always@example.com', displayName: 'Al' }));
    const id = String(created.id);
    for (const url of [
      `/v2/scim/Users/${id}?excludedAttributes=id,schemas,displayName`,
      `/v2/scim/Users?excludedAttributes=schemas,id,displayName`,
      `/v2/scim/Users?excludedAttributes=${encodeURIComponent(`${USER}:id`)},displayName`,
    ]) {
      const res = await t.request('GET', url);
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      const body = json(res);
      const resource = (Array.isArray(body.Resources) ? body.Resources[0] : body) as Record<string, unknown>;
      assert.equal(resource.id, id, url);
      assert.deepEqual(resource.schemas, [USER], url);
      assert.equal(resource.displayName, undefined, url);
      assert.equal(resource.userName, 'always@example.com', url);
    }
    const search = await t.request('POST', '/v2/scim/Users/.search', { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], excludedAttributes: ['schemas', 'id'] });
    assert.equal(search.statusCode, 200, search.body);
    // An unknown name is still refused.
    const unknown = await t.request('GET', `/v2/scim/Users?excludedAttributes=nosuch`);
    assert.equal(unknown.statusCode, 400);
  });

  it('Entra ID quirk: "manager": null at the top level with the extension declared is "not set"; nothing else is loosened', async () => {
    const created = await t.request('POST', '/v2/scim/Users', { schemas: [USER, ENTERPRISE], userName: 'legacy@example.com', manager: null, title: null });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(ext(json(created)), undefined);
    const id = String(json(created).id);
    const withManager = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER, ENTERPRISE], userName: 'legacy@example.com', [ENTERPRISE]: { manager: { value: id } } });
    assert.equal(withManager.statusCode, 200, withManager.body);
    // PUT with the legacy null: the manager is not set afterwards (PUT replaces).
    const put = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER, ENTERPRISE], userName: 'legacy@example.com', manager: null });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(ext(json(put))?.manager, undefined);

    // Without the extension in schemas, or with a value, the top-level name stays unknown.
    const undeclared = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'legacy2@example.com', manager: null });
    assert.equal(undeclared.statusCode, 400, undeclared.body);
    assert.equal(json(undeclared).scimType, 'invalidSyntax');
    const valued = await t.request('POST', '/v2/scim/Users', { schemas: [USER, ENTERPRISE], userName: 'legacy3@example.com', manager: { value: id } });
    assert.equal(valued.statusCode, 400, valued.body);
  });
});
