/**
 * RFC 9865 cursor paging over HTTP, on every engine: `cursor` (empty for the first page) and
 * `count` on GET /Users, GET /Groups and POST /.search; nextCursor / previousCursor; walking
 * every page forwards, and backwards, gives every visible resource once in index paging's
 * order (sort keys absent on some resources, letter case folded); a garbage, altered or other
 * query's cursor is 400 invalidCursor, an old one 400 expiredCursor; startIndex with cursor is
 * refused; any instance on the database reads another's cursors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { createTestApp, json, TEST_CONFIG } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { TableReads } from '../support/storage-spy.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

type Json = Record<string, unknown>;

const ids = (body: Json): string[] => (body.Resources as Json[]).map((r) => String(r.id));

for (const engine of engines) {
  describe(`RFC 9865 cursor paging on ${engine.name}`, () => {
    let t: TestApp;
    /** Outlives the clock moves of the expiry test (the app's own token lasts an hour). */
    let token: string;
    const auth = () => ({ authorization: `Bearer ${token}` });

    const reads = new TableReads('users');

    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => reads.wrap(s) });
      token = await t.tokenFor(t.team.id, ['read', 'write'], 30 * 86_400);
      // Family names differing only in case (they fold equal), nickName and title absent on
      // some, one hidden (deactivated) user, several created in the same millisecond or not.
      const people: Json[] = [
        { userName: 'ana', name: { familyName: 'smith' }, nickName: 'Zed', title: 'Eng' },
        { userName: 'Bob', name: { familyName: 'Smith' }, title: 'eng' },
        { userName: 'cy', name: { familyName: 'ñu' }, nickName: 'al' },
        { userName: 'Dee', name: { familyName: 'SMITH' }, nickName: 'AL', active: false },
        { userName: 'eve', name: { familyName: 'Abel' }, nickName: 'bo', title: 'Ops' },
        { userName: 'Fay', name: { familyName: 'zulu' } },
        { userName: 'gus', name: { familyName: 'Abel' }, nickName: 'Bo', title: 'ops' },
        { userName: 'Hal', nickName: 'al' },
        { userName: 'ivy', name: { familyName: 'smith' }, title: 'Eng' },
        { userName: 'Jo', name: { familyName: 'Émile' }, nickName: 'zed' },
        { userName: 'kim', emails: [{ value: 'Kim@x.example' }] },
        { userName: 'Lu', emails: [{ value: 'b@x.example' }, { value: 'A@x.example', primary: true }] },
      ];
      for (const p of people) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], ...p });
        assert.equal(res.statusCode, 201, res.body);
      }
      for (const displayName of ['beta', 'Alpha', 'gamma', 'Delta', 'epsilon']) {
        assert.equal((await t.request('POST', '/v2/scim/Groups', { displayName })).statusCode, 201);
      }
    });
    after(() => t.close());

    const get = async (url: string): Promise<Json> => {
      const res = await t.request('GET', url, undefined, auth());
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return json(res);
    };

    /** Every page of `query` by cursor: the pages' ids, and each page's body. */
    const walk = async (endpoint: string, query: string, count: number): Promise<Json[]> => {
      const pages: Json[] = [];
      let cursor = '';
      for (let i = 0; i < 100; i++) {
        const page = await get(`/v2/scim/${endpoint}?${query}&count=${count}&cursor=${cursor}`);
        pages.push(page);
        if (page.nextCursor === undefined) return pages;
        cursor = String(page.nextCursor);
      }
      throw new Error('no last page');
    };

    const sorts = ['', 'sortBy=userName', 'sortBy=userName&sortOrder=descending', 'sortBy=name.familyName', 'sortBy=name.familyName&sortOrder=descending',
      'sortBy=nickName', 'sortBy=nickName&sortOrder=descending', 'sortBy=title&sortOrder=descending', 'sortBy=emails', 'sortBy=active',
      'sortOrder=descending', `filter=${encodeURIComponent('title pr or nickName sw "a"')}&sortBy=nickName`];

    it('RFC 9865 section 2: walking every page by nextCursor gives each visible user once, in index paging order', async () => {
      for (const query of sorts) {
        const expected = ids(await get(`/v2/scim/Users?${query}&count=1000&attributes=id`));
        assert.ok(expected.length >= 6, query);
        for (const count of [1, 2, 3, 5, 50]) {
          const pages = await walk('Users', `${query}&attributes=id`, count);
          assert.deepEqual(pages.flatMap(ids), expected, `${query} count=${count}`);
          for (const [i, page] of pages.entries()) {
            // RFC 9865 section 2: a cursor page omits totalResults unless it holds the whole result.
            assert.equal(page.totalResults, pages.length === 1 ? expected.length : undefined, `${query} count=${count}: totalResults`);
            assert.equal(page.itemsPerPage, (page.Resources as Json[]).length);
            assert.equal('startIndex' in page, false, 'a cursor page has no startIndex');
            assert.equal('previousCursor' in page, i > 0, `${query} count=${count}: previousCursor on every page but the first`);
            assert.equal('nextCursor' in page, i < pages.length - 1, 'nextCursor on every page but the last');
            for (const c of [page.nextCursor, page.previousCursor]) if (c !== undefined) assert.match(String(c), /^[A-Za-z0-9_-]+$/, 'RFC 3986 unreserved characters');
          }
        }
      }
    });

    it('keyset paging: no cursor page skips rows with OFFSET, however deep (index paging does), and none counts the matches', async () => {
      reads.reset();
      const pages = await walk('Users', 'sortBy=nickName&attributes=id', 1);
      assert.ok(pages.length > 10);
      assert.equal(reads.offsets, 0);
      assert.equal(reads.count, pages.length, 'one query per page: the page itself');
      await get('/v2/scim/Users?sortBy=nickName&startIndex=9&count=1');
      assert.equal(reads.offsets, 1);
    });

    it('RFC 9865 section 2: previousCursor walks back through the same pages', async () => {
      for (const query of sorts) {
        for (const count of [2, 3]) {
          const pages = await walk('Users', `${query}&attributes=id`, count);
          let page = pages[pages.length - 1]!;
          for (let i = pages.length - 2; i >= 0; i--) {
            page = await get(`/v2/scim/Users?${query}&attributes=id&count=${count}&cursor=${String(page.previousCursor)}`);
            assert.deepEqual(ids(page), ids(pages[i]!), `${query} count=${count} page ${i}`);
            assert.equal('nextCursor' in page, true);
          }
          assert.equal('previousCursor' in page, false, 'back on the first page');
        }
      }
    });

    it('RFC 9865 section 3: POST /.search takes cursor and count in the body; GET and POST cursors are interchangeable', async () => {
      const search = async (body: Json) => {
        const res = await t.request('POST', '/v2/scim/Users/.search', { schemas: [SEARCH], sortBy: 'userName', attributes: ['id'], ...body }, auth());
        assert.equal(res.statusCode, 200, res.body);
        return json(res);
      };
      const expected = ids(await get('/v2/scim/Users?sortBy=userName&attributes=id&count=1000'));
      const first = await search({ cursor: '', count: 4 });
      assert.deepEqual(ids(first), expected.slice(0, 4));
      const second = await get(`/v2/scim/Users?sortBy=userName&count=4&cursor=${String(first.nextCursor)}`);
      assert.deepEqual(ids(second), expected.slice(4, 8));
      const third = await search({ cursor: second.nextCursor, count: 4 });
      assert.deepEqual(ids(third), expected.slice(8, 12));
    });

    it('RFC 9865: Groups page by cursor too', async () => {
      const expected = ids(await get('/v2/scim/Groups?sortBy=displayName&count=1000'));
      assert.equal(expected.length, 5);
      assert.deepEqual((await walk('Groups', 'sortBy=displayName', 2)).flatMap(ids), expected);
    });

    it('RFC 7644 3.4.2.4: without cursor, paging is by index as before (the advertised default); count=0 with a cursor only counts', async () => {
      const page = await get('/v2/scim/Users?startIndex=2&count=2');
      assert.deepEqual(Object.keys(page), ['schemas', 'totalResults', 'startIndex', 'itemsPerPage', 'Resources']);
      assert.equal(page.startIndex, 2);
      const counted = await get('/v2/scim/Users?cursor&count=0');
      assert.deepEqual(Object.keys(counted), ['schemas', 'totalResults', 'itemsPerPage', 'Resources']);
      assert.equal(counted.totalResults, 11);
      // count=0 with a later page's cursor counts too: the way to ask a cursor walk for its total.
      const second = await get(`/v2/scim/Users?count=2&cursor=${String((await get('/v2/scim/Users?count=2&cursor')).nextCursor)}`);
      assert.equal('totalResults' in second, false, 'RFC 9865 section 2: omitted on a page of a longer walk');
      assert.equal((await get(`/v2/scim/Users?count=0&cursor=${String(second.nextCursor)}`)).totalResults, 11);
    });

    const refused = async (url: string, scimType: string, body?: Json) => {
      const res = await t.request(body ? 'POST' : 'GET', url, body, auth());
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.headers['content-type'], 'application/scim+json');
      const error = json(res);
      assert.deepEqual(error.schemas, [ERROR]);
      assert.equal(error.status, '400');
      assert.equal(error.scimType, scimType, url);
    };

    it('RFC 9865 section 2.1: a garbage, altered or other query\'s cursor is 400 invalidCursor', async () => {
      const page = await get('/v2/scim/Users?sortBy=nickName&count=2&cursor');
      const cursor = String(page.nextCursor);
      const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
      for (const bad of ['x', 'not-a-cursor', '%25%25%25', 'AAAA', flip(cursor, 3), flip(cursor, cursor.length - 5), cursor.slice(0, -2), `${cursor}AA`]) {
        await refused(`/v2/scim/Users?sortBy=nickName&count=2&cursor=${bad}`, 'invalidCursor');
      }
      // The same token with another query: filter, sortBy, sortOrder, resource type.
      for (const other of ['sortBy=title', 'sortBy=nickName&sortOrder=descending', `sortBy=nickName&filter=${encodeURIComponent('title pr')}`, '']) {
        await refused(`/v2/scim/Users?${other}&count=2&cursor=${cursor}`, 'invalidCursor');
      }
      const plain = await get('/v2/scim/Users?count=2&cursor');
      await refused(`/v2/scim/Groups?count=2&cursor=${String(plain.nextCursor)}`, 'invalidCursor');
      await refused('/v2/scim/Users/.search', 'invalidCursor', { schemas: [SEARCH], cursor: 42 });
      // Another team's cursor, for its own identical query, is not this team's.
      const other = await t.addTeam('other');
      for (const userName of ['x1', 'x2', 'x3']) {
        await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ userName }) });
      }
      const theirs = JSON.parse((await t.app.inject({ method: 'GET', url: '/v2/scim/Users?sortBy=nickName&count=2&cursor', headers: { authorization: `Bearer ${other.token}` } })).body) as Json;
      await refused(`/v2/scim/Users?sortBy=nickName&count=2&cursor=${String(theirs.nextCursor)}`, 'invalidCursor');
      // The page size and the projection may change between pages.
      assert.equal(ids(await get(`/v2/scim/Users?sortBy=nickName&count=5&attributes=userName&cursor=${cursor}`)).length, 5);
    });

    it('RFC 9865 section 2.1: a cursor older than cursorTimeout is 400 expiredCursor; within it, it works', async () => {
      const config = await get('/v2/scim/ServiceProviderConfig');
      const timeout = Number((config.pagination as Json).cursorTimeout);
      const page = await get('/v2/scim/Users?count=3&cursor');
      t.clock.advance(timeout * 1000 - 1000);
      const next = await get(`/v2/scim/Users?count=3&cursor=${String(page.nextCursor)}`);
      assert.equal(ids(next).length, 3);
      t.clock.advance(2000);
      await refused(`/v2/scim/Users?count=3&cursor=${String(page.nextCursor)}`, 'expiredCursor');
      // The cursors of the later page are fresh.
      assert.equal(ids(await get(`/v2/scim/Users?count=3&cursor=${String(next.nextCursor)}`)).length, 3);
    });

    it('RFC 9865 section 2.3: startIndex and cursor together are refused (400 invalidValue), in a query or a SearchRequest', async () => {
      await refused('/v2/scim/Users?startIndex=1&cursor', 'invalidValue');
      await refused('/v2/scim/Users?startIndex=3&count=2&cursor=abc', 'invalidValue');
      await refused('/v2/scim/Groups/.search', 'invalidValue', { schemas: [SEARCH], startIndex: 1, cursor: '' });
    });

    it('DESIGN 2: the cursor key lives in the database, so another instance reads this one\'s cursors', async () => {
      const page = await get('/v2/scim/Users?sortBy=userName&count=4&cursor');
      const second = await buildApp({ config: TEST_CONFIG, storage: t.storage, clock: t.clock });
      try {
        const res = await second.inject({ method: 'GET', url: `/v2/scim/Users?sortBy=userName&count=4&cursor=${String(page.nextCursor)}`, headers: auth() });
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(ids(json(res)), ids(await get(`/v2/scim/Users?sortBy=userName&count=4&startIndex=5`)));
      } finally {
        await second.close();
      }
    });
  });
}
