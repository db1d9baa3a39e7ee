/**
 * RFC 7644 3.7: a Bulk of consecutive user creates is run as the same creates sent one after the
 * other, on both engines: answers, directory order and feed order are the request's; a userName
 * taken by the create just before is 409 uniqueness with the single request's body; an invalid
 * create is answered in its place; and failOnErrors stops before the creates after the failing
 * one, which leave no user, no audit row and no event. What any overlap of a Bulk's operations
 * (one prepared while another commits, independent creates run at once) must keep.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { assertOpError, auditRows, bulkBody, bulkOk, feedEvents, idOf, listAll, teamOf, USER } from '../support/bulk.ts';
import type { Json, TeamClient } from '../support/bulk.ts';

const postUser = (bulkId: string, userName: string, extra: Json = {}) => ({ method: 'POST', path: '/Users', bulkId, data: { schemas: [USER], userName, ...extra } });

for (const engine of engines) {
  describe(`Bulk creates in request order (${engine.name})`, () => {
    let t: TestApp;
    let team: TeamClient;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      team = teamOf(t);
    });
    afterEach(() => t.close());

    it('40 creates: each answered 201 in its place; the directory and the feed list them in request order, one event and one audit row each', async () => {
      const names = Array.from({ length: 40 }, (_, i) => `ordered.${String(i).padStart(2, '0')}`);
      const ops = await bulkOk(team, bulkBody(names.map((n, i) => postUser(`u${i}`, n))));
      assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), names.map((_, i) => [`u${i}`, '201']));
      const ids = ops.map((o) => idOf(o.location));
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.id), ids, 'the list (creation order) is the request order');
      const events = await feedEvents(team);
      assert.deepEqual(events.map((e) => [e.change, e.id]), ids.map((id) => ['create', id]), 'the feed is the request order');
      const audit = (await auditRows(t, t.team.id)).filter((a) => a.action === 'create');
      assert.deepEqual(audit.map((a) => a.resource_id).sort(), [...ids].sort());
    });

    it('a userName the create just before took is 409 uniqueness, with the body the same POST alone answers', async () => {
      const ops = await bulkOk(team, bulkBody([postUser('a', 'twin'), postUser('b', 'TWIN'), postUser('c', 'after.twin')]));
      assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), [['a', '201'], ['b', '409'], ['c', '201']]);
      const inBulk = assertOpError(ops[1], '409');
      const alone = await team.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'TWIN' });
      assert.equal(alone.statusCode, 409);
      assert.deepEqual(inBulk, json(alone), 'the same error body as the request sent alone');
      assert.deepEqual((await feedEvents(team)).map((e) => e.id), [idOf(ops[0]!.location), idOf(ops[2]!.location)]);
    });

    it('an invalid create between two valid ones is answered 400 in its place; the others are created', async () => {
      const ops = await bulkOk(team, bulkBody([postUser('a', 'first'), { method: 'POST', path: '/Users', bulkId: 'bad', data: { schemas: [USER], displayName: 'nameless' } }, postUser('c', 'third')]));
      assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), [['a', '201'], ['bad', '400'], ['c', '201']]);
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName), ['first', 'third']);
    });

    it('failOnErrors 1: a create after the failing one is not run, though it would succeed: no user, no audit row, no event', async () => {
      assert.equal((await team.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'taken' })).statusCode, 201);
      const eventsBefore = (await feedEvents(team)).length;
      const auditBefore = (await auditRows(t, t.team.id)).length;
      const ops = await bulkOk(team, bulkBody([postUser('dup', 'taken'), postUser('next', 'never.created'), postUser('last', 'never.either')], 1));
      assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), [['dup', '409']]);
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName), ['taken']);
      assert.equal((await feedEvents(team)).length, eventsBefore);
      assert.equal((await auditRows(t, t.team.id)).length, auditBefore);
      // The next Bulk of the team runs normally (nothing was left holding a connection or a place).
      const again = await bulkOk(team, bulkBody([postUser('next', 'never.created')]));
      assert.deepEqual(again.map((o) => o.status), ['201']);
    });
  });
}
