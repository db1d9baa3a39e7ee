/**
 * Issue 27 item 1, a filter's cost is bounded: a list or search whose filter would evaluate too
 * many tests row by row is refused (400, the team's filter.cost) before any of its statements
 * runs, on GET /Users, POST /.search and the console's filter box alike; a filter under the
 * budget answers as before, and one an index answers costs nothing. The statements of a scan are
 * held to the team's statement.ms (the database stops them) and a team's scans on one instance
 * to its scans.concurrent (429 with Retry-After), while another team's requests are answered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { updateTeamLimits } from '../../src/admin.ts';
import { addCounts, userDelta } from '../../src/storage/repos/counters.ts';
import { PROBE_ROWS } from '../../src/storage/repos/list/plan.ts';
import { insertUser } from '../../src/storage/repos/users.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { userRow } from '../support/rows.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';
import { TableReads } from '../support/storage-spy.ts';

const USERS = 2000;
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

/** The filter: 200 `title ew` terms (the parser's most), none of which an index answers. */
const expensive = Array.from({ length: 200 }, (_, i) => `title ew "x${i}"`).join(' or ');

/** `count` users of the team, written through the storage layer with their counters (fast). */
async function seedUsers(t: TestApp, teamId: string, count = USERS): Promise<void> {
  const at = new Date(Date.parse('2025-12-31T00:00:00.000Z')).toISOString();
  await t.storage.db.transaction().execute(async (trx) => {
    for (let i = 0; i < count; i++) {
      const userName = `person${String(i).padStart(5, '0')}@cost.example`;
      const title = i % 100 === 0 ? 'Chief Engineer' : `Engineer ${i}`;
      await insertUser(trx, userRow(teamId, userName, { data: t.storage.hooks.toJson({ userName, active: true, title }), created_at: at, updated_at: at }));
      await addCounts(trx, teamId, userDelta(undefined, 'active'), at);
    }
  });
}

const refusals = async (t: TestApp, teamId: string, budget: string): Promise<number> => {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`rollcall_budget_refusals_total{team="${teamId}",budget="${budget}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
};

const usersUrl = (filter: string) => `/v2/scim/Users?filter=${encodeURIComponent(filter)}&count=5`;

for (const engine of engines) {
  describe(`a filter's cost is bounded on ${engine.name}`, () => {
    const reads = new TableReads('users');
    let t: TestApp;

    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => reads.wrap(s) });
      await seedUsers(t, t.team.id);
    });
    after(() => t.close());

    it('refuses 200 `title ew` terms over 2,000 users with 400 before any statement reads a user', async () => {
      const before = await refusals(t, t.team.id, 'filter.cost');
      reads.reset();
      const res = await t.request('GET', usersUrl(expensive));
      assert.equal(res.statusCode, 400);
      const body = json(res);
      assert.equal(body.scimType, 'invalidValue');
      assert.match(String(body.detail), /too expensive/);
      assert.match(String(body.detail), /filter\.cost of 250,000/);
      assert.match(String(body.detail), /200 tests no index answers, on each of up to 2,000 resources/);
      assert.equal(reads.count, 0, 'no statement read the users table');
      assert.equal(await refusals(t, t.team.id, 'filter.cost'), before + 1);
    });

    it('POST /.search and POST /Users/.search give the same refusal before reading', async () => {
      reads.reset();
      for (const url of ['/v2/scim/.search', '/v2/scim/Users/.search']) {
        const res = await t.request('POST', url, { schemas: [SEARCH], filter: expensive, count: 5 });
        assert.equal(res.statusCode, 400, url);
        assert.match(String(json(res).detail), /too expensive/, url);
      }
      assert.equal(reads.count, 0);
    });

    it('answers a filter under the budget, and one an index answers, as before', async () => {
      const cheap = await t.request('GET', usersUrl('title ew "chief engineer" or title ew "nobody"'));
      assert.equal(cheap.statusCode, 200);
      assert.equal(json(cheap).totalResults, USERS / 100);
      const keyed = await t.request('GET', usersUrl('userName eq "person00042@cost.example"'));
      assert.equal(keyed.statusCode, 200);
      assert.equal(json(keyed).totalResults, 1);
      // 200 prefix tests of the userName index: each rechecked on at most its range's rows.
      const prefixes = Array.from({ length: 20 }, (_, i) => `userName sw "person0${String(i).padStart(2, '0')}"`).join(' or ');
      const ranged = await t.request('GET', usersUrl(prefixes));
      assert.equal(ranged.statusCode, 200);
      assert.equal(json(ranged).totalResults, 2000);
    });

    it("the console's filter box gives the same refusal, shown on its page with 400, before reading", async () => {
      await registerAdmin(t, 'root@cost.example', 'correct horse battery staple');
      const page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      const signIn = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'root@cost.example', password: 'correct horse battery staple' });
      assert.equal(signIn.statusCode, 303, signIn.body);
      reads.reset();
      const before = await refusals(t, t.team.id, 'filter.cost');
      const res = await page.get(`/console/users?filter=${encodeURIComponent(expensive)}`);
      assert.equal(res.statusCode, 400);
      assert.equal(await refusals(t, t.team.id, 'filter.cost'), before + 1);
      assert.match(res.body, /The filter is too expensive/);
      assert.match(res.body, /filter\.cost of 250,000/);
      assert.equal(reads.count, 0);
    });

    it('lists the deactivated users (a partial index holds them) in a team whose filter.cost is below its size', async () => {
      const small = await t.addTeam(`deactivated-${engine.name}`, { deactivatedUsers: 'visible' });
      // More users than an index range's bound (PROBE_ROWS), and a limit between the two: a scan
      // of the team is over it, an index range under it.
      await seedUsers(t, small.team.id, PROBE_ROWS + 200);
      await updateTeamLimits(adminDeps(t), small.team.name, [{ name: 'filter.cost', value: PROBE_ROWS + 100 }]);
      const asTeam = (url: string) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${small.token}` } });
      for (const userName of ['paused1@cost.example', 'paused2@cost.example']) {
        const res = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${small.token}`, 'content-type': 'application/scim+json' }, payload: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName, active: false } });
        assert.equal(res.statusCode, 201, res.body);
      }
      assert.equal((await asTeam(usersUrl('active eq true'))).statusCode, 400, 'the active ones are a scan: refused');
      const deactivated = await asTeam(usersUrl('active eq false'));
      assert.equal(deactivated.statusCode, 200, deactivated.body);
      assert.deepEqual((json(deactivated).Resources as { userName: string }[]).map((u) => u.userName).sort(), ['paused1@cost.example', 'paused2@cost.example']);
      assert.equal((await asTeam(usersUrl('not (active eq false)'))).statusCode, 400, 'its complement is a scan');
      // By userName the index walked is the userName one, which would test the flag on every user.
      assert.equal((await asTeam(`${usersUrl('active eq false')}&sortBy=userName`)).statusCode, 400, 'by userName it is a scan');
    });

    it('lets the operator raise the team\'s filter.cost: the same filter then runs', async () => {
      const other = await t.addTeam(`raised-${engine.name}`);
      await seedUsers(t, other.team.id);
      await updateTeamLimits(adminDeps(t), other.team.name, [{ name: 'filter.cost', value: 1_000_000 }]);
      const few = Array.from({ length: 60 }, (_, i) => `title ew "x${i}"`).join(' or ') + ' or title eq "chief engineer"';
      const res = await t.app.inject({ method: 'GET', url: usersUrl(few), headers: { authorization: `Bearer ${other.token}` } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).totalResults, USERS / 100);
    });
  });
}
