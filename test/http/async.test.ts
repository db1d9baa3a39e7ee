/**
 * RFC 9967 section 2.5.1.1 asynchronous requests (Prefer: respond-async, RFC 7240), on every
 * engine: a write with the preference is answered 202 with Set-Txn, Preference-Applied, Location
 * and Retry-After and no body; the app's worker runs it; its status URL shows it queued, running,
 * then done with its outcome; its asyncresp event is on the feed with its txn; a failing write's
 * error is in the outcome and the event; a team's requests run in order; a request over the
 * team's cap, on a catalog endpoint or a search is answered synchronously without
 * Preference-Applied; `wait` answers the outcome synchronously when it came in time; another
 * team cannot read the status URL.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { parsePrefer } from '../../src/http/scim-async.ts';
import { HashingBusy } from '../../src/oauth/passwords.ts';
import type { PasswordKdf } from '../../src/oauth/passwords.ts';
import { sha256 } from '../../src/ids.ts';
import { requestOfTeam } from '../../src/storage/repos/async-requests.ts';
import { AsyncQueue, MAX_WAITERS_PER_TEAM } from '../../src/async/queue.ts';
import { MAX_FAILURES } from '../../src/async/run.ts';
import { revokeToken } from '../../src/storage/repos/tokens.ts';
import { setTeamLimits } from '../../src/storage/repos/teams.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { until } from '../support/wait.ts';

type Json = Record<string, unknown>;
const ASYNC = { prefer: 'respond-async' };
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ASYNCRESP = 'urn:ietf:params:scim:event:misc:asyncresp';

/** A derivation the test holds: a write setting a password waits in it until released. */
class HeldKdf implements PasswordKdf {
  holding = false;
  /** Derivations still to refuse as the hasher's full queue would (503 with Retry-After). */
  busy = 0;
  readonly #held: (() => void)[] = [];
  get held(): number {
    return this.#held.length;
  }
  async hash(password: string): Promise<string> {
    if (this.busy > 0) {
      this.busy--;
      throw new HashingBusy();
    }
    if (this.holding) await new Promise<void>((resolve) => this.#held.push(resolve));
    return `held$${password}`;
  }
  async verify(password: string, encoded: string): Promise<boolean> {
    return encoded === `held$${password}`;
  }
  release(): void {
    this.holding = false;
    for (const r of this.#held.splice(0)) r();
  }
}

describe('parsePrefer (RFC 7240 section 2)', () => {
  it('comma-separated preferences, names in any case, several fields, the first occurrence counts, wait in seconds', () => {
    assert.deepEqual(parsePrefer('respond-async'), { respondAsync: true });
    assert.deepEqual(parsePrefer('return=minimal, RESPOND-ASYNC ,wait=5'), { respondAsync: true, wait: 5 });
    assert.deepEqual(parsePrefer(['wait=3', 'Respond-Async; foo=bar']), { respondAsync: true, wait: 3 });
    assert.deepEqual(parsePrefer('wait=2, wait=9, respond-async'), { respondAsync: true, wait: 2 });
    assert.deepEqual(parsePrefer('foo="a, respond-async", wait=x'), { respondAsync: false });
    assert.deepEqual(parsePrefer('respond-asynchronously'), { respondAsync: false });
    assert.deepEqual(parsePrefer(undefined), { respondAsync: false });
  });
});

for (const engine of engines) {
  describe(`asynchronous requests (${engine.name})`, () => {
    let t: TestApp;
    const kdf = new HeldKdf();
    before(async () => {
      t = await createTestApp({ engine, deps: { asyncRequests: { tickMs: 20, pruneMs: 20 }, passwordKdf: kdf } });
    });
    after(() => t.close());

    const statusOf = async (txn: string, prefix = '/v2/scim'): Promise<Json> => {
      const r = await t.request('GET', `${prefix}/AsyncRequests/${txn}`);
      assert.equal(r.statusCode, 200, r.body);
      return json(r);
    };
    const done = async (txn: string): Promise<Json> => {
      await until(async () => (await statusOf(txn)).status === 'done', `request ${txn} done`);
      return statusOf(txn);
    };
    const accepted = (r: LightMyRequestResponse, prefix = '/v2/scim'): string => {
      assert.equal(r.statusCode, 202, r.body);
      assert.equal(r.body, '', 'RFC 9967: the 202 has no body');
      const txn = String(r.headers['set-txn']);
      assert.match(txn, /^[0-9a-f]{32}$/);
      assert.equal(r.headers['preference-applied'], 'respond-async');
      assert.equal(r.headers.location, `${BASE_URL}${prefix}/AsyncRequests/${txn}`);
      assert.equal(r.headers['retry-after'], '1');
      return txn;
    };
    const feed = async (): Promise<Json[]> => json(await t.request('GET', '/v2/events?after=0&limit=1000')).events as Json[];

    it('POST with Prefer: respond-async: 202, the status URL queued, running, then done, the user created, its asyncresp event with the txn', async () => {
      kdf.holding = true;
      const first = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'held@acme.example', password: 'a long enough password' }, ASYNC));
      await until(() => kdf.held === 1, 'the first request running, held in its password derivation');
      const running = await statusOf(first);
      assert.equal(running.status, 'running');
      const second = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'second@acme.example' }, ASYNC));
      const queuedAnswer = await t.request('GET', `/v2/scim/AsyncRequests/${second}`);
      assert.equal(queuedAnswer.headers['retry-after'], '1');
      const queued = json(queuedAnswer);
      assert.deepEqual({ ...queued, accepted: undefined }, {
        schemas: ['urn:rollcall:params:scim:api:messages:2.0:AsyncRequest'],
        id: second,
        status: 'queued',
        method: 'POST',
        path: '/Users',
        operations: 1,
        completed: 0,
        accepted: undefined,
      }, 'behind the team\'s running request');
      kdf.release();

      const firstDone = await done(first);
      const secondDone = await done(second);
      const response = firstDone.response as Json;
      assert.equal(response.method, 'POST');
      assert.equal(response.status, '201');
      assert.match(String(response.location), /\/v2\/scim\/Users\/[A-Z0-9]{20}$/);
      assert.equal(response.version, 'W/"1"');
      assert.equal(firstDone.completed, 1);
      assert.ok(typeof firstDone.finished === 'string');
      assert.equal((secondDone.response as Json).status, '201');

      const id = String(response.location).split('/').pop()!;
      const user = await t.request('GET', `/v2/scim/Users/${id}`);
      assert.equal(user.statusCode, 200);
      assert.equal(json(user).userName, 'held@acme.example');

      const events = await feed();
      const async = events.filter((e) => e.change === 'asyncresp');
      const ofFirst = async.filter((e) => e.txn === first);
      assert.equal(ofFirst.length, 1, 'one asyncresp event per request');
      assert.equal(ofFirst[0]!.event, ASYNCRESP);
      assert.equal(ofFirst[0]!.id, id);
      assert.deepEqual(ofFirst[0]!.outcome, { method: 'POST', version: 'W/"1"', location: response.location, status: '201' });
      const create = events.find((e) => e.change === 'create' && e.id === id);
      assert.equal(create?.txn, first, 'the write\'s own event carries the txn');
      assert.equal(async.filter((e) => e.txn === second).length, 1);
    });

    it('a failing write (409 uniqueness): the error is the outcome and the event\'s response; nothing is created twice', async () => {
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'dup@acme.example' })).statusCode, 201);
      const txn = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'dup@acme.example' }, ASYNC));
      const status = await done(txn);
      const response = status.response as Json;
      assert.equal(response.status, '409');
      assert.equal((response.response as Json).scimType, 'uniqueness');
      assert.equal('location' in response, false, 'a failed POST has no location');
      const event = (await feed()).find((e) => e.txn === txn && e.change === 'asyncresp')!;
      assert.equal((event.outcome as Json).status, '409');
      assert.equal(((event.outcome as Json).response as Json).scimType, 'uniqueness');
      assert.equal(event.id, '', 'nothing created: the event names the endpoint');
      const list = json(await t.request('GET', '/v2/scim/Users?filter=userName%20eq%20%22dup@acme.example%22'));
      assert.equal(list.totalResults, 1);
    });

    it('a team\'s requests run in order: three PATCHes of one user apply as sent', async () => {
      const created = json(await t.request('POST', '/v2/scim/Users', { userName: 'order@acme.example' }));
      const id = String(created.id);
      const txns: string[] = [];
      for (const title of ['one', 'two', 'three']) {
        txns.push(accepted(await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: title }] }, ASYNC)));
      }
      for (const txn of txns) assert.equal(((await done(txn)).response as Json).status, '200');
      const user = json(await t.request('GET', `/v2/scim/Users/${id}`));
      assert.equal(user.title, 'three');
      assert.equal((user.meta as Json).version, 'W/"4"');
      const patches = (await feed()).filter((e) => e.change === 'patch' && e.id === id);
      assert.deepEqual(patches.map((e) => e.txn), txns, 'applied in the order sent');
      assert.deepEqual(patches.map((e) => e.version), ['W/"2"', 'W/"3"', 'W/"4"']);
    });

    it('an asynchronous Bulk: one asyncresp event per operation, txn <Set-Txn>:<i> by the request\'s index whatever the execution order; the BulkResponse at the status URL', async () => {
      const bulk = {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [
          { method: 'POST', path: '/Groups', bulkId: 'g', data: { displayName: 'Bulk group', members: [{ value: 'bulkId:u' }] } },
          { method: 'POST', path: '/Users', bulkId: 'u', data: { userName: 'bulk@acme.example' } },
          { method: 'PATCH', path: '/Users/NOSUCHUSER000000000', data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'x' }] } },
        ],
      };
      const txn = accepted(await t.request('POST', '/v2/scim/Bulk', bulk, ASYNC));
      const status = await done(txn);
      assert.equal(status.operations, 3);
      assert.equal(status.completed, 3);
      assert.equal(status.path, '/Bulk');
      const response = status.response as Json;
      assert.deepEqual(response.schemas, ['urn:ietf:params:scim:api:messages:2.0:BulkResponse']);
      const ops = response.Operations as Json[];
      assert.deepEqual(ops.map((o) => [o.method, o.bulkId, o.status]), [['POST', 'g', '201'], ['POST', 'u', '201'], ['PATCH', undefined, '404']]);
      const events = await feed();
      const async = events.filter((e) => e.change === 'asyncresp' && String(e.txn).startsWith(`${txn}:`));
      assert.deepEqual(async.map((e) => e.txn).sort(), [`${txn}:0`, `${txn}:1`, `${txn}:2`]);
      assert.deepEqual(async.map((e) => e.txn), [`${txn}:1`, `${txn}:0`, `${txn}:2`], 'the user POST ran first: the group references it');
      const byTxn = new Map(async.map((e) => [e.txn, e.outcome as Json]));
      assert.equal(byTxn.get(`${txn}:0`)!.status, '201');
      assert.equal(byTxn.get(`${txn}:0`)!.bulkId, 'g');
      assert.equal(byTxn.get(`${txn}:2`)!.status, '404');
      assert.equal((byTxn.get(`${txn}:2`)!.response as Json).status, '404');
      const groupId = String(ops[0]!.location).split('/').pop();
      const groupCreate = events.find((e) => e.change === 'create' && e.id === groupId);
      assert.equal(groupCreate?.txn, `${txn}:0`, 'the operation\'s own event carries <txn>:<i>');
      const group = json(await t.request('GET', `/v2/scim/Groups/${groupId}`));
      assert.equal((group.members as Json[]).length, 1);
    });

    it('a Bulk that fails its checks is answered synchronously with its error', async () => {
      const r = await t.request('POST', '/v2/scim/Bulk', { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'] }, ASYNC);
      assert.equal(r.statusCode, 400, r.body);
      assert.equal(r.headers['preference-applied'], undefined);
    });

    it('PUT, DELETE and the /scim alias; a failed PATCH of an unknown user answers 404 in its outcome', async () => {
      const id = String(json(await t.request('POST', '/scim/Users', { userName: 'alias@acme.example' })).id);
      const put = accepted(await t.request('PUT', `/scim/Users/${id}?attributes=userName`, { userName: 'alias2@acme.example' }, ASYNC), '/scim');
      await done(put);
      const putStatus = await statusOf(put, '/scim');
      assert.equal((putStatus.response as Json).status, '200');
      assert.equal(json(await t.request('GET', `/v2/scim/Users/${id}`)).userName, 'alias2@acme.example');
      const del = accepted(await t.request('DELETE', `/v2/scim/Users/${id}`, undefined, ASYNC));
      assert.equal(((await done(del)).response as Json).status, '204');
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 404);
      const missing = accepted(await t.request('PATCH', '/v2/scim/Users/NOSUCHUSER000000000', { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'x' }] }, ASYNC));
      const outcome = (await done(missing)).response as Json;
      assert.equal(outcome.status, '404');
      assert.equal((outcome.response as Json).status, '404');
    });

    it('wait=N: the outcome answered synchronously when it came in time, without Preference-Applied; else the 202', async () => {
      const r = await t.request('POST', '/v2/scim/Users', { userName: 'waited@acme.example' }, { prefer: 'respond-async, wait=10' });
      assert.equal(r.statusCode, 201, r.body);
      assert.equal(r.headers['preference-applied'], undefined);
      assert.equal(json(r).userName, 'waited@acme.example');
      assert.equal(r.headers.location, (json(r).meta as Json).location);
      assert.equal(r.headers.etag, 'W/"1"');

      kdf.holding = true;
      const slow = t.request('POST', '/v2/scim/Users', { userName: 'slow@acme.example', password: 'a long enough password' }, { prefer: 'respond-async, wait=1' });
      const answer = await slow;
      const txn = accepted(answer);
      kdf.release();
      assert.equal(((await done(txn)).response as Json).status, '201');
    });

    it('wait=N over a real connection: the wait lasts until the outcome (the request\'s body being read is no client gone)', async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (t.app.server.address() as AddressInfo).port;
      const r = await fetch(`http://127.0.0.1:${port}/v2/scim/Users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/scim+json', prefer: 'respond-async, wait=10' },
        body: JSON.stringify({ userName: 'socket-waited@acme.example' }),
      });
      assert.equal(r.status, 201, await r.clone().text());
      assert.equal(r.headers.get('preference-applied'), null);
      assert.equal(((await r.json()) as Json).userName, 'socket-waited@acme.example');
    });

    it('over the team\'s cap (async.queued, async.bytes): answered synchronously, without Preference-Applied', async () => {
      const other = await t.addTeam('capped');
      await setTeamLimits(t.storage.db, other.team.id, JSON.stringify({ 'async.queued': 1 }));
      const as = (method: string, url: string, body?: unknown) =>
        t.app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json', prefer: 'respond-async' }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
      kdf.holding = true;
      accepted(await as('POST', '/v2/scim/Users', { userName: 'first@capped.example', password: 'a long enough password' }));
      const over = await as('POST', '/v2/scim/Users', { userName: 'over@capped.example' });
      assert.equal(over.statusCode, 201, over.body);
      assert.equal(over.headers['preference-applied'], undefined);
      assert.equal(over.headers['set-txn'], undefined);
      kdf.release();

      const small = await t.addTeam('small');
      await setTeamLimits(t.storage.db, small.team.id, JSON.stringify({ 'async.bytes': 16 }));
      const big = await t.app.inject({ method: 'POST', url: '/v2/scim/Groups', headers: { authorization: `Bearer ${small.token}`, 'content-type': 'application/scim+json', prefer: 'respond-async' }, payload: JSON.stringify({ displayName: 'A group name longer than sixteen bytes' }) });
      assert.equal(big.statusCode, 201, big.body);
      assert.equal(big.headers['preference-applied'], undefined);
    });

    it('concurrent accepts of one team never pass its cap', async () => {
      const other = await t.addTeam('racing');
      await setTeamLimits(t.storage.db, other.team.id, JSON.stringify({ 'async.queued': 3 }));
      const send = (userName: string, password?: string) =>
        t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json', prefer: 'respond-async' }, payload: JSON.stringify({ userName, ...(password ? { password } : {}) }) });
      kdf.holding = true;
      const head = accepted(await send('head@racing.example', 'a long enough password'));
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => send(`racer${i}@racing.example`)));
      const statuses = answers.map((a) => a.statusCode).sort();
      assert.deepEqual(statuses, [201, 201, 201, 201, 202, 202], 'two more queued behind the running one (cap 3), the rest answered synchronously');
      kdf.release();
      const status = () => t.app.inject({ method: 'GET', url: `/v2/scim/AsyncRequests/${head}`, headers: { authorization: `Bearer ${other.token}` } });
      await until(async () => (await status()).json().status === 'done', 'the head done');
    });

    it('another team cannot read the status URL (404), nor an unknown txn', async () => {
      const txn = accepted(await t.request('POST', '/v2/scim/Groups', { displayName: 'Mine' }, ASYNC));
      await done(txn);
      const other = await t.addTeam('nosy');
      const r = await t.app.inject({ method: 'GET', url: `/v2/scim/AsyncRequests/${txn}`, headers: { authorization: `Bearer ${other.token}` } });
      assert.equal(r.statusCode, 404);
      assert.equal((r.json() as Json).status, '404');
      assert.equal((await t.request('GET', '/v2/scim/AsyncRequests/0123456789abcdef0123456789abcdef')).statusCode, 404);
      assert.equal((await t.request('GET', '/v2/scim/AsyncRequests/not-a-txn')).statusCode, 404);
      assert.equal((await t.app.inject({ method: 'GET', url: `/v2/scim/AsyncRequests/${txn}` })).statusCode, 401);
    });

    it('searches, DELETE by filter, catalog endpoints and bad bodies with Prefer: answered synchronously', async () => {
      const search = await t.request('POST', '/v2/scim/Users/.search', { schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'], filter: 'userName eq "nobody"' }, ASYNC);
      assert.equal(search.statusCode, 200);
      assert.equal(search.headers['preference-applied'], undefined);
      const catalog = await t.request('POST', '/v2/scim/Roles', { value: 'x' }, ASYNC);
      assert.ok(catalog.statusCode === 404 || catalog.statusCode === 405, catalog.body);
      assert.equal(catalog.headers['preference-applied'], undefined);
      const byFilter = await t.request('DELETE', '/v2/scim/Users?filter=userName%20eq%20%22nobody%22', undefined, ASYNC);
      assert.notEqual(byFilter.statusCode, 202, byFilter.body);
      assert.equal(byFilter.headers['preference-applied'], undefined);
      const bad = await t.request('POST', '/v2/scim/Users', '{"userName":', ASYNC);
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.headers['preference-applied'], undefined);
    });

    it('a done request keeps no request text: the password sent is in no stored row, status document or event', async () => {
      const secret = 'S3cret-kept-nowhere!';
      const txn = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'secret@acme.example', password: secret }, ASYNC));
      const status = await done(txn);
      assert.equal((status.response as Json).status, '201');
      assert.deepEqual([status.method, status.path], ['POST', '/Users']);
      const row = await requestOfTeam(t.storage.db, t.team.id, txn);
      assert.equal(row?.request, '', 'the request text is cleared in the finish');
      assert.ok(!JSON.stringify(row).includes(secret), 'no column holds the password');
      const steps = await t.storage.db.selectFrom('async_request_steps').select('outcome').where('request_id', '=', txn).execute();
      assert.ok(!JSON.stringify(steps).includes(secret));
      assert.ok(!JSON.stringify(status).includes(secret));
      const events = (await feed()).filter((e) => e.txn === txn);
      assert.equal(events.filter((e) => e.change === 'asyncresp').length, 1);
      assert.ok(!JSON.stringify(events).includes(secret), 'neither the asyncresp event nor the create event');
    });

    it('answers of routes that honour Prefer carry Vary: Prefer', async () => {
      const sync = await t.request('POST', '/v2/scim/Users', { userName: 'vary@acme.example' });
      assert.equal(sync.statusCode, 201);
      assert.match(String(sync.headers.vary), /prefer/i);
      const queued = await t.request('POST', '/v2/scim/Users', { userName: 'vary2@acme.example' }, ASYNC);
      accepted(queued);
      assert.match(String(queued.headers.vary), /prefer/i);
    });

    it('a refusal for now (the password hasher busy, 503 with Retry-After) is not the answer: the write runs again and succeeds', async () => {
      kdf.busy = 1;
      const txn = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'busy@acme.example', password: 'a long enough password' }, ASYNC));
      const status = await done(txn);
      assert.equal(kdf.busy, 0, 'the first run was refused');
      assert.equal((status.response as Json).status, '201', 'the second run created the user');
      const events = (await feed()).filter((e) => e.txn === txn && e.change === 'asyncresp');
      assert.deepEqual(events.map((e) => (e.outcome as Json).status), ['201'], 'one event, the final answer');
    });

    it('a refusal for now becomes the answer only after MAX_FAILURES failures of the step', async () => {
      kdf.holding = true;
      const blocker = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'blocker2@acme.example', password: 'a long enough password' }, ASYNC));
      await until(() => kdf.held === 1, 'the blocker running');
      const txn = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'busy-last@acme.example', password: 'a long enough password' }, ASYNC));
      // As if it had already failed MAX_FAILURES - 1 times (each after a backoff, over minutes).
      await t.storage.db.updateTable('async_requests').set({ failures: MAX_FAILURES - 1 }).where('id', '=', txn).execute();
      kdf.busy = 1;
      kdf.release();
      await done(blocker);
      const status = await done(txn);
      assert.equal((status.response as Json).status, '503', 'the last refusal is recorded as the answer');
      assert.equal(kdf.busy, 0);
    });

    it('a Bulk operation refused for now runs again; the other operations keep their own answers (409 stays 409)', async () => {
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'taken@acme.example' })).statusCode, 201);
      kdf.busy = 1;
      const txn = accepted(await t.request('POST', '/v2/scim/Bulk', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [
          { method: 'POST', path: '/Users', bulkId: 'a', data: { userName: 'taken@acme.example' } },
          { method: 'POST', path: '/Users', bulkId: 'b', data: { userName: 'bulk-busy@acme.example', password: 'a long enough password' } },
        ],
      }, ASYNC));
      const status = await done(txn);
      const operations = (status.response as Json).Operations as Json[];
      assert.deepEqual(operations.map((o) => o.status), ['409', '201']);
      const events = (await feed()).filter((e) => String(e.txn).startsWith(`${txn}:`) && e.change === 'asyncresp');
      assert.deepEqual(events.map((e) => `${String(e.txn)} ${String((e.outcome as Json).status)}`).sort(), [`${txn}:0 409`, `${txn}:1 201`]);
    });

    it('a request whose token is revoked before it runs does not run: each operation answers 401', async () => {
      const token = await t.tokenFor(t.team.id, ['read', 'write']);
      const as = (method: string, url: string, body: unknown) =>
        t.app.inject({ method: method as 'POST', url, payload: JSON.stringify(body), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json', ...ASYNC } });
      kdf.holding = true;
      const blocker = accepted(await t.request('POST', '/v2/scim/Users', { userName: 'blocker@acme.example', password: 'a long enough password' }, ASYNC));
      await until(() => kdf.held === 1, 'the blocker running');
      const single = accepted(await as('POST', '/v2/scim/Users', { userName: 'revoked@acme.example' }));
      const bulk = accepted(await as('POST', '/v2/scim/Bulk', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [
          { method: 'POST', path: '/Users', bulkId: 'x', data: { userName: 'revoked-x@acme.example' } },
          { method: 'POST', path: '/Users', bulkId: 'y', data: { userName: 'revoked-y@acme.example' } },
        ],
      }));
      assert.equal(await revokeToken(t.storage.db, sha256(token), new Date().toISOString()), true);
      kdf.release();
      await done(blocker);
      const one = await done(single);
      assert.equal((one.response as Json).status, '401');
      assert.match(String(((one.response as Json).response as Json).detail), /revoked before it ran/);
      const many = await done(bulk);
      assert.deepEqual(((many.response as Json).Operations as Json[]).map((o) => o.status), ['401', '401']);
      const found = json(await t.request('GET', '/v2/scim/Users?filter=userName%20sw%20%22revoked%22'));
      assert.equal(found.totalResults, 0, 'nothing was written');
      const events = (await feed()).filter((e) => (String(e.txn).startsWith(single) || String(e.txn).startsWith(bulk)) && e.change === 'asyncresp');
      assert.deepEqual(events.map((e) => (e.outcome as Json).status), ['401', '401', '401']);
    });

    it('wait=: at most MAX_WAITERS_PER_TEAM waiters of a team per instance, the next answered at once; a client gone stops its wait', async () => {
      const queue = new AsyncQueue({ storage: t.storage, clock: t.clock });
      const gone = new AbortController();
      const txn = 'a'.repeat(32);
      let settled = 0;
      const waiting = Array.from({ length: MAX_WAITERS_PER_TEAM }, () => queue.waitFor(t.team.id, txn, 10, gone.signal).finally(() => settled++));
      await until(() => queue.waiters === MAX_WAITERS_PER_TEAM, 'the waiters registered');
      assert.equal(await queue.waitFor(t.team.id, txn, 10), undefined, 'one more is answered at once');
      assert.equal(settled, 0, 'while the others still wait');
      const other = queue.waitFor('another-team', txn, 10, AbortSignal.abort());
      assert.equal(await other, undefined);
      gone.abort();
      assert.deepEqual(await Promise.all(waiting), Array(MAX_WAITERS_PER_TEAM).fill(undefined));
      assert.equal(queue.waiters, 0);
    });

    it('done requests are pruned with the feed\'s retention (30 days): the status URL then answers 404', async () => {
      const txn = accepted(await t.request('POST', '/v2/scim/Groups', { displayName: 'Pruned' }, ASYNC));
      await done(txn);
      t.clock.advance(31 * 86_400_000);
      // A token of the new day (the suite's expired with the jump); the last test of the suite.
      const token = await t.tokenFor(t.team.id, ['read']);
      const read = () => t.app.inject({ method: 'GET', url: `/v2/scim/AsyncRequests/${txn}`, headers: { authorization: `Bearer ${token}` } });
      await until(async () => (await read()).statusCode === 404, 'the done request pruned');
      const steps = await t.storage.db.selectFrom('async_request_steps').select('request_id').where('request_id', '=', txn).execute();
      assert.equal(steps.length, 0, 'its steps pruned with it');
    });
  });
}

for (const engine of engines) {
  describe(`asynchronous requests: teams take turns (${engine.name})`, () => {
    let t: TestApp;
    const kdf = new HeldKdf();
    before(async () => {
      // One team at a time on this instance, so the turns are visible.
      t = await createTestApp({ engine, deps: { asyncRequests: { tickMs: 20, concurrency: 1 }, passwordKdf: kdf } });
    });
    after(() => t.close());

    it('a team with a long queue does not hold back another team\'s request: after each request, the next team\'s turn', async () => {
      const other = await t.addTeam('patient');
      const send = (token: string, userName: string, password?: string) =>
        t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json', prefer: 'respond-async' }, payload: JSON.stringify({ userName, ...(password ? { password } : {}) }) });
      kdf.holding = true;
      const busy: string[] = [String((await send(t.token, 'busy0@acme.example', 'a long enough password')).headers['set-txn'])];
      await until(() => kdf.held === 1, 'the busy team\'s first request running');
      for (let i = 1; i < 6; i++) busy.push(String((await send(t.token, `busy${i}@acme.example`)).headers['set-txn']));
      const patient = String((await send(other.token, 'patient@patient.example')).headers['set-txn']);
      kdf.release();
      const finished = async (token: string, txn: string): Promise<string> => {
        const read = async () => (await t.app.inject({ method: 'GET', url: `/v2/scim/AsyncRequests/${txn}`, headers: { authorization: `Bearer ${token}` } })).json() as Json;
        await until(async () => (await read()).status === 'done', `request ${txn} done`);
        return String((await read()).finished);
      };
      const patientDone = await finished(other.token, patient);
      const busyDone = [];
      for (const txn of busy) busyDone.push(await finished(t.token, txn));
      assert.ok(patientDone > busyDone[0]!, 'the running request finished first');
      assert.ok(patientDone < busyDone[1]!, 'the other team\'s request ran next, before the busy team\'s second');
    });
  });
}

/** Fails the first INSERT of an asynchronous request's step whose outcome is a 409: a database fault while a refusal is recorded. */
class FailRecordingOnce implements KyselyPlugin {
  armed = false;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (this.armed && node.kind === 'InsertQueryNode' && JSON.stringify(node.into).includes('async_request_steps') && JSON.stringify(node).includes('\\"status\\":\\"409\\"')) {
      this.armed = false;
      throw new Error('injected: the database failed while the step was recorded');
    }
    return node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

for (const engine of engines) {
  describe(`asynchronous requests: a fault while a refusal is recorded (${engine.name})`, () => {
    let t: TestApp;
    const kdf = new HeldKdf();
    const fault = new FailRecordingOnce();
    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => ({ ...s, db: s.db.withPlugin(fault) }), deps: { asyncRequests: { tickMs: 20 }, passwordKdf: kdf } });
    });
    after(() => t.close());

    it('the last failure of a step keeps the step\'s own answer (409 stays 409, never 500)', async () => {
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'taken@acme.example' })).statusCode, 201);
      kdf.holding = true;
      const blocker = String((await t.request('POST', '/v2/scim/Users', { userName: 'blocker@acme.example', password: 'a long enough password' }, ASYNC)).headers['set-txn']);
      await until(() => kdf.held === 1, 'the blocker running');
      const r = await t.request('POST', '/v2/scim/Bulk', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [
          { method: 'POST', path: '/Users', bulkId: 'a', data: { userName: 'taken@acme.example' } },
          { method: 'POST', path: '/Users', bulkId: 'b', data: { userName: 'fresh@acme.example' } },
        ],
      }, ASYNC);
      assert.equal(r.statusCode, 202);
      const txn = String(r.headers['set-txn']);
      // As if the step had already failed MAX_FAILURES - 1 times: this failure is its last.
      await t.storage.db.updateTable('async_requests').set({ failures: MAX_FAILURES - 1 }).where('id', '=', txn).execute();
      fault.armed = true;
      kdf.release();
      const statusOf = async (id: string) => json(await t.request('GET', `/v2/scim/AsyncRequests/${id}`));
      await until(async () => (await statusOf(blocker)).status === 'done' && (await statusOf(txn)).status === 'done', 'both done');
      assert.equal(fault.armed, false, 'the fault happened');
      const operations = ((await statusOf(txn)).response as Json).Operations as Json[];
      assert.deepEqual(operations.map((o) => o.status), ['409', '201']);
    });
  });
}
