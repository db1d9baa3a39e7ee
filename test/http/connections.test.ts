/**
 * Issue 30, item 1: a team's provisioning connection is a principal of its own. Its tokens name
 * no user, so deactivating or deleting the admin who created it (or any person) leaves them
 * working; it is never taken for an administrator or the operator; audit rows and the request
 * log name it; names are unique per team whatever their case; deleting it ends its tokens and
 * its clients; a client of a connection mints the connection's tokens.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditEvents, createClient } from '../../src/admin.ts';
import { deactivateUser } from '../../src/admin-users.ts';
import { addConnection, connections, deleteConnectionNamed, issueConnectionToken, renameConnectionNamed } from '../../src/admin-connections.ts';
import { consoleActor } from '../../src/console/directory.ts';
import { ConnectionError, connectionNames, createConnection, deleteConnection } from '../../src/oauth/connections.ts';
import { issueProvisioningToken } from '../../src/oauth/provisioning.ts';
import { verifyAccessToken } from '../../src/oauth/tokens.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, postForm, registerAdmin, scimStatus } from '../support/oauth.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A connection made by the admin in the console, and its token issued there: what an admin did before leaving. */
async function connectionOfAdmin(t: TestApp) {
  const admin = await registerAdmin(t);
  const actor = consoleActor(admin.id);
  const connection = await createConnection(t.storage, t.clock, { teamId: t.team.id, name: 'Entra ID production', provider: 'entra', actor, requestId: null });
  const issued = await issueProvisioningToken(t.storage, t.clock, { teamId: t.team.id, connectionId: connection.id, name: 'secret token', scope: ['read', 'write'], ttlSeconds: 86_400, actor, requestId: null });
  return { admin, connection, token: issued.token };
}

for (const engine of engines) {
  describe(`connections as principals (${engine.name})`, () => {
    it('deactivating the admin who created a connection leaves its token working on SCIM; deleting the admin too', async () => {
      const t = await createTestApp({ engine, deactivatedUsers: 'visible' });
      try {
        const { admin, connection, token } = await connectionOfAdmin(t);
        const verified = await verifyAccessToken(t.storage.db, t.clock, token);
        assert.equal(verified?.connectionId, connection.id);
        assert.equal(verified?.userId, null, "a connection's token acts for no user");
        assert.equal(await scimStatus(t, token), 200);

        await deactivateUser(adminDeps(t), 'acme', admin.userName);
        assert.equal(await scimStatus(t, token), 200, 'the admin is deactivated; the connection works on');
        const created = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'new.hire@acme.example' }, bearer(token));
        assert.equal(created.statusCode, 201);

        assert.equal((await t.request('DELETE', `/v2/scim/Users/${admin.id}`)).statusCode, 204);
        assert.equal(await scimStatus(t, token), 200, 'the admin is deleted; the connection works on');
      } finally {
        await t.close();
      }
    });

    it("a connection's token is never an administrator's nor the operator's: the admin API and event subscriptions refuse it", async () => {
      const t = await createTestApp({ engine });
      try {
        const { token } = await connectionOfAdmin(t);
        const admin = await t.app.inject({ method: 'GET', url: '/v2/admin/Schemas', headers: bearer(token) });
        assert.equal(admin.statusCode, 403, admin.body);
        assert.equal((await t.app.inject({ method: 'GET', url: '/v2/admin/Schemas', headers: bearer(t.token) })).statusCode, 200, "the operator's token is");
        const subscribe = await t.app.inject({
          method: 'POST',
          url: '/v2/events/subscriptions',
          headers: { ...bearer(token), 'content-type': 'application/json' },
          payload: JSON.stringify({ delivery: { method: 'poll' } }),
        });
        assert.equal(subscribe.statusCode, 403, subscribe.body);
        assert.match(subscribe.body, /connection's token/);
      } finally {
        await t.close();
      }
    });

    it('audit rows and the request log name the connection', async () => {
      const t = await createTestApp({ engine });
      try {
        const { connection, token } = await connectionOfAdmin(t);
        const created = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ada@acme.example' }, bearer(token));
        assert.equal(created.statusCode, 201);
        const events = await auditEvents(adminDeps(t), 'acme', undefined, 100);
        const userId = String((created.json() as { id: string }).id);
        const create = events.find((e) => e.action === 'create' && e.resourceId === userId);
        assert.equal((create?.actor as { connectionId?: string }).connectionId, connection.id);
        const row = await t.storage.db.selectFrom('audit_events').select('actor_connection_id').where('resource_id', '=', userId).executeTakeFirstOrThrow();
        assert.equal(row.actor_connection_id, connection.id);
        assert.deepEqual([...(await connectionNames(t.storage.db, t.team.id, [connection.id, 'UNKNOWN'])).entries()], [[connection.id, 'Entra ID production']]);
        await t.app.close(); // flushes the request journal
        const logged = await t.storage.db.selectFrom('request_log').select(['connection_id', 'status']).where('method', '=', 'POST').execute();
        assert.deepEqual(logged, [{ connection_id: connection.id, status: 201 }]);
      } finally {
        await t.close();
      }
    });

    it('connection names are unique per team whatever their case; rename and delete are audited; delete ends its tokens and clients', async () => {
      const t = await createTestApp({ engine });
      try {
        const deps = adminDeps(t);
        await addConnection(deps, 'acme', 'Okta');
        await assert.rejects(addConnection(deps, 'acme', '  okta '), /a connection named "Okta" already exists/);
        await assert.rejects(
          createConnection(t.storage, t.clock, { teamId: t.team.id, name: 'OKTA', actor: consoleActor('X'), requestId: null }),
          (error: unknown) => error instanceof ConnectionError && error.status === 409,
        );
        await assert.rejects(addConnection(deps, 'acme', ' '), /1-100 characters/);
        const other = await t.addTeam('globex');
        await createConnection(t.storage, t.clock, { teamId: other.team.id, name: 'okta', actor: consoleActor('X'), requestId: null });

        const renamed = await renameConnectionNamed(deps, 'acme', 'okta', 'Okta production');
        assert.equal(renamed.name, 'Okta production');
        const token = (await issueConnectionToken(deps, 'acme', 'OKTA PRODUCTION', { scope: ['read', 'write'], ttlSeconds: 3600, name: 'one' })).token;
        const client = await createClient(deps, { name: 'Okta OAuth', redirectUris: [], team: 'acme', connection: 'Okta production' });
        const minted = await postForm(t, '/oauth/token', { grant_type: 'client_credentials', scope: 'read' }, { client: { id: client.client_id, secret: client.client_secret } });
        assert.equal(minted.statusCode, 200, minted.body);
        const clientToken = String((minted.json() as { access_token: string }).access_token);
        assert.equal((await verifyAccessToken(t.storage.db, t.clock, clientToken))?.connectionId, renamed.id, "its client's tokens are the connection's");
        assert.deepEqual((await connections(deps, 'acme')).map((c) => [c.name, c.liveTokens, c.clients]), [['Okta production', 1, 1]]);

        const deleted = await deleteConnectionNamed(deps, 'acme', 'okta production');
        assert.deepEqual([deleted.tokensRevoked, deleted.clientsDeleted], [2, 1]);
        assert.equal(await scimStatus(t, token), 401);
        assert.equal(await scimStatus(t, clientToken), 401);
        assert.deepEqual(await connections(deps, 'acme'), []);
        await assert.rejects(deleteConnection(t.storage, t.clock, { teamId: t.team.id, id: deleted.id, actor: consoleActor('X'), requestId: null }), (e: unknown) => e instanceof ConnectionError && e.status === 404);
        const actions = (await auditEvents(deps, 'acme', undefined, 100)).filter((e) => e.resourceType === 'Connection').map((e) => e.action);
        assert.deepEqual(actions, ['connection_created', 'connection_renamed', 'connection_deleted']);
      } finally {
        await t.close();
      }
    });
  });
}
