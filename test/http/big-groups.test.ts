/**
 * Big groups (DESIGN.md section 3: a group of 100,000 members): a response that shows members
 * reads them in chunks and streams them, complete and in order (membership time, then user id),
 * as byte-exact JSON with the usual Content-Type and ETag, on every path that returns a group
 * (GET by id, GET list, POST /.search, PATCH with attributes, PUT, POST); a response that does
 * not show members reads no membership row at all; a read failing before the body starts is an
 * ordinary 500, one failing after it starts cuts the connection so that no client can take the
 * truncated body for a complete answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { addMembers, insertGroup } from '../../src/storage/repos/groups.ts';
import { insertUser } from '../../src/storage/repos/users.ts';
import type { UserRow } from '../../src/storage/repos/users.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { groupRow, userRow } from '../support/rows.ts';
import { TableReads } from '../support/storage-spy.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
/** Members of the big group (some deactivated, so hidden), joining in batches. */
const MEMBERS = 2600;
const BATCHES = 5;

type Json = Record<string, unknown>;

interface BigGroup {
  readonly id: string;
  /** The visible members' ids in the order responses show them. */
  readonly order: string[];
  readonly names: Map<string, string>;
  readonly userIds: string[];
}

/** Users and a group of MEMBERS members written through the storage layer (fast). */
async function seedBigGroup(t: TestApp): Promise<BigGroup> {
  // Before the test clock's start, so members added over HTTP join after these.
  const at = (s: number) => new Date(Date.parse('2025-12-31T00:00:00.000Z') + s * 1000).toISOString();
  const users: UserRow[] = Array.from({ length: MEMBERS }, (_, i) => {
    const userName = `member${String(i).padStart(5, '0')}@big.example`;
    const active = i % 26 === 7 ? 0 : 1;
    return userRow(t.team.id, userName, { active, created_at: at(0), updated_at: at(0) });
  });
  const groupId = newId();
  await t.storage.db.transaction().execute(async (trx) => {
    for (const u of users) await insertUser(trx, u);
    await insertGroup(trx, groupRow(t.team.id, 'Big', { id: groupId, created_at: at(0), updated_at: at(0) }));
    // Batch b joins at second BATCHES - b, so later batches come first; ids are random.
    for (let b = 0; b < BATCHES; b++) {
      const batch = users.filter((_, i) => i % BATCHES === b).map((u) => u.id);
      await addMembers(trx, t.team.id, groupId, batch, at(BATCHES - b));
    }
  });
  const order: string[] = [];
  for (let b = BATCHES - 1; b >= 0; b--) {
    order.push(...users.filter((u, i) => i % BATCHES === b && u.active === 1).map((u) => u.id).sort());
  }
  return { id: groupId, order, names: new Map(users.map((u) => [u.id, u.user_name])), userIds: users.map((u) => u.id) };
}

/** Whether a resource, or any resource of a list, carries `members`. */
const showsMembers = (body: Json): boolean =>
  Array.isArray(body.Resources) ? (body.Resources as Json[]).some((r) => 'members' in r) : 'members' in body;

const memberValue = (big: BigGroup, id: string) => ({ value: id, $ref: `${BASE_URL}/v2/scim/Users/${id}`, display: big.names.get(id), type: 'User' });

for (const engine of engines) {
  describe(`big groups on ${engine.name}`, () => {
    const reads = new TableReads('group_members');
    let t: TestApp;
    let big: BigGroup;

    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => reads.wrap(s) });
      big = await seedBigGroup(t);
    });
    after(() => t.close());

    /** The response body, checked to be the one canonical JSON text of what it holds. */
    const body = (res: { body: string }): Json => {
      const parsed = JSON.parse(res.body) as Json;
      assert.equal(res.body, JSON.stringify(parsed), 'no whitespace, no duplicate keys: exactly JSON.stringify of the resource');
      return parsed;
    };

    it('DESIGN 3: GET /Groups/{id} of a group of thousands returns every visible member, in order, read in chunks', async () => {
      reads.reset();
      const res = await t.request('GET', `/v2/scim/Groups/${big.id}`);
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      assert.equal(res.headers['content-type'], 'application/scim+json');
      assert.equal(res.headers.etag, 'W/"1"');
      const group = body(res);
      assert.deepEqual(group.members, big.order.map((id) => memberValue(big, id)));
      // The first chunk of 1000 before the response starts, then keyset chunks of 5000 (the last one short).
      const n = big.order.length;
      assert.equal(reads.count, n < 1000 ? 1 : 2 + Math.floor((n - 1000) / 5000), 'a first chunk of 1000, then chunks of 5000');
      // The same resource as without members, members added before meta (the order of fields).
      const without = json(await t.request('GET', `/v2/scim/Groups/${big.id}?excludedAttributes=members`));
      assert.deepEqual(Object.keys(group), [...Object.keys(without).filter((k) => k !== 'meta'), 'members', 'meta']);
      assert.deepEqual({ ...group, members: undefined }, { ...without, members: undefined });
    });

    it('RFC 7644 3.4.2.5: a sub-attribute projection shapes every streamed member, and Accept: application/json is honoured', async () => {
      const res = await t.request('GET', `/v2/scim/Groups/${big.id}?attributes=members.value`, undefined, { accept: 'application/json' });
      assert.equal(res.headers['content-type'], 'application/json');
      assert.deepEqual(body(res).members, big.order.map((value) => ({ value })));
    });

    it('DESIGN 3: GET /Groups and POST /Groups/.search stream each group of the page, big and small, in list order', async () => {
      const small = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Aardvarks', members: [{ value: big.order[3] }, { value: big.order[1] }] }));
      const empty = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Zebras' }));
      const expectedSmall = [big.order[1]!, big.order[3]!].sort().map((id) => memberValue(big, id));
      const check = (list: Json) => {
        const resources = list.Resources as Json[];
        assert.deepEqual(resources.map((r) => r.displayName), ['Aardvarks', 'Big', 'Zebras']);
        assert.deepEqual(resources[0]!.members, expectedSmall);
        assert.deepEqual(resources[1]!.members, big.order.map((id) => memberValue(big, id)));
        assert.deepEqual(resources[2]!.members, []);
      };
      const res = await t.request('GET', '/v2/scim/Groups?sortBy=displayName');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/scim+json');
      check(body(res));
      const search = await t.request('POST', '/v2/scim/Groups/.search', { schemas: [SEARCH], sortBy: 'displayName' });
      assert.equal(search.statusCode, 200);
      check(body(search));
      const cursorPage = body(await t.request('GET', '/v2/scim/Groups?sortBy=displayName&cursor&count=2'));
      assert.deepEqual((cursorPage.Resources as Json[])[1]!.members, big.order.map((id) => memberValue(big, id)));
      for (const g of [small, empty]) assert.equal((await t.request('DELETE', `/v2/scim/Groups/${String(g.id)}`)).statusCode, 204);
    });

    it('DESIGN 4: PATCH ?attributes=members answers the whole member list, the new member last, with the new ETag', async () => {
      const extra = json(await t.request('POST', '/v2/scim/Users', { userName: 'late@big.example' }));
      const res = await t.request('PATCH', `/v2/scim/Groups/${big.id}?attributes=members`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: extra.id }] }] });
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      assert.equal(res.headers.etag, 'W/"2"');
      assert.equal(res.headers['content-type'], 'application/scim+json');
      const members = body(res).members as Json[];
      assert.equal(members.length, big.order.length + 1);
      assert.deepEqual(members.slice(0, -1), big.order.map((id) => memberValue(big, id)));
      assert.equal(members.at(-1)?.value, extra.id);
      const removed = await t.request('PATCH', `/v2/scim/Groups/${big.id}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${String(extra.id)}"]` }] });
      assert.equal(removed.statusCode, 204);
    });

    it('RFC 7644 3.3 and 3.5.1: POST and PUT with thousands of members answer them all, in order', async () => {
      const chosen = big.order.slice(0, 1500);
      const created = await t.request('POST', '/v2/scim/Groups', { displayName: 'Copy', members: chosen.map((value) => ({ value })) });
      assert.equal(created.statusCode, 201, created.body.slice(0, 300));
      assert.equal(created.headers['content-type'], 'application/scim+json');
      const copy = body(created);
      assert.equal(created.headers.location, (copy.meta as Json).location);
      assert.deepEqual(copy.members, [...chosen].sort().map((id) => memberValue(big, id)));
      const replacement = big.order.slice(1000, 2200);
      const replaced = await t.request('PUT', `/v2/scim/Groups/${String(copy.id)}`, { displayName: 'Copy', members: replacement.map((value) => ({ value })) });
      assert.equal(replaced.statusCode, 200, replaced.body.slice(0, 300));
      assert.equal(replaced.headers.etag, 'W/"2"');
      // Members kept by the PUT keep their join time; new ones join now, after them.
      const kept = replacement.filter((id) => chosen.includes(id)).sort();
      const joined = replacement.filter((id) => !chosen.includes(id)).sort();
      assert.deepEqual(body(replaced).members, [...kept, ...joined].map((id) => memberValue(big, id)));
      assert.equal((await t.request('DELETE', `/v2/scim/Groups/${String(copy.id)}`)).statusCode, 204);
    });

    it('DESIGN 4: a response without members reads no membership row, on every path', async () => {
      const requests: [string, string, unknown?][] = [
        ['GET', `/v2/scim/Groups/${big.id}?excludedAttributes=members`],
        ['GET', `/v2/scim/Groups/${big.id}?attributes=displayName`],
        ['GET', '/v2/scim/Groups?excludedAttributes=members'],
        ['GET', '/v2/scim/Groups?attributes=displayName&cursor&count=1'],
        ['POST', '/v2/scim/Groups/.search', { schemas: [SEARCH], excludedAttributes: ['members'] }],
        ['PATCH', `/v2/scim/Groups/${big.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'externalId', value: 'big-1' }] }],
        ['PATCH', `/v2/scim/Groups/${big.id}?excludedAttributes=members`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: big.order[0] }] }] }],
        ['POST', '/v2/scim/Groups?excludedAttributes=members', { displayName: 'Lean', members: [{ value: big.order[0] }] }],
      ];
      for (const [method, url, payload] of requests) {
        reads.reset();
        const res = await t.request(method, url, payload);
        assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        if (res.body !== '') assert.equal(showsMembers(json(res)), false, `${method} ${url} shows no members`);
        assert.equal(reads.count, 0, `${method} ${url} read membership rows`);
      }
      const lean = json(await t.request('GET', `/v2/scim/Groups?filter=${encodeURIComponent('displayName eq "Lean"')}&attributes=id`));
      const leanId = String((lean.Resources as Json[])[0]?.id);
      reads.reset();
      const put = await t.request('PUT', `/v2/scim/Groups/${leanId}?excludedAttributes=members`, { displayName: 'Lean', members: [{ value: big.order[1] }] });
      assert.equal(put.statusCode, 200);
      assert.equal(reads.count, 0, 'PUT read membership rows');
      // The check itself works: asking for members does read them.
      await t.request('GET', `/v2/scim/Groups/${leanId}`);
      assert.equal(reads.count, 1);
    });

    it('a read that fails before the body starts is an ordinary 500 with a SCIM error body', async () => {
      reads.reset(1);
      const res = await t.request('GET', `/v2/scim/Groups/${big.id}`);
      reads.reset();
      assert.equal(res.statusCode, 500);
      assert.equal(res.headers['content-type'], 'application/scim+json');
      assert.deepEqual(json(res), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '500', detail: 'Internal server error' });
    });

    it('a read that fails after the body started cuts the connection: the client gets an error, never a complete 200', async () => {
      const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
      try {
        reads.reset(2);
        const res = await fetch(`${address}/v2/scim/Groups/${big.id}`, { headers: { authorization: `Bearer ${t.token}` } });
        // The head was sent (headers and the first members); the rest never comes.
        assert.equal(res.status, 200);
        await assert.rejects(res.text(), 'reading the body fails: the chunked body has no end');
        reads.reset();
        // The server still answers afterwards.
        const again = await fetch(`${address}/v2/scim/Groups/${big.id}?attributes=id`, { headers: { authorization: `Bearer ${t.token}` } });
        assert.equal(again.status, 200);
        await again.text();
      } finally {
        reads.reset();
      }
    });
  });
}
