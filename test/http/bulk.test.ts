/**
 * Issue 32 items 1 and 2, SCIM Bulk (RFC 7644 3.7) as a client sees it: bulkId references in
 * data and paths resolved in dependency order, an unknown or circular reference answered per
 * operation (3.7.1), failOnErrors stopping the run (3.7.3), a version per operation (If-Match),
 * each operation's own audit row and event, the limits (3.7.4: 413 naming maxOperations and
 * maxPayloadSize, before anything runs; the other routes keep 1 MiB), the bulk.concurrent budget
 * and the ServiceProviderConfig that advertises them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditEvents } from '../../src/admin.ts';
import { ScanGate } from '../../src/scim/scan-gate.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { seedCatalog } from '../support/catalog.ts';
import { adminDeps } from '../support/oauth.ts';

const BULK = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
const BULK_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:BulkResponse';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

interface OpResult {
  method: string;
  bulkId?: string;
  version?: string;
  location?: string;
  status: string;
  response?: { status: string; scimType?: string; detail: string; schemas: string[] };
}

const idOf = (location: string | undefined): string => String(location?.split('/').at(-1));

for (const engine of engines) {
  describe(`SCIM Bulk (${engine.name})`, () => {
    let t: TestApp;
    const gate = new ScanGate();
    before(async () => {
      t = await createTestApp({ engine, deps: { bulks: gate } });
    });
    after(() => t.close());

    const bulk = async (operations: unknown[], extra: Record<string, unknown> = {}, url = '/v2/scim/Bulk') => {
      const res = await t.request('POST', url, { schemas: [BULK], ...extra, Operations: operations });
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.deepEqual(body.schemas, [BULK_RESPONSE]);
      return body.Operations as OpResult[];
    };
    const userCount = async (name: string) => Number(json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`)).totalResults);

    it('RFC 7644 3.7.2: a group whose members reference a user created later in the request is created after it, with the id in place', async () => {
      const ops = await bulk([
        { method: 'POST', path: '/Groups', bulkId: 'guides', data: { schemas: [GROUP], displayName: 'Tour Guides', members: [{ type: 'User', value: 'bulkId:alice' }] } },
        { method: 'POST', path: '/Users', bulkId: 'alice', data: { schemas: [USER], userName: 'alice.bulk' } },
      ]);
      assert.deepEqual(ops.map((o) => [o.method, o.bulkId, o.status]), [['POST', 'guides', '201'], ['POST', 'alice', '201']], 'answered in request order');
      const alice = idOf(ops[1]!.location);
      assert.match(ops[0]!.location!, /^https:\/\/rollcall\.test\/v2\/scim\/Groups\//);
      assert.equal(ops[0]!.version, 'W/"1"');
      const group = json(await t.request('GET', new URL(ops[0]!.location!).pathname));
      assert.deepEqual((group.members as { value: string }[]).map((m) => m.value), [alice]);
    });

    it('a reference in a path (PATCH /Groups/bulkId:x) and in a PATCH value resolves to the created ids', async () => {
      const ops = await bulk([
        { method: 'PATCH', path: '/Groups/bulkId:team', data: { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: 'bulkId:bob' }] }] } },
        { method: 'POST', path: '/Groups', bulkId: 'team', data: { displayName: 'Path team' } },
        { method: 'POST', path: '/Users', bulkId: 'bob', data: { userName: 'bob.bulk' } },
      ]);
      assert.deepEqual(ops.map((o) => o.status), ['204', '201', '201'], 'a group PATCH without attributes answers 204, as the route does');
      const groupId = idOf(ops[1]!.location);
      assert.equal(idOf(ops[0]!.location), groupId);
      assert.equal(ops[0]!.version, 'W/"2"');
      const group = json(await t.request('GET', `/v2/scim/Groups/${groupId}`));
      assert.deepEqual((group.members as { value: string }[]).map((m) => m.value), [idOf(ops[2]!.location)]);
    });

    it('a quoted reference in a PATCH operation\'s path filter (members[value eq "bulkId:x"]) resolves too', async () => {
      const ops = await bulk([
        { method: 'POST', path: '/Users', bulkId: 'carol', data: { userName: 'carol.bulk' } },
        { method: 'POST', path: '/Users', bulkId: 'dan', data: { userName: 'dan.bulk' } },
        { method: 'POST', path: '/Groups', bulkId: 'pair', data: { displayName: 'Filter pair', members: [{ value: 'bulkId:carol' }, { value: 'bulkId:dan' }] } },
        { method: 'PATCH', path: '/Groups/bulkId:pair', data: { schemas: [PATCH], Operations: [{ op: 'remove', path: 'members[value eq "bulkId:carol"]' }] } },
      ]);
      assert.deepEqual(ops.map((o) => o.status), ['201', '201', '201', '204']);
      const group = json(await t.request('GET', new URL(ops[2]!.location!).pathname));
      assert.deepEqual((group.members as { value: string }[]).map((m) => m.value), [idOf(ops[1]!.location)]);
    });

    it('an unknown bulkId fails its operation with 400 invalidValue; a circular reference fails with 409 (3.7.1); the rest is committed', async () => {
      const ops = await bulk([
        { method: 'POST', path: '/Groups', bulkId: 'a', data: { displayName: 'Cycle A', members: [{ value: 'bulkId:b' }] } },
        { method: 'POST', path: '/Groups', bulkId: 'b', data: { displayName: 'Cycle B', members: [{ value: 'bulkId:a' }] } },
        { method: 'POST', path: '/Groups', bulkId: 'u', data: { displayName: 'Unknown ref', members: [{ value: 'bulkId:nobody' }] } },
        { method: 'POST', path: '/Users', bulkId: 'fine', data: { userName: 'fine.bulk' } },
      ]);
      assert.deepEqual(ops.map((o) => o.status), ['409', '409', '400', '201']);
      assert.match(ops[0]!.response!.detail, /circular reference/);
      assert.equal(ops[0]!.location, undefined, 'RFC 7644 3.7.3: a failed POST has no location');
      assert.equal(ops[2]!.response!.scimType, 'invalidValue');
      assert.match(ops[2]!.response!.detail, /bulkId:nobody/);
      assert.equal(ops[2]!.response!.status, '400');
      const groups = json(await t.request('GET', `/v2/scim/Groups?filter=${encodeURIComponent('displayName sw "Cycle" or displayName eq "Unknown ref"')}`));
      assert.equal(groups.totalResults, 0, 'no failed operation wrote anything');
      assert.equal(await userCount('fine.bulk'), 1);
    });

    it('an operation referencing a POST that failed is not run and answers 409 naming the bulkId', async () => {
      const ops = await bulk([
        { method: 'POST', path: '/Users', bulkId: 'broken', data: { displayName: 'no userName' } },
        { method: 'POST', path: '/Groups', bulkId: 'g', data: { displayName: 'Needs broken', members: [{ value: 'bulkId:broken' }] } },
      ]);
      assert.deepEqual(ops.map((o) => o.status), ['400', '409']);
      assert.match(ops[1]!.response!.detail, /bulkId:broken/);
    });

    it('RFC 7644 3.7.3 failOnErrors: the run stops at that many errors, and later operations are neither run nor answered', async () => {
      const ops = await bulk(
        [
          { method: 'POST', path: '/Users', bulkId: 'x1', data: { userName: 'foe.1' } },
          { method: 'DELETE', path: '/Users/no-such-user' },
          { method: 'POST', path: '/Users', bulkId: 'x2', data: {} },
          { method: 'POST', path: '/Users', bulkId: 'x3', data: { userName: 'foe.3' } },
        ],
        { failOnErrors: 2 },
      );
      assert.deepEqual(ops.map((o) => o.status), ['201', '404', '400']);
      assert.equal(ops[1]!.location, 'https://rollcall.test/v2/scim/Users/no-such-user');
      assert.equal(await userCount('foe.1'), 1);
      assert.equal(await userCount('foe.3'), 0, 'the operation after the stop did not run');
    });

    it('a version per operation is its If-Match: a stale one is 412 for that operation alone', async () => {
      const user = json(await t.request('POST', '/v2/scim/Users', { userName: 'versioned.bulk' }));
      const path = `/Users/${String(user.id)}`;
      const ops = await bulk([
        { method: 'PATCH', path, version: 'W/"7"', data: { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'Stale' }] } },
        { method: 'PUT', path, version: 'W/"1"', data: { userName: 'versioned.bulk', title: 'Fresh' } },
        { method: 'DELETE', path, version: 'W/"1"' },
      ]);
      assert.deepEqual(ops.map((o) => o.status), ['412', '200', '412']);
      assert.equal(ops[0]!.response!.status, '412');
      assert.equal(ops[1]!.version, 'W/"2"');
      const after = json(await t.request('GET', `/v2/scim${path}`));
      assert.equal(after.title, 'Fresh');
    });

    it('each operation is its own audit row and event, as the same request alone; a failed one leaves none', async () => {
      const feedEnd = async () => Number(json(await t.request('GET', '/v2/events?after=0&limit=1000')).next);
      const start = await feedEnd();
      const auditBefore = (await auditEvents(adminDeps(t), t.team.name, undefined, 10_000)).length;
      const res = await t.request(
        'POST',
        '/v2/scim/Bulk',
        {
          schemas: [BULK],
          Operations: [
            { method: 'POST', path: '/Users', bulkId: 'e1', data: { userName: 'events.bulk' } },
            { method: 'POST', path: '/Users', bulkId: 'dup', data: { userName: 'events.bulk' } },
            { method: 'PATCH', path: '/Users/bulkId:e1', data: { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] } },
            { method: 'POST', path: '/Groups', bulkId: 'eg', data: { displayName: 'Events group', members: [{ value: 'bulkId:e1' }] } },
            { method: 'DELETE', path: '/Groups/bulkId:eg' },
          ],
        },
        { 'x-request-id': 'bulk-req-1' },
      );
      const ops = json(res).Operations as OpResult[];
      assert.deepEqual(ops.map((o) => o.status), ['201', '409', '200', '201', '204']);
      assert.equal(ops[1]!.response!.scimType, 'uniqueness');
      const user = idOf(ops[0]!.location);
      const group = idOf(ops[3]!.location);
      const events = json(await t.request('GET', `/v2/events?after=${start}&limit=100`)).events as { change: string; resourceType: string; id: string; txn: string }[];
      assert.deepEqual(
        events.map((e) => [e.change, e.resourceType, e.id]),
        [
          ['create', 'User', user],
          ['patch', 'User', user],
          ['create', 'Group', group],
          ['delete', 'Group', group],
        ],
      );
      assert.ok(events.every((e) => e.txn === 'bulk-req-1'), 'each event carries the Bulk request id');
      const audit = (await auditEvents(adminDeps(t), t.team.name, undefined, 10_000)).slice(auditBefore);
      assert.deepEqual(audit.map((e) => [e.action, e.resourceType, e.resourceId, e.requestId]), [
        ['create', 'User', user, 'bulk-req-1'],
        ['patch', 'User', user, 'bulk-req-1'],
        ['create', 'Group', group, 'bulk-req-1'],
        ['delete', 'Group', group, 'bulk-req-1'],
      ]);
    });

    it('a malformed request is 400 naming the operation, and nothing runs', async () => {
      const cases: [unknown, string, RegExp][] = [
        [{ Operations: [] }, 'invalidSyntax', /BulkRequest/],
        [{ schemas: [BULK] }, 'invalidSyntax', /Operations/],
        [{ schemas: [BULK], Operations: [{ method: 'POST', path: '/Users', bulkId: 'ok', data: { userName: 'never.bulk' } }, { method: 'POST', path: '/Users', data: { userName: 'x' } }] }, 'invalidSyntax', /Operations\[1\].*bulkId/],
        [{ schemas: [BULK], Operations: [{ method: 'GET', path: '/Users' }] }, 'invalidValue', /Operations\[0\]\.method/],
        [{ schemas: [BULK], Operations: [{ method: 'PUT', path: '/Users/x' }] }, 'invalidSyntax', /Operations\[0\].*data/],
        [{ schemas: [BULK], Operations: [{ method: 'DELETE', path: 'Users/x' }] }, 'invalidValue', /Operations\[0\]\.path/],
        [{ schemas: [BULK], failOnErrors: 0, Operations: [] }, 'invalidValue', /failOnErrors/],
        [{ schemas: [BULK], Operations: [{ method: 'POST', path: '/Users', bulkId: 'same', data: { userName: 'never.bulk' } }, { method: 'POST', path: '/Groups', bulkId: 'same', data: { displayName: 'x' } }] }, 'invalidValue', /Operations\[1\]\.bulkId "same".*Operations\[0\]/],
      ];
      for (const [body, scimType, detail] of cases) {
        const res = await t.request('POST', '/v2/scim/Bulk', body);
        assert.equal(res.statusCode, 400, res.body);
        const error = json(res);
        assert.equal(error.scimType, scimType, String(error.detail));
        assert.match(String(error.detail), detail);
      }
      assert.equal(await userCount('never.bulk'), 0);
    });

    it('a path no route serves answers the route\'s 404 for that operation', async () => {
      const ops = await bulk([
        { method: 'POST', path: '/Widgets', bulkId: 'w', data: { name: 'x' } },
        { method: 'PATCH', path: '/Users', data: { schemas: [PATCH], Operations: [] } },
      ]);
      assert.deepEqual(ops.map((o) => o.status), ['404', '404']);
      assert.match(ops[0]!.response!.detail, /No SCIM endpoint POST \/Widgets/);
    });

    it('a write to one of the team\'s catalog endpoints answers the route\'s 405 for that operation', async () => {
      const other = await t.addTeam(`catalog-${engine.name}`);
      await seedCatalog(t.storage, other.team.id, { roles: [{ value: 'admin', displayName: 'Administrator' }], types: [] });
      const res = await t.request('POST', '/v2/scim/Bulk', { schemas: [BULK], Operations: [{ method: 'DELETE', path: '/Roles/admin' }, { method: 'POST', path: '/Roles', bulkId: 'r', data: { displayName: 'x' } }] }, { authorization: `Bearer ${other.token}` });
      assert.equal(res.statusCode, 200, res.body);
      const ops = json(res).Operations as OpResult[];
      assert.deepEqual(ops.map((o) => o.status), ['405', '405']);
      assert.match(ops[0]!.response!.detail, /read-only/);
    });

    it('RFC 7644 3.7.4: over maxOperations is 413 naming the limit, before any operation runs', async () => {
      const operations = Array.from({ length: 1001 }, (_, i) => ({ method: 'POST', path: '/Users', bulkId: `m${i}`, data: { userName: `many.${i}` } }));
      const res = await t.request('POST', '/v2/scim/Bulk', { schemas: [BULK], Operations: operations });
      assert.equal(res.statusCode, 413);
      const error = json(res);
      assert.equal(error.status, '413');
      assert.match(String(error.detail), /maxOperations of 1000/);
      assert.equal(await userCount('many.0'), 0);
    });

    it('RFC 7644 3.7.4: a body over maxPayloadSize (4 MiB) is 413 naming it; a 2 MiB Bulk is read; other routes keep 1 MiB', async () => {
      const padded = (bytes: number) => JSON.stringify({ schemas: [BULK], Operations: [{ method: 'DELETE', path: '/Users/padded', note: 'x'.repeat(bytes) }] });
      const over = await t.request('POST', '/v2/scim/Bulk', padded(4 * 1024 * 1024));
      assert.equal(over.statusCode, 413);
      assert.match(String(json(over).detail), /maxPayloadSize of 4194304 bytes/);
      const alias = await t.request('POST', '/scim/Bulk', padded(4 * 1024 * 1024));
      assert.equal(alias.statusCode, 413);
      assert.match(String(json(alias).detail), /maxPayloadSize/);

      const within = await t.request('POST', '/v2/scim/Bulk', padded(2 * 1024 * 1024));
      assert.equal(within.statusCode, 200, within.body);
      assert.deepEqual((json(within).Operations as OpResult[]).map((o) => o.status), ['404']);

      const single = await t.request('POST', '/v2/scim/Users', JSON.stringify({ userName: 'big.single', nickName: 'x'.repeat(2 * 1024 * 1024) }));
      assert.equal(single.statusCode, 413);
      assert.match(String(json(single).detail), /1 MiB/);
    });

    it('the /scim alias serves Bulk; a read-only token is refused with 403 (scope write)', async () => {
      const ops = await bulk([{ method: 'POST', path: '/Users', bulkId: 'al', data: { userName: 'alias.bulk' } }], {}, '/scim/Bulk');
      assert.equal(ops[0]!.status, '201');
      const readOnly = await t.tokenFor(t.team.id, ['read']);
      const res = await t.request('POST', '/v2/scim/Bulk', { schemas: [BULK], Operations: [] }, { authorization: `Bearer ${readOnly}` });
      assert.equal(res.statusCode, 403);
    });

    it('bulk.concurrent: with the team\'s places taken the next Bulk is 429 with Retry-After; another team\'s Bulk runs', async () => {
      const held = [gate.enter(t.team.id, 2), gate.enter(t.team.id, 2)];
      try {
        const res = await t.request('POST', '/v2/scim/Bulk', { schemas: [BULK], Operations: [{ method: 'POST', path: '/Users', bulkId: 'r', data: { userName: 'refused.bulk' } }] });
        assert.equal(res.statusCode, 429);
        assert.equal(res.headers['retry-after'], '1');
        assert.match(String(json(res).detail), /bulk\.concurrent/);
        assert.equal(await userCount('refused.bulk'), 0);
        const other = await t.addTeam(`other-${engine.name}`);
        const theirs = await t.request('POST', '/v2/scim/Bulk', { schemas: [BULK], Operations: [{ method: 'POST', path: '/Users', bulkId: 'o', data: { userName: 'other.bulk' } }] }, { authorization: `Bearer ${other.token}` });
        assert.equal(theirs.statusCode, 200, theirs.body);
      } finally {
        for (const release of held) release?.();
      }
      assert.equal(gate.held(t.team.id), 0, 'a finished Bulk gives its place back');
    });

    it('ServiceProviderConfig advertises bulk with its limits', async () => {
      const spc = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
      assert.deepEqual(spc.bulk, { supported: true, maxOperations: 1000, maxPayloadSize: 4194304 });
    });
  });
}
