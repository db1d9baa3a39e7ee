/**
 * Issue 31 items 2 and 6: discovery of a team's roles and entitlements, on both engines.
 * - Okta's entitlement discovery sequence, as Okta's guide "Build a SCIM 2.0 server with
 *   entitlements" describes the calls Okta makes when provisioning is enabled: `/ResourceTypes`,
 *   `/Schemas` (for the URNs the resource types name), then each resource type whose schema is
 *   Okta's Role or Entitlement URN read at its own endpoint, first with `count=1&startIndex=1`,
 *   then page by page until `totalResults` is reached; each page a ListResponse whose resources
 *   carry the resource type's schema, `id` and `displayName` (and `type` on entitlements). The
 *   first request of each endpoint is the step of Okta's published "Okta SCIM 2.0 Entitlements
 *   Test" (developer.okta.com/standards/SCIM/SCIMFiles/Okta-SCIM-20-Entitlements-Test.json,
 *   "Duplicate the request for multiple Entitlement Endpoints"): its headers, and its assertions
 *   (status 200, `Resources` not empty, `schemas` holding the ListResponse URN) with those of
 *   Okta's SCIM test suites on every list (`itemsPerPage`, `startIndex`, `totalResults` numbers).
 * - The IETF draft's form (draft-ietf-scim-roles-entitlements-01), per team setting.
 * - A team without a catalog sees discovery exactly as before and no catalog endpoint.
 * - Catalogs never cross teams.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import type { SeedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const OKTA_ROLE = 'urn:okta:scim:schemas:core:1.0:Role';
const OKTA_ENTITLEMENT = 'urn:okta:scim:schemas:core:1.0:Entitlement';
const IETF_ROLE = 'urn:ietf:params:scim:schemas:core:2.0:Role';
const IETF_ENTITLEMENT = 'urn:ietf:params:scim:schemas:core:2.0:Entitlement';

type Json = Record<string, unknown>;

const CATALOG: SeedCatalog = {
  roles: [
    { value: 'viewer', displayName: 'Viewer' },
    { value: 'admin', displayName: 'Administrator', description: 'Everything' },
    { value: 'billing', displayName: 'Billing manager' },
  ],
  types: [
    { name: 'License', endpoint: '/Licenses', description: 'Seats', entitlements: [{ value: 'e5', displayName: 'Office E5' }, { value: 'e3', displayName: 'Office E3' }] },
    { name: 'Permission set', endpoint: '/PermissionSets', multiValued: false, entitlements: [{ value: 'ps-read', displayName: 'Read only' }] },
  ],
};

/** The headers of the step of Okta's "Okta SCIM 2.0 Entitlements Test". */
const OKTA_TEST_HEADERS = (token: string): Record<string, string> => ({
  'accept-charset': 'utf-8',
  'content-type': 'application/scim+json; charset=utf-8',
  accept: 'application/scim+json',
  authorization: `Bearer ${token}`,
  'user-agent': 'OKTA SCIM Integration',
});

const get = async (t: TestApp, url: string, token?: string): Promise<Json> => {
  const res = token === undefined ? await t.request('GET', url) : await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.statusCode, 200, `${url}: ${res.payload.slice(0, 300)}`);
  return json(res);
};

const resourcesOf = (list: Json): Json[] => list.Resources as Json[];

/** Okta's sequence, replayed; returns every value read per endpoint. */
async function oktaSequence(t: TestApp, prefix: string): Promise<Record<string, string[]>> {
  // 1. /ResourceTypes: the role and entitlement resource types and their schema URNs.
  const types = resourcesOf(await get(t, `${prefix}/ResourceTypes`));
  const governed = types.filter((rt) => rt.schema === OKTA_ROLE || rt.schema === OKTA_ENTITLEMENT);
  // 2. /Schemas: every URN a resource type names can be looked up (Okta knows its own, but may ask).
  const schemaIds = new Set(resourcesOf(await get(t, `${prefix}/Schemas`)).map((s) => s.id));
  for (const rt of types) {
    assert.ok(schemaIds.has(rt.schema), `/Schemas has ${String(rt.schema)}`);
    for (const ext of (rt.schemaExtensions as Json[] | undefined) ?? []) assert.ok(schemaIds.has(ext.schema), `/Schemas has ${String(ext.schema)}`);
  }
  // 3. Each endpoint: count=1&startIndex=1, then page through.
  const read: Record<string, string[]> = {};
  for (const rt of governed) {
    const endpoint = String(rt.endpoint);
    // Okta's published step, with its headers and assertions.
    const step = await t.app.inject({ method: 'GET', url: `${prefix}${endpoint}?count=1&startIndex=1`, headers: OKTA_TEST_HEADERS(t.token) });
    assert.equal(step.statusCode, 200, step.payload);
    assert.match(String(step.headers['content-type']), /^application\/scim\+json/);
    const first = json(step);
    assert.ok(Array.isArray(first.Resources) && first.Resources.length > 0, 'Resources is not empty');
    assert.ok((first.schemas as unknown[]).includes(LIST), 'schemas has the ListResponse URN');
    for (const key of ['itemsPerPage', 'startIndex', 'totalResults']) assert.equal(typeof first[key], 'number', key);
    // And what the guide's sequence reads from it.
    assert.deepEqual(first.schemas, [LIST]);
    assert.equal(first.startIndex, 1);
    const total = first.totalResults as number;
    assert.equal(first.itemsPerPage, 1);
    const values: string[] = [];
    for (let start = 1; start <= total; start++) {
      const page = start === 1 ? first : await get(t, `${prefix}${endpoint}?count=1&startIndex=${start}`);
      assert.equal(page.startIndex, start);
      assert.equal(page.totalResults, total);
      const [resource, ...more] = resourcesOf(page);
      assert.equal(more.length, 0);
      assert.ok(resource);
      assert.deepEqual(resource.schemas, [rt.schema]);
      assert.equal(typeof resource.id, 'string');
      assert.equal(typeof resource.displayName, 'string');
      if (rt.schema === OKTA_ENTITLEMENT) assert.equal(resource.type, rt.name, 'an entitlement names its type');
      assert.equal((resource.meta as Json).resourceType, rt.name);
      // The resource is also found at its own URL.
      assert.deepEqual(await get(t, `${prefix}${endpoint}/${encodeURIComponent(String(resource.id))}`), resource);
      values.push(String(resource.id));
    }
    const past = await get(t, `${prefix}${endpoint}?count=1&startIndex=${total + 1}`);
    assert.deepEqual(resourcesOf(past), []);
    assert.equal(past.itemsPerPage, 0);
    read[String(rt.name)] = values;
  }
  return read;
}

for (const engine of engines) {
  describe(`catalog discovery (${engine.name})`, () => {
    it("Okta's entitlement discovery sequence: /ResourceTypes, /Schemas, each endpoint with count=1&startIndex=1 then paged through, under both prefixes", async () => {
      const t = await createTestApp({ engine });
      try {
        await seedCatalog(t.storage, t.team.id, CATALOG);
        const types = resourcesOf(await get(t, '/v2/scim/ResourceTypes'));
        assert.deepEqual(types.map((rt) => [rt.id, rt.name, rt.endpoint, rt.schema]), [
          ['User', 'User', '/Users', 'urn:ietf:params:scim:schemas:core:2.0:User'],
          ['Group', 'Group', '/Groups', 'urn:ietf:params:scim:schemas:core:2.0:Group'],
          ['Role', 'Role', '/Roles', OKTA_ROLE],
          ['License', 'License', '/Licenses', OKTA_ENTITLEMENT],
          ['Permission set', 'Permission set', '/PermissionSets', OKTA_ENTITLEMENT],
        ]);
        assert.equal(types[3]?.description, 'Seats');
        assert.equal((types[4]?.meta as Json).location, 'https://rollcall.test/v2/scim/ResourceTypes/Permission%20set');
        assert.equal(json(await t.request('GET', '/v2/scim/ResourceTypes/Permission%20set')).endpoint, '/PermissionSets');
        assert.equal(json(await t.request('GET', '/scim/ResourceTypes/role')).schema, OKTA_ROLE, 'names compare case-insensitively, as User and Group do');

        for (const prefix of ['/v2/scim', '/scim']) {
          assert.deepEqual(await oktaSequence(t, prefix), {
            Role: ['admin', 'billing', 'viewer'],
            License: ['e3', 'e5'],
            'Permission set': ['ps-read'],
          });
        }

        const role = json(await t.request('GET', '/v2/scim/Roles/admin'));
        assert.deepEqual(role, {
          schemas: [OKTA_ROLE],
          id: 'admin',
          displayName: 'Administrator',
          description: 'Everything',
          meta: { resourceType: 'Role', location: 'https://rollcall.test/v2/scim/Roles/admin' },
        });
        const all = json(await t.request('GET', '/v2/scim/Entitlements'));
        assert.deepEqual(resourcesOf(all).map((e) => [e.id, e.type, (e.meta as Json).location]), [
          ['e3', 'License', 'https://rollcall.test/v2/scim/Licenses/e3'],
          ['e5', 'License', 'https://rollcall.test/v2/scim/Licenses/e5'],
          ['ps-read', 'Permission set', 'https://rollcall.test/v2/scim/PermissionSets/ps-read'],
        ]);
        assert.equal(json(await t.request('GET', '/v2/scim/Entitlements/ps-read')).type, 'Permission set');
        assert.equal((await t.request('GET', '/v2/scim/Licenses/ps-read')).statusCode, 404, 'a type endpoint holds only its own entitlements');

        // /Schemas serves the Okta schemas the resource types name.
        const roleSchema = json(await t.request('GET', `/v2/scim/Schemas/${OKTA_ROLE}`));
        assert.deepEqual((roleSchema.attributes as Json[]).map((a) => [a.name, a.mutability]), [['displayName', 'readOnly'], ['description', 'readOnly']]);
        const entitlementSchema = json(await t.request('GET', `/v2/scim/Schemas/${OKTA_ENTITLEMENT}`));
        assert.deepEqual((entitlementSchema.attributes as Json[]).map((a) => a.name), ['displayName', 'type', 'description']);
        assert.equal((await t.request('GET', `/v2/scim/Schemas/${IETF_ROLE}`)).statusCode, 404, 'only the form the team chose');

        // ServiceProviderConfig: the draft's RolesAndEntitlements.
        const config = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
        assert.deepEqual(config.RolesAndEntitlements, {
          roles: { supported: true, multipleRolesSupported: true, primarySupported: true, typeSupported: true },
          entitlements: { supported: true, multipleEntitlementsSupported: true, primarySupported: true, typeSupported: true, types: ['License', 'Permission set'] },
        });
      } finally {
        await t.close();
      }
    });

    it('IETF draft form (team setting ietf): the draft\'s two resource types, URNs, schema samples and resource attributes', async () => {
      const t = await createTestApp({ engine });
      try {
        await seedCatalog(t.storage, t.team.id, { ...CATALOG, schemas: 'ietf' });
        // The draft defines two resource types, /Roles and /Entitlements, and tells kinds of
        // entitlements apart by their `type`: not one resource type per entitlement type.
        const types = resourcesOf(await get(t, '/v2/scim/ResourceTypes'));
        assert.deepEqual(types.slice(2).map((rt) => [rt.id, rt.name, rt.endpoint, rt.schema]), [
          ['Role', 'Role', '/Roles', IETF_ROLE],
          ['Entitlement', 'Entitlement', '/Entitlements', IETF_ENTITLEMENT],
        ]);
        assert.deepEqual(await get(t, '/v2/scim/ResourceTypes/Entitlement'), types[3]);
        assert.equal((types[3]!.meta as Json).location, 'https://rollcall.test/v2/scim/ResourceTypes/Entitlement');
        assert.equal((await t.request('GET', '/v2/scim/ResourceTypes/License')).statusCode, 404);
        // /Entitlements lists every kind, each with its type; the per-type endpoints still answer reads.
        const all = resourcesOf(await get(t, '/v2/scim/Entitlements'));
        assert.deepEqual(all.map((e) => [e.id, e.type]), [['e3', 'License'], ['e5', 'License'], ['ps-read', 'Permission set']]);
        const licenses = resourcesOf(await get(t, `/v2/scim/Entitlements?filter=${encodeURIComponent('type eq "License"')}`));
        assert.deepEqual(licenses.map((e) => e.id), ['e3', 'e5']);
        assert.deepEqual(resourcesOf(await get(t, '/v2/scim/Licenses')).map((e) => e.id), ['e3', 'e5']);
        // Each entitlement is a resource of the Entitlement type, located under /Entitlements.
        for (const url of ['/v2/scim/Entitlements/e5', '/v2/scim/Licenses/e5']) {
          assert.deepEqual((await get(t, url)).meta, { resourceType: 'Entitlement', location: 'https://rollcall.test/v2/scim/Entitlements/e5' }, url);
        }
        const schemaIds = resourcesOf(await get(t, '/v2/scim/Schemas')).map((s) => s.id);
        assert.deepEqual(schemaIds.slice(-2), [IETF_ROLE, IETF_ENTITLEMENT]);
        assert.equal(schemaIds.includes(OKTA_ROLE), false);
        const draftAttributes = ['id', 'value', 'display', 'type', 'primary', 'supported', 'limitedAssignmentsPermitted', 'totalAssignmentsPermitted', 'totalAssignmentsUsed', 'containedBy', 'contains'];
        for (const urn of [IETF_ROLE, IETF_ENTITLEMENT]) {
          const schema = json(await t.request('GET', `/scim/Schemas/${urn}`));
          const attributes = schema.attributes as Json[];
          assert.deepEqual(attributes.map((a) => a.name), draftAttributes);
          assert.ok(attributes.every((a) => a.mutability === 'readOnly'));
          assert.deepEqual(attributes.filter((a) => a.multiValued).map((a) => a.name), ['containedBy', 'contains']);
        }
        // The draft's samples: a Role's value is required, an Entitlement's id.
        const required = async (urn: string) => (json(await t.request('GET', `/v2/scim/Schemas/${urn}`)).attributes as Json[]).filter((a) => a.required).map((a) => a.name);
        assert.deepEqual(await required(IETF_ROLE), ['value']);
        assert.deepEqual(await required(IETF_ENTITLEMENT), ['id']);

        assert.deepEqual(json(await t.request('GET', '/v2/scim/Roles/admin')), {
          schemas: [IETF_ROLE],
          id: 'admin',
          value: 'admin',
          display: 'Administrator',
          supported: true,
          limitedAssignmentsPermitted: false,
          meta: { resourceType: 'Role', location: 'https://rollcall.test/v2/scim/Roles/admin' },
        });
        const license = json(await t.request('GET', '/v2/scim/Licenses/e5'));
        assert.deepEqual([license.schemas, license.value, license.display, license.type], [[IETF_ENTITLEMENT], 'e5', 'Office E5', 'License']);
        // Filters read the draft's attribute names.
        const byDisplay = json(await t.request('GET', `/v2/scim/Roles?filter=${encodeURIComponent('display sw "admin"')}`));
        assert.deepEqual(resourcesOf(byDisplay).map((r) => r.id), ['admin']);
        const unknown = await t.request('GET', `/v2/scim/Roles?filter=${encodeURIComponent('displayName eq "Viewer"')}`);
        assert.equal(unknown.statusCode, 400);
        assert.equal(json(unknown).scimType, 'invalidFilter');

        const config = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
        assert.deepEqual(config.RolesAndEntitlements, {
          roles: { supported: true, multipleRolesSupported: true, primarySupported: true, typeSupported: true },
          entitlements: { supported: true, multipleEntitlementsSupported: true, primarySupported: true, typeSupported: true, types: ['License', 'Permission set'] },
        });
      } finally {
        await t.close();
      }
    });

    it('a team with roles only: entitlements not supported (ServiceProviderConfig), and in the IETF form no Entitlement resource type', async () => {
      for (const schemas of ['okta', 'ietf'] as const) {
        const t = await createTestApp({ engine });
        try {
          await seedCatalog(t.storage, t.team.id, { roles: CATALOG.roles, schemas });
          const config = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
          assert.deepEqual(config.RolesAndEntitlements, {
            roles: { supported: true, multipleRolesSupported: true, primarySupported: true, typeSupported: true },
            entitlements: { supported: false },
          }, schemas);
          const types = resourcesOf(await get(t, '/v2/scim/ResourceTypes'));
          assert.deepEqual(types.slice(2).map((rt) => rt.name), ['Role'], schemas);
          if (schemas === 'ietf') assert.equal((await t.request('GET', '/v2/scim/ResourceTypes/Entitlement')).statusCode, 404);
        } finally {
          await t.close();
        }
      }
    });

    it('a team without a catalog sees discovery exactly as before and no catalog endpoint: /Roles answers the unknown-path 404', async () => {
      const t = await createTestApp({ engine });
      try {
        // What a client without a token sees is the core discovery, unchanged by any team.
        const anonymous = async (url: string) => (await t.app.inject({ method: 'GET', url })).payload;
        for (const url of ['/v2/scim/ResourceTypes', '/v2/scim/Schemas', '/v2/scim/ServiceProviderConfig', '/scim/ResourceTypes']) {
          const res = await t.request('GET', url);
          assert.equal(res.statusCode, 200);
          assert.equal(res.payload, await anonymous(url), `${url} is byte-identical to the core discovery`);
        }
        assert.deepEqual(resourcesOf(json(await t.request('GET', '/v2/scim/ResourceTypes'))).map((rt) => rt.name), ['User', 'Group']);
        assert.equal('RolesAndEntitlements' in json(await t.request('GET', '/v2/scim/ServiceProviderConfig')), false);
        assert.equal((await t.request('GET', '/v2/scim/ResourceTypes/Role')).statusCode, 404);
        assert.equal((await t.request('GET', `/v2/scim/Schemas/${OKTA_ROLE}`)).statusCode, 404);

        // Each catalog path answers exactly what an unknown path answers (status, headers, body).
        const unknown = await t.request('GET', '/v2/scim/Widgets');
        for (const [method, path] of [['GET', '/Roles'], ['GET', '/Roles/admin'], ['GET', '/Entitlements'], ['GET', '/Licenses'], ['POST', '/Roles'], ['DELETE', '/Entitlements/e5'], ['PATCH', '/Licenses/e5']] as const) {
          for (const prefix of ['/v2/scim', '/scim']) {
            const res = await t.request(method, `${prefix}${path}?count=1`, method === 'POST' || method === 'PATCH' ? {} : undefined);
            assert.equal(res.statusCode, 404, `${method} ${prefix}${path}`);
            assert.equal(res.headers['content-type'], unknown.headers['content-type']);
            assert.equal(res.headers.allow, undefined);
            assert.deepEqual(json(res), { ...json(unknown), detail: `No SCIM endpoint ${method} ${prefix}${path}` });
          }
        }
        // And without a token, the same 401 as any unknown path.
        const noToken = await t.app.inject({ method: 'GET', url: '/v2/scim/Roles' });
        const noTokenUnknown = await t.app.inject({ method: 'GET', url: '/v2/scim/Widgets' });
        assert.equal(noToken.statusCode, 401);
        assert.equal(noToken.payload, noTokenUnknown.payload);
      } finally {
        await t.close();
      }
    });

    it("cross-team isolation: a team's token never sees another team's catalog, in discovery or at the endpoints", async () => {
      const t = await createTestApp({ engine });
      try {
        await seedCatalog(t.storage, t.team.id, CATALOG);
        const other = await t.addTeam('globex');
        const plain = await t.addTeam('initech');
        await seedCatalog(t.storage, other.team.id, { roles: [{ value: 'operator', displayName: 'Operator' }], types: [{ name: 'Seat', endpoint: '/Seats', entitlements: [{ value: 'pro', displayName: 'Pro' }] }] });

        const names = async (token: string) => resourcesOf(await get(t, '/v2/scim/ResourceTypes', token)).map((rt) => rt.name);
        assert.deepEqual(await names(t.token), ['User', 'Group', 'Role', 'License', 'Permission set']);
        assert.deepEqual(await names(other.token), ['User', 'Group', 'Role', 'Seat']);
        assert.deepEqual(await names(plain.token), ['User', 'Group']);

        const ids = async (url: string, token: string) => resourcesOf(await get(t, url, token)).map((r) => r.id);
        assert.deepEqual(await ids('/v2/scim/Roles', other.token), ['operator']);
        assert.deepEqual(await ids('/v2/scim/Entitlements', other.token), ['pro']);
        assert.deepEqual(await ids('/v2/scim/Roles', t.token), ['admin', 'billing', 'viewer']);
        const status = async (url: string, token: string) => (await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).statusCode;
        assert.equal(await status('/v2/scim/Licenses', other.token), 404, "another team's type endpoint is unknown");
        assert.equal(await status('/v2/scim/Roles/admin', other.token), 404);
        assert.equal(await status('/v2/scim/Entitlements/e5', other.token), 404);
        assert.equal(await status('/v2/scim/Seats', t.token), 404);
        assert.equal(await status('/v2/scim/Roles', plain.token), 404);
        assert.equal(await status('/v2/scim/ResourceTypes/License', other.token), 404);

        const schemaIds = async (token: string) => resourcesOf(await get(t, '/v2/scim/Schemas', token)).map((s) => s.id);
        assert.equal((await schemaIds(plain.token)).includes(OKTA_ROLE), false);
        const config = json(await t.app.inject({ method: 'GET', url: '/v2/scim/ServiceProviderConfig', headers: { authorization: `Bearer ${other.token}` } }));
        assert.deepEqual(((config.RolesAndEntitlements as Json).entitlements as Json).types, ['Seat']);
      } finally {
        await t.close();
      }
    });

    it("the team's OpenAPI document names its catalog endpoints (read operations); other teams' and the anonymous document do not", async () => {
      const t = await createTestApp({ engine });
      try {
        await seedCatalog(t.storage, t.team.id, CATALOG);
        const plain = await t.addTeam('initech');
        const pathsOf = async (headers: Record<string, string>) => {
          const res = await t.app.inject({ method: 'GET', url: '/v2/openapi.json', headers });
          assert.equal(res.statusCode, 200);
          return json(res) as { paths: Record<string, Record<string, Json>> };
        };
        const doc = await pathsOf({ authorization: `Bearer ${t.token}` });
        assert.deepEqual(await new Validator().validate(doc as Parameters<Validator['validate']>[0]), { valid: true });
        for (const prefix of ['/v2/scim', '/scim']) {
          for (const name of ['Roles', 'Entitlements', 'Licenses', 'PermissionSets']) {
            assert.deepEqual(Object.keys(doc.paths[`${prefix}/${name}`] ?? {}), ['get'], `${prefix}/${name}`);
            const one = doc.paths[`${prefix}/${name}/{id}`]?.get;
            assert.deepEqual((one?.parameters as Json[]).filter((p) => p.in === 'path').map((p) => p.name), ['id']);
          }
        }
        assert.equal(doc.paths['/v2/scim/Licenses']?.get?.operationId, 'listCatalogResources_Licenses');
        assert.ok(doc.paths['/v2/scim/{endpoint}']?.post, 'the parametric routes stay described');
        for (const other of [await pathsOf({ authorization: `Bearer ${plain.token}` }), await pathsOf({})]) {
          assert.equal(Object.keys(other.paths).some((p) => /\/(Roles|Entitlements|Licenses)/.test(p)), false);
        }
      } finally {
        await t.close();
      }
    });

    it('a catalog change shows at once in /ResourceTypes, /Schemas, ServiceProviderConfig and the endpoints (the rendered discovery is per schema version)', async () => {
      const t = await createTestApp({ engine });
      try {
        assert.deepEqual(resourcesOf(await get(t, '/v2/scim/ResourceTypes')).map((rt) => rt.name), ['User', 'Group']);
        await seedCatalog(t.storage, t.team.id, { roles: [{ value: 'admin', displayName: 'Administrator' }] });
        assert.deepEqual(resourcesOf(await get(t, '/v2/scim/ResourceTypes')).map((rt) => rt.name), ['User', 'Group', 'Role']);
        assert.deepEqual(resourcesOf(await get(t, '/v2/scim/Schemas')).map((s) => s.id).slice(3), [OKTA_ROLE], 'no entitlement type yet: no Entitlement schema');
        assert.equal((await t.request('GET', '/v2/scim/Licenses')).statusCode, 404);
        await seedCatalog(t.storage, t.team.id, { types: [{ name: 'License', endpoint: '/Licenses', multiValued: false, entitlements: [{ value: 'e5', displayName: 'Office E5' }] }] });
        assert.deepEqual(resourcesOf(await get(t, '/v2/scim/ResourceTypes')).map((rt) => rt.name), ['User', 'Group', 'Role', 'License']);
        assert.deepEqual(resourcesOf(await get(t, '/v2/scim/Schemas')).map((s) => s.id).slice(3), [OKTA_ROLE, OKTA_ENTITLEMENT]);
        assert.deepEqual(resourcesOf(await get(t, '/v2/scim/Licenses')).map((r) => r.id), ['e5']);
        const config = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
        assert.equal(((config.RolesAndEntitlements as Json).entitlements as Json).multipleEntitlementsSupported, false, 'one single-valued type: one entitlement per user');
      } finally {
        await t.close();
      }
    });
  });
}
