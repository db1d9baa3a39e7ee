/**
 * Failures inside a Bulk (RFC 7644 3.7, 3.7.3), on both engines: failOnErrors counts errors and
 * stops at the Nth, the later operations unrun and absent; without it every operation runs; a
 * failing operation leaves the others committed; every committed operation is exactly one audit
 * row and one feed event, a failed one none (DESIGN.md section 13: each operation its own
 * transaction, audit row and event); the same Bulk sent twice (a client retrying after a
 * dropped connection), one after the other or both at once, creates nothing twice: each create
 * answers 409 uniqueness; a stale version is 412 for its operation; a path no single write serves
 * is answered as the single request would be; another team's ids are 404 for each operation, as
 * for single requests, and the other team's resources stay as they were. Also: the message read
 * in any letter case as a PatchOp is, and the response's content type.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { assertOpError, auditRows, bulkBody, bulkOk, ENTERPRISE, feedEvents, GROUP, idOf, listAll, PATCH_OP, teamOf, USER } from '../support/bulk.ts';
import type { BulkResult, Json, TeamClient } from '../support/bulk.ts';

const postUser = (bulkId: string, userName: string, extra: Json = {}) => ({ method: 'POST', path: '/Users', bulkId, data: { schemas: [USER], userName, ...extra } });
/** A POST that fails validation (no userName): 400. */
const badUser = (bulkId: string) => ({ method: 'POST', path: '/Users', bulkId, data: { schemas: [USER], displayName: 'nameless' } });
const titled = (title: string) => ({ schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: title }] });

for (const engine of engines) {
  describe(`Bulk failures (${engine.name})`, () => {
    let t: TestApp;
    let team: TeamClient;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      team = teamOf(t);
    });
    afterEach(() => t.close());

    const userNames = async (): Promise<string[]> => (await listAll(team, '/Users')).map((u) => String(u.userName)).sort();
    const fiveOps = [postUser('u0', 'zero'), badUser('b1'), postUser('u2', 'two'), badUser('b3'), postUser('u4', 'four')];

    it('RFC 7644 3.7.3 failOnErrors 1: stops at the first error; the response holds the success before it and the error', async () => {
      const ops = await bulkOk(team, bulkBody(fiveOps, 1));
      assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), [['u0', '201'], ['b1', '400']]);
      assertOpError(ops[1], '400');
      assert.deepEqual(await userNames(), ['zero'], 'the operations after the error did not run');
    });

    it('failOnErrors 2: the second error stops it; the operation between the errors ran', async () => {
      const ops = await bulkOk(team, bulkBody(fiveOps, 2));
      assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), [['u0', '201'], ['b1', '400'], ['u2', '201'], ['b3', '400']]);
      assert.deepEqual(await userNames(), ['two', 'zero']);
    });

    it('RFC 7644 3.7: without failOnErrors (or with one not reached) every operation runs; each failure leaves the others committed', async () => {
      for (const [failOnErrors, prefix] of [[undefined, 'a'], [3, 'b']] as const) {
        const ops = await bulkOk(team, bulkBody(fiveOps.map((op) => ('userName' in op.data ? { ...op, data: { ...op.data, userName: `${prefix}-${op.data.userName}` } } : op)), failOnErrors));
        assert.deepEqual(ops.map((o) => [o.bulkId, o.status]), [['u0', '201'], ['b1', '400'], ['u2', '201'], ['b3', '400'], ['u4', '201']], `failOnErrors ${failOnErrors}`);
        for (const op of ops.filter((o) => o.status === '201')) {
          const res = await t.request('GET', op.location!.slice(BASE_URL.length));
          assert.equal(res.statusCode, 200, 'committed');
          assert.equal(res.headers.etag, op.version);
        }
      }
      assert.deepEqual(await userNames(), ['a-four', 'a-two', 'a-zero', 'b-four', 'b-two', 'b-zero']);
    });

    it('failOnErrors counts errors known before running (an unknown bulkId) like any other', async () => {
      const ops = await bulkOk(team, bulkBody([postUser('u0', 'zero', { schemas: [USER, ENTERPRISE], [ENTERPRISE]: { manager: { value: 'bulkId:nobody' } } }), postUser('u1', 'one')], 1));
      assert.equal(ops.length, 1);
      assertOpError(ops[0], '400', /bulkId:nobody/);
      assert.deepEqual(await userNames(), []);
    });

    it('failOnErrors that is no whole number of 1 or more refuses the whole request (400 invalidValue) before anything runs', async () => {
      for (const value of [0, -1, 1.5, '1', null]) {
        const res = await t.request('POST', '/v2/scim/Bulk', { ...bulkBody([postUser('u0', 'zero')]), failOnErrors: value });
        assert.equal(res.statusCode, 400, `failOnErrors ${JSON.stringify(value)}: ${res.body}`);
        assert.equal(json(res).scimType, 'invalidValue');
        assert.match(String(json(res).detail), /failOnErrors/);
      }
      assert.deepEqual(await userNames(), []);
    });

    it('DESIGN 13: each committed operation is one audit row and one feed event; a failed one is neither', async () => {
      const missing = 'ZZZZZZZZZZZZZZZZZZZZ';
      const sent = await t.request(
        'POST',
        '/v2/scim/Bulk',
        bulkBody([
          postUser('u1', 'one'),
          postUser('u2', 'two'),
          { method: 'POST', path: '/Groups', bulkId: 'g1', data: { schemas: [GROUP], displayName: 'Team', members: [{ value: 'bulkId:u1' }] } },
          { method: 'PATCH', path: '/Users/bulkId:u1', data: titled('Lead') },
          { method: 'PUT', path: '/Users/bulkId:u2', data: { schemas: [USER], userName: 'two', nickName: 'Deux' } },
          badUser('bad'),
          { method: 'PATCH', path: `/Users/${missing}`, data: titled('x') },
          { method: 'PATCH', path: '/Groups/bulkId:g1', data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'Team 2' }] } },
          { method: 'DELETE', path: '/Users/bulkId:u2' },
        ]),
        { 'x-request-id': 'bulk-audit-1' },
      );
      assert.equal(sent.statusCode, 200, sent.body);
      const ops = json(sent).Operations as BulkResult[];
      assert.deepEqual(ops.map((o) => o.status), ['201', '201', '201', '200', '200', '400', '404', '204', '204']);
      const [u1, u2, g1] = [idOf(ops[0]!.location), idOf(ops[1]!.location), idOf(ops[2]!.location)];
      const committed = [['User', u1], ['User', u2], ['Group', g1], ['User', u1], ['User', u2], ['Group', g1], ['User', u2]];
      const audit = await auditRows(t, t.team.id);
      assert.deepEqual(audit.map((a) => [a.resource_type, a.resource_id]), committed, `audit rows: ${JSON.stringify(audit)}`);
      assert.deepEqual(audit.map((a) => a.action), ['create', 'create', 'create', 'patch', 'replace', 'patch', 'deactivate']);
      const events = await feedEvents(team);
      assert.deepEqual(events.map((e) => [e.resourceType, e.id]), committed, `feed: ${JSON.stringify(events.map((e) => [e.change, e.resourceType, e.id]))}`);
      assert.deepEqual(events.map((e) => e.change), ['create', 'create', 'create', 'patch', 'put', 'patch', 'deactivate']);
      assert.equal(audit.some((a) => a.resource_id === missing), false);
      // Traceable to the Bulk request: its request id on every row and event.
      assert.deepEqual([...new Set(audit.map((a) => a.request_id))], ['bulk-audit-1']);
      assert.deepEqual([...new Set(events.map((e) => e.txn))], ['bulk-audit-1']);
    });

    it('a Bulk sent twice (a retry after a dropped connection) creates nothing twice: each create answers 409 uniqueness', async () => {
      const body = bulkBody([
        postUser('alice', 'alice'),
        postUser('bob', 'bob'),
        { method: 'POST', path: '/Groups', bulkId: 'plain', data: { schemas: [GROUP], displayName: 'Plain' } },
        { method: 'POST', path: '/Groups', bulkId: 'crew', data: { schemas: [GROUP], displayName: 'Crew', members: [{ value: 'bulkId:alice' }, { value: 'bulkId:bob' }] } },
      ]);
      const first = await bulkOk(team, body);
      assert.deepEqual(first.map((o) => o.status), ['201', '201', '201', '201']);
      const eventsAfterFirst = (await feedEvents(team)).length;
      const again = await bulkOk(team, body);
      assert.deepEqual(again.map((o) => o.bulkId), ['alice', 'bob', 'plain', 'crew']);
      for (const op of again.slice(0, 3)) {
        assert.equal(assertOpError(op, '409').scimType, 'uniqueness', JSON.stringify(op));
        assert.equal(op.location, undefined);
      }
      // Crew references the POSTs that failed, so it is not run (409, naming them).
      assertOpError(again[3], '409', /bulkId:(alice|bob)/);
      assert.deepEqual(await userNames(), ['alice', 'bob']);
      const groups = await listAll(team, '/Groups');
      assert.deepEqual(groups.map((g) => g.displayName).sort(), ['Crew', 'Plain']);
      const crew = groups.find((g) => g.displayName === 'Crew')!;
      assert.deepEqual(((crew.members as Json[]).map((m) => m.value) as string[]).sort(), [idOf(first[0]!.location), idOf(first[1]!.location)].sort());
      assert.equal((await feedEvents(team)).length, eventsAfterFirst, 'the retry wrote no event');
    });

    it('a retry sent while the first attempt still runs (both at once) creates each resource once: per create, one 201 and one 409', async () => {
      const body = bulkBody([
        ...Array.from({ length: 6 }, (_, i) => postUser(`u${i}`, `racer${i}`)),
        { method: 'POST', path: '/Groups', bulkId: 'g', data: { schemas: [GROUP], displayName: 'Racers' } },
      ]);
      const [a, b] = await Promise.all([bulkOk(team, body), bulkOk(team, body)]);
      for (let i = 0; i < 7; i++) {
        const pair = [a[i]!.status, b[i]!.status].sort();
        assert.deepEqual(pair, ['201', '409'], `operation ${i}: ${JSON.stringify([a[i], b[i]])}`);
      }
      assert.deepEqual(await userNames(), Array.from({ length: 6 }, (_, i) => `racer${i}`));
      assert.equal((await listAll(team, '/Groups')).length, 1);
      assert.equal((await auditRows(t, t.team.id)).length, 7, 'one audit row per resource created');
    });

    it('RFC 7644 3.7.3: a version that does not match is 412 for its operation; versions are checked when each operation runs', async () => {
      const user = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'vera' });
      const group = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Versioned' });
      const [uid, gid] = [String(json(user).id), String(json(group).id)];
      const [uTag, gTag] = [String(user.headers.etag), String(group.headers.etag)];
      const stale = 'W/"999"';
      const ops = await bulkOk(
        team,
        bulkBody([
          { method: 'PUT', path: `/Users/${uid}`, version: stale, data: { schemas: [USER], userName: 'vera2' } },
          { method: 'PATCH', path: `/Groups/${gid}`, version: stale, data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'X' }] } },
          { method: 'PATCH', path: `/Users/${uid}`, version: uTag, data: titled('Lead') },
          { method: 'DELETE', path: `/Users/${uid}`, version: uTag },
          { method: 'DELETE', path: `/Groups/${gid}`, version: gTag },
        ]),
      );
      assert.deepEqual(ops.map((o) => [o.method, o.status]), [['PUT', '412'], ['PATCH', '412'], ['PATCH', '200'], ['DELETE', '412'], ['DELETE', '204']]);
      for (const i of [0, 1, 3]) assertOpError(ops[i], '412');
      assert.equal(ops[0]!.location, `${BASE_URL}/v2/scim/Users/${uid}`);
      assert.equal(ops[1]!.location, `${BASE_URL}/v2/scim/Groups/${gid}`);
      const after = await t.request('GET', `/v2/scim/Users/${uid}`);
      assert.equal(after.statusCode, 200, 'the stale DELETE did not run');
      assert.deepEqual([json(after).userName, json(after).title, after.headers.etag], ['vera', 'Lead', ops[2]!.version]);
      assert.equal((await t.request('GET', `/v2/scim/Groups/${gid}`)).statusCode, 404);
    });

    it('RFC 7644 3.7.3: an operation on a path no single write serves is answered for that operation as the single request would be', async () => {
      const user = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'pathy' })).id);
      const cases: [string, string, Json | undefined][] = [
        ['POST', `/Users/${user}`, { schemas: [USER], userName: 'x' }],
        ['PATCH', '/Groups', { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'x' }] }],
        ['PUT', `/Users/${user}/deactivate`, {}],
        ['POST', '/Roles', { displayName: 'x' }],
        ['PUT', '/Entitlements/e5', { displayName: 'x' }],
        ['DELETE', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:User', undefined],
        ['POST', '/users', { schemas: [USER], userName: 'lower' }],
        ['PUT', '/Users/NOSUCHUSER/activate', {}],
      ];
      const ops = await bulkOk(team, bulkBody(cases.map(([method, path, data]) => ({ method, path, ...(method === 'POST' ? { bulkId: `b${path}` } : {}), ...(data ? { data } : {}) }))));
      assert.equal(ops.length, cases.length);
      for (const [i, [method, path, data]] of cases.entries()) {
        const single = await t.request(method, `/v2/scim${path}`, data);
        assert.ok(single.statusCode >= 400, `${method} ${path} fails alone`);
        const error = assertOpError(ops[i], String(single.statusCode));
        assert.equal(error.scimType, json(single).scimType, `${method} ${path}`);
      }
      // A Bulk inside a Bulk is no write operation: refused for itself, not run.
      const nested = await bulkOk(team, bulkBody([{ method: 'POST', path: '/Bulk', bulkId: 'inner', data: bulkBody([{ method: 'POST', path: '/Users', bulkId: 'x', data: { schemas: [USER], userName: 'nested' } }]) }]));
      assertOpError(nested[0], '404');
      assert.deepEqual(await userNames(), ['pathy']);
      assert.deepEqual((await auditRows(t, t.team.id)).length, 1, 'only the user created alone was recorded');
    });

    it('RFC 7643 2.1: a BulkRequest spelled in other cases (message URN, attribute names, method) is read as a PatchOp spelled so is', async () => {
      const patchTarget = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'cased' })).id);
      const patched = await t.request('PATCH', `/v2/scim/Users/${patchTarget}`, { SCHEMAS: [PATCH_OP.toLowerCase()], operations: [{ OP: 'Replace', PATH: 'title', VALUE: 'Lead' }] });
      assert.equal(patched.statusCode, 200, 'the single PATCH reads its message in any case');
      const ops = await bulkOk(team, {
        Schemas: ['urn:ietf:params:scim:api:messages:2.0:bulkrequest'],
        operations: [{ Method: 'post', Path: '/Users', BulkId: 'c1', Data: { schemas: [USER], userName: 'cased2' } }],
      });
      assert.deepEqual(ops.map((o) => [o.method, o.bulkId, o.status]), [['POST', 'c1', '201']]);
      assert.deepEqual(await userNames(), ['cased', 'cased2']);
    });

    it('a path with a trailing slash is served as the single routes serve it (POST /Users/, PATCH /Users/{id}/)', async () => {
      const single = await t.request('POST', '/v2/scim/Users/', { schemas: [USER], userName: 'alone' });
      assert.equal(single.statusCode, 201, 'the single route accepts the trailing slash');
      const id = String(json(single).id);
      assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}/`, titled('Alone'))).statusCode, 200);
      const ops = await bulkOk(team, bulkBody([{ ...postUser('s1', 'slashed'), path: '/Users/' }, { method: 'PATCH', path: `/Users/${id}/`, data: titled('Bulk') }]));
      assert.deepEqual(ops.map((o) => o.status), ['201', '200'], JSON.stringify(ops));
      assert.deepEqual(await userNames(), ['alone', 'slashed']);
    });

    it('the response is application/scim+json, or application/json when the request accepts only that', async () => {
      const scim = await t.request('POST', '/v2/scim/Bulk', bulkBody([postUser('u0', 'zero')]));
      assert.equal(scim.headers['content-type'], 'application/scim+json');
      const plain = await t.request('POST', '/v2/scim/Bulk', bulkBody([postUser('u1', 'one')]), { accept: 'application/json' });
      assert.equal(plain.headers['content-type'], 'application/json');
      assert.equal((json(plain).Operations as Json[])[0]!.status, '201');
    });

    it('another team\'s ids: PUT, PATCH and DELETE are 404 for each operation, a member id is refused as unknown; that team\'s resources are untouched', async () => {
      const beta = await t.addTeam('beta');
      const other = teamOf(t, beta.token);
      const bu = await other.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'theirs' });
      const bg = await other.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Theirs' });
      const [uid, gid] = [String(json(bu).id), String(json(bg).id)];
      const ops = await bulkOk(
        team,
        bulkBody([
          { method: 'PUT', path: `/Users/${uid}`, data: { schemas: [USER], userName: 'mine' } },
          { method: 'PATCH', path: `/Users/${uid}`, data: titled('x') },
          { method: 'DELETE', path: `/Users/${uid}` },
          { method: 'PUT', path: `/Groups/${gid}`, data: { schemas: [GROUP], displayName: 'Mine' } },
          { method: 'PATCH', path: `/Groups/${gid}`, data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: 'Mine' }] } },
          { method: 'DELETE', path: `/Groups/${gid}` },
          { method: 'POST', path: '/Groups', bulkId: 'g', data: { schemas: [GROUP], displayName: 'Borrowed', members: [{ value: uid }] } },
        ]),
      );
      const single = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Borrowed', members: [{ value: uid }] });
      assert.equal(ops.length, 7);
      for (const op of ops.slice(0, 6)) assertOpError(op, '404');
      assert.deepEqual(assertOpError(ops[6], String(single.statusCode)), json(single), 'the member is refused as a single POST refuses it');
      for (const [path, tag] of [[`/v2/scim/Users/${uid}`, bu.headers.etag], [`/v2/scim/Groups/${gid}`, bg.headers.etag]] as const) {
        const res = await other.request('GET', path);
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers.etag, tag, `${path} unchanged`);
      }
      assert.deepEqual(await listAll(team, '/Groups'), []);
      assert.equal((await auditRows(t, t.team.id)).length, 0, 'nothing was recorded for the team that sent it');
    });
  });
}
