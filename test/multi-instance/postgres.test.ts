/**
 * Two Rollcall server processes on one PostgreSQL database (DESIGN.md sections 2 and 7), raced
 * through both at once: 200 concurrent creates of distinct users, 200 concurrent membership
 * PATCHes (adds and removes) at one group, 50 concurrent creates of the same userName, and
 * concurrent If-Match replaces. Nothing may be lost: every membership that should exist exists,
 * exactly one duplicate create succeeds (the others answer 409), exactly one If-Match replace
 * wins (the others answer 412), and totalResults matches the rows in the database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from '../../src/storage/connect.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { scim, seedTeamToken, startServer } from '../support/processes.ts';
import type { ServerProcess } from '../support/processes.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('two instances on one PostgreSQL', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let schema: { url: string; drop(): Promise<void> };
  let servers: ServerProcess[];
  let token: string;
  const via = (i: number) => servers[i % 2]!.url;

  before(async () => {
    schema = await createPgSchema(postgresUrl!);
    token = await seedTeamToken(schema.url);
    servers = await Promise.all([startServer(schema.url), startServer(schema.url)]);
  });
  after(async () => {
    await Promise.all((servers ?? []).map((s) => s.stop()));
    await schema?.drop();
  });

  it('200 concurrent creates, 200 concurrent membership PATCHes, 50 racing duplicates: nothing lost', async () => {
    const creates = await Promise.all(
      Array.from({ length: 200 }, (_, i) => scim(via(i), token, 'POST', '/Users', { userName: `user${i}@acme.example`, name: { givenName: `U${i}` } })),
    );
    assert.deepEqual(creates.map((r) => r.status), Array(200).fill(201));
    const ids = creates.map((r) => String(r.body!.id));

    // The group starts with users 150..199; then, through both instances at once, 150 PATCHes add
    // users 0..149 one by one and 50 remove users 150..199 one by one.
    const group = await scim(via(0), token, 'POST', '/Groups', { displayName: 'Race', members: ids.slice(150).map((value) => ({ value })) });
    assert.equal(group.status, 201);
    const gid = String(group.body!.id);
    const patches = await Promise.all(
      ids.map((id, i) =>
        scim(via(i), token, 'PATCH', `/Groups/${gid}`, {
          schemas: [PATCH],
          Operations: [i < 150 ? { op: 'add', path: 'members', value: [{ value: id }] } : { op: 'remove', path: `members[value eq "${id}"]` }],
        }),
      ),
    );
    assert.deepEqual(patches.map((r) => r.status), Array(200).fill(204));
    const members = ((await scim(via(1), token, 'GET', `/Groups/${gid}`)).body!.members as { value: string }[]).map((m) => m.value).sort();
    assert.deepEqual(members, ids.slice(0, 150).sort());
    const version = (await scim(via(0), token, 'GET', `/Groups/${gid}`)).headers.get('etag');
    assert.equal(version, 'W/"201"', 'every PATCH bumped the version exactly once');

    const dups = await Promise.all(Array.from({ length: 50 }, (_, i) => scim(via(i), token, 'POST', '/Users', { userName: 'same.name@acme.example' })));
    const statuses = dups.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 409).length, 49);
    assert.ok(dups.filter((r) => r.status === 409).every((r) => r.body!.scimType === 'uniqueness'));

    const listed = await scim(via(1), token, 'GET', '/Users?count=1');
    const storage = connect(schema.url);
    try {
      const row = await storage.db.selectFrom('users').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
      assert.equal(listed.body!.totalResults, Number(row.n));
      assert.equal(Number(row.n), 1 + 200 + 1, 'the owner, 200 users, one of the duplicates');
    } finally {
      await storage.close();
    }
  });

  it('concurrent If-Match replaces through both instances: exactly one wins, the others get 412', async () => {
    const created = await scim(via(0), token, 'POST', '/Users', { userName: 'contended@acme.example' });
    const id = String(created.body!.id);
    const etag = String(created.headers.get('etag'));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => scim(via(i), token, 'PUT', `/Users/${id}`, { userName: 'contended@acme.example', title: `writer ${i}` }, { 'if-match': etag })),
    );
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 412).length, 19);
    const winner = results.find((r) => r.status === 200)!;
    const now = await scim(via(1), token, 'GET', `/Users/${id}`);
    assert.equal(now.body!.title, winner.body!.title);
    assert.equal(now.headers.get('etag'), 'W/"2"');
  });
});
