/**
 * Groups over HTTP: the contract's create (display, active), member add / remove PATCHes, RFC
 * 7644 replace and delete, DESIGN.md section 4's status codes (PATCH 204 unless a projection
 * asks for a body), displayName uniqueness, members with value / display / $ref.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

for (const engine of engines) {
describe(`Groups on ${engine.name}`, () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ engine });
  });
  afterEach(() => t.close());

  const user = async (userName: string): Promise<string> => {
    const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName });
    assert.equal(res.statusCode, 201, res.body);
    return String(json(res).id);
  };
  const group = async (body: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], ...body });
    assert.equal(res.statusCode, 201, res.body);
    return json(res);
  };
  const members = async (id: string): Promise<string[]> => {
    const got = json(await t.request('GET', `/v2/scim/Groups/${id}`));
    return ((got.members as { value: string }[] | undefined) ?? []).map((m) => m.value).sort();
  };
  const patch = (id: string, operations: unknown[], query = '') =>
    t.request('PATCH', `/v2/scim/Groups/${id}${query}`, { schemas: [PATCH], Operations: operations });

  it('contract 4.3: POST with display and active creates the group; both names are returned', async () => {
    const res = await t.request('POST', '/v2/scim/Groups', { display: 'Sales', active: true });
    assert.equal(res.statusCode, 201, res.body);
    const body = json(res);
    assert.match(String(body.id), /^[A-Z0-9]{20}$/);
    assert.equal(body.value, body.id);
    assert.equal(body.display, 'Sales');
    assert.equal(body.displayName, 'Sales');
    assert.equal(body.active, true);
    assert.equal(body.externalId, null);
    assert.deepEqual(body.members, []);
    const meta = body.meta as Record<string, unknown>;
    assert.equal(meta.resourceType, 'Group');
    assert.equal(meta.location, `${BASE_URL}/v2/scim/Groups/${String(body.id)}`);
    assert.equal(res.headers.location, meta.location);
  });

  it('DESIGN 4: displayName is required -> 400 invalidValue', async () => {
    const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], active: true });
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).scimType, 'invalidValue');
  });

  it('DESIGN 4: displayName is unique per team, case-insensitively -> 409 uniqueness', async () => {
    await group({ displayName: 'Sales EMEA' });
    const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'sales emea' });
    assert.equal(res.statusCode, 409);
    assert.equal(json(res).scimType, 'uniqueness');
  });

  it('contract 4.3: PATCH add members (value array) -> 204; members carry value, display, $ref', async () => {
    const u1 = await user('u1@x.example');
    const u2 = await user('u2@x.example');
    const g = await group({ displayName: 'Eng' });
    const res = await patch(String(g.id), [{ op: 'add', path: 'members', value: [{ value: u1 }, { value: u2 }] }]);
    assert.equal(res.statusCode, 204, res.body);
    assert.equal(res.body, '');
    assert.match(String(res.headers.etag), /^W\/"\d+"$/);
    const got = json(await t.request('GET', `/v2/scim/Groups/${String(g.id)}`));
    const list = got.members as Record<string, unknown>[];
    assert.equal(list.length, 2);
    const first = list.find((m) => m.value === u1);
    assert.equal(first?.display, 'u1@x.example');
    assert.equal(first?.$ref, `${BASE_URL}/v2/scim/Users/${u1}`);
  });

  it('JumpCloud J2: the same member add twice is idempotent', async () => {
    const u1 = await user('u1@x.example');
    const g = await group({ displayName: 'Eng' });
    for (let i = 0; i < 2; i++) {
      assert.equal((await patch(String(g.id), [{ op: 'add', path: 'members', value: [{ value: u1 }] }])).statusCode, 204);
    }
    assert.deepEqual(await members(String(g.id)), [u1]);
  });

  it('contract 4.3: PATCH remove with path members[value eq "id"] removes that member only', async () => {
    const u1 = await user('u1@x.example');
    const u2 = await user('u2@x.example');
    const g = await group({ displayName: 'Eng', members: [{ value: u1 }, { value: u2 }] });
    const res = await patch(String(g.id), [{ op: 'remove', path: `members[value eq "${u1}"]` }]);
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await members(String(g.id)), [u2]);
  });

  it('Entra E11 default: remove path members with a value array removes only the listed members', async () => {
    const [u1, u2, u3] = [await user('a@x.example'), await user('b@x.example'), await user('c@x.example')];
    const g = await group({ displayName: 'Eng', members: [{ value: u1 }, { value: u2 }, { value: u3 }] });
    const res = await patch(String(g.id), [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: u1 }] }]);
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await members(String(g.id)), [u2, u3].sort());
  });

  it('Okta O12: replace members with a list makes membership equal that list', async () => {
    const [u1, u2, u3] = [await user('a@x.example'), await user('b@x.example'), await user('c@x.example')];
    const g = await group({ displayName: 'Eng', members: [{ value: u1 }, { value: u2 }] });
    const res = await patch(String(g.id), [{ op: 'replace', path: 'members', value: [{ value: u2 }, { value: u3 }] }]);
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await members(String(g.id)), [u2, u3].sort());
  });

  it('Okta O11 / T13: remove one member and add another in one PATCH, atomically', async () => {
    const [u1, u2] = [await user('a@x.example'), await user('b@x.example')];
    const g = await group({ displayName: 'Eng', members: [{ value: u2 }] });
    const res = await patch(String(g.id), [
      { op: 'remove', path: `members[value eq "${u2}"]` },
      { op: 'add', path: 'members', value: [{ value: u1, display: 'a@x.example' }] },
    ]);
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await members(String(g.id)), [u1]);
  });

  it('a PATCH adding an unknown user is 400 invalidValue and changes nothing', async () => {
    const u1 = await user('a@x.example');
    const g = await group({ displayName: 'Eng' });
    const res = await patch(String(g.id), [{ op: 'add', path: 'members', value: [{ value: u1 }, { value: 'NOSUCHUSER0000000000' }] }]);
    assert.equal(res.statusCode, 400);
    assert.equal(json(res).scimType, 'invalidValue');
    assert.deepEqual(await members(String(g.id)), []);
  });

  it('Entra E11 / Okta O10: PATCH displayName -> 204; the name is unique per team', async () => {
    const g = await group({ displayName: 'Sales EMEA' });
    await group({ displayName: 'Taken' });
    const res = await patch(String(g.id), [{ op: 'Replace', path: 'displayName', value: 'Sales EMEA North' }]);
    assert.equal(res.statusCode, 204, res.body);
    const got = json(await t.request('GET', `/v2/scim/Groups/${String(g.id)}`));
    assert.equal(got.displayName, 'Sales EMEA North');
    assert.equal(got.display, 'Sales EMEA North');
    const clash = await patch(String(g.id), [{ op: 'replace', value: { id: g.id, displayName: 'TAKEN' } }]);
    assert.equal(clash.statusCode, 409);
  });

  it('DESIGN 4: a group PATCH with attributes= answers 200 with the body', async () => {
    const u1 = await user('a@x.example');
    const g = await group({ displayName: 'Eng' });
    const res = await patch(String(g.id), [{ op: 'add', path: 'members', value: [{ value: u1 }] }], '?attributes=members');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual((json(res).members as { value: string }[]).map((m) => m.value), [u1]);
  });

  it('Entra T15: excludedAttributes=members leaves members out', async () => {
    const u1 = await user('a@x.example');
    const g = await group({ displayName: 'Sales EMEA', members: [{ value: u1 }] });
    const one = json(await t.request('GET', `/v2/scim/Groups/${String(g.id)}?excludedAttributes=members`));
    assert.equal('members' in one, false);
    assert.equal(one.displayName, 'Sales EMEA');
    const filter = encodeURIComponent('displayName eq "sales emea"');
    const list = json(await t.request('GET', `/v2/scim/Groups?excludedAttributes=members&filter=${filter}`));
    assert.equal(list.totalResults, 1);
    assert.equal('members' in (list.Resources as Record<string, unknown>[])[0]!, false);
  });

  it('RFC 7644 3.5.1: PUT replaces the group: omitted members means none', async () => {
    const u1 = await user('a@x.example');
    const g = await group({ displayName: 'Eng', members: [{ value: u1 }] });
    const res = await t.request('PUT', `/v2/scim/Groups/${String(g.id)}`, { schemas: [GROUP], displayName: 'Engineering' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).displayName, 'Engineering');
    assert.deepEqual(json(res).members, []);
  });

  it('contract 4.3: DELETE removes the group: 204, then 404', async () => {
    const u1 = await user('a@x.example');
    const g = await group({ displayName: 'Eng', members: [{ value: u1 }] });
    const res = await t.request('DELETE', `/v2/scim/Groups/${String(g.id)}`);
    assert.equal(res.statusCode, 204);
    assert.equal((await t.request('GET', `/v2/scim/Groups/${String(g.id)}`)).statusCode, 404);
    assert.equal((await t.request('DELETE', `/v2/scim/Groups/${String(g.id)}`)).statusCode, 404);
    const u = json(await t.request('GET', `/v2/scim/Users/${u1}`));
    assert.deepEqual(u.groups, []);
  });

  it('DESIGN 4: a deactivated (hidden) member disappears from the member list and comes back on activation', async () => {
    const [u1, u2] = [await user('a@x.example'), await user('b@x.example')];
    const g = await group({ displayName: 'Eng', members: [{ value: u1 }, { value: u2 }] });
    await t.request('DELETE', `/v2/scim/Users/${u1}`);
    assert.deepEqual(await members(String(g.id)), [u2]);
    await t.request('PUT', `/v2/scim/Users/${u1}/activate`);
    assert.deepEqual(await members(String(g.id)), [u1, u2].sort());
  });

  it('Entra T26: 50 member adds in one PATCH are all applied', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await user(`m${i}@x.example`));
    const g = await group({ displayName: 'Big' });
    const res = await patch(String(g.id), [{ op: 'Add', path: 'members', value: ids.map((value) => ({ $ref: null, value })) }]);
    assert.equal(res.statusCode, 204, res.body);
    assert.deepEqual(await members(String(g.id)), [...ids].sort());
  });

  it('concurrent membership PATCHes never lose a member', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await user(`c${i}@x.example`));
    const g = await group({ displayName: 'Race' });
    const results = await Promise.all(ids.map((value) => patch(String(g.id), [{ op: 'add', path: 'members', value: [{ value }] }])));
    assert.ok(results.every((r) => r.statusCode === 204));
    assert.deepEqual(await members(String(g.id)), [...ids].sort());
  });
});
}
