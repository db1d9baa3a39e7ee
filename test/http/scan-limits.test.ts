/**
 * Issue 27 item 1, the statements of a scan have a deadline and a team's scans a limit: a list
 * whose filter scans runs its statements under the team's statement.ms, and the database stops a
 * statement still running then (PostgreSQL's statement_timeout; on SQLite a test of the deadline
 * on each row, since node:sqlite cannot interrupt a statement), answered as a 400 naming the
 * limit; and a team holding scans.concurrent scans on the instance gets 429 with Retry-After for
 * another, while another team's scan is answered. Scans are held open deterministically: on
 * PostgreSQL behind a lock another connection takes on the users table, on SQLite (whose
 * statements cannot be held open) by taking the gate's places.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { updateTeamLimits } from '../../src/admin.ts';
import type { BudgetName } from '../../src/budgets.ts';
import { BUDGETS } from '../../src/budgets.ts';
import { ScanGate } from '../../src/scim/scan-gate.ts';
import { StatementDeadline, withDeadline } from '../../src/storage/deadline.ts';
import { addCounts, userDelta } from '../../src/storage/repos/counters.ts';
import { listRows } from '../../src/storage/repos/paging.ts';
import { insertUser } from '../../src/storage/repos/users.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { userRow } from '../support/rows.ts';
import { adminDeps } from '../support/oauth.ts';
import { until } from '../support/wait.ts';

const USERS = 2000;
const expensive = Array.from({ length: 200 }, (_, i) => `title ew "x${i}"`).join(' or ');
/** A scan of one test (no index answers a JSON read), cheap enough for any budget here. */
const SCAN = 'title sw "engineer"';

async function seedUsers(t: TestApp, teamId: string, count: number): Promise<void> {
  const at = '2025-12-31T00:00:00.000Z';
  await t.storage.db.transaction().execute(async (trx) => {
    for (let i = 0; i < count; i++) {
      const userName = `person${String(i).padStart(5, '0')}@limits.example`;
      await insertUser(trx, userRow(teamId, userName, { data: t.storage.hooks.toJson({ userName, active: true, title: `Engineer ${i}` }), created_at: at, updated_at: at }));
      await addCounts(trx, teamId, userDelta(undefined, 'active'), at);
    }
  });
}

const refusals = async (t: TestApp, teamId: string, budget: BudgetName): Promise<number> => {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`rollcall_budget_refusals_total{team="${teamId}",budget="${budget}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
};

const get = (t: TestApp, token: string, url: string) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
const users = (filter: string) => `/v2/scim/Users?filter=${encodeURIComponent(filter)}&count=5`;

/** Another connection holding an ACCESS EXCLUSIVE lock on the test schema's users table. */
async function lockUsers(url: string): Promise<{ waiting(): Promise<number>; cancelWaiting(): Promise<void>; release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query('lock table users in access exclusive mode');
  const watcher = new pg.Client({ connectionString: url });
  await watcher.connect();
  return {
    // Statements of this schema waiting for the lock (on the users table of this schema).
    waiting: async () => Number((await watcher.query(`select count(*) as n from pg_locks where not granted and relation = 'users'::regclass`)).rows[0].n),
    cancelWaiting: async () => void (await watcher.query(`select pg_cancel_backend(pid) from pg_locks where not granted and relation = 'users'::regclass`)),
    release: async () => {
      await client.query('commit');
      await client.end();
      await watcher.end();
    },
  };
}

for (const engine of engines) {
  describe(`a scan's statements are held to statement.ms on ${engine.name}`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
    });
    after(() => t.close());

    if (engine.name === 'sqlite') {
      it('the row test stops the statement once its deadline has passed, and lets it run before', async () => {
        await seedUsers(t, t.team.id, 50);
        const where = { kind: 'text', scalar: { at: 'document', keys: ['title'] }, op: 'co', value: 'engineer', folded: true } as const;
        const page = (deadline: number) =>
          listRows(t.storage.db, 'users', t.team.id, { where: { kind: 'and', left: { kind: 'deadline', deadline }, right: where }, descending: false, limit: 10 });
        assert.equal((await page(Date.now() + 60_000)).rows.length, 10);
        await assert.rejects(page(Date.now() - 1), (error: unknown) => t.storage.hooks.isDeadline(error));
      });
    } else {
      it('a statement the database cancels outside a scan (an operator\'s pg_cancel_backend) is a 503 with Retry-After, not a 500', async () => {
        const created = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'cancelled@limits.example' });
        assert.equal(created.statusCode, 201);
        const id = String(json(created).id);
        const lock = await lockUsers(t.url);
        let res;
        try {
          const pending = t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'title', value: 'x' }] });
          await until(async () => (await lock.waiting()) === 1);
          await lock.cancelWaiting();
          res = await pending;
        } finally {
          await lock.release();
        }
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.headers['retry-after'], '1');
        assert.match(String(json(res).detail), /stopped a statement/);
      });

      it('statement_timeout stops a statement at the deadline, for the scan\'s transaction only', async () => {
        await assert.rejects(
          withDeadline(t.storage.db, t.storage.hooks, 100, (under) => sql`select pg_sleep(30)`.execute(under.ex)),
          (error: unknown) => error instanceof StatementDeadline && error.ms === 100,
        );
        // SET LOCAL: every connection of the pool is back to the server's setting.
        const settings = await Promise.all([0, 1, 2, 3].map(() => sql<{ statement_timeout: string }>`show statement_timeout`.execute(t.storage.db)));
        for (const s of settings) assert.notEqual(s.rows[0]!.statement_timeout, '100ms');
      });
    }

    it('a filtered GET still running at the team\'s statement.ms is stopped and answered 400 naming the limit', async () => {
      const team = await t.addTeam(`deadline-${engine.name}`);
      await seedUsers(t, team.team.id, USERS);
      await updateTeamLimits(adminDeps(t), team.team.name, [
        { name: 'filter.cost', value: BUDGETS['filter.cost'].max },
        { name: 'statement.ms', value: BUDGETS['statement.ms'].min },
      ]);
      const before = await refusals(t, team.team.id, 'statement.ms');
      // PostgreSQL: the scan waits behind a lock until it is stopped; SQLite: 200 folded JSON
      // tests on each of 2,000 rows, far more work than the limit's 100 ms allows.
      const lock = engine.name === 'postgres' ? await lockUsers(t.url) : undefined;
      try {
        const res = await get(t, team.token, users(engine.name === 'postgres' ? SCAN : expensive));
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json(res).scimType, 'invalidValue');
        assert.match(String(json(res).detail), /ran longer than this team's limit statement\.ms \(100 ms\)/);
      } finally {
        await lock?.release();
      }
      assert.equal(await refusals(t, team.team.id, 'statement.ms'), before + 1);
      // The team's next request is served (nothing left held: its scan place, a connection).
      const next = await get(t, team.token, users('userName eq "person00001@limits.example"'));
      assert.equal(next.statusCode, 200);
      assert.equal(json(next).totalResults, 1);
    });
  });

  describe(`a team's concurrent scans are limited by scans.concurrent on ${engine.name}`, () => {
    const gate = new ScanGate();
    let t: TestApp;
    let other: { team: { id: string; name: string }; token: string };
    before(async () => {
      t = await createTestApp({ engine, deps: { scans: gate } });
      await seedUsers(t, t.team.id, 20);
      other = await t.addTeam(`other-${engine.name}`);
      await seedUsers(t, other.team.id, 20);
      await updateTeamLimits(adminDeps(t), t.team.name, [{ name: 'statement.ms', value: BUDGETS['statement.ms'].max }]);
    });
    after(() => t.close());

    it('the scan after scans.concurrent is 429 with Retry-After; another team\'s scan and the team\'s index reads are answered', async () => {
      const limit = BUDGETS['scans.concurrent'].default;
      const before = await refusals(t, t.team.id, 'scans.concurrent');
      let held: Promise<{ statusCode: number }>[] = [];
      let release: () => Promise<void>;
      if (engine.name === 'postgres') {
        // Real scans, held in their statements behind the lock.
        const lock = await lockUsers(t.url);
        held = Array.from({ length: limit }, () => t.request('GET', users(SCAN)));
        await until(async () => (await lock.waiting()) === limit);
        release = () => lock.release();
      } else {
        // SQLite runs a statement to its end in one turn of the event loop: the places are taken by hand.
        const places = Array.from({ length: limit }, () => gate.enter(t.team.id, limit)!);
        release = async () => places.forEach((give) => give());
      }
      assert.equal(gate.held(t.team.id), limit);
      const refused = await t.request('GET', users(SCAN));
      assert.equal(refused.statusCode, 429, refused.body);
      assert.equal(refused.headers['retry-after'], '1');
      assert.match(String(json(refused).detail), /scans\.concurrent/);
      // Another team's scan of its groups and users is answered while the first team's are held.
      const groups = await get(t, other.token, `/v2/scim/Groups?filter=${encodeURIComponent('externalId co "x"')}`);
      assert.equal(groups.statusCode, 200);
      if (engine.name === 'sqlite') {
        const theirs = await get(t, other.token, users(SCAN));
        assert.equal(theirs.statusCode, 200);
        assert.equal(json(theirs).totalResults, 20);
        // The team's own filters an index answers take no place; a sort no index gives does.
        const keyed = await t.request('GET', users('userName eq "person00003@limits.example"'));
        assert.equal(keyed.statusCode, 200);
        assert.equal((await t.request('GET', '/v2/scim/Users?sortBy=userName&count=5')).statusCode, 200);
        assert.equal((await t.request('GET', '/v2/scim/Users?sortBy=title&count=5')).statusCode, 429);
      }
      await release();
      for (const res of await Promise.all(held)) assert.equal(res.statusCode, 200);
      assert.equal(gate.held(t.team.id), 0);
      assert.equal(await refusals(t, t.team.id, 'scans.concurrent'), before + (engine.name === 'sqlite' ? 2 : 1));
      const again = await t.request('GET', users(SCAN));
      assert.equal(again.statusCode, 200);
      assert.equal(json(again).totalResults, 20);
      // A sorted scan, under its deadline (on SQLite the row test is its only condition), in order.
      const bySort = await t.request('GET', '/v2/scim/Users?sortBy=title&count=5&attributes=title');
      assert.equal(bySort.statusCode, 200);
      assert.equal(json(bySort).totalResults, 20);
      assert.deepEqual((json(bySort).Resources as { title: string }[]).map((r) => r.title), ['Engineer 0', 'Engineer 1', 'Engineer 10', 'Engineer 11', 'Engineer 12']);
    });
  });
}
