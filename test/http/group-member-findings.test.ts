/**
 * Issue 27 item 15, two findings about groups' members over HTTP: a group created with members
 * says so in its `:notice` SET (RFC 9967 `attributes`) as it does in the JSON feed; and a Group
 * id given as a member is answered with what is unsupported (nested groups), 400 invalidValue,
 * not "unknown member", on every path a member is added by (create, replace, one member
 * patched in, several at once).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const NOTICE_CREATE = 'urn:ietf:params:scim:event:prov:create:notice';

for (const engine of engines) {
  describe(`group members in events and refusals (${engine.name})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
    });
    after(() => t.close());

    const user = async (name: string) => String(json(await t.request('POST', '/v2/scim/Users', { userName: `${name}@acme.example` })).id);

    it('RFC 9967: a group created with members names `members` in its :notice SET, as the JSON feed shows them', async () => {
      const sub = json(await t.request('POST', '/v2/events/subscriptions', { method: 'poll' }, { 'content-type': 'application/json' })) as { id: string; pollToken: string };
      const alice = await user('alice');
      const created = json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'With members', members: [{ value: alice }] }));
      const empty = json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Without members' }));

      const feed = json(await t.request('GET', '/v2/events?limit=100')).events as { id: string; changed: string[]; members?: { added?: string[] } }[];
      const fed = feed.find((e) => e.id === created.id)!;
      assert.deepEqual(fed.members, { added: [alice] });
      assert.ok(fed.changed.includes('members'), `the feed's changed: ${fed.changed.join(', ')}`);

      const polled = await t.app.inject({ method: 'POST', url: '/v2/events/poll', headers: { authorization: `Bearer ${sub.pollToken}`, 'content-type': 'application/json' }, payload: JSON.stringify({ returnImmediately: true, maxEvents: 100 }) });
      const sets = Object.values((polled.json() as { sets: Record<string, string> }).sets).map((s) => decodeJwt(s));
      const noticeOf = (id: unknown) => (sets.find((p) => (p.sub_id as { uri: string }).uri === `/Groups/${String(id)}`)!.events as Record<string, { attributes: string[] }>)[NOTICE_CREATE]!;
      assert.deepEqual(noticeOf(created.id).attributes, fed.changed, 'the SET names what the feed names');
      assert.ok(noticeOf(created.id).attributes.includes('members'));
      assert.equal(noticeOf(empty.id).attributes.includes('members'), false, 'a group created without members does not claim any');
    });

    it('a Group id as a member is 400 invalidValue saying nested groups are not supported, on every path', async () => {
      const inner = String(json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Inner' })).id);
      const outer = String(json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Outer' })).id);
      const bob = await user('bob');
      const attempts = [
        t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Nested', members: [{ value: inner }] }),
        t.request('PUT', `/v2/scim/Groups/${outer}`, { schemas: [GROUP], displayName: 'Outer', members: [{ value: inner }] }),
        t.request('PATCH', `/v2/scim/Groups/${outer}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: inner }] }] }),
        t.request('PATCH', `/v2/scim/Groups/${outer}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: bob }, { value: inner }] }] }),
      ];
      for (const res of await Promise.all(attempts)) {
        assert.equal(res.statusCode, 400, res.body);
        const body = json(res);
        assert.equal(body.scimType, 'invalidValue');
        assert.match(String(body.detail), new RegExp(`^nested groups are not supported: members are Users, and ${inner} is a Group$`));
      }
      // Nothing was written, and an id that is nothing at all is still an unknown member.
      assert.deepEqual(json(await t.request('GET', `/v2/scim/Groups/${outer}`)).members ?? [], []);
      const unknown = await t.request('PATCH', `/v2/scim/Groups/${outer}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: 'NOPE0000000000000000' }] }] });
      assert.equal(unknown.statusCode, 400);
      assert.match(String(json(unknown).detail), /^unknown member: NOPE0000000000000000$/);
    });
  });
}
