/**
 * The audit trail (DESIGN.md section 3): every create, replace, patch, deactivate, activate,
 * delete, membership change, sign-in, token issue and revocation is an event naming the actor
 * (client and user of the token), the request id, the resource and what changed, never a
 * secret; a refused write leaves no event (the event shares the change's transaction).
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { auditEvents } from '../../src/admin.ts';
import type { AuditView } from '../../src/admin.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { adminDeps, authorizeAndApprove, passwordGrant, postForm, registerAdmin, registerClient } from '../support/oauth.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('audit trail', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const events = (): Promise<AuditView[]> => auditEvents(adminDeps(t), t.team.name, undefined, 10_000);
  const last = async (): Promise<AuditView> => (await events()).at(-1)!;

  it('SCIM writes: each is one event with the action, the resource, the changed attributes and the request id', async () => {
    const created = await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example', title: 'Eng', password: 'hunter2 hunter2' }, { 'x-request-id': 'req-create' });
    const id = String(json(created).id);
    let e = await last();
    assert.equal(e.action, 'create');
    assert.equal(e.resourceType, 'User');
    assert.equal(e.resourceId, id);
    assert.equal(e.requestId, 'req-create');
    assert.deepEqual(e.actor, { via: 'scim', clientId: null, userId: null });
    assert.deepEqual((e.detail as Record<string, unknown>).password, 'set');
    assert.equal(JSON.stringify(e).includes('hunter2'), false, 'no secret in an event');

    await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] });
    e = await last();
    assert.equal(e.action, 'patch');
    assert.deepEqual((e.detail as Record<string, unknown>).changed, ['title']);

    await t.request('PUT', `/v2/scim/Users/${id}`, { userName: 'a@acme.example', nickName: 'A' });
    e = await last();
    assert.equal(e.action, 'replace');
    assert.deepEqual((e.detail as Record<string, unknown>).changed, ['nickName', 'title']);

    await t.request('DELETE', `/v2/scim/Users/${id}`);
    assert.equal((await last()).action, 'deactivate');
    await t.request('PUT', `/v2/scim/Users/${id}/activate`);
    assert.equal((await last()).action, 'activate');

    const group = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Ops' }));
    assert.equal((await last()).action, 'create');
    await t.request('PATCH', `/v2/scim/Groups/${String(group.id)}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] });
    e = await last();
    assert.equal(e.action, 'members');
    assert.equal(e.resourceType, 'Group');
    assert.deepEqual((e.detail as Record<string, unknown>).added, [id]);
    await t.request('PATCH', `/v2/scim/Groups/${String(group.id)}`, {
      schemas: [PATCH],
      Operations: [{ op: 'replace', path: 'displayName', value: 'Operations' }, { op: 'remove', path: `members[value eq "${id}"]` }],
    });
    e = await last();
    assert.equal(e.action, 'patch');
    assert.deepEqual(e.detail, { changed: ['displayName'], removed: [id] });
    await t.request('DELETE', `/v2/scim/Groups/${String(group.id)}`);
    assert.equal((await last()).action, 'delete');
  });

  it('a refused write leaves no event', async () => {
    await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example' });
    const before = (await events()).length;
    assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'A@acme.example' })).statusCode, 409);
    assert.equal((await t.request('POST', '/v2/scim/Groups', { displayName: 'G', members: [{ value: 'NOSUCHUSER0000000000' }] })).statusCode, 400);
    assert.equal((await events()).length, before);
  });

  it('OAuth: sign-ins, failed sign-ins, token issues, revocations and replays are events with the client as actor', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t);
    const grant = json(await passwordGrant(t, client, admin));
    await passwordGrant(t, client, { ...admin, password: 'wrong wrong wrong' });
    const rotated = json(await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(grant.refresh_token) }, { client }));
    await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(grant.refresh_token) }, { client });
    await authorizeAndApprove(t, { client_id: client.id, response_type: 'code' }, admin);
    const second = json(await passwordGrant(t, client, admin));
    await postForm(t, '/oauth/revoke', { token: String(second.refresh_token) }, { client });

    const oauth = (await events()).filter((e) => (e.actor as { via: string }).via === 'oauth');
    const actions = oauth.map((e) => e.action);
    assert.deepEqual(actions, ['sign_in', 'token_issued', 'sign_in_failed', 'token_issued', 'grant_revoked', 'sign_in', 'sign_in', 'token_issued', 'grant_revoked']);
    const issued = oauth[1]!;
    assert.deepEqual(issued.actor, { via: 'oauth', clientId: client.id, userId: admin.id });
    assert.deepEqual(issued.detail, { grantType: 'password', scope: 'read write', refreshToken: true });
    assert.match(String((oauth[4]!.detail as Record<string, unknown>).reason), /presented again/);
    assert.equal(oauth[3]!.resourceId, oauth[1]!.resourceId, 'a rotation stays in its family');
    for (const e of oauth) {
      const text = JSON.stringify(e);
      for (const secret of [admin.password, client.secret, String(grant.access_token), String(grant.refresh_token), String(rotated.refresh_token)]) {
        assert.equal(text.includes(secret), false);
      }
    }
  });
});
