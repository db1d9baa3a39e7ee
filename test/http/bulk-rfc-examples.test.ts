/**
 * RFC 7644 section 3.7 replayed: every request example of 3.7.1 (circular references), 3.7.2
 * (bulkId, the enterprise manager), 3.7.3 (response and failOnErrors) and 3.7.4 (limits) sent to
 * POST /v2/scim/Bulk of a real team, on both engines. The bodies are the RFC's, with the fewest
 * changes that make them valid against Rollcall, each said where it is made: ids of resources
 * the example assumes exist are replaced by users the test creates first, and versions by
 * their ETags. Each test checks the response's shape and values as the RFC shows them (statuses
 * as strings, method, bulkId, a location that GET answers, a version that is the ETag GET
 * returns) and what the directory holds afterwards.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { assertOpError, BULK_REQUEST, bulkOk, ENTERPRISE, ERROR, idOf, listAll, PATCH_OP, teamOf, USER } from '../support/bulk.ts';
import type { BulkResult, Json, TeamClient } from '../support/bulk.ts';

const USERS = `${BASE_URL}/v2/scim/Users/`;
const GROUPS = `${BASE_URL}/v2/scim/Groups/`;
const WEAK_ETAG = /^W\/"[^"]+"$/;

for (const engine of engines) {
  describe(`RFC 7644 3.7 examples replayed (${engine.name})`, () => {
    let t: TestApp;
    let team: TeamClient;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      team = teamOf(t);
    });
    afterEach(() => t.close());

    /** GET of a result's location: 200, and the ETag is the result's version. Returns the resource. */
    const getLocation = async (result: BulkResult | undefined, prefix: string): Promise<Json> => {
      assert.ok(result, 'the operation is reported');
      const location = String(result.location);
      assert.ok(location.startsWith(prefix), `location under ${prefix}: ${JSON.stringify(result)}`);
      const res = await t.request('GET', location.slice(BASE_URL.length));
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(result.version), WEAK_ETAG, 'version is a weak ETag');
      assert.equal(res.headers.etag, result.version, 'the version is the ETag GET returns');
      const resource = json(res);
      assert.equal((resource.meta as Json).location, location, 'location is the resource\'s meta.location');
      return resource;
    };

    /** A user created by a single request: its id and ETag. */
    const existing = async (body: Json): Promise<{ id: string; etag: string }> => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], ...body });
      assert.equal(res.statusCode, 201, res.body);
      return { id: String(json(res).id), etag: String(res.headers.etag) };
    };

    it('3.7.2: Alice and the group "Tour Guides" with bulkId:qwerty as a member: both created, the member is Alice', async () => {
      // Verbatim (RFC 7644 3.7.2).
      const ops = await bulkOk(team, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [
          { method: 'POST', path: '/Users', bulkId: 'qwerty', data: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'Alice' } },
          {
            method: 'POST',
            path: '/Groups',
            bulkId: 'ytrewq',
            data: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Tour Guides', members: [{ type: 'User', value: 'bulkId:qwerty' }] },
          },
        ],
      });
      // The RFC's 3.7.2 response prints status as {"code": "201"}; 3.7.3 and RFC 9967 use the string form, which Rollcall answers.
      assert.deepEqual(ops.map((o) => [o.method, o.bulkId, o.status]), [['POST', 'qwerty', '201'], ['POST', 'ytrewq', '201']]);
      const alice = await getLocation(ops[0], USERS);
      assert.equal(alice.userName, 'Alice');
      const guides = await getLocation(ops[1], GROUPS);
      assert.equal(guides.displayName, 'Tour Guides');
      assert.equal(guides.id, idOf(ops[1]!.location));
      // The RFC's GET of the group: the member is Alice's permanent id, with its $ref and type.
      const members = guides.members as Json[];
      assert.equal(members.length, 1);
      assert.deepEqual({ value: members[0]!.value, $ref: members[0]!.$ref, type: members[0]!.type }, { value: alice.id, $ref: `${USERS}${String(alice.id)}`, type: 'User' });
      assert.equal(JSON.stringify(guides).includes('bulkId'), false, 'no bulkId: reference is left in the stored group');
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName), ['Alice']);
      assert.deepEqual((await listAll(team, '/Groups')).map((g) => g.displayName), ['Tour Guides']);
    });

    it('3.7.2: the enterprise extension\'s manager.value "bulkId:qwerty" becomes Alice\'s id in Bob', async () => {
      // Verbatim (RFC 7644 3.7.2, the extension example).
      const ops = await bulkOk(team, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [
          { method: 'POST', path: '/Users', bulkId: 'qwerty', data: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'Alice' } },
          {
            method: 'POST',
            path: '/Users',
            bulkId: 'ytrewq',
            data: {
              schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
              userName: 'Bob',
              'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: '11250', manager: { value: 'bulkId:qwerty' } },
            },
          },
        ],
      });
      assert.deepEqual(ops.map((o) => [o.method, o.bulkId, o.status]), [['POST', 'qwerty', '201'], ['POST', 'ytrewq', '201']]);
      const alice = await getLocation(ops[0], USERS);
      const bob = await getLocation(ops[1], USERS);
      assert.equal(bob.userName, 'Bob');
      const enterprise = bob[ENTERPRISE] as Json;
      assert.equal(enterprise.employeeNumber, '11250');
      assert.equal((enterprise.manager as Json).value, alice.id, 'manager.value is Alice\'s permanent id');
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName).sort(), ['Alice', 'Bob']);
    });

    /**
     * RFC 7644 3.7.3's request, valid: the users it PUTs, PATCHes and DELETEs are created first
     * (their ids replace the RFC's), and their ETags replace the RFC's versions unless `stale`.
     * Fixes of the RFC's text: the POST's schema is the core User schema (the RFC prints
     * `urn:ietf:params:scim:api:messages:2.0:User`) unless `rfcSchema`; the PATCH's data is a
     * PatchOp message (the RFC prints `{[ ... ]}`, which is no JSON and has no schemas).
     */
    const example373 = async (options: { failOnErrors?: number; rfcSchema?: boolean; stale?: boolean; deleteId?: string }) => {
      const b7c = await existing({ userName: 'robert' });
      const d5d = await existing({ userName: 'david', nickName: 'Dee' });
      const e90 = await existing({ userName: 'erin' });
      const body = {
        schemas: [BULK_REQUEST],
        ...(options.failOnErrors !== undefined ? { failOnErrors: options.failOnErrors } : {}),
        Operations: [
          {
            method: 'POST',
            path: '/Users',
            bulkId: 'qwerty',
            data: { schemas: [options.rfcSchema ? 'urn:ietf:params:scim:api:messages:2.0:User' : USER], userName: 'Alice' },
          },
          {
            method: 'PUT',
            path: `/Users/${b7c.id}`,
            version: options.stale ? 'W/"3694e05e9dff591"' : b7c.etag,
            data: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], id: b7c.id, userName: 'Bob' },
          },
          {
            method: 'PATCH',
            path: `/Users/${d5d.id}`,
            version: options.stale ? 'W/"edac3253e2c0ef2"' : d5d.etag,
            data: { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'nickName' }, { op: 'add', path: 'userName', value: 'Dave' }] },
          },
          { method: 'DELETE', path: `/Users/${options.deleteId ?? e90.id}`, version: options.stale ? 'W/"0ee8add0a938e1a"' : e90.etag },
        ],
      };
      return { b7c, d5d, e90, body };
    };

    it('3.7.3: POST, PUT, PATCH and DELETE all succeed: 201, 200, 200, 204 with locations and versions; the directory holds the changes', async () => {
      const { b7c, d5d, e90, body } = await example373({ failOnErrors: 1 });
      const ops = await bulkOk(team, body);
      assert.deepEqual(ops.map((o) => [o.method, o.status]), [['POST', '201'], ['PUT', '200'], ['PATCH', '200'], ['DELETE', '204']]);
      assert.equal(ops[0]!.bulkId, 'qwerty');
      assert.deepEqual(ops.slice(1).map((o) => o.bulkId), [undefined, undefined, undefined], 'bulkId only where the request had one');
      const alice = await getLocation(ops[0], USERS);
      assert.equal(alice.userName, 'Alice');
      assert.equal(ops[1]!.location, `${USERS}${b7c.id}`);
      assert.equal((await getLocation(ops[1], USERS)).userName, 'Bob');
      assert.notEqual(ops[1]!.version, b7c.etag, 'the PUT moved the version');
      assert.equal(ops[2]!.location, `${USERS}${d5d.id}`);
      const dave = await getLocation(ops[2], USERS);
      assert.equal(dave.userName, 'Dave');
      assert.equal(dave.nickName, undefined, 'nickName removed');
      // RFC 7644 3.7.3: DELETE answers 204 with its location. The RFC's example shows no version;
      // Rollcall's DELETE of a user deactivates it, and the single DELETE answers the deactivated
      // user's ETag, so the operation carries that version (version 2: created, then deactivated).
      assert.equal(ops[3]!.location, `${USERS}${e90.id}`);
      assert.equal(ops[3]!.version, 'W/"2"');
      assert.equal(ops[3]!.response, undefined);
      assert.equal((await t.request('GET', `/v2/scim/Users/${e90.id}`)).statusCode, 404, 'the deleted user is gone from reads');
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName).sort(), ['Alice', 'Bob', 'Dave']);
    });

    it('3.7.3 failOnErrors 1: the first operation fails; the response holds that error alone and nothing else ran', async () => {
      // The POST keeps the RFC's schema URN, which is no schema of User: it fails as a single POST would.
      const { b7c, d5d, e90, body } = await example373({ failOnErrors: 1, rfcSchema: true });
      const single = await t.request('POST', '/v2/scim/Users', body.Operations[0]!.data);
      assert.equal(single.statusCode, 400);
      const ops = await bulkOk(team, body);
      assert.equal(ops.length, 1, `only the failed operation is reported: ${JSON.stringify(ops)}`);
      assert.equal(ops[0]!.method, 'POST');
      assert.equal(ops[0]!.bulkId, 'qwerty');
      assert.equal(ops[0]!.location, undefined, 'a failed POST has no location');
      const error = assertOpError(ops[0], '400');
      // RFC 7644 3.7.3: the status "that would have been returned if a single HTTP request would have been used".
      assert.deepEqual(error, json(single), 'the same error body as the single POST');
      // Nothing after the error ran: the three users are as created.
      for (const [u, name] of [[b7c, 'robert'], [d5d, 'david'], [e90, 'erin']] as const) {
        const res = await t.request('GET', `/v2/scim/Users/${u.id}`);
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers.etag, u.etag, `${name} unchanged`);
        assert.equal(json(res).userName, name);
      }
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName).sort(), ['david', 'erin', 'robert']);
    });

    it('3.7.3 without failOnErrors, every operation fails and each is reported: 400, 412, 412, 404, with locations except the POST', async () => {
      // The RFC's versions are stale for users the test created (412); the DELETE keeps the RFC's id, which names no user here (404).
      const rfcId = 'e9025315-6bea-44e1-899c-1e07454e468b';
      const { b7c, d5d, e90, body } = await example373({ rfcSchema: true, stale: true, deleteId: rfcId });
      const ops = await bulkOk(team, body);
      assert.deepEqual(ops.map((o) => o.method), ['POST', 'PUT', 'PATCH', 'DELETE']);
      assertOpError(ops[0], '400');
      assert.equal(ops[0]!.bulkId, 'qwerty');
      assert.equal(ops[0]!.location, undefined);
      assertOpError(ops[1], '412');
      assertOpError(ops[2], '412');
      assertOpError(ops[3], '404');
      // RFC 7644 3.7.3: "A "location" attribute that includes the resource's endpoint MUST be returned for all operations except for failed POST operations".
      assert.equal(ops[1]!.location, `${USERS}${b7c.id}`);
      assert.equal(ops[2]!.location, `${USERS}${d5d.id}`);
      assert.equal(ops[3]!.location, `${USERS}${rfcId}`);
      for (const u of [b7c, d5d, e90]) assert.equal((await t.request('GET', `/v2/scim/Users/${u.id}`)).headers.etag, u.etag, 'unchanged');
      assert.deepEqual((await listAll(team, '/Users')).map((u) => u.userName).sort(), ['david', 'erin', 'robert']);
    });

    it('3.7.1: Group A and Group B naming each other as members by bulkId: answered per operation, and no half-made group is left', async () => {
      // Verbatim (RFC 7644 3.7.1). Rollcall has no nested groups (members are Users), so these
      // groups could never hold each other; the cycle is refused before either is created.
      const ops = await bulkOk(team, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [
          { method: 'POST', path: '/Groups', bulkId: 'qwerty', data: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Group A', members: [{ type: 'Group', value: 'bulkId:ytrewq' }] } },
          { method: 'POST', path: '/Groups', bulkId: 'ytrewq', data: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Group B', members: [{ type: 'Group', value: 'bulkId:qwerty' }] } },
        ],
      });
      assert.deepEqual(ops.map((o) => [o.method, o.bulkId]).sort(), [['POST', 'qwerty'], ['POST', 'ytrewq']]);
      // RFC 7644 3.7.1: "MAY stop after a failed attempt and instead return HTTP status code 409 (Conflict)".
      for (const op of ops) {
        assertOpError(op, '409', /circular|cycle/i);
        assert.equal(op.location, undefined, 'a failed POST has no location');
      }
      const listed = await t.request('GET', `/v2/scim/Groups?filter=${encodeURIComponent('displayName sw "Group"')}`);
      assert.equal(json(listed).totalResults, 0, 'neither group was created');
    });

    it('3.7.4: a body over maxPayloadSize is 413 naming maxPayloadSize and its value; SPC bulk advertises both limits', async () => {
      const spc = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
      assert.deepEqual(spc.bulk, { supported: true, maxOperations: 1000, maxPayloadSize: 4194304 });
      // The RFC's example sends 4,294,967,296 bytes against a 1 MiB limit; here one byte over Rollcall's 4 MiB.
      const padded = JSON.stringify({ schemas: [BULK_REQUEST], Operations: [{ method: 'POST', path: '/Users', bulkId: 'a', data: { schemas: [USER], userName: 'a' } }], pad: '' });
      const body = padded.replace('"pad":""', `"pad":"${'x'.repeat(4194304 + 1 - padded.length)}"`);
      assert.equal(Buffer.byteLength(body), 4194305);
      const res = await t.request('POST', '/v2/scim/Bulk', body);
      assert.equal(res.statusCode, 413, res.body.slice(0, 300));
      const error = json(res);
      assert.deepEqual(error.schemas, [ERROR]);
      assert.equal(error.status, '413');
      assert.match(String(error.detail), /maxPayloadSize/);
      assert.match(String(error.detail), /4194304/);
      assert.deepEqual(await listAll(team, '/Users'), [], 'nothing ran');
    });
  });
}
