/**
 * The `access` parameter of user lists is bounded per team like the other expensive lists
 * (src/scim/scans.ts, src/storage/scan-cost.ts `walks`): who holds an entry may be the whole
 * team, and an index page counts every holder, so such a list takes one of the team's
 * `scans.concurrent` places (429 with Retry-After when they are taken) and runs its statements
 * under the team's `statement.ms` (400 naming the limit), while the estimate does not refuse it.
 * Deterministic: the gate's places are taken by hand; the deadline is provoked on PostgreSQL by a
 * lock another connection holds on user_grants, on SQLite (whose deadline is a test on each row)
 * by a clock that has passed the deadline by the time the first row is tested.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { updateTeamLimits } from '../../src/admin.ts';
import { ScanGate } from '../../src/scim/scan-gate.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';
import { adminDeps } from '../support/oauth.ts';

const ADMINS = '/v2/scim/Users?access=role:admin&count=5';

for (const engine of engines) {
  describe(`the access parameter takes a scan place and runs under statement.ms on ${engine.name}`, () => {
    const gate = new ScanGate();
    let t: TestApp;
    let holders: string[];
    before(async () => {
      t = await createTestApp({ engine, deps: { scans: gate } });
      await seedCatalog(t.storage, t.team.id, { roles: [{ value: 'admin', displayName: 'Administrator' }] });
      holders = [];
      for (const userName of ['ann', 'bob', 'cat']) {
        const res = await t.request('POST', '/v2/scim/Users', { userName, roles: [{ value: 'admin' }] });
        assert.equal(res.statusCode, 201, res.body);
        holders.push(String(json(res).id));
      }
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'dan' })).statusCode, 201);
      await updateTeamLimits(adminDeps(t), t.team.name, [{ name: 'scans.concurrent', value: 1 }]);
    });
    after(() => t.close());

    it('with the team\'s one scan place held, an access list is 429 with Retry-After; once free, it is answered (not refused by its cost)', async () => {
      const release = gate.enter(t.team.id, 1)!;
      assert.ok(release);
      try {
        const refused = await t.request('GET', ADMINS);
        assert.equal(refused.statusCode, 429, refused.body);
        assert.equal(refused.headers['retry-after'], '1');
        assert.match(String(json(refused).detail), /scans\.concurrent/);
        // The team's index reads take no place.
        assert.equal((await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "dan"')}`)).statusCode, 200);
      } finally {
        release();
      }
      const res = await t.request('GET', ADMINS);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).totalResults, 3);
      assert.deepEqual((json(res).Resources as { id: string }[]).map((r) => r.id).sort(), [...holders].sort());
      assert.equal(gate.held(t.team.id), 0);
    });

    it('an access list still running at the team\'s statement.ms is stopped and answered 400 naming the limit', async (c) => {
      await updateTeamLimits(adminDeps(t), t.team.name, [{ name: 'statement.ms', value: 100 }]);
      let res;
      if (engine.name === 'postgres') {
        // Another connection holds user_grants: the list's statement waits until its deadline stops it.
        const locker = new pg.Client({ connectionString: t.url });
        await locker.connect();
        try {
          await locker.query('begin');
          await locker.query('lock table user_grants in access exclusive mode');
          const pending = t.request('GET', ADMINS);
          // Should the deadline not stop it, the lock is let go after a while, so the test fails instead of hanging.
          const safety = setTimeout(() => void locker.query('commit').catch(() => undefined), 30_000);
          res = await pending;
          clearTimeout(safety);
        } finally {
          await locker.query('commit').catch(() => undefined);
          await locker.end();
        }
      } else {
        // The row test reads the clock: from the moment the deadline is set, the clock reads a second later each time.
        const now = Date.now.bind(Date);
        let skew = 0;
        c.mock.method(Date, 'now', () => now() + (skew += 1_000));
        res = await t.request('GET', ADMINS);
        c.mock.restoreAll();
      }
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).scimType, 'invalidValue');
      assert.match(String(json(res).detail), /ran longer than this team's limit statement\.ms \(100 ms\)/);
      assert.equal(gate.held(t.team.id), 0);
      await updateTeamLimits(adminDeps(t), t.team.name, [{ name: 'statement.ms', value: 5_000 }]);
      assert.equal((await t.request('GET', ADMINS)).statusCode, 200);
    });
  });
}
