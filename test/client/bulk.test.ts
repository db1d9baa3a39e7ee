/**
 * The client's bulk() and asyncRequest() against a real Rollcall over HTTP (issue 32 item 8): a
 * Bulk whose group names the user it creates by `bulkId:`; failOnErrors leaving the rest unrun;
 * a Bulk sent with respondAsync accepted (txn, status URL), followed to done with asyncRequest()
 * and with the feed follower, which finds one asyncresp event per operation with `<txn>:<i>`.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { PATCH_OP, Rollcall, RollcallError } from '../../packages/client/src/index.ts';
import type { AsyncRequestStatus, BulkResponse, FeedEvent } from '../../packages/client/src/index.ts';
import { BASE_URL } from '../support/app.ts';
import { listeningApp } from '../support/client-server.ts';
import type { ListeningApp } from '../support/client-server.ts';
import { engines } from '../support/engines.ts';
import { until } from '../support/wait.ts';

for (const engine of engines) {
  describe(`client bulk and asynchronous requests (${engine.name})`, () => {
    let t: ListeningApp;
    let rc: Rollcall;
    beforeEach(async () => {
      t = await listeningApp({ engine, deps: { asyncRequests: { tickMs: 20 } } });
      rc = new Rollcall({ baseUrl: t.origin, token: t.token });
    });
    afterEach(() => t.close());

    it('bulk() creates a user and a group naming it by bulkId; each result in request order', async () => {
      const answer = await rc.bulk([
        { method: 'POST', path: '/Groups', bulkId: 'g', data: { displayName: 'Tour Guides', members: [{ type: 'User', value: 'bulkId:alice' }] } },
        { method: 'POST', path: '/Users', bulkId: 'alice', data: { userName: 'alice@acme.example' } },
      ]);
      assert.deepEqual(answer.Operations.map((o) => [o.method, o.bulkId, o.status]), [['POST', 'g', '201'], ['POST', 'alice', '201']]);
      const userId = answer.Operations[1]!.location!.split('/').pop()!;
      assert.equal(answer.Operations[1]!.location, `${BASE_URL}/v2/scim/Users/${userId}`);
      const group = await rc.groups.get(answer.Operations[0]!.location!.split('/').pop()!);
      assert.deepEqual(group.members?.map((m) => m.value), [userId]);
      assert.equal(answer.Operations[0]!.version, group.meta?.version);
    });

    it('bulk() with failOnErrors: the failure answered with its SCIM error, later operations absent', async () => {
      await rc.users.create({ userName: 'taken@acme.example' });
      const answer = await rc.bulk([
        { method: 'POST', path: '/Users', bulkId: 'a', data: { userName: 'taken@acme.example' } },
        { method: 'POST', path: '/Users', bulkId: 'b', data: { userName: 'never@acme.example' } },
      ], { failOnErrors: 1 });
      assert.equal(answer.Operations.length, 1);
      assert.equal(answer.Operations[0]!.status, '409');
      assert.equal(answer.Operations[0]!.response?.scimType, 'uniqueness');
      assert.equal(answer.Operations[0]!.location, undefined);
      assert.equal((await rc.users.list({ filter: 'userName eq "never@acme.example"' })).totalResults, 0);
      const refused = await rc.bulk([{ method: 'POST', path: '/Users', data: {} }], { failOnErrors: 0 }).catch((e: unknown) => e);
      assert.ok(refused instanceof RollcallError && refused.status === 400, String(refused));
    });

    it('bulk() with respondAsync: txn and status URL; asyncRequest() reads it to done; the feed has one asyncresp event per operation with <txn>:<i>', async () => {
      const accepted = await rc.bulk([
        { method: 'POST', path: '/Users', bulkId: 'bob', data: { userName: 'bob@acme.example' } },
        { method: 'PATCH', path: '/Users/bulkId:bob', data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] } },
        { method: 'DELETE', path: '/Users/no-such-id' },
      ], { respondAsync: true });
      assert.ok('txn' in accepted, 'a 202');
      assert.match(accepted.txn, /^[0-9a-f]{32}$/);
      assert.equal(accepted.location, `${BASE_URL}/v2/scim/AsyncRequests/${accepted.txn}`);

      let status: AsyncRequestStatus | undefined;
      await until(async () => (status = await rc.asyncRequest(accepted.txn)).status === 'done', 'the Bulk done');
      assert.equal(status!.id, accepted.txn);
      assert.equal(status!.method, 'POST');
      assert.equal(status!.path, '/Bulk');
      assert.deepEqual([status!.operations, status!.completed], [3, 3]);
      const outcome = status!.response as BulkResponse;
      assert.deepEqual(outcome.Operations.map((o) => o.status), ['201', '200', '404']);
      const bobId = outcome.Operations[0]!.location!.split('/').pop()!;
      assert.equal((await rc.users.get(bobId)).title, 'Lead');

      const stop = new AbortController();
      const completions: FeedEvent[] = [];
      for await (const event of rc.events.follow({ signal: stop.signal, pollIntervalMs: 20 })) {
        if (event.change === 'asyncresp' && event.txn?.startsWith(`${accepted.txn}:`)) completions.push(event);
        if (completions.length === 3) stop.abort();
      }
      assert.deepEqual(completions.map((e) => [e.txn, e.outcome?.method, e.outcome?.status]), [
        [`${accepted.txn}:0`, 'POST', '201'],
        [`${accepted.txn}:1`, 'PATCH', '200'],
        [`${accepted.txn}:2`, 'DELETE', '404'],
      ]);
      assert.equal(completions[0]!.id, bobId);
      assert.equal(completions[0]!.outcome?.bulkId, 'bob');
      assert.equal((completions[2]!.outcome?.response as { status?: string } | undefined)?.status, '404');

      const unknown = await rc.asyncRequest('0'.repeat(32)).catch((e: unknown) => e);
      assert.ok(unknown instanceof RollcallError && unknown.status === 404, String(unknown));
    });
  });
}
