/**
 * The asynchronous requests' queue in storage (migration 024, repos/async-requests.ts), on every
 * engine: only a team's head can be claimed, by one of racing claimers; a lease taken over after
 * it expired fences the old holder out (its step advance and its finish find no row, so its
 * transaction rolls back); a released request waits for its retry time; racing inserts never pass
 * the team's cap; positions follow the team's pending requests.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { iso } from '../../src/clock.ts';
import { newId, timeOrderedId } from '../../src/ids.ts';
import { advanceStep, claimRequest, finishRequest, headOfTeam, insertWithinCap, releaseRequest, requestOfTeam, teamsWithWork } from '../../src/storage/repos/async-requests.ts';
import type { AsyncRequestRow } from '../../src/storage/repos/async-requests.ts';
import { transact } from '../../src/storage/statements.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import { systemClock } from '../../src/clock.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const at = (s: number) => new Date(Date.parse(T0) + s * 1000).toISOString();
const CAP = { requests: 100, bytes: 1_000_000 };

const request = (teamId: string, position: string, over: Partial<AsyncRequestRow> = {}): AsyncRequestRow => ({
  id: newId(),
  team_id: teamId,
  position,
  kind: 'write',
  state: 'queued',
  txn: newId(),
  actor: '{}',
  request: '{}',
  bytes: 10,
  operations: 1,
  steps_done: 0,
  errors: 0,
  lease_owner: null,
  lease_until: null,
  attempts: 0,
  outcome: null,
  status: null,
  created_at: T0,
  started_at: null,
  finished_at: null,
  method: 'POST',
  path: '/Users',
  token_hash: null,
  failures: 0,
  ...over,
});

for (const engine of engines) {
  describe(`asynchronous requests in storage (${engine.name})`, () => {
    let database: TestDatabase;
    let teamId: string;
    beforeEach(async () => {
      database = await engine.open();
      teamId = newId();
      await insertTeam(database.storage.db, { id: teamId, name: `t${teamId}`, name_key: `t${teamId}`.toLowerCase(), deactivated_users: 'hidden', created_at: iso(systemClock) });
    });
    afterEach(() => database.dispose());

    const insert = (row: AsyncRequestRow, cap = CAP) => transact(database.storage.db, (trx) => insertWithinCap(trx, row, cap));

    it('only the head is claimed, by one of racing claimers; the lease fences the step and the finish', async () => {
      const db = database.storage.db;
      const first = request(teamId, timeOrderedId(1000));
      const second = request(teamId, timeOrderedId(2000));
      assert.equal(await insert(first), true);
      assert.equal(await insert(second), true);
      assert.equal(await claimRequest(db, second, 'B', at(0), at(30)), false, 'not the head');
      const wins = await Promise.all(['A', 'B', 'C'].map((owner) => claimRequest(db, first, owner, at(0), at(30))));
      assert.equal(wins.filter(Boolean).length, 1, 'one claimer wins');
      const owner = ['A', 'B', 'C'][wins.indexOf(true)]!;
      assert.equal((await headOfTeam(db, teamId))?.id, first.id);
      assert.deepEqual(await teamsWithWork(db, at(1), 10), [], 'a team whose head is leased elsewhere has no claimable work');

      // The lease expires; another worker takes it over.
      assert.equal(await claimRequest(db, first, 'D', at(10), at(40)), false, 'a live lease is not taken');
      assert.equal(await claimRequest(db, first, 'D', at(31), at(61)), true, 'an expired lease is taken over');
      assert.equal(await advanceStep(db, { id: first.id, owner, from: 0, failed: false, until: at(70) }), false, 'the old holder is fenced out');
      assert.equal(await advanceStep(db, { id: first.id, owner: 'D', from: 0, failed: false, until: at(70) }), true);
      assert.equal(await advanceStep(db, { id: first.id, owner: 'D', from: 0, failed: false, until: at(70) }), false, 'a step advances once');
      assert.equal(await finishRequest(db, { id: first.id, owner, steps: 1, outcome: '{}', status: 200, now: at(40) }), false);
      assert.equal(await finishRequest(db, { id: first.id, owner: 'D', steps: 1, outcome: '{}', status: 200, now: at(40) }), true);
      const finished = await requestOfTeam(db, teamId, first.id);
      assert.equal(finished?.request, '', 'a done request keeps no request text (it may hold passwords)');
      assert.deepEqual([finished?.method, finished?.path], ['POST', '/Users']);
      assert.equal((await headOfTeam(db, teamId))?.id, second.id, 'the next one is the head once the first is done');
      assert.equal(await claimRequest(db, second, 'B', at(41), at(71)), true);
    });

    it('a released request waits for its retry time, and holds back the requests behind it', async () => {
      const db = database.storage.db;
      const first = request(teamId, timeOrderedId(1000));
      const second = request(teamId, timeOrderedId(2000));
      await insert(first);
      await insert(second);
      assert.equal(await claimRequest(db, first, 'A', at(0), at(30)), true);
      await releaseRequest(db, first.id, 'A', at(5), true);
      assert.equal((await headOfTeam(db, teamId))?.failures, 1, 'a failure is counted');
      assert.deepEqual(await teamsWithWork(db, at(1), 10), [], 'a team waiting out a backoff has no claimable work');
      assert.equal(await claimRequest(db, first, 'B', at(1), at(31)), false, 'not before its retry time');
      assert.equal(await claimRequest(db, second, 'B', at(1), at(31)), false, 'the one behind waits');
      assert.deepEqual(await teamsWithWork(db, at(6), 10), [teamId]);
      assert.equal(await claimRequest(db, first, 'B', at(6), at(36)), true);
      await releaseRequest(db, first.id, 'B', null);
      assert.equal((await headOfTeam(db, teamId))?.failures, 1, 'a release that is no failure (a stop) counts nothing');
      assert.equal(await claimRequest(db, first, 'C', at(7), at(37)), true);
      assert.equal(await advanceStep(db, { id: first.id, owner: 'C', from: 0, failed: false, until: at(40) }), true);
      assert.equal((await headOfTeam(db, teamId))?.failures, 0, 'a recorded step starts the count again');
    });

    it('blocked teams take no place in the list: a team with claimable work behind many blocked ones is found', async () => {
      const db = database.storage.db;
      const blocked: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = newId();
        await insertTeam(db, { id, name: `b${id}`, name_key: `b${id}`.toLowerCase(), deactivated_users: 'hidden', created_at: iso(systemClock) });
        const row = request(id, timeOrderedId(100 + i));
        await insert(row);
        await insert(request(id, timeOrderedId(5000 + i)));
        assert.equal(await claimRequest(db, row, `X${i}`, at(0), at(30)), true);
        blocked.push(id);
      }
      await insert(request(teamId, timeOrderedId(9000)));
      assert.deepEqual(await teamsWithWork(db, at(1), 1), [teamId], 'the one team with a claimable head, even with a limit of one');
    });

    it('racing inserts never pass the cap; a position never sorts before a pending one', async () => {
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => insert(request(teamId, timeOrderedId(5000 - i)), { requests: 3, bytes: 1_000_000 })));
      assert.equal(results.filter(Boolean).length, 3);
      assert.equal(await insert(request(teamId, timeOrderedId(9000), { bytes: 10 }), { requests: 100, bytes: 35 }), false, 'over the bytes');
      const rows = await database.storage.db.selectFrom('async_requests').select(['id', 'position']).where('team_id', '=', teamId).orderBy('position').execute();
      const late = request(teamId, timeOrderedId(1));
      assert.equal(await insert(late, CAP), true);
      const last = await database.storage.db.selectFrom('async_requests').select('id').where('team_id', '=', teamId).orderBy('position', 'desc').limit(1).executeTakeFirstOrThrow();
      assert.equal(last.id, late.id, 'accepted last, placed last, whatever its clock said');
      assert.equal(rows.length, 3);
    });
  });
}
