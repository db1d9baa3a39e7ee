/**
 * Users over HTTP: the contract's create / read / replace / deactivate / activate, RFC 7644
 * section 3 status codes and bodies, DESIGN.md section 4's rules on deactivated users, ETags.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** The contract's create body (seed section 4.2). */
const seedUser = {
  schemas: [USER],
  userName: 'jane.doe@example.com',
  name: { givenName: 'Jane', familyName: 'Doe' },
  active: true,
  phoneNumbers: [{ value: '5555550100' }],
  userType: null,
};

describe('Users', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const create = async (body: unknown = seedUser) => {
    const res = await t.request('POST', '/v2/scim/Users', body);
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  };

  it('contract 4.2: POST creates the user: 201, Location, ETag, id of 20 [A-Z0-9], the fields echoed', async () => {
    const res = await t.request('POST', '/v2/scim/Users', seedUser);
    assert.equal(res.statusCode, 201);
    const body = json(res);
    assert.match(String(body.id), /^[A-Z0-9]{20}$/);
    assert.deepEqual(body.schemas, [USER]);
    assert.equal(body.userName, 'jane.doe@example.com');
    assert.deepEqual(body.name, { givenName: 'Jane', familyName: 'Doe' });
    assert.equal(body.active, true);
    // DESIGN 4: a phone number without type is stored and returned as "work".
    assert.deepEqual(body.phoneNumbers, [{ value: '5555550100', type: 'work' }]);
    assert.equal('userType' in body, false);
    const meta = body.meta as Record<string, unknown>;
    assert.equal(meta.resourceType, 'User');
    assert.equal(meta.location, `${BASE_URL}/v2/scim/Users/${String(body.id)}`);
    assert.match(String(meta.created), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(meta.created, meta.lastModified);
    assert.equal(res.headers.location, meta.location);
    assert.equal(res.headers.etag, meta.version);
    assert.equal(res.headers['content-type'], 'application/scim+json');
  });

  it('GET /Users/{id} returns the user, on /v2/scim and on the /scim alias', async () => {
    const created = await create();
    for (const prefix of ['/v2/scim', '/scim']) {
      const res = await t.request('GET', `${prefix}/Users/${String(created.id)}`);
      assert.equal(res.statusCode, 200);
      assert.equal(json(res).userName, 'jane.doe@example.com');
      assert.equal((json(res).meta as Record<string, unknown>).location, `${BASE_URL}/v2/scim/Users/${String(created.id)}`);
    }
  });

  it('the full core User schema round-trips, with the enterprise extension', async () => {
    const full = {
      schemas: [USER, ENTERPRISE],
      userName: 'bjensen@example.com',
      externalId: 'bjensen',
      name: { formatted: 'Ms. Barbara J Jensen III', familyName: 'Jensen', givenName: 'Barbara', middleName: 'Jane', honorificPrefix: 'Ms.', honorificSuffix: 'III' },
      displayName: 'Babs Jensen',
      nickName: 'Babs',
      profileUrl: 'https://login.example.com/bjensen',
      title: 'Tour Guide',
      userType: 'Employee',
      preferredLanguage: 'en-US',
      locale: 'en-US',
      timezone: 'America/Los_Angeles',
      active: true,
      emails: [{ value: 'bjensen@example.com', type: 'work', primary: true }, { value: 'babs@jensen.org', type: 'home' }],
      addresses: [{ type: 'work', streetAddress: '100 Universal City Plaza', locality: 'Hollywood', region: 'CA', postalCode: '91608', country: 'US', primary: true }],
      phoneNumbers: [{ value: '555-555-5555', type: 'work' }, { value: '555-555-4444', type: 'mobile' }],
      ims: [{ value: 'someaimhandle', type: 'aim' }],
      roles: [{ value: 'Admin' }],
      [ENTERPRISE]: { employeeNumber: '701984', costCenter: '4130', organization: 'Universal Studios', division: 'Theme Park', department: 'Tour Operations', manager: { value: 'MGR1' } },
    };
    const body = await create(full);
    for (const key of Object.keys(full)) {
      if (key === 'schemas') continue;
      assert.deepEqual(body[key], (full as Record<string, unknown>)[key], key);
    }
    assert.deepEqual(body.schemas, [USER, ENTERPRISE]);
    const got = json(await t.request('GET', `/v2/scim/Users/${String(body.id)}`));
    assert.deepEqual(got[ENTERPRISE], full[ENTERPRISE]);
  });

  it('RFC 7643 4.1.1: userName is unique case-insensitively: a second create is 409 uniqueness', async () => {
    await create();
    const res = await t.request('POST', '/v2/scim/Users', { ...seedUser, userName: 'JANE.DOE@example.com' });
    assert.equal(res.statusCode, 409);
    assert.equal(json(res).scimType, 'uniqueness');
    assert.equal(json(res).status, '409');
  });

  it('DESIGN 4: userName is required on create -> 400 invalidValue', async () => {
    const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], name: { givenName: 'X' } });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).scimType, 'invalidValue');
  });

  it('RFC 7643 7: password is accepted but never returned', async () => {
    const body = await create({ ...seedUser, password: 't3mp-Pass-word' });
    assert.equal('password' in body, false);
    const got = json(await t.request('GET', `/v2/scim/Users/${String(body.id)}?attributes=password,userName`));
    assert.equal('password' in got, false);
  });

  it('contract 4.2: PUT replaces the user, clearing omitted attributes', async () => {
    const created = await create({ ...seedUser, title: 'Boss', nickName: 'JD' });
    const res = await t.request('PUT', `/v2/scim/Users/${String(created.id)}`, {
      schemas: [USER],
      userName: 'jane.doe@example.com',
      name: { givenName: 'Janet' },
    });
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.deepEqual(body.name, { givenName: 'Janet' });
    assert.equal('title' in body, false);
    assert.equal('nickName' in body, false);
    assert.equal('phoneNumbers' in body, false);
    assert.notEqual(res.headers.etag, undefined);
    assert.notEqual((body.meta as Record<string, unknown>).version, (created.meta as Record<string, unknown>).version);
  });

  it('PUT of an unknown id -> 404', async () => {
    const res = await t.request('PUT', '/v2/scim/Users/NOPE0000000000000000', seedUser);
    assert.equal(res.statusCode, 404);
    assert.equal(json(res).status, '404');
  });

  it('PUT renaming to a taken userName -> 409', async () => {
    await create();
    const other = await create({ ...seedUser, userName: 'other@example.com' });
    const res = await t.request('PUT', `/v2/scim/Users/${String(other.id)}`, { ...seedUser, userName: 'Jane.Doe@example.com' });
    assert.equal(res.statusCode, 409);
  });

  it('DELETE deactivates: 204, then hidden from reads, lists and filters (contract 3)', async () => {
    const created = await create();
    const id = String(created.id);
    const del = await t.request('DELETE', `/v2/scim/Users/${id}`);
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 404);
    assert.equal(json(await t.request('GET', '/v2/scim/Users')).totalResults, 0);
    const filtered = json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent("userName eq 'jane.doe@example.com'")}`));
    assert.equal(filtered.totalResults, 0);
    // DESIGN 4: by-id writes other than activation answer 404.
    assert.equal((await t.request('DELETE', `/v2/scim/Users/${id}`)).statusCode, 404);
    assert.equal((await t.request('PUT', `/v2/scim/Users/${id}`, { ...seedUser, active: false })).statusCode, 404);
    const patch = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'x' }] });
    assert.equal(patch.statusCode, 404);
    // DESIGN 4 (issue 9): a hidden user no longer holds its userName: re-creating it makes a new user.
    const again = await t.request('POST', '/v2/scim/Users', seedUser);
    assert.equal(again.statusCode, 201, again.body);
    assert.notEqual(json(again).id, id);
  });

  it('contract 4.2: PUT /Users/{id}/activate reactivates (empty body or {}), 200 + body', async () => {
    const created = await create();
    const id = String(created.id);
    await t.request('DELETE', `/v2/scim/Users/${id}`);
    const res = await t.app.inject({ method: 'PUT', url: `/v2/scim/Users/${id}/activate`, headers: { authorization: t.token } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).active, true);
    assert.equal(json(await t.request('GET', `/v2/scim/Users/${id}`)).active, true);
    await t.request('DELETE', `/v2/scim/Users/${id}`);
    const withBody = await t.request('PUT', `/v2/scim/Users/${id}/activate`, {});
    assert.equal(withBody.statusCode, 200);
  });

  it('Okta O6 / Entra E5: a PATCH by id setting active true reactivates a hidden user', async () => {
    const created = await create();
    const id = String(created.id);
    await t.request('DELETE', `/v2/scim/Users/${id}`);
    const res = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: true } }] });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).active, true);
  });

  it('Okta/Entra: a PUT by id with active true reactivates a hidden user', async () => {
    const created = await create();
    const id = String(created.id);
    await t.request('DELETE', `/v2/scim/Users/${id}`);
    const res = await t.request('PUT', `/v2/scim/Users/${id}`, { ...seedUser, active: true });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('DESIGN 4: bare DELETE /Users takes a filter that must match exactly one user', async () => {
    await create();
    await create({ ...seedUser, userName: 'john@example.com' });
    const none = await t.request('DELETE', '/v2/scim/Users');
    assert.equal(none.statusCode, 400);
    const many = await t.request('DELETE', `/v2/scim/Users?filter=${encodeURIComponent('userName co "example.com"')}`);
    assert.equal(many.statusCode, 400);
    const one = await t.request('DELETE', `/v2/scim/Users?filter=${encodeURIComponent("userName eq 'john@example.com'")}`);
    assert.equal(one.statusCode, 204);
    assert.equal(json(await t.request('GET', '/v2/scim/Users')).totalResults, 1);
  });

  it('PATCH of a user answers 200 with the resource (Entra checks the body)', async () => {
    const created = await create();
    const res = await t.request('PATCH', `/v2/scim/Users/${String(created.id)}`, {
      schemas: [PATCH],
      Operations: [{ op: 'Replace', path: 'name.familyName', value: 'Doe-Smith' }, { op: 'Add', path: 'nickName', value: 'JD' }],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res).name, { givenName: 'Jane', familyName: 'Doe-Smith' });
    assert.equal(json(res).nickName, 'JD');
  });

  it('RFC 7644 3.14: If-Match with a stale version -> 412; with the current one -> 200', async () => {
    const created = await create();
    const id = String(created.id);
    const etag = String((created.meta as Record<string, unknown>).version);
    const ok = await t.request('PUT', `/v2/scim/Users/${id}`, { ...seedUser, title: 'A' }, { 'if-match': etag });
    assert.equal(ok.statusCode, 200);
    const stale = await t.request('PUT', `/v2/scim/Users/${id}`, { ...seedUser, title: 'B' }, { 'if-match': etag });
    assert.equal(stale.statusCode, 412);
    assert.equal(json(stale).status, '412');
    const patchStale = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'C' }] }, { 'if-match': etag });
    assert.equal(patchStale.statusCode, 412);
    assert.equal(json(await t.request('GET', `/v2/scim/Users/${id}`)).title, 'A');
  });

  it('RFC 7644 3.14: If-None-Match with the current version -> 304 without a body', async () => {
    const created = await create();
    const id = String(created.id);
    const res = await t.request('GET', `/v2/scim/Users/${id}`, undefined, { 'if-none-match': String((created.meta as Record<string, unknown>).version) });
    assert.equal(res.statusCode, 304);
    assert.equal(res.body, '');
    const changed = await t.request('GET', `/v2/scim/Users/${id}`, undefined, { 'if-none-match': 'W/"999"' });
    assert.equal(changed.statusCode, 200);
  });

  it("a user's read-only groups reflect memberships, with value, display and $ref", async () => {
    const user = await create();
    const group = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Engineering', members: [{ value: user.id }] }));
    const got = json(await t.request('GET', `/v2/scim/Users/${String(user.id)}`));
    const groups = got.groups as Record<string, unknown>[];
    assert.equal(groups.length, 1);
    assert.equal(groups[0]?.value, group.id);
    assert.equal(groups[0]?.display, 'Engineering');
    assert.equal(groups[0]?.$ref, `${BASE_URL}/v2/scim/Groups/${String(group.id)}`);
    // groups is readOnly: a PUT carrying groups:[] (Okta O4) does not change memberships.
    const put = await t.request('PUT', `/v2/scim/Users/${String(user.id)}`, { ...seedUser, id: user.id, groups: [], meta: user.meta });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal((json(put).groups as unknown[]).length, 1);
  });

  it('bodies: invalid JSON -> 400 invalidSyntax; unknown attribute -> 400; wrong type -> 400; over 1 MiB -> 413', async () => {
    const bad = await t.request('POST', '/v2/scim/Users', '{"userName": ');
    assert.equal(bad.statusCode, 400);
    assert.equal(json(bad).scimType, 'invalidSyntax');
    const unknown = await t.request('POST', '/v2/scim/Users', { ...seedUser, shoeSize: 42 });
    assert.equal(unknown.statusCode, 400);
    const wrongType = await t.request('POST', '/v2/scim/Users', { ...seedUser, active: 'maybe' });
    assert.equal(wrongType.statusCode, 400);
    assert.equal(json(wrongType).scimType, 'invalidValue');
    const huge = await t.request('POST', '/v2/scim/Users', { ...seedUser, title: 'x'.repeat(1024 * 1024 + 10) });
    assert.equal(huge.statusCode, 413);
    assert.equal(json(huge).status, '413');
    const array = await t.request('POST', '/v2/scim/Users', [seedUser]);
    assert.equal(array.statusCode, 400);
    assert.equal(json(await t.request('GET', '/v2/scim/Users')).totalResults, 0, 'no partial write');
  });

  it('unknown routes under the SCIM prefix answer 404 in the SCIM error shape', async () => {
    const res = await t.request('GET', '/v2/scim/Widgets');
    assert.equal(res.statusCode, 404);
    assert.deepEqual(json(res).schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  });

  it('DESIGN 4: responses are application/json when Accept asks only for it', async () => {
    const res = await t.request('GET', '/v2/scim/Users', undefined, { accept: 'application/json' });
    assert.equal(res.headers['content-type'], 'application/json');
    const scim = await t.request('GET', '/v2/scim/Users', undefined, { accept: 'application/scim+json, application/json' });
    assert.equal(scim.headers['content-type'], 'application/scim+json');
  });

  it('requests with application/json and a charset are accepted (Okta)', async () => {
    const res = await t.request('POST', '/v2/scim/Users', seedUser, { 'content-type': 'application/json; charset=utf-8' });
    assert.equal(res.statusCode, 201);
  });
});

describe('Users in a team with deactivated_users = visible', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ deactivatedUsers: 'visible' });
  });
  afterEach(() => t.close());

  it('Entra T17: a deactivated user stays readable and listed with active false', async () => {
    const created = json(await t.request('POST', '/v2/scim/Users', seedUser));
    const id = String(created.id);
    const patch = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'False' }] });
    assert.equal(patch.statusCode, 200, patch.body);
    assert.equal(json(patch).active, false);
    const got = await t.request('GET', `/v2/scim/Users/${id}`);
    assert.equal(got.statusCode, 200);
    assert.equal(json(got).active, false);
    const list = json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "jane.doe@example.com"')}`));
    assert.equal(list.totalResults, 1);
    assert.equal((list.Resources as Record<string, unknown>[])[0]?.active, false);
  });
});
