/**
 * DESIGN.md section 7's property for issue 31: in a team with a catalog, filters on `roles` and
 * `entitlements` (answered from user_grants where the rows can, from the document otherwise:
 * filter/lower.ts) return exactly the users the in-memory evaluator accepts over the team's own
 * types (catalog values caseExact), on every engine, with deactivated users hidden and visible;
 * and sortBy `roles.value` orders as the in-memory sort. Random users hold random catalog roles
 * and entitlements (types sent in several spellings, or none), written over HTTP by POST and
 * then changed by PATCH, so the rows are the ones the writes kept. DATA_SEED replays a failure.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { withCatalog } from '../../src/scim/assignments.ts';
import { ScimError } from '../../src/scim/errors.ts';
import { bindFilter } from '../../src/scim/filter/bind.ts';
import { matches } from '../../src/scim/filter/evaluate.ts';
import { parseFilter } from '../../src/scim/filter/parse.ts';
import { CORE_TYPES } from '../../src/scim/schema/extensions.ts';
import type { Catalog } from '../../src/scim/schema/catalog.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';
import { CORE_USER, filterText, sortedIds } from '../support/scim-random.ts';
import type { FilterSpace } from '../support/scim-random.ts';

type Json = Record<string, unknown>;

const DATA_SEED: number | undefined = undefined;
const USERS = 24;
const FILTER_RUNS = 80;

const ROLES = ['admin', 'Admin2', 'viewer', 'vi', 'owner'];
const TYPES = [
  { name: 'License', endpoint: '/Licenses', entitlements: ['e3', 'e5', 'E5x'] },
  { name: 'Permission set', endpoint: '/PermissionSets', entitlements: ['read', 'write'] },
];
const catalog: Catalog = {
  schemas: 'okta',
  roles: ROLES.map((value) => ({ value, displayName: value })),
  types: TYPES.map((t) => ({ name: t.name, endpoint: t.endpoint, required: false, multiValued: true, entitlements: t.entitlements.map((value) => ({ value, displayName: value })) })),
};
const rt = withCatalog(CORE_TYPES, catalog).User;

const space: FilterSpace = {
  paths: ['roles', 'roles.value', 'roles.type', 'roles.display', 'roles.primary', 'entitlements', 'entitlements.value', 'entitlements.type', 'entitlements.primary', 'userName'],
  valuePaths: ['roles', 'entitlements'],
  refused: ['roles[value[type pr] pr]', 'roles.shoeSize eq "x"'],
  literals: [...ROLES, 'ADMIN', 'license', 'LICENSES', 'Licenses', ''],
};

const role = fc.record({ value: fc.constantFrom(...ROLES), type: fc.option(fc.constantFrom('app', 'App', ''), { nil: undefined }), display: fc.option(fc.constantFrom('Admin', 'x'), { nil: undefined }), primary: fc.option(fc.boolean(), { nil: undefined }) });
const entitlement = fc.constantFrom(...TYPES.flatMap((t) => t.entitlements.map((value) => ({ value, t })))).chain(({ value, t }) =>
  fc.record({ value: fc.constant(value), type: fc.option(fc.constantFrom(t.name, t.name.toUpperCase(), t.endpoint.slice(1)), { nil: undefined }), primary: fc.option(fc.boolean(), { nil: undefined }) }),
);
const defined = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
const onePrimary = (elements: Json[]): Json[] => {
  let seen = false;
  return elements.map((e) => {
    if (e.primary !== true) return defined(e);
    if (seen) return defined({ ...e, primary: false });
    seen = true;
    return defined(e);
  });
};
const userArb = fc.record({
  roles: fc.array(role, { maxLength: 3 }),
  entitlements: fc.array(entitlement, { maxLength: 3 }),
  later: fc.option(fc.array(role, { maxLength: 2 }), { nil: undefined }),
  active: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
});

const modes = engines.flatMap((engine) => (['hidden', 'visible'] as const).map((deactivatedUsers) => ({ engine, deactivatedUsers })));

for (const { engine, deactivatedUsers } of modes) {
  describe(`roles and entitlements filters in SQL equal the in-memory oracle on ${engine.name}, deactivated users ${deactivatedUsers}`, () => {
    const seed = DATA_SEED ?? Math.floor(Math.random() * 2 ** 31);
    const label = `(data seed ${seed}, ${engine.name}, ${deactivatedUsers})`;
    let t: TestApp;
    let users: Json[];

    before(async () => {
      t = await createTestApp({ engine, deactivatedUsers });
      await seedCatalog(t.storage, t.team.id, { roles: ROLES.map((value) => ({ value })), types: TYPES.map((x) => ({ ...x, entitlements: x.entitlements.map((value) => ({ value })) })) });
      const data = fc.sample(fc.array(userArb, { minLength: USERS, maxLength: USERS }), { seed, numRuns: 1 })[0]!;
      for (const [i, u] of data.entries()) {
        const body = defined({ schemas: [CORE_USER], userName: `user${i}`, active: u.active, roles: u.roles.length ? onePrimary(u.roles) : undefined, entitlements: u.entitlements.length ? onePrimary(u.entitlements) : undefined });
        const res = await t.request('POST', '/v2/scim/Users', body);
        assert.equal(res.statusCode, 201, `${JSON.stringify(body)}: ${res.body}`);
        if (u.later !== undefined && u.active) {
          const id = String(json(res).id);
          const patched = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'roles', value: onePrimary(u.later) }] });
          assert.equal(patched.statusCode, 200, patched.body);
        }
      }
      users = json(await t.request('GET', '/v2/scim/Users?count=1000')).Resources as Json[];
    });
    after(() => t?.close());

    it('DESIGN 7: GET /Users?filter= on roles and entitlements returns exactly what matches() accepts', async () => {
      let informative = 0;
      await fc.assert(
        fc.asyncProperty(filterText(rt, users, space), async (text) => {
          let expected: string[] | ScimError;
          try {
            const bound = bindFilter(rt, parseFilter(text));
            expected = users.filter((r) => matches(bound, r)).map((r) => String(r.id));
          } catch (error) {
            if (!(error instanceof ScimError)) throw error;
            expected = error;
          }
          const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(text)}&attributes=id&count=1000`);
          if (expected instanceof ScimError) {
            assert.equal(res.statusCode, 400, `${text} ${label}: ${res.body}`);
            assert.equal(json(res).scimType, expected.scimType, `${text} ${label}`);
            return;
          }
          assert.equal(res.statusCode, 200, `${text} ${label}: ${res.body}`);
          assert.deepEqual((json(res).Resources as Json[]).map((r) => String(r.id)), expected, `${text} ${label}`);
          if (expected.length > 0 && expected.length < users.length) informative++;
        }),
        { numRuns: FILTER_RUNS, seed },
      );
      assert.ok(informative >= FILTER_RUNS / 8, `only ${informative} of ${FILTER_RUNS} filters split the users ${label}`);
    });

    it('RFC 7644 3.4.2.3: sortBy roles.value orders as the in-memory sort (primary, else first, exact)', async () => {
      for (const descending of [false, true]) {
        const body = json(await t.request('GET', `/v2/scim/Users?sortBy=roles.value&sortOrder=${descending ? 'descending' : 'ascending'}&attributes=id&count=1000`));
        assert.deepEqual((body.Resources as Json[]).map((r) => String(r.id)), sortedIds(rt, users, 'roles.value', descending), label);
      }
    });
  });
}
