/**
 * List queries compiled once per shape (src/storage/statements.ts `Shaped`, repos/paging.ts
 * `listRows`), on every engine: the cache holds SQL, never rows or authorization, and its key
 * holds everything that decides the SQL. Two teams whose extensions give one filter text two
 * meanings (case-exact or not), filters of one text but another operator, value type or
 * structure, and pages of one filter at other offsets each get their own answer, whichever ran
 * first; a change to the data is seen by the next lookup of a cached shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

type Json = Record<string, unknown>;

const CORE = 'urn:ietf:params:scim:schemas:core:2.0:User';
const URN = 'urn:example:params:scim:schemas:extension:shapes:2.0:User';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** The same attribute declared case-exact in one team and not in the other. */
const schemaWith = (caseExact: boolean) => ({ id: URN, name: 'Shapes', attributes: [{ name: 'code', type: 'string', caseExact }, { name: 'rank', type: 'integer' }] });

for (const engine of engines) {
  describe(`list queries compiled per shape on ${engine.name}`, () => {
    let t: TestApp;
    let other: { token: string };

    const as = (token: string) => async (method: string, url: string, body?: unknown) =>
      t.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const names = async (request: ReturnType<typeof as>, query: string): Promise<string[]> => {
      const res = await request('GET', `/v2/scim/Users?${query}&attributes=userName`);
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
      return ((json(res).Resources as Json[]) ?? []).map((r) => String(r.userName));
    };
    const filter = (text: string) => `filter=${encodeURIComponent(text)}`;

    before(async () => {
      t = await createTestApp({ engine });
      other = await t.addTeam('globex');
      const mine = as(t.token);
      const theirs = as(other.token);
      assert.equal((await mine('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: schemaWith(true) })).statusCode, 201);
      assert.equal((await theirs('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: schemaWith(false) })).statusCode, 201);
      for (const [request, prefix] of [[mine, 'a'], [theirs, 'g']] as const) {
        for (const [i, code] of ['ABC', 'abc', 'xyz'].entries()) {
          const res = await request('POST', '/v2/scim/Users', { schemas: [CORE, URN], userName: `${prefix}${i}`, displayName: `D${i}`, active: i !== 2, [URN]: { code, rank: i } });
          assert.equal(res.statusCode, 201, res.body);
          t.clock.advance(1000);
        }
      }
    });
    after(() => t.close());

    it('one filter text on two teams whose extensions fold differently: each team gets its own SQL (case-exact there, folded here)', async () => {
      const mine = as(t.token);
      const theirs = as(other.token);
      const text = filter(`${URN}:code eq "ABC"`);
      for (let round = 0; round < 2; round++) {
        // Alternating, so that each team's lookup runs after the other's shape was cached.
        assert.deepEqual(await names(mine, text), ['a0'], 'case-exact: only the exact value');
        assert.deepEqual(await names(theirs, text), ['g0', 'g1'], 'caseExact false: both spellings');
      }
    });

    it('shapes that differ in operator, attribute, structure, a flag value or a number do not share an entry', async () => {
      const mine = as(t.token);
      const cases: [string, string[]][] = [
        ['userName eq "a1"', ['a1']],
        ['userName sw "a"', ['a0', 'a1']],
        ['displayName eq "a1"', []],
        ['displayName eq "D1"', ['a1']],
        ['userName eq "a0" or userName eq "a1"', ['a0', 'a1']],
        ['userName eq "a0" and userName eq "a1"', []],
        ['not (userName eq "a0")', ['a1']],
        ['active eq true', ['a0', 'a1']],
        ['active eq false', []],
        [`${URN}:rank gt 0`, ['a1']],
        [`${URN}:rank gt 1`, []],
        [`${URN}:rank eq 0`, ['a0']],
      ];
      for (let round = 0; round < 2; round++) {
        for (const [text, expected] of cases) assert.deepEqual(await names(mine, filter(text)), expected, `${text} (round ${round + 1})`);
      }
    });

    it('RFC 7644 3.4.2.4: pages of one filter at other offsets and counts, and a count=0 total, each get their own answer', async () => {
      const mine = as(t.token);
      const text = filter('userName sw "a"');
      for (let round = 0; round < 2; round++) {
        assert.deepEqual(await names(mine, `${text}&startIndex=1&count=1`), ['a0']);
        assert.deepEqual(await names(mine, `${text}&startIndex=2&count=1`), ['a1']);
        assert.deepEqual(await names(mine, `${text}&startIndex=3&count=1`), []);
        assert.deepEqual(await names(mine, `${text}&count=2`), ['a0', 'a1']);
        const total = json(await mine('GET', `/v2/scim/Users?${text}&count=0`));
        assert.equal(total.totalResults, 2);
        assert.deepEqual(await names(mine, `${text}&sortBy=userName&sortOrder=descending`), ['a1', 'a0']);
      }
    });

    it('the cache holds SQL, not rows: a renamed user is found under its new name at once, no longer under the old one', async () => {
      const mine = as(t.token);
      assert.deepEqual(await names(mine, filter('userName eq "a1"')), ['a1']);
      const id = String((json(await mine('GET', `/v2/scim/Users?${filter('userName eq "a1"')}`)).Resources as Json[])[0]!.id);
      const res = await mine('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'userName', value: 'a1-renamed' }] });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await names(mine, filter('userName eq "a1"')), []);
      assert.deepEqual(await names(mine, filter('userName eq "a1-renamed"')), ['a1-renamed']);
      // And another team never sees it through a shape the first team compiled.
      assert.deepEqual(await names(as(other.token), filter('userName eq "a1-renamed"')), []);
    });
  });
}
