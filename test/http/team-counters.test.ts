/**
 * Issue 14 item 3 / issue 12: the per-team counters (migration 010, repos/counters.ts) always
 * equal `count(*)` of what they count, whatever sequence of SCIM writes and team mode switches
 * ran; an unfiltered list's totalResults and the console overview read them; a write that rolls
 * back takes its delta back; on PostgreSQL, two instances writing one team concurrently leave
 * them exact.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { updateTeam } from '../../src/admin.ts';
import { buildApp } from '../../src/app.ts';
import { connect } from '../../src/storage/connect.ts';
import { teamCounts } from '../../src/storage/repos/counters.ts';
import type { TeamCounts } from '../../src/storage/repos/counters.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { hooksOf, hot, StorageCarrier } from '../../src/storage/statements.ts';
import type { Statements } from '../../src/storage/statements.ts';
import { BASE_URL, createTestApp, json, TEST_CONFIG } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** What the counters must equal: counted over the rows. */
async function counted(storage: Storage, teamId: string): Promise<TeamCounts> {
  const n = async (where: ReturnType<typeof sql>, table = 'users') =>
    Number((await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where team_id = ${teamId} and ${where}`.execute(storage.db)).rows[0]!.n);
  return {
    usersActive: await n(sql`deleted_at is null and active = 1`),
    usersDeactivated: await n(sql`deleted_at is null and active <> 1`),
    usersDeleted: await n(sql`deleted_at is not null`),
    groups: await n(sql`1 = 1`, 'groups'),
  };
}

type Op =
  | { readonly kind: 'create'; readonly active: boolean }
  | { readonly kind: 'delete' | 'activate' | 'patchActive' | 'putActive' | 'rename'; readonly pick: number; readonly active: boolean }
  | { readonly kind: 'createGroup' }
  | { readonly kind: 'deleteGroup'; readonly pick: number }
  | { readonly kind: 'mode'; readonly visible: boolean };

const ops: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create' as const), active: fc.boolean() }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('delete' as const, 'activate' as const, 'patchActive' as const, 'putActive' as const, 'rename' as const), pick: fc.nat(), active: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('createGroup' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteGroup' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('mode' as const), visible: fc.boolean() }) },
);

for (const engine of engines) {
  describe(`team counters on ${engine.name}`, () => {
    let t: TestApp;
    // The compiled statements the app runs, by name. While `on`, the counters' upsert (the last
    // statement of a write) runs, then fails, so the write's transaction rolls back after it.
    const failing = { on: false, names: [] as string[] };
    const wrap = (storage: Storage): Storage => {
      const inner = hot(storage.db);
      const afterwards = async <T>(name: string, ran: Promise<T>): Promise<T> => {
        failing.names.push(name);
        const result = await ran;
        if (failing.on && (name === 'addTeamCounts' || name === 'addTeamGroupCounts')) throw new Error('injected failure after the counter bump');
        return result;
      };
      const statements: Statements = {
        all: (ex, def, params) => afterwards(def.name, inner.all(ex, def, params)),
        first: (ex, def, params) => afterwards(def.name, inner.first(ex, def, params)),
        shaped: (ex, query) => inner.shaped(ex, query),
        run: (ex, def, params) => afterwards(def.name, inner.run(ex, def, params)),
        write: (ex, def, params) => afterwards(def.name, inner.write(ex, def, params)),
      };
      return { ...storage, db: storage.db.withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
    };
    before(async () => {
      t = await createTestApp({ engine, wrapStorage: wrap });
    });
    after(() => t.close());

    it('equal count(*) after random creates, deletes, (de)activations, hides, renames, group writes and team mode switches; totalResults and the overview read them', async () => {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(ops, { minLength: 1, maxLength: 25 }), async (sequence) => {
          const name = `counters-${engine.name}-${run++}`;
          const { team, token } = await t.addTeam(name);
          const as = { authorization: `Bearer ${token}` };
          const users: string[] = [];
          const groups: string[] = [];
          let n = 0;
          for (const op of sequence) {
            const user = op.kind !== 'create' && op.kind !== 'createGroup' && op.kind !== 'mode' && op.kind !== 'deleteGroup' ? users[op.pick % Math.max(1, users.length)] : undefined;
            switch (op.kind) {
              case 'create': {
                const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `u${n++}@${name}.example`, active: op.active }, as);
                assert.equal(res.statusCode, 201, res.body);
                users.push(String(json(res).id));
                break;
              }
              case 'delete':
                if (user) await t.request('DELETE', `/v2/scim/Users/${user}`, undefined, as);
                break;
              case 'activate':
                if (user) await t.request('PUT', `/v2/scim/Users/${user}/activate`, undefined, as);
                break;
              case 'patchActive':
                if (user) await t.request('PATCH', `/v2/scim/Users/${user}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: op.active }] }, as);
                break;
              case 'putActive':
                if (user) await t.request('PUT', `/v2/scim/Users/${user}`, { schemas: [USER], userName: `p${n++}@${name}.example`, active: op.active }, as);
                break;
              case 'rename':
                if (user) await t.request('PATCH', `/v2/scim/Users/${user}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: `D ${n++}` }] }, as);
                break;
              case 'createGroup': {
                const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: `g${n++}`, members: users.slice(0, 2).map((value) => ({ value })) }, as);
                if (res.statusCode === 201) groups.push(String(json(res).id));
                else assert.equal(res.statusCode, 400, res.body);
                break;
              }
              case 'deleteGroup': {
                const group = groups.splice(op.pick % Math.max(1, groups.length), 1)[0];
                if (group) assert.equal((await t.request('DELETE', `/v2/scim/Groups/${group}`, undefined, as)).statusCode, 204);
                break;
              }
              case 'mode':
                await updateTeam({ storage: t.storage, clock: t.clock, baseUrl: BASE_URL }, name, op.visible ? 'visible' : 'hidden');
                break;
            }
          }
          const counters = await teamCounts(t.storage.db, team.id);
          assert.deepEqual(counters, await counted(t.storage, team.id));
          // The creation-time buckets (by hour, by second) equal the rows' counts too.
          for (const [level, length] of [[1, 13], [2, 19]] as const) {
            const buckets = await sql<{ bucket: string; a: number | string; d: number | string; x: number | string }>`select bucket, users_active as a, users_deactivated as d, users_deleted as x
              from team_counters where team_id = ${team.id} and level = ${level} and (users_active <> 0 or users_deactivated <> 0 or users_deleted <> 0) order by bucket`.execute(t.storage.db);
            const rows = await sql<{ bucket: string; a: number | string; d: number | string; x: number | string }>`select substr(created_at, 1, ${sql.lit(length)}) as bucket,
                sum(case when deleted_at is null and active = 1 then 1 else 0 end) as a,
                sum(case when deleted_at is null and active <> 1 then 1 else 0 end) as d,
                sum(case when deleted_at is not null then 1 else 0 end) as x
              from users where team_id = ${team.id} group by substr(created_at, 1, ${sql.lit(length)}) order by bucket`.execute(t.storage.db);
            const plain = (r: { bucket: string; a: number | string; d: number | string; x: number | string }) => [r.bucket, Number(r.a), Number(r.d), Number(r.x)];
            assert.deepEqual(buckets.rows.map(plain), rows.rows.map(plain), `level ${level}`);
          }
          // The unfiltered list's totalResults, in the team's mode as it ended up.
          const mode = (await sql<{ m: string }>`select deactivated_users as m from teams where id = ${team.id}`.execute(t.storage.db)).rows[0]!.m;
          const listed = mode === 'visible' ? counters.usersActive + counters.usersDeactivated : counters.usersActive;
          const total = json(await t.request('GET', '/v2/scim/Users?count=0', undefined, as)).totalResults;
          assert.equal(total, listed);
          const all = json(await t.request('GET', '/v2/scim/Users?count=1000&attributes=id', undefined, as));
          assert.equal(all.totalResults, listed);
          assert.equal((all.Resources as unknown[]).length, listed);
          assert.equal(json(await t.request('GET', '/v2/scim/Groups?count=0', undefined, as)).totalResults, counters.groups);
        }),
        { numRuns: 12 },
      );
    });

    it('a write that rolls back takes its delta back (a failure after the counter bump)', async () => {
      const { team, token } = await t.addTeam(`rollback-${engine.name}`);
      const as = { authorization: `Bearer ${token}` };
      const user = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'kept@x.example' }, as)).id);
      const group = String(json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'kept' }, as)).id);
      const before = await teamCounts(t.storage.db, team.id);
      assert.deepEqual(before, { usersActive: 1, usersDeactivated: 0, usersDeleted: 0, groups: 1 });
      failing.on = true;
      try {
        assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'lost@x.example' }, as)).statusCode, 500);
        assert.equal((await t.request('DELETE', `/v2/scim/Users/${user}`, undefined, as)).statusCode, 500);
        assert.equal((await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'lost' }, as)).statusCode, 500);
        assert.equal((await t.request('DELETE', `/v2/scim/Groups/${group}`, undefined, as)).statusCode, 500);
      } finally {
        failing.on = false;
      }
      assert.deepEqual(await teamCounts(t.storage.db, team.id), before);
      assert.deepEqual(await teamCounts(t.storage.db, team.id), await counted(t.storage, team.id));
      // A userName already held: 409, nothing counted.
      assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'KEPT@x.example' }, as)).statusCode, 409);
      assert.deepEqual(await teamCounts(t.storage.db, team.id), before);
    });

    it('one counter statement for a write that moves a count, none for one that does not', async () => {
      const { token } = await t.addTeam(`statements-${engine.name}`);
      const as = { authorization: `Bearer ${token}` };
      failing.names = [];
      const id = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'one@x.example' }, as)).id);
      assert.deepEqual(failing.names.filter((n) => n === 'addTeamCounts'), ['addTeamCounts']);
      failing.names = [];
      await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Renamed' }] }, as);
      assert.deepEqual(failing.names.filter((n) => n === 'addTeamCounts'), []);
      failing.names = [];
      await t.request('DELETE', `/v2/scim/Users/${id}`, undefined, as);
      assert.deepEqual(failing.names.filter((n) => n === 'addTeamCounts'), ['addTeamCounts']);
    });

    it('the console overview shows the counters', async () => {
      const { teamCounts: overviewCounts } = await import('../../src/storage/repos/console.ts');
      const { team, token } = await t.addTeam(`overview-${engine.name}`);
      const as = { authorization: `Bearer ${token}` };
      for (const active of [true, true, false]) await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `o${String(active)}${Math.random()}@x.example`, active }, as);
      await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'one' }, as);
      assert.deepEqual(await overviewCounts(t.storage.db, team.id), { activeUsers: 2, deactivatedUsers: 1, groups: 1 });
    });

    if (engine.name === 'postgres') {
      it('two instances writing one team at once leave the counters exact (the row lock orders the deltas)', async () => {
        const second = connect(t.url, { poolSize: 4 });
        const other = await buildApp({ config: TEST_CONFIG, storage: second, clock: t.clock, delivery: false });
        try {
          const { team, token } = await t.addTeam('concurrent');
          const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
          const apps = [t.app, other];
          const created = await Promise.all(
            Array.from({ length: 40 }, (_, i) =>
              apps[i % 2]!.inject({ method: 'POST', url: '/v2/scim/Users', headers, payload: JSON.stringify({ schemas: [USER], userName: `c${i}@x.example` }) }),
            ),
          );
          const ids = created.map((r) => {
            assert.equal(r.statusCode, 201, r.body);
            return String(json(r).id);
          });
          // Each user deactivated through both instances at once: one wins, the other is a 404.
          await Promise.all(ids.slice(0, 20).flatMap((id) => apps.map((app) => app.inject({ method: 'DELETE', url: `/v2/scim/Users/${id}`, headers }))));
          const groupsMade = await Promise.all(
            Array.from({ length: 10 }, (_, i) => apps[i % 2]!.inject({ method: 'POST', url: '/v2/scim/Groups', headers, payload: JSON.stringify({ schemas: [GROUP], displayName: `cg${i}` }) })),
          );
          const groupIds = groupsMade.map((r) => String(json(r).id));
          // Each group deleted through both instances at once: exactly one delete counts.
          await Promise.all(groupIds.slice(0, 5).flatMap((id) => apps.map((app) => app.inject({ method: 'DELETE', url: `/v2/scim/Groups/${id}`, headers }))));
          assert.deepEqual(await teamCounts(t.storage.db, team.id), { usersActive: 20, usersDeactivated: 20, usersDeleted: 0, groups: 5 });
          assert.deepEqual(await teamCounts(t.storage.db, team.id), await counted(t.storage, team.id));
        } finally {
          await other.close();
          await second.close();
        }
      });
    }
  });
}
