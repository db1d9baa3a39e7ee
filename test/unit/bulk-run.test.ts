/**
 * The write dispatcher and the Bulk engine below HTTP (src/scim/dispatch.ts, src/scim/bulk/run.ts),
 * the API an asynchronous request builds on: each served path answers the route's status, id,
 * location and version, and `onCommit` sees that same result inside the transaction (a throw
 * there rolls the write back); a journal is told each step (a success in its transaction, a
 * failure after), a request resumed after `done` does not run those steps again, `BulkAborted`
 * stops the run, and an unknown failure is a bland 500 for its operation (rethrown with a journal).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { PasswordHasher } from '../../src/oauth/passwords.ts';
import { BulkAborted, planBulk, runBulk } from '../../src/scim/bulk/index.ts';
import type { BulkJournal, BulkOperationResult } from '../../src/scim/bulk/index.ts';
import type { ScimContext } from '../../src/scim/context.ts';
import { runWriteOperation } from '../../src/scim/dispatch.ts';
import type { WriteResult } from '../../src/scim/dispatch.ts';
import { ScimError } from '../../src/scim/errors.ts';
import { loadTeamTypes } from '../../src/scim/team-schemas.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const BULK = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

for (const engine of engines) {
  describe(`dispatch and runBulk (${engine.name})`, () => {
    let t: TestApp;
    let ctx: ScimContext;
    before(async () => {
      t = await createTestApp({ engine });
      ctx = { storage: t.storage, clock: t.clock, baseUrl: 'https://rollcall.test', team: t.team, actor: CLI_ACTOR, requestId: 'req-unit', cursorSecret: 'test', passwords: new PasswordHasher(), types: await loadTeamTypes(t.storage.db, t.team.id) };
    });
    after(() => t.close());
    const exists = async (name: string) => Number(json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`)).totalResults) === 1;

    it('each served path answers what its route answers, and onCommit sees the same result in the transaction', async () => {
      const seen: WriteResult[] = [];
      const run = (op: Parameters<typeof runWriteOperation>[1]) => runWriteOperation(ctx, op, async (_trx, r) => void seen.push(r));
      const user = await run({ method: 'POST', path: '/Users', data: { userName: 'dispatch.a' } });
      assert.equal(user.status, 201);
      assert.equal(user.version, 'W/"1"');
      assert.equal(user.location, `https://rollcall.test/v2/scim/Users/${user.id}`);
      assert.equal(user.resource?.userName, 'dispatch.a');
      const group = await run({ method: 'POST', path: '/Groups', data: { displayName: 'Dispatch' } });
      assert.equal(group.status, 201);
      const lone = await run({ method: 'PATCH', path: `/Groups/${group.id}`, data: { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: user.id }] }] } });
      assert.deepEqual(lone, { status: 204, id: group.id, location: group.location, version: 'W/"2"' }, 'the lone-member path: the version, no body');
      const projected = await run({ method: 'PATCH', path: `/Groups/${group.id}`, data: { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Dispatched' }] }, query: { attributes: 'displayName' } });
      assert.equal(projected.status, 200);
      assert.equal(projected.resource?.displayName, 'Dispatched');
      const put = await run({ method: 'PUT', path: `/Users/${user.id}`, version: 'W/"1"', data: { userName: 'dispatch.a', title: 'T' } });
      assert.equal(put.status, 200);
      const removed = await run({ method: 'DELETE', path: `/Users/${user.id}` });
      assert.deepEqual([removed.status, removed.version, removed.resource], [204, 'W/"3"', undefined]);
      const activated = await run({ method: 'PUT', path: `/Users/${encodeURIComponent(String(user.id))}/activate` });
      assert.equal(activated.status, 200);
      const groupGone = await run({ method: 'DELETE', path: `/Groups/${group.id}` });
      assert.deepEqual(groupGone, { status: 204, id: group.id, location: group.location });
      assert.deepEqual(seen, [user, group, lone, projected, put, removed, activated, groupGone]);
    });

    it('a missing group on the lone-member path is 404 and onCommit is never told; a path no route serves is 404', async () => {
      let told = 0;
      await assert.rejects(
        runWriteOperation(ctx, { method: 'PATCH', path: '/Groups/nope', data: { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: 'x' }] }] } }, async () => void told++),
        (e: unknown) => e instanceof ScimError && e.status === 404,
      );
      assert.equal(told, 0);
      for (const [method, path] of [['POST', '/Users/x'], ['PUT', '/Users'], ['PATCH', '/Users/x/activate'], ['DELETE', '/Widgets/1'], ['POST', '/Users/%E0%A4%A']] as const) {
        await assert.rejects(runWriteOperation(ctx, { method, path, data: {} }), (e: unknown) => e instanceof ScimError && e.status === 404, `${method} ${path}`);
      }
    });

    it('a throw from onCommit rolls the write back and propagates', async () => {
      await assert.rejects(runWriteOperation(ctx, { method: 'POST', path: '/Users', data: { userName: 'dispatch.rolled' } }, async () => {
        throw new BulkAborted('lease lost');
      }), BulkAborted);
      assert.equal(await exists('dispatch.rolled'), false);
    });

    it('a journal is told each step; a resumed request skips done steps and keeps their bulkIds', async () => {
      const body = {
        schemas: [BULK],
        Operations: [
          { method: 'POST', path: '/Groups', bulkId: 'g', data: { displayName: 'Journal group', members: [{ value: 'bulkId:u' }] } },
          { method: 'POST', path: '/Users', bulkId: 'u', data: { userName: 'journal.u' } },
          { method: 'DELETE', path: '/Users/nobody' },
        ],
      };
      const plan = planBulk(body);
      assert.deepEqual(plan.steps.map((s) => s.index), [1, 0, 2]);
      // The first run stops after its first step (a lost lease while recording the second).
      const first: BulkOperationResult[] = [];
      const stopping: BulkJournal = {
        done: [],
        committed: async (trx, index, result) => {
          assert.ok(trx);
          if (index === 1) throw new BulkAborted();
          first.push(result);
        },
        failed: async () => assert.fail('no failure in the first run'),
      };
      await assert.rejects(runBulk(ctx, plan, stopping), BulkAborted);
      assert.equal(first.length, 1);
      assert.equal(first[0]!.bulkId, 'u');
      const groups = json(await t.request('GET', `/v2/scim/Groups?filter=${encodeURIComponent('displayName eq "Journal group"')}`));
      assert.equal(groups.totalResults, 0, 'the aborted step rolled back');

      const told: [string, number, string][] = [];
      const resumed: BulkJournal = {
        done: first,
        committed: async (_trx, index, result) => void told.push(['committed', index, result.status]),
        failed: async (index, result) => void told.push(['failed', index, result.status]),
      };
      const response = await runBulk(ctx, plan, resumed);
      assert.deepEqual(told, [['committed', 1, '201'], ['failed', 2, '404']]);
      assert.deepEqual(response.Operations.map((o) => [o.bulkId, o.status]), [['g', '201'], ['u', '201'], [undefined, '404']], 'request order, the done step included');
      const group = json(await t.request('GET', new URL(String(response.Operations[0]!.location)).pathname));
      assert.deepEqual((group.members as { value: string }[]).map((m) => m.value), [String(first[0]!.location).split('/').at(-1)]);
      const users = json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "journal.u"')}`));
      assert.equal(users.totalResults, 1, 'the done step did not run again');
    });

    it('an unknown failure is a bland 500 for its operation without a journal (the observer hears of it), and is rethrown with one', async () => {
      let calls = 0;
      const failing: ScimContext = {
        ...ctx,
        onCommit: async () => {
          calls++;
          if (calls === 2) throw new Error('driver exploded: SELECT secret');
        },
      };
      const plan = planBulk({
        schemas: [BULK],
        Operations: ['odd.1', 'odd.2', 'odd.3'].map((userName, i) => ({ method: 'POST', path: '/Users', bulkId: `o${i}`, data: { userName } })),
      });
      const heard: number[] = [];
      const response = await runBulk(failing, plan, undefined, { unexpected: (_e, step) => void heard.push(step.index) });
      assert.deepEqual(response.Operations.map((o) => o.status), ['201', '500', '201']);
      assert.deepEqual(response.Operations[1]!.response, { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '500', detail: 'Internal server error' });
      assert.deepEqual(heard, [1]);
      assert.equal(await exists('odd.2'), false);

      calls = 0;
      const journal: BulkJournal = { done: [], committed: async () => {}, failed: async () => {} };
      const again = planBulk({ schemas: [BULK], Operations: ['odd.4', 'odd.5'].map((userName, i) => ({ method: 'POST', path: '/Users', bulkId: `p${i}`, data: { userName } })) });
      await assert.rejects(runBulk(failing, again, journal), /driver exploded/);
    });
  });
}
