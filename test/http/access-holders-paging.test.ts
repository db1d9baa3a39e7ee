/**
 * Who holds an entry, paged (review 31 #5 and #6): a page never skips a holder, whatever the
 * stored `type`s of the direct grants (more than the 16 read as separate arms included), and a
 * page reads a bounded number of rows, however many groups are mapped to the entry (the sources
 * are merged in SQL and cut at the page size, not read `count` per group and merged here).
 * Everything is written through the real paths: users' roles by SCIM, mappings by the admin API.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { TableReads } from '../support/storage-spy.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

/** Counts every row any statement brings back into the process. */
class RowsRead extends TableReads {
  rows = 0;
  override async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.rows += args.result.rows.length;
    return args.result;
  }
}

interface HoldersBody { users: { id: string; sources: { type: string; value?: string }[] }[]; nextCursor?: string }

for (const engine of engines) {
  describe(`holders paging on ${engine.name}`, () => {
    let t: TestApp;
    let spy: RowsRead;
    beforeEach(async () => {
      spy = new RowsRead('users');
      t = await createTestApp({ engine, wrapStorage: (s) => spy.wrap(s), deps: { bearerCache: { ttlSeconds: 0 } } });
      const put = await t.app.inject({ method: 'PUT', url: '/v2/admin/Catalog', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ roles: [{ value: 'admin', displayName: 'Admin' }], entitlementTypes: [] }) });
      assert.equal(put.statusCode, 200, put.body);
    });
    afterEach(() => t.close());

    const user = async (userName: string, roles: { value: string; type?: string }[] = []): Promise<string> => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName, ...(roles.length > 0 ? { roles } : {}) });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };
    const mappedGroup = async (displayName: string, members: string[]): Promise<string> => {
      const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName, members: members.map((value) => ({ value })) });
      assert.equal(res.statusCode, 201, res.body);
      const id = String(json(res).id);
      const map = await t.app.inject({ method: 'POST', url: '/v2/admin/Catalog/mappings', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ group: id, kind: 'role', value: 'admin' }) });
      assert.equal(map.statusCode, 201, map.body);
      return id;
    };
    const pageAll = async (count: number): Promise<HoldersBody['users']> => {
      const seen: HoldersBody['users'] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 100; i++) {
        const res = await t.request('GET', `/v2/access/roles/admin/users?count=${count}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(res.statusCode, 200, res.body);
        const body = json(res) as unknown as HoldersBody;
        assert.ok(body.users.length <= count);
        seen.push(...body.users);
        if (!body.nextCursor) return seen;
        cursor = body.nextCursor;
      }
      throw new Error('paging did not end');
    };

    it('direct grants under more than 16 stored types: every holder on some page, once, in id order', async () => {
      const ids = [await user('a'), await user('b'), await user('c'), await user('d'), await user('z')].sort();
      const [A, B, C, D, Z] = ids as [string, string, string, string, string];
      const typed = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => ({ value: 'admin', type: `t${from + k}` }));
      // The users were created without roles (their ids fix who is A..Z); the roles come by PUT.
      const give = async (id: string, userName: string, roles: { value: string; type?: string }[]) => {
        const res = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER], userName, roles });
        assert.equal(res.statusCode, 200, res.body);
      };
      const names = new Map<string, string>();
      for (const id of ids) names.set(id, String(json(await t.request('GET', `/v2/scim/Users/${id}`)).userName));
      await give(A, names.get(A)!, typed(1, 3));
      await give(B, names.get(B)!, typed(4, 4));
      await give(Z, names.get(Z)!, typed(5, 21));
      const g = await mappedGroup('G', [C, D]);
      for (const count of [1, 2, 3, 1000]) {
        const seen = await pageAll(count);
        assert.deepEqual(seen.map((u) => u.id), ids, `count=${count}`);
        assert.deepEqual(seen.find((u) => u.id === C)?.sources, [{ type: 'group', value: g, display: 'G' }]);
        assert.deepEqual(seen.find((u) => u.id === Z)?.sources, [{ type: 'direct' }]);
      }
    });

    it('one page reads about count rows, not count per mapped group', async () => {
      const groups: string[] = [];
      const everyone: string[] = [];
      for (let g = 0; g < 24; g++) {
        const members = [await user(`g${g}-1`), await user(`g${g}-2`), await user(`g${g}-3`), await user(`g${g}-4`)];
        everyone.push(...members);
        groups.push(await mappedGroup(`Group ${g}`, members));
      }
      // One user in two mapped groups and holding the role directly: all its sources on its page.
      const both = await user('both', [{ value: 'admin' }]);
      everyone.push(both);
      for (const g of groups.slice(0, 2)) {
        const res = await t.request('PATCH', `/v2/scim/Groups/${g}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: [{ value: both }] }] });
        assert.ok(res.statusCode === 200 || res.statusCode === 204, res.body);
      }
      spy.rows = 0;
      const res = await t.request('GET', '/v2/access/roles/admin/users?count=3');
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res) as unknown as HoldersBody;
      assert.deepEqual(body.users.map((u) => u.id), [...everyone].sort().slice(0, 3));
      // Reading 4 rows (count + 1) from each of the 24 groups would be 96 rows; the page reads the
      // token, the team's types, the mapped groups (24) and a few rows per holder.
      assert.ok(spy.rows < 24 + 40, `rows read: ${spy.rows}`);
      const seen = await pageAll(5);
      assert.deepEqual(seen.map((u) => u.id), [...everyone].sort());
      const sources = seen.find((u) => u.id === both)?.sources ?? [];
      assert.deepEqual(sources, [{ type: 'direct' }, ...groups.slice(0, 2).sort().map((g) => ({ type: 'group', value: g, display: `Group ${groups.indexOf(g)}` }))]);
    });
  });
}
