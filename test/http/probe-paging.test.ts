/**
 * A page filtered by sw / ew / co is found in up to three steps (repos/list/match-steps.ts): from every
 * match when there are at most FEW_MATCHES, from a walk of PROBE_ROWS rows of the creation order
 * when it holds the page, else by the filtered query. Whichever answers, pages are those of the
 * full ordered listing filtered (RFC 7644 3.4.2.4 index paging with its totalResults, RFC 9865
 * cursors), also when a page's matches straddle the end of the walk. 6,000 users, so that every
 * step is taken; on every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadUsers, userNameOf } from '../support/rows.ts';
import type { UserNaming } from '../support/rows.ts';
import { FEW_MATCHES, PROBE_ROWS } from '../../src/storage/repos/list/plan.ts';
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
      // A few matches, all beyond the walk: read from the matches.
      ['userName sw "user00055"', (u) => u.startsWith('user00055')],
      // One in ten: the walk.
      ['userName ew "7@probe.example"', (u) => u.endsWith('7@probe.example')],
      // 100 inside the walk and 100 beyond it: from the matches.
      ['userName sw "user00001" or userName sw "user00055"', (u) => u.startsWith('user00001') || u.startsWith('user00055')],
      // 1,000 matches beyond the walk: the filtered query.
      ['userName sw "user0005"', (u) => u.startsWith('user0005')],
      // 100 inside the walk, 1,000 beyond: the second page straddles the walk's end; the filtered query.
      ['userName sw "user00049" or userName sw "user0005"', (u) => u.startsWith('user00049') || u.startsWith('user0005')],
      // None.
      ['userName co "nobody"', () => false],
      // A substring: one in ten (the walk), some hundreds spread over the team (from the matches),
      // over 1,000 (the filtered query), one.
      ['userName co "3@"', (u) => u.includes('3@')],
      ['userName co "0055"', (u) => u.includes('0055')],
      ['userName co "005"', (u) => u.includes('005')],
      ['userName co "05999@"', (u) => u.includes('05999@')],
    ];

    it(`index pages equal the filtered full listing, totalResults too (from the matches, a walk of ${PROBE_ROWS} rows, or the filtered query)`, async () => {
      assert.ok(USERS > PROBE_ROWS && all.filter(cases[4]![1]).length > FEW_MATCHES);
      for (const [filter, holds] of cases) {
        const expected = all.filter(holds);
        for (const startIndex of [1, 101, 301, 1101]) {
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
