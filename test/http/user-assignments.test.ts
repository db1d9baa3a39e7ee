/**
 * Issue 31 item 3, on every engine: users' `roles` and `entitlements` checked against the team's
 * catalog (400 invalidValue naming the value and the catalog; primary once; a single-valued type
 * once; a required type on POST, PUT and a PATCH that changes entitlements, not on an unrelated
 * PATCH), teams without a catalog unchanged, and the user_grants rows after every kind of write
 * (create, replace, patch, deactivate, delete, activate), each in the write's transaction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
type Json = Record<string, unknown>;

const CATALOG = {
  roles: [{ value: 'admin', displayName: 'Administrator' }, { value: 'viewer', displayName: 'Viewer' }],
  types: [
    { name: 'License', endpoint: '/Licenses', required: true, multiValued: false, entitlements: [{ value: 'e3' }, { value: 'e5' }] },
    { name: 'Permission set', endpoint: '/PermissionSets', entitlements: [{ value: 'read' }, { value: 'write' }] },
  ],
};

const patch = (...ops: Json[]) => ({ schemas: [PATCH_OP], Operations: ops });

/** The team's grants rows, as `userId kind value type primary`. */
async function grantsOf(t: TestApp, teamId = t.team.id): Promise<string[]> {
  const rows = await t.storage.db.selectFrom('user_grants').selectAll().where('team_id', '=', teamId).orderBy('user_id').orderBy('kind').orderBy('value').orderBy('type').execute();
  return rows.map((r) => `${r.user_id} ${r.kind} ${r.value} ${r.type}${r.is_primary ? ' primary' : ''}`);
}

for (const engine of engines) {
  describe(`roles and entitlements against the catalog on ${engine.name}`, () => {
    let t: TestApp;
    let n = 0;
    before(async () => {
      t = await createTestApp({ engine });
      await seedCatalog(t.storage, t.team.id, CATALOG);
    });
    after(() => t?.close());

    const post = (body: Json) => t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `u${n++}@x.example`, ...body });
    const created = async (body: Json): Promise<string> => {
      const res = await post(body);
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };
    const refused = (res: LightMyRequestResponse, detail: RegExp) => {
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).scimType, 'invalidValue', res.body);
      assert.match(String(json(res).detail), detail);
    };
    const license = { entitlements: [{ value: 'e5', type: 'License' }] };

    it('POST with catalog values is stored as sent (201), and its grants rows are written', async () => {
      const res = await post({ roles: [{ value: 'admin', primary: true, display: 'Admin' }], entitlements: [{ value: 'e5', type: 'licenses' }, { value: 'read' }] });
      assert.equal(res.statusCode, 201, res.body);
      const id = String(json(res).id);
      assert.deepEqual(json(res).roles, [{ value: 'admin', primary: true, display: 'Admin' }]);
      assert.deepEqual(json(res).entitlements, [{ value: 'e5', type: 'licenses' }, { value: 'read' }]);
      const rows = (await grantsOf(t)).filter((r) => r.startsWith(id));
      assert.deepEqual(rows, [`${id} entitlement e5 licenses`, `${id} entitlement read `, `${id} role admin  primary`]);
    });

    it('an unknown role is 400 invalidValue naming it and the catalog', async () => {
      refused(await post({ ...license, roles: [{ value: 'superuser' }] }), /"superuser" is not a role in the team's catalog \(admin, viewer\)/);
    });

    it('role values compare exactly: "Admin" is not "admin"', async () => {
      refused(await post({ ...license, roles: [{ value: 'Admin' }] }), /"Admin" is not a role/);
    });

    it('an unknown entitlement is 400 naming it and the catalog', async () => {
      refused(await post({ entitlements: [{ value: 'e5' }, { value: 'e7' }] }), /"e7" is not an entitlement in the team's catalog \(e3, e5, read, write\)/);
    });

    it('an entitlement sent with the wrong type is 400', async () => {
      refused(await post({ entitlements: [{ value: 'e5', type: 'Permission set' }] }), /"e5" is a License entitlement, not of type "Permission set"/);
    });

    it('primary on two roles is 400', async () => {
      refused(await post({ ...license, roles: [{ value: 'admin', primary: true }, { value: 'viewer', primary: true }] }), /roles: at most one value may be primary/);
    });

    it('two entitlements of a single-valued type is 400', async () => {
      refused(await post({ entitlements: [{ value: 'e5' }, { value: 'e3' }] }), /License is single-valued/);
    });

    it('a required type missing is 400 on POST and on PUT', async () => {
      refused(await post({ roles: [{ value: 'admin' }] }), /a License entitlement is required/);
      const id = await created({ ...license });
      refused(await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER], userName: `put${n++}@x.example` }), /a License entitlement is required/);
    });

    it('a PATCH removing the required type is 400; a PATCH of another attribute is not checked', async () => {
      const id = await created({ ...license });
      refused(await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'remove', path: 'entitlements' })), /a License entitlement is required/);
      // A user stored before License became required (its document written behind the catalog's back).
      const other = await created({ ...license });
      const row = await t.storage.db.selectFrom('users').select('data').where('id', '=', other).executeTakeFirstOrThrow();
      const data = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
      delete data.entitlements;
      await t.storage.db.updateTable('users').set({ data: JSON.stringify(data) }).where('id', '=', other).execute();
      let res = await t.request('PATCH', `/v2/scim/Users/${other}`, patch({ op: 'replace', path: 'displayName', value: 'Ada' }));
      assert.equal(res.statusCode, 200, res.body);
      res = await t.request('PATCH', `/v2/scim/Users/${other}`, patch({ op: 'add', path: 'roles', value: [{ value: 'viewer' }] }));
      assert.equal(res.statusCode, 200, res.body);
      refused(await t.request('PATCH', `/v2/scim/Users/${other}`, patch({ op: 'add', path: 'entitlements', value: [{ value: 'read' }] })), /a License entitlement is required/);
    });

    it('a value held before the catalog declared it is kept by later writes; a new unknown one is refused', async () => {
      const id = await created({ ...license, roles: [{ value: 'admin' }] });
      // Stored behind the catalog's back, as a document written before the team had one.
      const row = await t.storage.db.selectFrom('users').select('data').where('id', '=', id).executeTakeFirstOrThrow();
      const data = typeof row.data === 'string' ? JSON.parse(row.data) : row.data;
      data.roles = [{ value: 'legacy' }];
      await t.storage.db.updateTable('users').set({ data: JSON.stringify(data) }).where('id', '=', id).execute();
      const kept = await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'add', path: 'roles', value: [{ value: 'viewer' }] }));
      assert.equal(kept.statusCode, 200, kept.body);
      refused(await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'add', path: 'roles', value: [{ value: 'ghost' }] })), /"ghost" is not a role/);
    });

    it('grants rows follow replace, patch, deactivation and reactivation', async () => {
      const id = await created({ ...license, roles: [{ value: 'admin' }] });
      const mine = async () => (await grantsOf(t)).filter((r) => r.startsWith(id)).map((r) => r.slice(id.length + 1));
      assert.deepEqual(await mine(), ['entitlement e5 License', 'role admin ']);
      let res = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER], userName: `r${n++}@x.example`, roles: [{ value: 'viewer', primary: true }], entitlements: [{ value: 'e3' }] });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await mine(), ['entitlement e3 ', 'role viewer  primary']);
      res = await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'remove', path: 'roles[value eq "viewer"]' }, { op: 'add', path: 'entitlements', value: [{ value: 'write', type: 'Permission set' }] }));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await mine(), ['entitlement e3 ', 'entitlement write Permission set']);
      // This team hides deactivated users: DELETE deactivates, and the rows stay (the user is not deleted).
      res = await t.request('DELETE', `/v2/scim/Users/${id}`);
      assert.equal(res.statusCode, 204, res.body);
      assert.deepEqual(await mine(), ['entitlement e3 ', 'entitlement write Permission set']);
      res = await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'replace', path: 'active', value: true }));
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await mine(), ['entitlement e3 ', 'entitlement write Permission set']);
    });

    it('filters on roles answer in lists, /Users/.search and the root /.search alike', async () => {
      const holder = await created({ ...license, roles: [{ value: 'viewer', primary: true }], userName: 'filter-holder@x.example' });
      const filter = 'roles[value eq "viewer" and primary eq true] and userName sw "filter-holder"';
      const list = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(filter)}`);
      assert.deepEqual((json(list).Resources as Json[]).map((r) => r.id), [holder]);
      for (const url of ['/v2/scim/Users/.search', '/v2/scim/.search']) {
        const res = await t.request('POST', url, { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'roles.value eq "viewer" and userName sw "filter-holder"' });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual((json(res).Resources as Json[]).map((r) => r.id), [holder], url);
      }
    });

    it('a user\'s change of roles is part of its SCIM event (changed names roles)', async () => {
      const id = await created({ ...license });
      const res = await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'add', path: 'roles', value: [{ value: 'admin' }] }));
      assert.equal(res.statusCode, 200, res.body);
      const event = await t.storage.db.selectFrom('events').select(['type', 'changed']).where('resource_id', '=', id).where('version', '=', 2).executeTakeFirstOrThrow();
      assert.equal(event.type, 'patch');
      assert.ok((JSON.parse(event.changed) as string[]).includes('roles'), event.changed);
    });

    it('roles re-sent with their keys in another order are not a change: the event names only what changed', async () => {
      // PostgreSQL's jsonb gives the stored elements' keys back in its own order (value, display, primary).
      const id = await created({ ...license, roles: [{ primary: true, display: 'Admin', value: 'admin' }] });
      const res = await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'replace', path: 'roles', value: [{ display: 'Admin', value: 'admin', primary: true }] }, { op: 'replace', path: 'title', value: 'Boss' }));
      assert.equal(res.statusCode, 200, res.body);
      const event = await t.storage.db.selectFrom('events').select(['type', 'changed']).where('resource_id', '=', id).where('version', '=', 2).executeTakeFirstOrThrow();
      assert.deepEqual(JSON.parse(event.changed), ['title']);
    });
  });

  describe(`grants rows in a team that shows deactivated users, and without a catalog, on ${engine.name}`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine, deactivatedUsers: 'visible' });
    });
    after(() => t?.close());

    it('no catalog: free-text roles are accepted as before and still held as rows; DELETE removes them, activate restores them', async () => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'free@x.example', roles: [{ value: 'Anything At All', primary: 'True' }, { value: 'x', type: 'WindowsAzureActiveDirectoryRole' }] });
      assert.equal(res.statusCode, 201, res.body);
      const id = String(json(res).id);
      assert.deepEqual(await grantsOf(t), [`${id} role Anything At All  primary`, `${id} role x WindowsAzureActiveDirectoryRole`]);
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${id}`)).statusCode, 204);
      assert.deepEqual(await grantsOf(t), []);
      assert.equal((await t.request('PUT', `/v2/scim/Users/${id}/activate`)).statusCode, 200);
      assert.deepEqual(await grantsOf(t), [`${id} role Anything At All  primary`, `${id} role x WindowsAzureActiveDirectoryRole`]);
    });

    it('a write that leaves roles as they were rewrites no rows; a user without roles has none', async () => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'plain@x.example' });
      const id = String(json(res).id);
      assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'replace', path: 'displayName', value: 'P' }))).statusCode, 200);
      assert.deepEqual((await grantsOf(t)).filter((r) => r.startsWith(id)), []);
    });
  });
}

/** Counts the statements built per call that name user_grants (the grants statements are). */
class GrantStatements implements KyselyPlugin {
  kinds: string[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (JSON.stringify(args.node).includes('"user_grants"')) this.kinds.push(args.node.kind);
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

for (const engine of engines) {
  describe(`the grants statements a user write runs on ${engine.name}`, () => {
    const spy = new GrantStatements();
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => ({ ...s, db: s.db.withPlugin(spy) }) });
      await seedCatalog(t.storage, t.team.id, { roles: [{ value: 'admin' }, { value: 'viewer' }] });
    });
    after(() => t?.close());

    const counted = async (method: string, url: string, body?: unknown) => {
      spy.kinds = [];
      const res = await t.request(method, url, body);
      assert.ok(res.statusCode < 300, res.body);
      return { res, kinds: spy.kinds };
    };

    it('none for a user without roles, none for a write that leaves them; an add inserts, a removal deletes', async () => {
      assert.deepEqual((await counted('POST', '/v2/scim/Users', { schemas: [USER], userName: 'plain@x.example' })).kinds, []);
      const { res, kinds } = await counted('POST', '/v2/scim/Users', { schemas: [USER], userName: 'ada@x.example', roles: [{ value: 'admin' }] });
      assert.deepEqual(kinds, ['InsertQueryNode']);
      const id = String(json(res).id);
      assert.deepEqual((await counted('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'replace', path: 'displayName', value: 'Ada' }))).kinds, []);
      assert.deepEqual((await counted('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'add', path: 'roles', value: [{ value: 'admin' }] }))).kinds, [], 'a role added again changes nothing');
      assert.deepEqual((await counted('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'add', path: 'roles', value: [{ value: 'viewer' }] }))).kinds, ['InsertQueryNode']);
      assert.deepEqual((await counted('PATCH', `/v2/scim/Users/${id}`, patch({ op: 'remove', path: 'roles[value eq "admin"]' }))).kinds, ['DeleteQueryNode']);
      assert.deepEqual((await counted('DELETE', `/v2/scim/Users/${id}`)).kinds, [], 'a hidden deactivated user keeps its rows');
    });
  });
}
