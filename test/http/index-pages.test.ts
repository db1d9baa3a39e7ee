/**
 * RFC 7644 3.4.2.4 index paging over HTTP: a page longer than one read slice (scim/paging.ts
 * reads 50 rows at a time) continues each slice by seeking past the previous one's last row
 * (`resumeAfter`) instead of counting off the offset again; with or without a filter, every page
 * equals its slice of the full listing, also after users are created and deactivated between
 * pages, and totalResults stays exact.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { TableReads } from '../support/storage-spy.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

for (const engine of engines) {
  describe(`index pages over HTTP on ${engine.name}`, () => {
    let t: TestApp;
    const reads = new TableReads('users');
    let n = 0;
    const create = async (count: number) => {
      for (let i = 0; i < count; i++, n++) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `${n % 3 === 0 ? 'even' : 'odd'}${n}@x.example` });
        assert.equal(res.statusCode, 201, res.body);
        // Two users per tick: ties in creation time are ordered by id.
        if (i % 2 === 1) t.clock.advance(1);
      }
    };
    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => reads.wrap(s) });
      await create(140);
    });
    after(() => t.close());

    const ids = async (query: string) => {
      const res = await t.request('GET', `/v2/scim/Users?attributes=id&${query}`);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      return { total: body.totalResults as number, ids: (body.Resources as { id: string }[]).map((r) => r.id) };
    };

    const agree = async (filter: string) => {
      const all = await ids(`count=1000${filter}`);
      for (const [startIndex, count] of [[1, 120], [2, 120], [51, 60], [30, 101], [all.total - 70, 120], [all.total, 5]] as const) {
        reads.reset();
        const page = await ids(`startIndex=${startIndex}&count=${count}${filter}`);
        assert.deepEqual(page.ids, all.ids.slice(startIndex - 1, startIndex - 1 + count), `startIndex ${startIndex} count ${count}${filter}`);
        assert.equal(page.total, all.total);
        // One OFFSET at most per page: the slices after the first seek.
        assert.ok(reads.offsets <= 1, `${reads.offsets} reads with OFFSET for startIndex ${startIndex} count ${count}${filter}`);
      }
    };

    it('pages longer than a slice equal their slice of the full listing, with and without a filter', async () => {
      await agree('');
      await agree(`&filter=${encodeURIComponent('userName sw "odd"')}`);
    });

    it('after creates and deactivations between pages, pages still agree and totalResults follows', async () => {
      const before = (await ids('count=0')).total;
      await create(7);
      const victims = (await ids('count=1000')).ids.filter((_, i) => i % 9 === 4);
      for (const id of victims) assert.equal((await t.request('DELETE', `/v2/scim/Users/${id}`)).statusCode, 204);
      assert.equal((await ids('count=0')).total, before + 7 - victims.length);
      await agree('');
      await agree(`&filter=${encodeURIComponent('userName sw "odd"')}`);
    });
  });
}
