/**
 * The client's SCIM resources against a real Rollcall over HTTP (issue 34 item 2): create, get,
 * replace, patch, delete, list, search, iterate with RFC 9865 cursors (and with startIndex when
 * the cursor parameter never reaches the server), the generic resources(endpoint), and errors
 * as RollcallError carrying the SCIM error body.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ENTERPRISE_USER, Rollcall, RollcallError, has, valuePath, where } from '../../packages/client/src/index.ts';
import type { EnterpriseUser, User } from '../../packages/client/src/index.ts';
import { listeningApp } from '../support/client-server.ts';
import type { ListeningApp } from '../support/client-server.ts';
import { engines } from '../support/engines.ts';

for (const engine of engines) {
  describe(`client resources (${engine.name})`, () => {
    let t: ListeningApp;
    let rc: Rollcall<{ [ENTERPRISE_USER]: EnterpriseUser }>;
    beforeEach(async () => {
      t = await listeningApp({ engine });
      rc = new Rollcall({ baseUrl: t.origin, token: t.token, userAgent: 'client-test/1' });
    });
    afterEach(() => t.close());

    it('creates, reads, replaces, patches and deletes a user; the enterprise extension is typed', async () => {
      const created = await rc.users.create({ userName: 'ada@acme.example', name: { givenName: 'Ada' }, [ENTERPRISE_USER]: { department: 'R&D' } });
      assert.ok(created.id);
      assert.deepEqual(created.schemas?.sort(), ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE_USER].sort());
      assert.equal(created[ENTERPRISE_USER]?.department, 'R&D');
      const read = await rc.users.get(created.id, { attributes: ['userName'] });
      assert.equal(read.userName, 'ada@acme.example');
      assert.equal(read.name, undefined, 'attributes= projects the answer');

      const replaced = await rc.users.replace(created.id, { userName: 'ada@acme.example', title: 'Lead' }, { ifMatch: created.meta!.version! });
      assert.equal(replaced.title, 'Lead');
      assert.equal(replaced.name, undefined, 'PUT replaces the whole resource');

      const patched = await rc.users.patch(created.id, [
        { op: 'add', path: 'emails', value: [{ value: 'ada@work.example', type: 'work' }, { value: 'ada@home.example', type: 'home' }] },
        { op: 'replace', path: valuePath('emails', where('type').eq('work'), 'value'), value: 'lovelace@work.example' },
      ]);
      assert.deepEqual(patched!.emails!.map((e) => e.value).sort(), ['ada@home.example', 'lovelace@work.example']);

      // A stale ETag is refused with the SCIM error body.
      await assert.rejects(rc.users.replace(created.id, { userName: 'x@acme.example' }, { ifMatch: created.meta!.version! }), (e: unknown) => e instanceof RollcallError && e.status === 412);

      await rc.users.delete(created.id);
      await assert.rejects(rc.users.get(created.id), (e: unknown) => e instanceof RollcallError && e.status === 404 && typeof e.detail === 'string');
    });

    it('groups: create with members, add and remove members by PatchOp', async () => {
      const a = await rc.users.create({ userName: 'a@acme.example' });
      const b = await rc.users.create({ userName: 'b@acme.example' });
      const group = await rc.groups.create({ displayName: 'Admins', members: [{ value: a.id! }] });
      assert.deepEqual(group.members!.map((m) => m.value), [a.id]);
      await rc.groups.patch(group.id!, [{ op: 'add', path: 'members', value: [{ value: b.id }] }]);
      await rc.groups.patch(group.id!, [{ op: 'remove', path: valuePath('members', where('value').eq(a.id!)) }]);
      const read = await rc.groups.get(group.id!);
      assert.deepEqual(read.members!.map((m) => m.value), [b.id]);
      const listed = await rc.groups.list({ filter: where('displayName').eq('Admins') });
      assert.deepEqual(listed.Resources.map((g) => g.id), [group.id]);
      await rc.groups.delete(group.id!);
      assert.equal((await rc.groups.list()).totalResults, 0);
    });

    it('iterate walks every match with cursors, in pages of count; search and the index fallback agree', async () => {
      const names: string[] = [];
      for (let i = 0; i < 7; i++) {
        names.push(`user${i}@acme.example`);
        await rc.users.create({ userName: `user${i}@acme.example`, emails: [{ value: `u${i}@x.example`, type: i % 2 ? 'work' : 'home' }] });
      }
      await rc.users.create({ userName: 'other@elsewhere.example' });
      // Count the requests and what they asked for, through the real HTTP calls.
      const asked: URL[] = [];
      const counting = new Rollcall({ baseUrl: t.origin, token: t.token, fetch: (input, init) => (asked.push(new URL(String(input))), fetch(input, init)) });
      const got: string[] = [];
      for await (const user of counting.users.iterate({ filter: where('userName').sw('user'), count: 2, sortBy: 'userName' })) got.push(user.userName);
      assert.deepEqual(got, names);
      assert.equal(asked.length, 4, 'four pages of two');
      assert.equal(asked[0]!.searchParams.get('cursor'), '');
      assert.ok(asked.slice(1).every((u) => (u.searchParams.get('cursor') ?? '') !== '' && !u.searchParams.has('startIndex')));

      const viaSearch: string[] = [];
      for await (const user of rc.users.iterate({ filter: where('userName').sw('user'), count: 3, sortBy: 'userName', viaSearch: true })) viaSearch.push(user.userName);
      assert.deepEqual(viaSearch, names);

      // A server (or a proxy) that drops `cursor` answers index pages: iterate goes on by startIndex.
      const noCursor = new Rollcall({
        baseUrl: t.origin,
        token: t.token,
        fetch: (input, init) => {
          const url = new URL(String(input));
          url.searchParams.delete('cursor');
          asked.push(url);
          return fetch(url, init);
        },
      });
      asked.length = 0;
      const byIndex: string[] = [];
      for await (const user of noCursor.users.iterate({ filter: where('userName').sw('user'), count: 2, sortBy: 'userName' })) byIndex.push(user.userName);
      assert.deepEqual(byIndex, names);
      assert.deepEqual(asked.map((u) => u.searchParams.get('startIndex')), [null, '3', '5', '7']);

      const work = await rc.users.list({ filter: has('emails', where('type').eq('work')), count: 10 });
      assert.equal(work.totalResults, 3);
    });

    it('resources(endpoint) reaches every type /ResourceTypes lists', async () => {
      const types = await rc.resourceTypes();
      assert.deepEqual(types.map((r) => r.endpoint).sort(), ['/Groups', '/Users']);
      const userType = types.find((r) => r.name === 'User')!;
      const generic = rc.resources<User & Record<string, unknown>>(userType.endpoint, userType.schema);
      const made = await generic.create({ userName: 'gen@acme.example' });
      assert.equal((await generic.get(made.id!)).userName, 'gen@acme.example');
    });

    it('errors carry the SCIM error body (status, scimType, detail) or the OAuth error', async () => {
      await rc.users.create({ userName: 'dup@acme.example' });
      const dup = await rc.users.create({ userName: 'dup@acme.example' }).catch((e: unknown) => e);
      assert.ok(dup instanceof RollcallError);
      assert.equal(dup.status, 409);
      assert.equal(dup.scimType, 'uniqueness');
      assert.match(dup.detail!, /userName/i);
      const bad = await rc.users.list({ filter: 'userName eq' }).catch((e: unknown) => e);
      assert.ok(bad instanceof RollcallError);
      assert.equal(bad.status, 400);
      assert.equal(bad.scimType, 'invalidFilter');
      const unauthenticated = await new Rollcall({ baseUrl: t.origin, getToken: async () => 'not-a-token' }).users.list().catch((e: unknown) => e);
      assert.ok(unauthenticated instanceof RollcallError);
      assert.equal(unauthenticated.status, 401);
      assert.match(unauthenticated.headers.get('www-authenticate') ?? '', /invalid_token/);
    });
  });
}
