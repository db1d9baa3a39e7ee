/**
 * RFC 9865 cursor paging against RFC 7644 index paging, as a property on every engine: on
 * random users and groups (absent attributes, letters in several cases, hidden deactivated
 * users), for a random sortBy / sortOrder / filter and page size, the pages read by following
 * nextCursor are exactly the pages startIndex gives, and following previousCursor back from the
 * last page gives them again in reverse. One seed drives the data and the queries; a failure
 * names it, and DATA_SEED replays it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { groupResourceType, userResourceType } from '../../src/scim/schema/registry.ts';
import type { ResourceTypeDef } from '../../src/scim/schema/types.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { CORE_USER, dataset, ENTERPRISE, filterText } from '../support/scim-random.ts';

type Json = Record<string, unknown>;

/** Set to a seed from a failure message to replay that run. */
const DATA_SEED: number | undefined = undefined;
const USERS = 24;
const GROUPS = 7;
const RUNS = 40;

const userSorts = ['userName', 'name.givenName', 'name.familyName', 'displayName', 'title', 'nickName', 'externalId', 'active', 'emails', 'emails.type', 'emails.primary', `${ENTERPRISE}:department`, 'meta.lastModified'];
const groupSorts = ['displayName', 'externalId', 'active', 'id', 'meta.created'];
const userPaths = ['userName', 'name.familyName', 'title', 'nickName', 'active', 'emails.value', `${ENTERPRISE}:department`];
const groupPaths = ['displayName', 'externalId', 'active', 'members'];

const ids = (body: Json): string[] => (body.Resources as Json[]).map((r) => String(r.id));

for (const engine of engines) {
  describe(`cursor paging equals index paging on random data, on ${engine.name}`, () => {
    const seed = DATA_SEED ?? Math.floor(Math.random() * 2 ** 31);
    const label = `(data seed ${seed}, ${engine.name})`;
    let t: TestApp;
    let users: Json[];
    let groups: Json[];

    const list = async (endpoint: string, query: URLSearchParams): Promise<{ status: number; body: Json }> => {
      const res = await t.request('GET', `/v2/scim/${endpoint}?${query.toString()}`);
      return { status: res.statusCode, body: json(res) };
    };

    before(async () => {
      t = await createTestApp({ engine });
      const data = fc.sample(dataset(USERS, GROUPS), { seed, numRuns: 1 })[0]!;
      const created: string[] = [];
      for (const [i, u] of data.users.entries()) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [CORE_USER, ENTERPRISE], ...u.body, userName: `${String(u.body.userName)}${i}` });
        assert.equal(res.statusCode, 201, res.body);
        created.push(String(json(res).id));
      }
      // Users in threes share a creation time, so that the id tie-breaker matters.
      for (let i = 0; i < created.length; i += 3) {
        const first = await t.storage.db.selectFrom('users').select('created_at').where('id', '=', created[i]!).executeTakeFirstOrThrow();
        await t.storage.db.updateTable('users').set({ created_at: first.created_at }).where('id', 'in', created.slice(i, i + 3)).execute();
      }
      for (const [i, g] of data.groups.entries()) {
        const body = { ...g.body, displayName: `${String(g.body.displayName)}${i}`, members: g.members.map((m) => ({ value: created[m] })) };
        assert.equal((await t.request('POST', '/v2/scim/Groups', body)).statusCode, 201);
      }
      users = (await list('Users', new URLSearchParams({ count: '1000' }))).body.Resources as Json[];
      groups = (await list('Groups', new URLSearchParams({ count: '1000' }))).body.Resources as Json[];
    });
    after(() => t.close());

    const property = async (rt: ResourceTypeDef, endpoint: string, resources: () => Json[], sorts: readonly string[], paths: readonly string[]) => {
      const request = fc.record({
        sortBy: fc.option(fc.constantFrom(...sorts), { nil: undefined, freq: 5 }),
        sortOrder: fc.constantFrom(undefined, 'ascending', 'descending'),
        filter: fc.option(filterText(rt, resources(), { paths, valuePaths: endpoint === 'Users' ? ['emails'] : ['members'], refused: ['id pr'] }, 1), { nil: undefined, freq: 3 }),
        count: fc.integer({ min: 1, max: 8 }),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ sortBy, sortOrder, filter, count }) => {
          const query = new URLSearchParams({ attributes: 'id', count: String(count) });
          if (sortBy !== undefined) query.set('sortBy', sortBy);
          if (sortOrder !== undefined) query.set('sortOrder', sortOrder);
          if (filter !== undefined) query.set('filter', filter);
          const text = `${query.toString()} ${label}`;
          const indexPages: string[][] = [];
          let total: number | undefined;
          for (let start = 1; ; start += count) {
            const { status, body } = await list(endpoint, new URLSearchParams([...query, ['startIndex', String(start)]]));
            if (status !== 200) {
              // A query index paging refuses is refused alike with a cursor.
              const refused = await list(endpoint, new URLSearchParams([...query, ['cursor', '']]));
              assert.deepEqual([refused.status, refused.body.scimType], [status, body.scimType], text);
              return;
            }
            // Counted, or told by a page that ends the list: the same on every page.
            if (total !== undefined) assert.equal(body.totalResults, total, `${text}: totalResults at ${start}`);
            total = Number(body.totalResults);
            if (ids(body).length === 0) break;
            indexPages.push(ids(body));
          }
          const cursorPages: Json[] = [];
          let cursor = '';
          for (;;) {
            const { status, body } = await list(endpoint, new URLSearchParams([...query, ['cursor', cursor]]));
            assert.equal(status, 200, `${text}: ${JSON.stringify(body)}`);
            // RFC 9865 section 2: only a page holding the whole result says how many there are.
            const whole = cursorPages.length === 0 && body.nextCursor === undefined;
            assert.equal(body.totalResults, whole ? total : undefined, text);
            cursorPages.push(body);
            if (body.nextCursor === undefined) break;
            cursor = String(body.nextCursor);
            assert.ok(cursorPages.length <= indexPages.length, `${text}: more cursor pages than index pages`);
          }
          const walked = cursorPages.map(ids).filter((p) => p.length > 0);
          assert.deepEqual(walked, indexPages, text);
          let page = cursorPages[cursorPages.length - 1]!;
          for (let i = cursorPages.length - 2; i >= 0; i--) {
            page = (await list(endpoint, new URLSearchParams([...query, ['cursor', String(page.previousCursor)]]))).body;
            assert.deepEqual(ids(page), ids(cursorPages[i]!), `${text}: back to page ${i}`);
          }
          assert.equal(page.previousCursor, undefined, text);
        }),
        { numRuns: RUNS, seed },
      );
    };

    it('RFC 9865 / RFC 7644 3.4.2.4: on Users, the pages nextCursor walks are the pages startIndex gives, and previousCursor walks them back', () =>
      property(userResourceType, 'Users', () => users, userSorts, userPaths));

    it('RFC 9865 / RFC 7644 3.4.2.4: on Groups, the same', () => property(groupResourceType, 'Groups', () => groups, groupSorts, groupPaths));
  });
}
