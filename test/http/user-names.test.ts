/**
 * Issue 9 items 2 and 3 (DESIGN.md section 4, "deactivated users"): who holds a userName.
 * - Hiding team (the default): a deactivated user does not hold its userName; a re-hire gets a
 *   201 and a new user; reactivating the old one while another holds the name is 409
 *   `uniqueness` and changes nothing.
 * - Showing team: deactivated users (PATCH/PUT `active: false`) stay readable and hold their
 *   names; `DELETE /Users/{id}` removes the user from every read (RFC 7644 3.6) and frees its
 *   name; `activate` restores it while the name is free.
 * - Switching a team from hiding to showing while two users share a userName is refused naming
 *   them; otherwise the claims are recomputed.
 * - Lookups by userName (the CLI's token issue, sign-in) find the holder.
 * Runs on every engine: the database's unique index decides, on SQLite and PostgreSQL alike.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { AdminError, issueToken, updateTeam } from '../../src/admin.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, passwordGrant, registerClient } from '../support/oauth.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const filterBy = (name: string) => `/v2/scim/Users?filter=${encodeURIComponent(`userName eq "${name}"`)}`;

for (const engine of engines) {
  describe(`userName holders on ${engine.name}: a team that hides deactivated users`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine });
    });
    afterEach(() => t.close());

    const create = async (userName: string, extra: Record<string, unknown> = {}) => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName, ...extra });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };

    it('Entra re-hire: after DELETE (deactivation) the same userName creates a new user (201), found by filter', async () => {
      const old = await create('rehire@acme.example', { displayName: 'Old' });
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${old}`)).statusCode, 204);
      const again = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'REHIRE@acme.example', displayName: 'New' });
      assert.equal(again.statusCode, 201, again.body);
      const fresh = String(json(again).id);
      assert.notEqual(fresh, old);
      const found = json(await t.request('GET', filterBy('rehire@acme.example')));
      assert.equal(found.totalResults, 1);
      assert.equal((found.Resources as Record<string, unknown>[])[0]?.id, fresh);
      // The holder blocks a third create.
      const third = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'rehire@acme.example' });
      assert.equal(third.statusCode, 409);
      assert.equal(json(third).scimType, 'uniqueness');
      // A PATCH active:false also releases the name (Okta deactivation).
      const patched = await create('patched@acme.example');
      await t.request('PATCH', `/v2/scim/Users/${patched}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { active: false } }] });
      assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'patched@acme.example' })).statusCode, 201);
    });

    it('reactivating the old user while another holds the name is 409 uniqueness (activate, PATCH, PUT) and changes nothing', async () => {
      const old = await create('taken@acme.example');
      await t.request('DELETE', `/v2/scim/Users/${old}`);
      const holder = await create('taken@acme.example');
      const before = await t.storage.db.selectFrom('users').selectAll().where('id', '=', old).executeTakeFirstOrThrow();
      const attempts = [
        await t.request('PUT', `/v2/scim/Users/${old}/activate`, {}),
        await t.request('PATCH', `/v2/scim/Users/${old}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] }),
        await t.request('PUT', `/v2/scim/Users/${old}`, { schemas: [USER], userName: 'taken@acme.example', active: true }),
      ];
      for (const res of attempts) {
        assert.equal(res.statusCode, 409, res.body);
        assert.equal(json(res).scimType, 'uniqueness');
        assert.match(String(json(res).detail), new RegExp(holder));
      }
      const after = await t.storage.db.selectFrom('users').selectAll().where('id', '=', old).executeTakeFirstOrThrow();
      assert.deepEqual(after, before, 'the old user is unchanged');
      assert.equal((await t.request('GET', `/v2/scim/Users/${old}`)).statusCode, 404);
      // Once the holder lets go, the old user comes back.
      await t.request('DELETE', `/v2/scim/Users/${holder}`);
      const back = await t.request('PUT', `/v2/scim/Users/${old}/activate`);
      assert.equal(back.statusCode, 200, back.body);
      assert.equal(json(back).active, true);
    });

    it('the CLI token issue and the password grant pick the holder, not the hidden user (both have passwords)', async () => {
      const deps = adminDeps(t);
      const old = await create('boss@acme.example', { userType: 'admin', password: 'the old password of the boss' });
      await t.request('DELETE', `/v2/scim/Users/${old}`);
      const fresh = await create('boss@acme.example', { userType: 'admin', password: 'correct horse battery staple' });
      const issued = await issueToken(deps, t.team.name, 'Boss@acme.example', { scope: ['read'], ttlSeconds: 60 });
      assert.equal(issued.userId, fresh);
      const client = await registerClient(t);
      const grant = await passwordGrant(t, client, { userName: 'boss@acme.example', password: 'correct horse battery staple' });
      assert.equal(grant.statusCode, 200, grant.body);
      const me = await t.storage.db.selectFrom('oauth_tokens').select('user_id').where('user_id', 'is not', null).execute();
      assert.ok(me.length > 0 && me.every((r) => r.user_id === fresh), 'tokens belong to the holder');
      const oldPassword = await passwordGrant(t, client, { userName: 'boss@acme.example', password: 'the old password of the boss' });
      assert.equal(oldPassword.statusCode, 400, 'the hidden user cannot sign in with its name');
    });

    it('switching to visible while two users share a userName is refused naming them, and changes nothing', async () => {
      const old = await create('dup@acme.example');
      await t.request('DELETE', `/v2/scim/Users/${old}`);
      const fresh = await create('dup@acme.example');
      await assert.rejects(updateTeam(adminDeps(t), t.team.name, 'visible'), (error: unknown) => {
        assert.ok(error instanceof AdminError);
        assert.match(error.message, /dup@acme\.example/);
        assert.match(error.message, new RegExp(old));
        assert.match(error.message, new RegExp(fresh));
        return true;
      });
      const team = await t.storage.db.selectFrom('teams').select('deactivated_users').where('id', '=', t.team.id).executeTakeFirstOrThrow();
      assert.equal(team.deactivated_users, 'hidden');
      // Resolved (the new user renamed), the switch goes through and the old user holds its name again.
      await t.request('PATCH', `/v2/scim/Users/${fresh}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userName', value: 'dup2@acme.example' }] });
      await updateTeam(adminDeps(t), t.team.name, 'visible');
      const shown = await t.request('GET', `/v2/scim/Users/${old}`);
      assert.equal(shown.statusCode, 200);
      assert.equal(json(shown).active, false);
      const clash = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'dup@acme.example' });
      assert.equal(clash.statusCode, 409, clash.body);
      // And back to hidden: the deactivated user lets the name go again.
      await updateTeam(adminDeps(t), t.team.name, 'hidden');
      assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'dup@acme.example' })).statusCode, 201);
    });
  });

  describe(`userName holders on ${engine.name}: a team that shows deactivated users`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine, deactivatedUsers: 'visible' });
    });
    afterEach(() => t.close());

    const create = async (userName: string) => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };

    it('PATCH/PUT active:false keeps the user readable; it keeps its userName (409 for a new one)', async () => {
      const id = await create('soft@acme.example');
      const patch = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
      assert.equal(patch.statusCode, 200);
      assert.equal(json(await t.request('GET', `/v2/scim/Users/${id}`)).active, false);
      assert.equal(json(await t.request('GET', filterBy('soft@acme.example'))).totalResults, 1);
      const dup = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'soft@acme.example' });
      assert.equal(dup.statusCode, 409);
      assert.equal(json(dup).scimType, 'uniqueness');
      const put = await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER], userName: 'soft@acme.example', active: false, title: 'Gone' });
      assert.equal(put.statusCode, 200);
      assert.equal(json(await t.request('GET', `/v2/scim/Users/${id}`)).title, 'Gone');
    });

    it('RFC 7644 3.6: DELETE removes the user from every read (404, lists, filters, group members) and frees its userName', async () => {
      const id = await create('hard@acme.example');
      const other = await create('stays@acme.example');
      const group = json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Team', members: [{ value: id }, { value: other }] }));
      const gid = String(group.id);
      const del = await t.request('DELETE', `/v2/scim/Users/${id}`);
      assert.equal(del.statusCode, 204);
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 404);
      assert.equal(json(await t.request('GET', filterBy('hard@acme.example'))).totalResults, 0);
      const all = json(await t.request('GET', '/v2/scim/Users'));
      assert.deepEqual((all.Resources as Record<string, unknown>[]).map((r) => r.id), [other]);
      const members = (json(await t.request('GET', `/v2/scim/Groups/${gid}`)).members as { value: string }[]).map((m) => m.value);
      assert.deepEqual(members, [other]);
      const byMember = json(await t.request('GET', `/v2/scim/Groups?filter=${encodeURIComponent(`members eq "${id}"`)}`));
      assert.equal(byMember.totalResults, 0);
      // Every other by-id request: gone.
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${id}`)).statusCode, 404);
      assert.equal((await t.request('PUT', `/v2/scim/Users/${id}`, { schemas: [USER], userName: 'hard@acme.example', active: true })).statusCode, 404);
      assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] })).statusCode, 404);
      // Kept in the database for the audit trail.
      const row = await t.storage.db.selectFrom('users').select(['deleted_at', 'user_name_claim']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.notEqual(row.deleted_at, null);
      assert.equal(row.user_name_claim, null);
      // The name is free: a new user takes it; activate of the old one is then 409.
      const fresh = await create('hard@acme.example');
      const blocked = await t.request('PUT', `/v2/scim/Users/${id}/activate`);
      assert.equal(blocked.statusCode, 409, blocked.body);
      assert.equal(json(blocked).scimType, 'uniqueness');
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 404, 'still deleted');
      // The new one deleted too, activate restores the old one with its group membership.
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${fresh}`)).statusCode, 204);
      const restored = await t.request('PUT', `/v2/scim/Users/${id}/activate`);
      assert.equal(restored.statusCode, 200, restored.body);
      assert.equal(json(restored).active, true);
      assert.equal(json(await t.request('GET', filterBy('hard@acme.example'))).totalResults, 1);
      const back = (json(await t.request('GET', `/v2/scim/Groups/${gid}`)).members as { value: string }[]).map((m) => m.value).sort();
      assert.deepEqual(back, [id, other].sort());
    });

    it('the contract\'s bare DELETE /Users?filter= deletes in a showing team too', async () => {
      const id = await create('bare@acme.example');
      const del = await t.request('DELETE', `/v2/scim/Users?filter=${encodeURIComponent("userName eq 'bare@acme.example'")}`);
      assert.equal(del.statusCode, 204);
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 404);
      await create('bare@acme.example');
    });

    it('switching to hidden and back keeps deleted users deleted and recomputes the holders', async () => {
      const deleted = await create('a@acme.example');
      await t.request('DELETE', `/v2/scim/Users/${deleted}`);
      const soft = await create('b@acme.example');
      await t.request('PATCH', `/v2/scim/Users/${soft}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] });
      await updateTeam(adminDeps(t), t.team.name, 'hidden');
      assert.equal((await t.request('GET', `/v2/scim/Users/${soft}`)).statusCode, 404);
      await updateTeam(adminDeps(t), t.team.name, 'visible');
      assert.equal((await t.request('GET', `/v2/scim/Users/${deleted}`)).statusCode, 404);
      assert.equal(json(await t.request('GET', `/v2/scim/Users/${soft}`)).active, false);
      assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'b@acme.example' })).statusCode, 409);
      assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'a@acme.example' })).statusCode, 201);
    });

    it('a user deleted here, then reactivated by PATCH after the team switched to hiding, is listed and found again (deleted_at cleared)', async () => {
      const id = await create('back@acme.example');
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${id}`)).statusCode, 204);
      await updateTeam(adminDeps(t), t.team.name, 'hidden');
      const patched = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] });
      assert.equal(patched.statusCode, 200, patched.body);
      const found = json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "back@acme.example"')}`));
      assert.deepEqual((found.Resources as { id: string }[]).map((r) => r.id), [id]);
      await updateTeam(adminDeps(t), t.team.name, 'visible');
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 200);
      assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'back@acme.example' })).statusCode, 409);
    });
  });
}
