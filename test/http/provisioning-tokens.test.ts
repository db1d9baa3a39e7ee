/**
 * Issue 12, item 1: provisioning tokens have an id, a name and an expiry; they are listed without
 * their secret, revoked by id (CLI and console share admin.ts / oauth/provisioning.ts), and
 * /oauth/revoke really revokes one (it used to answer 200 and leave it working). "Last used" is
 * written off the request path, at most once a minute per token.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditEvents, issueToken, revokeToken, tokens } from '../../src/admin.ts';
import { LastUsed } from '../../src/http/last-used.ts';
import { createTestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, postForm, registerAdmin, registerClient, scimStatus } from '../support/oauth.ts';
import { sha256 } from '../../src/ids.ts';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Storage } from '../../src/storage/connect.ts';

/** Counts UPDATE statements (the only writes "last used" makes). */
class Updates implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'UpdateQueryNode') this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

function countingStorage(storage: Storage): { storage: Storage; writes(): number } {
  const plugin = new Updates();
  return { storage: { ...storage, db: storage.db.withPlugin(plugin) }, writes: () => plugin.count };
}

for (const engine of engines) {
  describe(`provisioning tokens (${engine.name})`, () => {
    it('issue, list without the secret, use, revoke by id: 401 afterwards; both write audit rows', async () => {
      const t = await createTestApp({ engine });
      try {
        const admin = await registerAdmin(t);
        const deps = adminDeps(t);
        const issued = await issueToken(deps, 'acme', admin.userName, { scope: ['read', 'write'], ttlSeconds: 90 * 86_400, name: 'Entra ID <prod>' });
        assert.match(issued.id, /^[A-Z0-9]{20}$/);
        assert.equal(await scimStatus(t, issued.token), 200);
        const listed = await tokens(deps, 'acme');
        assert.equal(listed.length, 1);
        assert.equal(listed[0]!.id, issued.id);
        assert.equal(listed[0]!.name, 'Entra ID <prod>');
        assert.equal(listed[0]!.state, 'active');
        assert.equal(listed[0]!.expiresAt, issued.expiresAt);
        assert.doesNotMatch(JSON.stringify(listed), /rc_at_/, 'the secret is never listed');

        const revoked = await revokeToken(deps, 'acme', issued.id);
        assert.equal(revoked.alreadyRevoked, false);
        assert.equal(await scimStatus(t, issued.token), 401);
        assert.equal((await tokens(deps, 'acme'))[0]!.state, 'revoked');
        await assert.rejects(revokeToken(deps, 'acme', 'NOSUCHTOKEN000000000'), /no token with id/);

        const events = await auditEvents(deps, 'acme', undefined, 100);
        const tokenEvents = events.filter((e) => e.resourceType === 'Token').map((e) => [e.action, e.resourceId]);
        assert.deepEqual(tokenEvents, [['token_issued', issued.id], ['token_revoked', issued.id]]);
      } finally {
        await t.close();
      }
    });

    it('a token from another team is not listed, nor revoked by its id', async () => {
      const t = await createTestApp({ engine });
      try {
        const admin = await registerAdmin(t);
        await t.addTeam('other');
        const issued = await issueToken(adminDeps(t), 'acme', admin.userName, { scope: ['read'], ttlSeconds: 3600 });
        assert.deepEqual(await tokens(adminDeps(t), 'other'), []);
        await assert.rejects(revokeToken(adminDeps(t), 'other', issued.id), /no token with id/);
        assert.equal(await scimStatus(t, issued.token), 200);
      } finally {
        await t.close();
      }
    });

    it('/oauth/revoke of an operator-issued token revokes it (it answered 200 and the token kept working)', async () => {
      const t = await createTestApp({ engine });
      try {
        const admin = await registerAdmin(t);
        const client = await registerClient(t);
        const issued = await issueToken(adminDeps(t), 'acme', admin.userName, { scope: ['read', 'write'], ttlSeconds: 3600 });
        const res = await postForm(t, '/oauth/revoke', { token: issued.token }, { client });
        assert.equal(res.statusCode, 200);
        assert.equal(await scimStatus(t, issued.token), 401);
        assert.equal((await tokens(adminDeps(t), 'acme'))[0]!.state, 'revoked');
      } finally {
        await t.close();
      }
    });

    it('"last used" costs one write a minute per token, none on the request path', async () => {
      const t = await createTestApp({ engine });
      try {
        const admin = await registerAdmin(t);
        const issued = await issueToken(adminDeps(t), 'acme', admin.userName, { scope: ['read'], ttlSeconds: 3600 });
        assert.equal((await tokens(adminDeps(t), 'acme'))[0]!.lastUsedAt, null);
        const spy = countingStorage(t.storage);
        const recorder = new LastUsed(spy.storage, t.clock, t.app.log, 60_000);
        for (let i = 0; i < 50; i++) recorder.used(sha256(issued.token));
        assert.equal(spy.writes(), 0, 'noting a use writes nothing');
        await recorder.flush();
        assert.equal(spy.writes(), 1, 'fifty uses, one write');
        for (let i = 0; i < 50; i++) recorder.used(sha256(issued.token));
        await recorder.flush();
        assert.equal(spy.writes(), 1, 'within the minute nothing more is written');
        t.clock.advance(61_000);
        recorder.used(sha256(issued.token));
        await recorder.close();
        assert.equal(spy.writes(), 2);
        assert.notEqual((await tokens(adminDeps(t), 'acme'))[0]!.lastUsedAt, null);

        // Through the app: a SCIM request notes the use, and closing the app writes it.
        const before = (await tokens(adminDeps(t), 'acme'))[0]!.lastUsedAt;
        t.clock.advance(120_000);
        assert.equal(await scimStatus(t, issued.token), 200);
        await t.app.close();
        const after = (await tokens(adminDeps(t), 'acme'))[0]!.lastUsedAt;
        assert.ok(after !== null && before !== null && after > before, `${after} after ${before}`);
      } finally {
        await t.close();
      }
    });
  });
}
