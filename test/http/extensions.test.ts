/**
 * Issue 11: custom schema extensions per team, at the HTTP level, on every engine. A team admin
 * registers an RFC 7643 section 7 schema through the admin API (/v2/admin/Schemas); the team's
 * discovery shows it (and no other team's); values are validated by type, canonical values,
 * required and mutability; returned and projected; set by POST, PUT and PATCH (URN paths, value
 * objects, Entra's `urn:...:attr` path); filtered (every operator, pr, value paths) and sorted in
 * SQL; `uniqueness: server` holds under concurrent creates; evolution hides data, never retypes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueAccessToken } from '../../src/oauth/tokens.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

type Json = Record<string, unknown>;

const URN = 'urn:acme:params:scim:schemas:extension:HR:2.0:User';
const CORE = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

export const HR_SCHEMA = {
  id: URN,
  name: 'HR',
  description: 'HR attributes',
  attributes: [
    { name: 'badge', type: 'string', uniqueness: 'server', caseExact: false },
    { name: 'costCenter', type: 'string' },
    { name: 'employmentType', type: 'string', canonicalValues: ['full-time', 'part-time'] },
    { name: 'level', type: 'integer' },
    { name: 'remote', type: 'boolean' },
    { name: 'hired', type: 'dateTime' },
    { name: 'employeeKey', type: 'string', mutability: 'immutable' },
    { name: 'skills', type: 'complex', multiValued: true, subAttributes: [{ name: 'name', type: 'string' }, { name: 'years', type: 'integer' }] },
  ],
};

for (const engine of engines) {
  describe(`team schema extensions on ${engine.name}`, () => {
    let t: TestApp;
    const ids: Record<string, string> = {};

    const create = async (userName: string, hr: Json | undefined, status = 201) => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: hr ? [CORE, URN] : [CORE], userName, ...(hr ? { [URN]: hr } : {}) });
      assert.equal(res.statusCode, status, res.body);
      return json(res);
    };
    const found = async (filter: string, extra = ''): Promise<string[]> => {
      const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(filter)}&attributes=userName${extra}`);
      assert.equal(res.statusCode, 200, `${filter}: ${res.body}`);
      return ((json(res).Resources as Json[]) ?? []).map((r) => String(r.userName));
    };

    before(async () => {
      t = await createTestApp({ engine });
      const res = await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: HR_SCHEMA });
      assert.equal(res.statusCode, 201, res.body);
      ids.ada = String((await create('ada', { badge: 'B-1', costCenter: 'R&D', employmentType: 'full-time', level: 5, remote: true, hired: '2020-01-02T00:00:00Z', skills: [{ name: 'go', years: 4 }, { name: 'sql', years: 1 }] })).id);
      ids.bob = String((await create('bob', { badge: 'B-2', costCenter: 'Sales', level: 12, remote: false, skills: [{ name: 'go', years: 1 }] })).id);
      ids.cy = String((await create('cy', undefined)).id);
    });
    after(() => t.close());

    it('the admin API refuses an invalid schema with the JSON location and the rule (400 invalidValue)', async () => {
      const bad = async (schema: unknown, where: RegExp) => {
        const res = await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json(res).scimType, 'invalidValue');
        assert.match(String(json(res).detail), where);
      };
      await bad({ ...HR_SCHEMA, id: 'not a urn' }, /schema\.id/);
      await bad({ ...HR_SCHEMA, id: CORE }, /schema\.id: .* Rollcall defines/);
      await bad({ id: 'urn:x:y', attributes: [{ name: 'a', type: 'text' }] }, /schema\.attributes\[0\] \(a\)\.type: must be one of/);
      await bad({ id: 'urn:x:y', attributes: [{ name: '1a', type: 'string' }] }, /schema\.attributes\[0\]\.name/);
      await bad({ id: 'urn:x:y', attributes: [{ name: 'a', type: 'string' }, { name: 'A', type: 'string' }] }, /declared twice/);
      await bad({ id: 'urn:x:y', attributes: [{ name: 'a', type: 'complex', subAttributes: [{ name: 'b', type: 'complex', subAttributes: [] }] }] }, /cannot be complex/);
      await bad({ id: 'urn:x:y', attributes: [{ name: 'a', type: 'integer', uniqueness: 'server' }] }, /single-valued string/);
      await bad({ id: 'urn:x:y', attributes: [{ name: 'a', type: 'string', colour: 'red' }] }, /\.colour: is not an attribute characteristic/);
    });

    it('the admin API needs an administrator token: none is 401, a machine client\'s or a plain user\'s is 403, read scope cannot change', async () => {
      const none = await t.app.inject({ method: 'GET', url: '/v2/admin/Schemas' });
      assert.equal(none.statusCode, 401);
      const as = async (token: string, method: 'GET' | 'POST') =>
        (await t.app.inject({ method, url: '/v2/admin/Schemas', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: { resourceType: 'User', schema: HR_SCHEMA } } : {}) })).statusCode;
      const issue = async (userId: string | null, clientId: string | null, scope: ('read' | 'write')[]) =>
        (await issueAccessToken(t.storage.db, t.clock, { teamId: t.team.id, userId, clientId, scope, ttlSeconds: 600 })).token;
      assert.equal(await as(await issue(null, 'machine-client', ['read', 'write']), 'GET'), 403, 'client credentials');
      const plain = json(await t.request('POST', '/v2/scim/Users', { schemas: [CORE], userName: 'plain-user' }));
      assert.equal(await as(await issue(String(plain.id), 'app', ['read', 'write']), 'GET'), 403, 'a user who is not an admin');
      const admin = json(await t.request('POST', '/v2/scim/Users', { schemas: [CORE], userName: 'admin-user', userType: 'admin' }));
      assert.equal(await as(await issue(String(admin.id), 'app', ['read', 'write']), 'GET'), 200, 'an admin user');
      assert.equal(await as(await issue(null, null, ['read']), 'POST'), 403, 'read scope cannot register');
      const list = await t.request('GET', '/v2/admin/Schemas');
      assert.equal(list.statusCode, 200, list.body);
      assert.deepEqual((json(list).Resources as Json[]).map((r) => r.id), [URN]);
    });

    it('RFC 7643 6/7: the team sees its extension in /Schemas and /ResourceTypes; without a token or in another team, only the core', async () => {
      const schemas = json(await t.request('GET', '/v2/scim/Schemas'));
      assert.ok((schemas.Resources as Json[]).some((s) => s.id === URN));
      const one = json(await t.request('GET', `/v2/scim/Schemas/${URN}`));
      assert.deepEqual((one.attributes as Json[]).map((a) => a.name), HR_SCHEMA.attributes.map((a) => a.name));
      const rt = json(await t.request('GET', '/v2/scim/ResourceTypes/User'));
      assert.deepEqual(rt.schemaExtensions, [
        { schema: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User', required: false },
        { schema: URN, required: false },
      ]);
      const anonymous = json(await t.app.inject({ method: 'GET', url: '/v2/scim/Schemas' }));
      assert.ok(!(anonymous.Resources as Json[]).some((s) => s.id === URN));
      const other = await t.addTeam(`other-${engine.name}`);
      const theirs = json(await t.app.inject({ method: 'GET', url: '/v2/scim/ResourceTypes/User', headers: { authorization: `Bearer ${other.token}` } }));
      assert.equal((theirs.schemaExtensions as Json[]).length, 1);
      const write = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: { userName: 'x', [URN]: { badge: 'B-9' } } });
      assert.equal(write.statusCode, 400, 'another team has no such extension');
    });

    it('values are returned, and projected with attributes=urn:...:attr', async () => {
      const full = json(await t.request('GET', `/v2/scim/Users/${ids.ada}`));
      assert.deepEqual((full[URN] as Json).level, 5);
      assert.ok((full.schemas as string[]).includes(URN));
      const projected = json(await t.request('GET', `/v2/scim/Users/${ids.ada}?attributes=${URN}:costCenter`));
      assert.deepEqual(projected[URN], { costCenter: 'R&D' });
      assert.equal(projected.userName, undefined);
    });

    it('RFC 7643 2.3 / 2.2: values are validated by type, canonical values, required and mutability', async () => {
      for (const hr of [{ level: 'five' }, { remote: 'maybe' }, { hired: 'yesterday' }, { employmentType: 'contractor' }, { skills: [{ name: 'go', years: 'x' }] }]) {
        const body = await create(`bad-${Object.keys(hr)[0]}`, hr, 400);
        assert.equal(body.scimType, 'invalidValue', JSON.stringify(hr));
      }
      const created = await create('immutable-1', { employeeKey: 'K1' });
      const res = await t.request('PATCH', `/v2/scim/Users/${String(created.id)}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: `${URN}:employeeKey`, value: 'K2' }] });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).scimType, 'mutability');
    });

    it('item 5: an undeclared attribute stays a 400 that names it and says how to declare it', async () => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [CORE, URN], userName: 'u5', [URN]: { shoeSize: '9' } });
      assert.equal(res.statusCode, 400);
      assert.match(String(json(res).detail), /Unknown attribute "shoeSize".*declare it with rollcall schema add/);
      const other = await t.request('POST', '/v2/scim/Users', { userName: 'u6', 'urn:ietf:params:scim:schemas:extension:CustomExtension:2.0:User:costCode': 'x' });
      assert.equal(other.statusCode, 400);
      assert.match(String(json(other).detail), /costCode.*declare it with rollcall schema add/);
    });

    it('settable by PUT, PATCH with a URN path, Entra\'s urn:...:attr path, and a no-path value object', async () => {
      const id = String((await create('setter', { costCenter: 'A' })).id);
      const patch = (op: Json) => t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [op] });
      assert.equal((await patch({ op: 'replace', path: `${URN}:costCenter`, value: 'B' })).statusCode, 200);
      assert.equal(((json(await t.request('GET', `/v2/scim/Users/${id}`))[URN]) as Json).costCenter, 'B');
      assert.equal((await patch({ op: 'add', value: { [`${URN}:level`]: 3 } })).statusCode, 200);
      assert.equal((await patch({ op: 'replace', value: { [URN]: { remote: true } } })).statusCode, 200);
      const after = json(await t.request('GET', `/v2/scim/Users/${id}`))[URN] as Json;
      assert.deepEqual([after.costCenter, after.level, after.remote], ['B', 3, true]);
      const put = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [CORE, URN], userName: 'setter', [URN]: { costCenter: 'C' } });
      assert.equal(put.statusCode, 200, put.body);
      assert.deepEqual(json(put)[URN], { costCenter: 'C' });
    });

    it('RFC 7644 3.4.2.2: filters on extension attributes, every operator, pr, and value paths, compiled to SQL', async () => {
      const cases: [string, string[]][] = [
        [`${URN}:costCenter eq "r&d"`, ['ada']],
        [`${URN}:costCenter ne "r&d"`, ['bob', 'cy'].filter(Boolean)],
        [`${URN}:costCenter co "ale"`, ['bob']],
        [`${URN}:costCenter sw "R"`, ['ada']],
        [`${URN}:costCenter ew "S"`, ['bob']],
        [`${URN}:level gt 5`, ['bob']],
        [`${URN}:level ge 5`, ['ada', 'bob']],
        [`${URN}:level lt 12`, ['ada']],
        [`${URN}:level le 12`, ['ada', 'bob']],
        [`${URN}:level eq 12`, ['bob']],
        [`${URN}:remote eq true`, ['ada']],
        [`${URN}:hired lt "2021-01-01T00:00:00Z"`, ['ada']],
        [`${URN}:badge pr`, ['ada', 'bob']],
        [`${URN}:skills[name eq "go" and years ge 3]`, ['ada']],
        [`${URN}:skills.name eq "go"`, ['ada', 'bob']],
      ];
      for (const [filter, expected] of cases) {
        const got = (await found(`(${filter}) and (userName eq "ada" or userName eq "bob" or userName eq "cy")`)).sort();
        assert.deepEqual(got, expected.sort(), filter);
      }
      const sorted = json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(`${URN}:level pr`)}&sortBy=${URN}:level&sortOrder=descending&attributes=userName`));
      assert.deepEqual((sorted.Resources as Json[]).map((r) => r.userName).slice(0, 2), ['bob', 'ada']);
    });

    it('RFC 7643 2.2 uniqueness server: a taken badge is 409 uniqueness, whatever the case, also for concurrent creates', async () => {
      const taken = await create('dup-1', { badge: 'b-1' }, 409);
      assert.equal(taken.scimType, 'uniqueness');
      assert.match(String(taken.detail), /badge/);
      const racers = await Promise.all([0, 1, 2, 3, 4].map((i) => t.request('POST', '/v2/scim/Users', { schemas: [CORE, URN], userName: `race-${i}`, [URN]: { badge: 'RACE' } })));
      assert.deepEqual(racers.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409]);
      // A PATCH to a taken value is refused too; releasing it frees it.
      const id = String((await create('mover', { badge: 'M-1' })).id);
      const move = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: `${URN}:badge`, value: 'B-2' }] });
      assert.equal(move.statusCode, 409, move.body);
      const freed = await t.request('PATCH', `/v2/scim/Users/${ids.bob}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `${URN}:badge` }] });
      assert.equal(freed.statusCode, 200, freed.body);
      assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: `${URN}:badge`, value: 'B-2' }] })).statusCode, 200);
    });

    it('evolution: leaving an attribute out hides its data (kept), changing a type is refused, removing the extension hides it all', async () => {
      const without = { ...HR_SCHEMA, attributes: HR_SCHEMA.attributes.filter((a) => a.name !== 'costCenter') };
      assert.equal((await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: without })).statusCode, 201);
      const hidden = json(await t.request('GET', `/v2/scim/Users/${ids.ada}`))[URN] as Json;
      assert.equal(hidden.costCenter, undefined, 'not returned');
      assert.equal(hidden.level, 5);
      const filtered = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(`${URN}:costCenter eq "R&D"`)}`);
      assert.equal(filtered.statusCode, 400);
      // A PATCH of another attribute keeps the hidden value.
      assert.equal((await t.request('PATCH', `/v2/scim/Users/${ids.ada}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: `${URN}:level`, value: 6 }] })).statusCode, 200);
      const retyped = await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: { ...HR_SCHEMA, attributes: [...without.attributes, { name: 'costCenter', type: 'integer' }] } });
      assert.equal(retyped.statusCode, 400);
      assert.match(String(json(retyped).detail), /changing the type of "costcenter" from string to integer is refused/);
      assert.equal((await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: HR_SCHEMA })).statusCode, 201);
      assert.equal((json(await t.request('GET', `/v2/scim/Users/${ids.ada}`))[URN] as Json).costCenter, 'R&D', 'declared again: shown again');
      assert.equal((await t.request('DELETE', `/v2/admin/Schemas/${URN}`)).statusCode, 204);
      const gone = json(await t.request('GET', `/v2/scim/Users/${ids.ada}`));
      assert.equal(gone[URN], undefined);
      assert.ok(!(gone.schemas as string[]).includes(URN));
      assert.equal((await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: HR_SCHEMA })).statusCode, 201);
      assert.equal((json(await t.request('GET', `/v2/scim/Users/${ids.ada}`))[URN] as Json).level, 6, 'added again: its data is back');
    });
  });
}
