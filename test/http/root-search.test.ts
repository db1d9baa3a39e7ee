/**
 * Issue 9 item 5: search at the server root (RFC 7644 3.4.2.1 and 3.4.3), on every engine:
 * `GET /v2/scim/?filter=...` and `POST /v2/scim/.search` (and the /scim alias) across Users and
 * Groups, with index paging across both types, sorting, projection; an attribute one type lacks
 * has no value there (equality false, `not` true); a name no type has is 400; cursor paging is
 * refused clearly; hidden and deleted users stay out.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

type R = Record<string, unknown>;
const typeOf = (r: R) => ((r.schemas as string[]).includes(USER) ? 'User' : 'Group');

for (const engine of engines) {
  describe(`root search on ${engine.name}`, () => {
    let t: TestApp;
    const ids: Record<string, string> = {};
    beforeEach(async () => {
      t = await createTestApp({ engine });
      for (const [name, display] of [['ann@acme.example', 'Zed Ann'], ['bob@acme.example', 'Bob'], ['cy@acme.example', 'Cy']]) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: name, displayName: display });
        ids[name] = String(json(res).id);
      }
      for (const name of ['Admins', 'Bobs']) {
        const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: name, members: [{ value: ids['bob@acme.example'] }] });
        ids[name] = String(json(res).id);
      }
    });
    afterEach(() => t.close());

    const root = async (query: string, prefix = '/v2/scim') => {
      const res = await t.request('GET', `${prefix}/${query ? `?${query}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

    it('RFC 7644 3.4.2.1: GET / lists Users then Groups; totalResults counts both; the /scim alias too', async () => {
      for (const prefix of ['/v2/scim', '/scim']) {
        const body = await root('', prefix);
        assert.deepEqual(body.schemas, [LIST]);
        assert.equal(body.totalResults, 5);
        assert.equal(body.startIndex, 1);
        assert.deepEqual((body.Resources as R[]).map(typeOf), ['User', 'User', 'User', 'Group', 'Group']);
      }
    });

    it('a filter on an attribute both types have matches both; one only Users have leaves Groups out, and not() keeps them', async () => {
      const both = await root(q({ filter: 'displayName sw "B"' }));
      assert.deepEqual((both.Resources as R[]).map((r) => r.id), [ids['bob@acme.example'], ids.Bobs]);
      const usersOnly = await root(q({ filter: 'userName eq "ann@acme.example"' }));
      assert.deepEqual((usersOnly.Resources as R[]).map((r) => r.id), [ids['ann@acme.example']]);
      const negated = await root(q({ filter: 'not (userName eq "ann@acme.example")' }));
      assert.equal(negated.totalResults, 4);
      const mixed = await root(q({ filter: 'userName eq "cy@acme.example" or members eq "' + ids['bob@acme.example'] + '"' }));
      assert.deepEqual((mixed.Resources as R[]).map((r) => r.id).sort(), [ids['cy@acme.example'], ids.Admins, ids.Bobs].sort());
      const present = await root(q({ filter: 'members pr' }));
      assert.deepEqual((present.Resources as R[]).map(typeOf), ['Group', 'Group']);
      // A name no type defines is an error, not "nothing".
      const typo = await t.request('GET', `/v2/scim/?${q({ filter: 'usrName eq "x"' })}`);
      assert.equal(typo.statusCode, 400);
      assert.equal(json(typo).scimType, 'invalidFilter');
    });

    it('index paging spans both types; sortBy orders across them (absent values last); projection per type', async () => {
      const page2 = await root(q({ startIndex: '3', count: '2' }));
      assert.equal(page2.totalResults, 5);
      assert.equal(page2.startIndex, 3);
      assert.equal(page2.itemsPerPage, 2);
      assert.deepEqual((page2.Resources as R[]).map((r) => r.id), [ids['cy@acme.example'], ids.Admins]);

      const sorted = await root(q({ sortBy: 'displayName' }));
      assert.deepEqual((sorted.Resources as R[]).map((r) => r.displayName), ['Admins', 'Bob', 'Bobs', 'Cy', 'Zed Ann']);
      const desc = await root(q({ sortBy: 'displayName', sortOrder: 'descending', count: '2' }));
      assert.deepEqual((desc.Resources as R[]).map((r) => r.displayName), ['Zed Ann', 'Cy']);
      const byUserName = await root(q({ sortBy: 'userName', sortOrder: 'descending' }));
      assert.deepEqual((byUserName.Resources as R[]).map(typeOf), ['User', 'User', 'User', 'Group', 'Group'], 'Groups have no userName: last');
      assert.equal((byUserName.Resources as R[])[0]?.userName, 'cy@acme.example');

      const projected = await root(q({ attributes: 'userName,members' }));
      for (const r of projected.Resources as R[]) {
        assert.ok(r.id);
        assert.equal(r.displayName, undefined);
        if (typeOf(r) === 'User') assert.ok(r.userName);
        else assert.ok(Array.isArray(r.members));
      }
      const excluded = await root(q({ excludedAttributes: 'members,groups' }));
      for (const r of excluded.Resources as R[]) assert.ok(r.members === undefined && r.groups === undefined && r.displayName !== undefined);
      assert.equal((await t.request('GET', `/v2/scim/?${q({ attributes: 'nosuch' })}`)).statusCode, 400);
    });

    it('RFC 7644 3.4.3: POST /.search takes a SearchRequest with the same parameters', async () => {
      const res = await t.request('POST', '/v2/scim/.search', {
        schemas: [SEARCH],
        filter: 'displayName co "b"',
        sortBy: 'displayName',
        attributes: ['displayName'],
        startIndex: 1,
        count: 10,
      });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.equal(body.totalResults, 2);
      assert.deepEqual((body.Resources as R[]).map((r) => [typeOf(r), r.displayName]), [['User', 'Bob'], ['Group', 'Bobs']]);
      const alias = await t.request('POST', '/scim/.search', { schemas: [SEARCH], filter: 'userName eq "bob@acme.example"' });
      assert.equal(json(alias).totalResults, 1);
      const badBody = await t.request('POST', '/v2/scim/.search', { schemas: ['urn:nope'] });
      assert.equal(badBody.statusCode, 400);
    });

    it('cursor paging is refused at the root with a clear 400; the per-type endpoints keep it', async () => {
      const res = await t.request('GET', '/v2/scim/?cursor=');
      assert.equal(res.statusCode, 400);
      assert.match(String(json(res).detail), /not offered at the server root.*\/Users or \/Groups/);
      assert.equal((await t.request('GET', '/v2/scim/Users?cursor=')).statusCode, 200);
    });

    it('issue 13.3: a root page of large users stops at the byte budget; startIndex + itemsPerPage reaches every resource once', async () => {
      // About 240 KB each (60 emails of 4,000 characters): 24 of them are over the 4 MiB budget.
      for (let i = 0; i < 24; i++) {
        const emails = Array.from({ length: 60 }, (_, j) => ({ value: `${String(j).padStart(2, '0')}${'x'.repeat(3990)}@big${i}.example` }));
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `big${i}@acme.example`, emails });
        assert.equal(res.statusCode, 201, res.body.slice(0, 200));
      }
      const seen: string[] = [];
      for (let start = 1, pages = 0; pages < 30; pages++) {
        const res = await t.request('GET', `/v2/scim/?${q({ startIndex: String(start), count: '1000' })}`);
        assert.equal(res.statusCode, 200);
        // The budget (4 MiB) plus at most one resource (256 KiB) and the envelope.
        assert.ok(res.rawPayload.length < 4.5 * 1024 * 1024, `a page of ${res.rawPayload.length} bytes`);
        const body = json(res);
        assert.equal(body.totalResults, 29);
        const items = body.Resources as R[];
        assert.equal(body.itemsPerPage, items.length);
        if (items.length === 0) break;
        seen.push(...items.map((r) => String(r.id)));
        start += items.length;
      }
      assert.equal(seen.length, 29);
      assert.equal(new Set(seen).size, 29);
      assert.ok(seen.length > 0);
    });

    it('deactivated (hidden) users stay out of root searches; a token is required; ServiceProviderConfig says filter and sort are supported', async () => {
      await t.request('DELETE', `/v2/scim/Users/${ids['ann@acme.example']}`);
      const body = await root(q({ filter: 'displayName pr' }));
      assert.equal(body.totalResults, 4);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v2/scim/' })).statusCode, 401);
      const spc = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
      assert.equal((spc.filter as R).supported, true);
      assert.equal((spc.sort as R).supported, true);
      const max = Number((spc.filter as R).maxResults);
      const capped = await root(q({ count: String(max + 500) }));
      assert.ok(Number(capped.itemsPerPage) <= max);
    });
  });
}
