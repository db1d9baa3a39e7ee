/**
 * The statements the hottest requests run (docs/PERFORMANCE.md), on every engine: the bearer
 * check is one statement that reads the token with its team; reads by id, a create, a member
 * added to a group and the group read without members run only statements compiled once
 * (src/storage/statements.ts), never a query built per call; a new user's (empty) groups are
 * not looked up; a `userName eq` lookup is one list query, not a count and then the page, compiled
 * once for its shape.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventsAfter } from '../../src/storage/repos/events.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { StatementLog } from '../support/storage-spy.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

for (const engine of engines) {
  describe(`hot request paths on ${engine.name}`, () => {
    const log = new StatementLog();
    let t: TestApp;
    let userId: string;
    let groupId: string;
    let other: string;

    before(async () => {
      // The bearer cache off: this pins the token's own statement; test/http/bearer-cache.test.ts
      // shows a cached token's requests run without it.
      t = await createTestApp({ engine, wrapStorage: (s) => log.wrap(s), deps: { bearerCache: { ttlSeconds: 0 } } });
      userId = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'ada@x.example' })).id);
      other = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'bob@x.example' })).id);
      groupId = String(json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Eng', members: [{ value: userId }] })).id);
    });
    after(() => t.close());

    // Every write records its audit event and its change feed event (issue 10): on PostgreSQL both
    // go with the write's other deferrable writes in one statement (test/storage/pg-round-trips.test.ts).
    const audited = ['insertAuditEvent', 'appendEvent'];

    const run = async (method: string, url: string, body?: unknown) => {
      log.reset();
      const res = await t.request(method, url, body);
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
      return { res, statements: log.statements, built: log.built };
    };

    it('GET /Users/{id}: the token with its team, then the user with its groups in one statement; nothing built per call', async () => {
      const { res, statements, built } = await run('GET', `/v2/scim/Users/${userId}`);
      assert.deepEqual(statements, ['tokenWithTeam', 'userWithGroups']);
      assert.deepEqual(built, []);
      assert.deepEqual((json(res).groups as { value: string }[]).map((g) => g.value), [groupId]);
      // Without groups in the answer, the user alone; a user in no group shows an empty list.
      const bare = await run('GET', `/v2/scim/Users/${userId}?excludedAttributes=groups`);
      assert.deepEqual(bare.statements, ['tokenWithTeam', 'userById']);
      assert.equal('groups' in json(bare.res), false);
      const lonely = await run('GET', `/v2/scim/Users/${other}`);
      assert.deepEqual(json(lonely.res).groups, []);
    });

    it('a user\'s groups read in the user\'s statement come in the order a list shows them (displayName folded, then id)', async () => {
      for (const name of ['beta', 'Alpha', 'gamma', 'delta']) {
        const res = await t.request('POST', '/v2/scim/Groups', { displayName: name, members: [{ value: other }] });
        assert.equal(res.statusCode, 201, res.body);
      }
      const one = json(await t.request('GET', `/v2/scim/Users/${other}`)).groups as { display: string; value: string }[];
      const listed = ((json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "bob@x.example"')}`)).Resources as { groups: unknown }[])[0]!).groups;
      assert.deepEqual(one, listed);
      assert.deepEqual(one.map((g) => g.display), ['Alpha', 'beta', 'delta', 'gamma']);
      for (const g of one) assert.equal((await t.request('DELETE', `/v2/scim/Groups/${g.value}`)).statusCode, 204);
    });

    it('an unknown token is 401 after that one statement', async () => {
      log.reset();
      const res = await t.app.inject({ method: 'GET', url: `/v2/scim/Users/${userId}`, headers: { authorization: 'Bearer rc_at_unknown' } });
      assert.equal(res.statusCode, 401);
      assert.deepEqual(log.statements, ['tokenWithTeam']);
    });

    it('POST /Users: a new user\'s groups are not looked up (it has none), and the answer still shows them empty', async () => {
      const { res, statements, built } = await run('POST', '/v2/scim/Users', { userName: 'cy@x.example' });
      // No look-up of the userName first (the unique index on the claim refuses a taken one); the
      // audit and feed events, then the team's counters (one upsert, last: its rows stay locked
      // to the commit on PostgreSQL).
      assert.deepEqual(statements, ['tokenWithTeam', 'insertUser', ...audited, 'addTeamCounts']);
      assert.deepEqual(built, []);
      assert.deepEqual(json(res).groups, []);
    });

    it('RFC 7643 4.1.1: a taken userName (told by the unique index, not a look-up first) is 409 uniqueness naming its holder; one user keeps it', async () => {
      log.reset();
      const res = await t.request('POST', '/v2/scim/Users', { userName: 'ADA@x.example' });
      assert.equal(res.statusCode, 409);
      assert.equal(json(res).scimType, 'uniqueness');
      assert.match(String(json(res).detail), new RegExp(`already taken by user ${userId}`));
      const listed = json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "ada@x.example"')}`));
      assert.equal(listed.totalResults, 1);
    });

    it('PUT and PATCH /Users/{id}: the user read with its groups in one statement, which the answer shows (no second look-up of the groups)', async () => {
      const patched = await run('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Ada L.' }] });
      assert.deepEqual(patched.statements, ['tokenWithTeam', 'userWithGroups', 'updateUser', ...audited]);
      assert.deepEqual(patched.built, []);
      assert.equal(json(patched.res).displayName, 'Ada L.');
      assert.deepEqual((json(patched.res).groups as { value: string }[]).map((g) => g.value), [groupId]);
      const replaced = await run('PUT', `/v2/scim/Users/${userId}`, { userName: 'ada@x.example', displayName: 'Ada' });
      assert.deepEqual(replaced.statements, ['tokenWithTeam', 'userWithGroups', 'updateUser', ...audited]);
      assert.deepEqual((json(replaced.res).groups as { value: string }[]).map((g) => g.value), [groupId]);
      // Without groups in the answer, the user alone.
      const bare = await run('PATCH', `/v2/scim/Users/${userId}?excludedAttributes=groups`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Ada' }] });
      assert.deepEqual(bare.statements, ['tokenWithTeam', 'userById', 'updateUser', ...audited]);
      assert.equal('groups' in json(bare.res), false);
    });

    it('PATCH /Groups/{id} adding one member and GET of a group without members run compiled statements only', async () => {
      const add = await run('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: other }] }] });
      // The group is not read first: the statement that takes its new version starts the write;
      // the member is inserted only if it is a user of the team, in one statement (no look-up
      // first). On PostgreSQL all of it, the audit row and the event too, is one statement.
      const expected = engine.name === 'postgres' ? ['addLoneMember'] : ['touchGroup', 'addTeamUserAsMember', ...audited];
      assert.deepEqual(add.statements, ['tokenWithTeam', ...expected]);
      assert.deepEqual(add.built, []);
      const get = await run('GET', `/v2/scim/Groups/${groupId}?excludedAttributes=members`);
      assert.deepEqual(get.statements, ['tokenWithTeam', 'groupById']);
      assert.deepEqual(get.built, []);
    });

    it('RFC 7644 3.5.2: adding a member who is no user of the team is 400 invalidValue and changes nothing; adding one already there changes no membership', async () => {
      const before = await t.request('GET', `/v2/scim/Groups/${groupId}`);
      const members = () => t.request('GET', `/v2/scim/Groups/${groupId}`).then((r) => (json(r).members as { value: string }[]).map((m) => m.value).sort());
      const was = await members();
      const rows = async (table: 'audit_events' | 'events') => Number((await t.storage.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      const events = async () => [await rows('audit_events'), await rows('events')];
      const audited = await events();
      for (const operations of [
        [{ op: 'add', path: 'members', value: [{ value: 'NOSUCHUSER0000000000' }] }],
        // A removal in the same request is rolled back with it.
        [{ op: 'remove', path: `members[value eq "${userId}"]` }, { op: 'add', path: 'members', value: [{ value: 'NOSUCHUSER0000000000' }] }],
      ]) {
        const res = await t.request('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH], Operations: operations });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(json(res).scimType, 'invalidValue');
        assert.match(String(json(res).detail), /unknown member: NOSUCHUSER0000000000/);
      }
      assert.deepEqual(await members(), was);
      const after = await t.request('GET', `/v2/scim/Groups/${groupId}`);
      assert.equal(after.headers.etag, before.headers.etag);
      assert.equal((json(after).meta as { lastModified: string }).lastModified, (json(before).meta as { lastModified: string }).lastModified);
      assert.deepEqual(await events(), audited, 'no audit row, no change feed event');
      // A member added again: the request succeeds, the membership stays one.
      const again = await run('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: was[0] }] }] });
      assert.equal(again.res.statusCode, 204);
      assert.deepEqual(await members(), was);
    });

    it('one member who is no user of this team (none at all, or another team\'s) is 400 invalidValue naming it, in a PATCH add, a POST and a PUT of a group, and nothing is written', async () => {
      const globex = await t.addTeam(`globex-${engine.name}`);
      const theirs = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'eve@globex.example' }, { authorization: `Bearer ${globex.token}` })).id);
      const rows = async (table: 'audit_events' | 'events' | 'groups') => Number((await t.storage.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
      const counts = async () => [await rows('audit_events'), await rows('events'), await rows('groups')];
      const before = await t.request('GET', `/v2/scim/Groups/${groupId}`);
      const was = await counts();
      for (const stranger of ['NOSUCHUSER0000000001', theirs]) {
        const unknown = new RegExp(`unknown member: ${stranger}`);
        const added = await t.request('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: stranger }] }] });
        assert.equal(added.statusCode, 400, added.body);
        assert.equal(json(added).scimType, 'invalidValue');
        assert.match(String(json(added).detail), unknown);
        const created = await t.request('POST', '/v2/scim/Groups', { displayName: `Strangers ${stranger}`, members: [{ value: stranger }] });
        assert.equal(created.statusCode, 400, created.body);
        assert.match(String(json(created).detail), unknown);
        const replaced = await t.request('PUT', `/v2/scim/Groups/${groupId}`, { displayName: 'Eng', members: [{ value: stranger }] });
        assert.equal(replaced.statusCode, 400, replaced.body);
        assert.match(String(json(replaced).detail), unknown);
      }
      assert.deepEqual(await counts(), was, 'no audit row, no feed event, no group');
      const after = await t.request('GET', `/v2/scim/Groups/${groupId}`);
      assert.equal(after.headers.etag, before.headers.etag);
      assert.deepEqual(json(after).members, json(before).members);
    });

    it('members added one by one to one group at once, then removed so: every change lands, each takes its own version, and each event carries its own', async () => {
      const group = String(json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Crowd' })).id);
      const ids: string[] = [];
      for (let i = 0; i < 16; i++) ids.push(String(json(await t.request('POST', '/v2/scim/Users', { userName: `crowd-${i}@x.example` })).id));
      const version = (etag: unknown) => Number(/W\/"(\d+)"/.exec(String(etag))?.[1]);
      const added = await Promise.all(ids.map((id) => t.request('PATCH', `/v2/scim/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] })));
      assert.deepEqual(added.map((r) => r.statusCode), ids.map(() => 204));
      const versions = added.map((r) => version(r.headers.etag)).sort((a, b) => a - b);
      assert.deepEqual(versions, ids.map((_, i) => i + 2), 'versions 2..17, one each');
      const after = await t.request('GET', `/v2/scim/Groups/${group}`);
      assert.equal(version(after.headers.etag), ids.length + 1);
      assert.deepEqual((json(after).members as { value: string }[]).map((m) => m.value).sort(), [...ids].sort());
      const events = (await eventsAfter(t.storage.db, t.team.id, 0, 10_000)).filter((e) => e.resource_id === group);
      assert.deepEqual(events.map((e) => e.version).sort((a, b) => a - b), [1, ...versions]);
      // Each event names the member its version added, as the ETag answered.
      const byVersion = new Map(added.map((r, i) => [version(r.headers.etag), ids[i]]));
      for (const e of events.slice(1)) assert.deepEqual(JSON.parse(e.members!), { added: [byVersion.get(e.version)] });
      // And removed one by one at once (Entra ID's and Okta's removal): the same.
      const removed = await Promise.all(ids.map((id) => t.request('PATCH', `/v2/scim/Groups/${group}`, { schemas: [PATCH], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] })));
      assert.deepEqual(removed.map((r) => r.statusCode), ids.map(() => 204));
      const later = removed.map((r) => version(r.headers.etag)).sort((a, b) => a - b);
      assert.deepEqual(later, ids.map((_, i) => ids.length + i + 2), 'versions 18..33, one each');
      const emptied = await t.request('GET', `/v2/scim/Groups/${group}`);
      assert.deepEqual(json(emptied).members ?? [], []);
      const byLater = new Map(removed.map((r, i) => [version(r.headers.etag), ids[i]]));
      const all = (await eventsAfter(t.storage.db, t.team.id, 0, 10_000)).filter((e) => e.resource_id === group);
      assert.deepEqual(all.map((e) => e.version).sort((a, b) => a - b), [1, ...versions, ...later]);
      for (const e of all.filter((e) => e.version > ids.length + 1)) assert.deepEqual(JSON.parse(e.members!), { removed: [byLater.get(e.version)] });
    });

    it('RFC 7644 3.14: a group PATCH whose If-Match is stale is 412 and changes nothing, though the new version is taken before the check', async () => {
      const before = await t.request('GET', `/v2/scim/Groups/${groupId}`);
      const members = (r: typeof before) => (json(r).members as { value: string }[]).map((m) => m.value).sort();
      const res = await t.request('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: userId }] }, { op: 'replace', path: 'displayName', value: 'Renamed' }] }, { 'if-match': 'W/"1"' });
      assert.equal(res.statusCode, 412, res.body);
      const after = await t.request('GET', `/v2/scim/Groups/${groupId}`);
      assert.equal(after.headers.etag, before.headers.etag);
      assert.deepEqual(json(after).displayName, json(before).displayName);
      assert.deepEqual(members(after), members(before));
      assert.equal((json(after).meta as { lastModified: string }).lastModified, (json(before).meta as { lastModified: string }).lastModified);
      // The current ETag passes, and the version moves by one.
      const ok = await t.request('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Eng' }] }, { 'if-match': String(before.headers.etag) });
      assert.ok(ok.statusCode < 300, ok.body);
      const version = (etag: unknown) => Number(/W\/"(\d+)"/.exec(String(etag))?.[1]);
      assert.equal(version((await t.request('GET', `/v2/scim/Groups/${groupId}`)).headers.etag), version(before.headers.etag) + 1);
    });

    it('RFC 7644 3.4.2: a userName eq lookup is one query compiled once for its shape, the groups of what it finds included (the page tells totalResults)', async () => {
      for (const name of ['ada@x.example', 'bob@x.example', 'nobody@x.example']) {
        const { res, statements, built } = await run('GET', `/v2/scim/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`);
        const found = name === 'nobody@x.example' ? 0 : 1;
        assert.equal(json(res).totalResults, found);
        assert.deepEqual((json(res).Resources as { userName: string }[]).map((r) => r.userName), found ? [name] : []);
        assert.deepEqual(statements, ['tokenWithTeam', 'users page']);
        assert.deepEqual(built, []);
      }
    });
  });
}
