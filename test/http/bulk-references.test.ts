/**
 * bulkId references (RFC 7644 3.7.2) in every position Rollcall resolves them, on both engines:
 * a group's members[].value, the enterprise extension's manager.value (RFC 7644 3.7.2:
 * "Extensions that include references to other resources MUST be handled in the same way"), a
 * PATCH operation's value, the path of a PUT, PATCH or DELETE (`/Groups/bulkId:g1`, a Rollcall
 * extension the RFC neither allows nor forbids), references to operations later in the request
 * (RFC 7644 3.7: the client's intent is preserved whatever the order), a chain of three; and the
 * references that cannot be resolved: an unknown bulkId, a cycle (RFC 7644 3.7.1), a reference to
 * a create that failed. Each is answered for its own operation, with a clear error, and leaves
 * nothing half-made.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { assertOpError, bulkBody, bulkOk, ENTERPRISE, GROUP, idOf, listAll, PATCH_OP, teamOf, USER } from '../support/bulk.ts';
import type { BulkResult, Json, TeamClient } from '../support/bulk.ts';

const postUser = (bulkId: string, userName: string, extra: Json = {}) => ({ method: 'POST', path: '/Users', bulkId, data: { schemas: [USER], userName, ...extra } });
const postGroup = (bulkId: string, displayName: string, members: string[] = []) => ({
  method: 'POST',
  path: '/Groups',
  bulkId,
  data: { schemas: [GROUP], displayName, members: members.map((value) => ({ value })) },
});
const managedBy = (ref: string): Json => ({ schemas: [USER, ENTERPRISE], [ENTERPRISE]: { manager: { value: ref } } });

/** The result for `bulkId` (the response need not follow the request's order). */
const byBulkId = (ops: readonly BulkResult[], bulkId: string): BulkResult => {
  const found = ops.filter((o) => o.bulkId === bulkId);
  assert.equal(found.length, 1, `one result for bulkId ${bulkId}: ${JSON.stringify(ops)}`);
  return found[0]!;
};
/** The result of the non-POST operation with `method` on `location`. */
const byLocation = (ops: readonly BulkResult[], method: string, location: string): BulkResult => {
  const found = ops.filter((o) => o.method === method && o.location === location);
  assert.equal(found.length, 1, `one ${method} result at ${location}: ${JSON.stringify(ops)}`);
  return found[0]!;
};

for (const engine of engines) {
  describe(`Bulk bulkId references (${engine.name})`, () => {
    let t: TestApp;
    let team: TeamClient;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      team = teamOf(t);
    });
    afterEach(() => t.close());

    const get = async (path: string): Promise<Json> => {
      const res = await t.request('GET', `/v2/scim${path}`);
      assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      return json(res);
    };
    const memberIds = async (groupId: string): Promise<string[]> => ((await get(`/Groups/${groupId}`)).members as Json[]).map((m) => String(m.value)).sort();
    const managerOf = async (userId: string): Promise<unknown> => (((await get(`/Users/${userId}`))[ENTERPRISE] as Json | undefined)?.manager as Json | undefined)?.value;
    const created = (ops: readonly BulkResult[], bulkId: string): string => {
      const op = byBulkId(ops, bulkId);
      assert.equal(op.status, '201', JSON.stringify(op));
      return idOf(op.location);
    };

    it('RFC 7644 3.7.2: members[].value may mix bulkId references and existing ids', async () => {
      const old = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'old' })).id);
      const ops = await bulkOk(team, bulkBody([postUser('u1', 'one'), postUser('u2', 'two'), postGroup('g1', 'Mixed', ['bulkId:u1', old, 'bulkId:u2'])]));
      const [u1, u2, g1] = [created(ops, 'u1'), created(ops, 'u2'), created(ops, 'g1')];
      assert.deepEqual(await memberIds(g1), [u1, u2, old].sort());
    });

    it('RFC 7644 3.7.2: the enterprise manager.value, in a POST and in a PUT', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([
          postUser('boss', 'boss'),
          postUser('emp', 'emp', managedBy('bulkId:boss')),
          postUser('other', 'other'),
          { method: 'PUT', path: '/Users/bulkId:other', data: { userName: 'other', ...managedBy('bulkId:boss') } },
        ]),
      );
      const boss = created(ops, 'boss');
      assert.equal(await managerOf(created(ops, 'emp')), boss);
      const other = created(ops, 'other');
      assert.equal(byLocation(ops, 'PUT', `${BASE_URL}/v2/scim/Users/${other}`).status, '200');
      assert.equal(await managerOf(other), boss);
    });

    it('a PATCH operation\'s value: members added by bulkId to an existing group, a manager set by bulkId', async () => {
      const group = String(json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Existing' })).id);
      const user = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'existing' })).id);
      const ops = await bulkOk(
        team,
        bulkBody([
          postUser('u1', 'one'),
          { method: 'PATCH', path: `/Groups/${group}`, data: { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: 'bulkId:u1' }] }] } },
          { method: 'PATCH', path: `/Users/${user}`, data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: `${ENTERPRISE}:manager`, value: { value: 'bulkId:u1' } }] } },
        ]),
      );
      const u1 = created(ops, 'u1');
      assert.match(byLocation(ops, 'PATCH', `${BASE_URL}/v2/scim/Groups/${group}`).status, /^20[04]$/);
      assert.equal(byLocation(ops, 'PATCH', `${BASE_URL}/v2/scim/Users/${user}`).status, '200');
      assert.deepEqual(await memberIds(group), [u1]);
      assert.equal(await managerOf(user), u1);
    });

    it('a PATCH operation\'s path filter may name a member by a quoted bulkId (members[value eq "bulkId:u1"]), even one created later in the request', async () => {
      const stays = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'stays' })).id);
      const ops = await bulkOk(
        team,
        bulkBody([
          { method: 'PATCH', path: '/Groups/bulkId:g1', data: { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'members[value eq "bulkId:u1"]' }] } },
          postGroup('g1', 'Filtered', ['bulkId:u1', stays]),
          postUser('u1', 'one'),
        ]),
      );
      const [u1, g1] = [created(ops, 'u1'), created(ops, 'g1')];
      assert.match(byLocation(ops, 'PATCH', `${BASE_URL}/v2/scim/Groups/${g1}`).status, /^20[04]$/);
      assert.deepEqual(await memberIds(g1), [stays], `${u1} was removed by the filter`);
    });

    it('the path of a PUT, PATCH and DELETE may name a resource by bulkId; its location is the permanent id', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([
          postUser('u1', 'one'),
          postGroup('g1', 'First'),
          postGroup('g2', 'Second'),
          { method: 'PUT', path: '/Groups/bulkId:g1', data: { schemas: [GROUP], displayName: 'First renamed' } },
          { method: 'PATCH', path: '/Groups/bulkId:g1', data: { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: 'bulkId:u1' }] }] } },
          { method: 'PATCH', path: '/Users/bulkId:u1', data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] } },
          { method: 'DELETE', path: '/Groups/bulkId:g2' },
        ]),
      );
      const [u1, g1, g2] = [created(ops, 'u1'), created(ops, 'g1'), created(ops, 'g2')];
      assert.equal(byLocation(ops, 'PUT', `${BASE_URL}/v2/scim/Groups/${g1}`).status, '200');
      assert.match(byLocation(ops, 'PATCH', `${BASE_URL}/v2/scim/Groups/${g1}`).status, /^20[04]$/);
      assert.equal(byLocation(ops, 'PATCH', `${BASE_URL}/v2/scim/Users/${u1}`).status, '200');
      assert.equal(byLocation(ops, 'DELETE', `${BASE_URL}/v2/scim/Groups/${g2}`).status, '204');
      const first = await get(`/Groups/${g1}`);
      assert.equal(first.displayName, 'First renamed');
      assert.deepEqual((first.members as Json[]).map((m) => m.value), [u1]);
      assert.equal((await get(`/Users/${u1}`)).title, 'Lead');
      assert.equal((await t.request('GET', `/v2/scim/Groups/${g2}`)).statusCode, 404);
      for (const op of ops) assert.equal(op.location?.includes('bulkId'), false, `no bulkId in a location: ${op.location}`);
    });

    it('PUT /Users/bulkId:u1/activate reactivates the user a DELETE of the same Bulk deactivated', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([postUser('u1', 'one'), { method: 'DELETE', path: '/Users/bulkId:u1' }, { method: 'PUT', path: '/Users/bulkId:u1/activate', data: {} }]),
      );
      const u1 = created(ops, 'u1');
      assert.deepEqual(ops.map((o) => o.status), ['201', '204', '200']);
      assert.equal(ops[2]!.location, `${BASE_URL}/v2/scim/Users/${u1}`, 'the activated user\'s location');
      const user = await t.request('GET', `/v2/scim/Users/${u1}`);
      assert.equal(user.statusCode, 200);
      assert.equal(json(user).active, true);
      assert.equal(user.headers.etag, ops[2]!.version);
    });

    it('RFC 7644 3.7: references to operations later in the request are resolved (dependency order)', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([
          { method: 'PATCH', path: '/Groups/bulkId:g1', data: { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: 'bulkId:u2' }] }] } },
          postGroup('g1', 'Early', ['bulkId:u1']),
          postUser('u1', 'one', managedBy('bulkId:u2')),
          postUser('u2', 'two'),
        ]),
      );
      assert.equal(ops.length, 4);
      for (const op of ops) assert.match(op.status, /^20[014]$/, JSON.stringify(op));
      const [u1, u2, g1] = [created(ops, 'u1'), created(ops, 'u2'), created(ops, 'g1')];
      assert.deepEqual(await memberIds(g1), [u1, u2].sort());
      assert.equal(await managerOf(u1), u2);
    });

    it('a chain of three, listed last to first: c managed by b, b managed by a, a', async () => {
      const ops = await bulkOk(team, bulkBody([postUser('c', 'c', managedBy('bulkId:b')), postUser('b', 'b', managedBy('bulkId:a')), postUser('a', 'a')]));
      const [a, b, c] = [created(ops, 'a'), created(ops, 'b'), created(ops, 'c')];
      assert.equal(await managerOf(c), b);
      assert.equal(await managerOf(b), a);
      assert.equal(await managerOf(a), undefined);
    });

    it('an unknown bulkId fails that operation alone, with an error naming it; the others commit', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([
          postUser('u1', 'one'),
          postGroup('g1', 'Ghosts', ['bulkId:u1', 'bulkId:nobody']),
          postUser('u2', 'two', managedBy('bulkId:nobody')),
          { method: 'DELETE', path: '/Users/bulkId:nobody' },
        ]),
      );
      created(ops, 'u1');
      // The RFC leaves this open; Rollcall answers 400 invalidValue, as a single request naming an unknown id would be.
      for (const op of [byBulkId(ops, 'g1'), byBulkId(ops, 'u2')]) {
        assert.equal(op.location, undefined, 'a failed POST has no location');
        assert.equal(assertOpError(op, '400', /bulkId:nobody/).scimType, 'invalidValue');
      }
      const del = ops.find((o) => o.method === 'DELETE');
      assert.ok(del, 'the DELETE is reported');
      assert.equal(assertOpError(del, '400', /bulkId:nobody/).scimType, 'invalidValue');
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName), ['one']);
      assert.deepEqual(await listAll(team, '/Groups'), []);
    });

    it('RFC 7644 3.7.1: a cycle (two users managing each other, a user managing itself) is answered 409 per operation; nothing of it is created', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([postUser('x', 'x', managedBy('bulkId:y')), postUser('y', 'y', managedBy('bulkId:x')), postUser('self', 'self', managedBy('bulkId:self')), postUser('free', 'free')]),
      );
      for (const bulkId of ['x', 'y', 'self']) {
        const op = byBulkId(ops, bulkId);
        assertOpError(op, '409', /circular|cycle/i);
        assert.equal(op.location, undefined);
      }
      created(ops, 'free');
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName), ['free']);
    });

    it('a reference to a create that failed fails the dependent operation with an error naming the failed bulkId', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([
          { method: 'POST', path: '/Users', bulkId: 'broken', data: { schemas: [USER], displayName: 'no userName' } },
          postGroup('g1', 'Depends', ['bulkId:broken']),
          { method: 'PATCH', path: '/Users/bulkId:broken', data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'x' }] } },
          postUser('ok', 'ok'),
        ]),
      );
      assertOpError(byBulkId(ops, 'broken'), '400');
      // Rollcall's choice: 409, the dependent operation not run, its detail naming the failed bulkId.
      assertOpError(byBulkId(ops, 'g1'), '409', /bulkId:broken/);
      const patch = ops.find((o) => o.method === 'PATCH');
      assert.ok(patch, 'the PATCH is reported');
      assertOpError(patch, '409', /bulkId:broken/);
      created(ops, 'ok');
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName), ['ok']);
      assert.deepEqual(await listAll(team, '/Groups'), []);
    });

    it('only reference values are references: a top-level string (displayName, title, externalId) or an extension\'s top-level string holding "bulkId:x" is stored as sent, as the same POST alone stores it', async () => {
      const ops = await bulkOk(
        team,
        bulkBody([
          postUser('u1', 'literal', { schemas: [USER, ENTERPRISE], title: 'bulkId:x', displayName: 'bulkId:u1', externalId: 'bulkId:nobody', [ENTERPRISE]: { employeeNumber: 'bulkId:y' } }),
          { ...postGroup('g1', 'bulkId:u1'), data: { schemas: [GROUP], displayName: 'bulkId:u1' } },
        ]),
      );
      const user = await get(`/Users/${created(ops, 'u1')}`);
      assert.equal(user.title, 'bulkId:x');
      assert.equal(user.displayName, 'bulkId:u1');
      assert.equal(user.externalId, 'bulkId:nobody');
      assert.equal((user[ENTERPRISE] as Json).employeeNumber, 'bulkId:y');
      assert.equal((await get(`/Groups/${created(ops, 'g1')}`)).displayName, 'bulkId:u1');
      // A PATCH replacing a top-level string is not a reference either; a path naming `manager.value` is.
      const id = created(ops, 'u1');
      const patched = await bulkOk(
        team,
        bulkBody([
          postUser('boss', 'boss'),
          { method: 'PATCH', path: `/Users/${id}`, data: { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'bulkId:boss' }, { op: 'replace', path: `${ENTERPRISE}:manager.value`, value: 'bulkId:boss' }] } },
        ]),
      );
      assert.equal(byLocation(patched, 'PATCH', `${BASE_URL}/v2/scim/Users/${id}`).status, '200');
      assert.equal((await get(`/Users/${id}`)).title, 'bulkId:boss');
      assert.equal(await managerOf(id), created(patched, 'boss'));
    });

    it('a password "bulkId:..." is never a reference: it is used as sent and never echoed', async () => {
      const password = 'bulkId:Hunter2-Correct-Horse';
      const res = await t.request('POST', '/v2/scim/Bulk', bulkBody([postUser('p1', 'pw', { password })]));
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(!res.body.includes(password), `the response does not echo the password: ${res.body}`);
      const op = byBulkId((json(res).Operations as BulkResult[]), 'p1');
      // The same POST alone answers the same status (201, or the password policy's 400 without the password in it).
      const alone = await t.request('POST', '/v2/scim/Users', { userName: 'pw-alone', password });
      assert.equal(op.status, String(alone.statusCode), `${res.body} vs ${alone.body}`);
      assert.ok(!alone.body.includes(password));
    });

    it('RFC 7644 3.7.2: two POSTs with the same bulkId ("unique within a bulk request"): the whole request is 400 and nothing runs', async () => {
      const res = await t.request('POST', '/v2/scim/Bulk', bulkBody([postUser('dup', 'one'), postUser('dup', 'two')]));
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).scimType, 'invalidValue');
      assert.match(String(json(res).detail), /dup/);
      assert.deepEqual(await listAll(team, '/Users'), []);
    });
  });
}
