/**
 * A filtered page first walks the creation order (repos/paging.ts probeFirst, at most
 * PROBE_ROWS rows), then, when the walk did not hold the whole page, runs the filtered query an
 * index range answers. Whichever answers, pages are those of the full ordered listing filtered
 * (RFC 7644 3.4.2.4 index paging, RFC 9865 cursors), also when a page's matches straddle the
 * end of the walk. 6,000 users, so that both ways are taken; on every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadUsers, userNameOf } from '../../bench/scale-loader.ts';
import type { UserNaming } from '../../bench/scale-loader.ts';
import { PROBE_ROWS } from '../../src/storage/repos/paging.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

type Json = Record<string, unknown>;

const NAMING: UserNaming = { prefix: 'user', domain: 'probe.example' };
const USERS = 6_000;

for (const engine of engines) {
  describe(`filtered pages, walked or by index, on ${engine.name}`, () => {
    let t: TestApp;
    /** Every userName in creation order. */
    const all = Array.from({ length: USERS }, (_, n) => userNameOf(NAMING, n));

    before(async () => {
      t = await createTestApp({ engine });
      await loadUsers(t.storage, t.team, { naming: NAMING, count: USERS });
    });
    after(() => t.close());

    const page = async (filter: string, params: string): Promise<Json> => {
      const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(filter)}&attributes=userName&${params}`);
      assert.equal(res.statusCode, 200, res.body);
      return json(res);
    };
    const names = (body: Json): string[] => ((body.Resources as Json[] | undefined) ?? []).map((r) => String(r.userName));

    const cases: [string, (userName: string) => boolean][] = [
      // Every user: the walk holds every page.
      ['userName sw "user00"', (u) => u.startsWith('user00')],
      // Only users beyond the walk: the filtered query answers.
      ['userName sw "user00055"', (u) => u.startsWith('user00055')],
      // One in ten.
      ['userName ew "7@probe.example"', (u) => u.endsWith('7@probe.example')],
      // 100 inside the walk and 100 beyond it: the second page straddles its end.
      ['userName sw "user00001" or userName sw "user00055"', (u) => u.startsWith('user00001') || u.startsWith('user00055')],
    ];

    it(`index pages equal the filtered full listing (walk of ${PROBE_ROWS} rows, then the filtered query)`, async () => {
      assert.ok(USERS > PROBE_ROWS);
      for (const [filter, holds] of cases) {
        const expected = all.filter(holds);
        for (const startIndex of [1, 101, 301]) {
          const body = await page(filter, `startIndex=${startIndex}&count=100`);
          assert.deepEqual(names(body), expected.slice(startIndex - 1, startIndex - 1 + 100), `${filter} from ${startIndex}`);
          assert.equal(body.totalResults, expected.length, filter);
        }
      }
    });

    it('RFC 9865: walking every cursor page gives the filtered full listing once, in order', async () => {
      for (const [filter, holds] of cases.slice(1)) {
        const seen: string[] = [];
        let cursor = '';
        for (let i = 0; i < 100; i++) {
          const body = await page(filter, `count=50&cursor=${encodeURIComponent(cursor)}`);
          seen.push(...names(body));
          if (body.nextCursor === undefined) break;
          cursor = String(body.nextCursor);
        }
        assert.deepEqual(seen, all.filter(holds), filter);
      }
    });
  });
}
