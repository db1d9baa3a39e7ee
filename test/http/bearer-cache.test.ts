/**
 * Issue 14 item 1: the bearer check serves verified access tokens from memory (oauth/
 * bearer-cache.ts), and every write that takes a token's access away reaches the cache at once
 * (storage/revocations.ts). Each test first proves the token is served from the cache (its
 * request runs no token statement), then takes its access away through one path and expects the
 * very next request to be 401 (RFC 6750 3.1 invalid_token). Also: the cache's bounds (entries,
 * TTL, the token's own expiry), a lookup racing a notice, and a team change seen at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { deleteClient, rotateClientSecret, updateTeam } from '../../src/admin.ts';
import { BearerCache } from '../../src/oauth/bearer-cache.ts';
import { issueAccessToken } from '../../src/oauth/tokens.ts';
import type { Revocations } from '../../src/storage/revocations.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, passwordGrant, postForm, registerAdmin, registerClient, scimStatus } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';
import { StatementLog } from '../support/storage-spy.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const patchOp = (operations: unknown[]) => ({ schemas: [PATCH], Operations: operations });

for (const engine of engines) {
  describe(`bearer cache on ${engine.name}`, () => {
    const log = new StatementLog();
    let t: TestApp;
    let client: TestClient;
    let n = 0;

    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => log.wrap(s) });
      client = await registerClient(t);
    });
    after(() => t.close());

    /** A signed-in admin's grant: an access token (with user, client and family) and its refresh token. */
    const signIn = async (c: TestClient = client) => {
      const admin = await registerAdmin(t, `admin${++n}@acme.example`);
      const res = await passwordGrant(t, c, admin);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      return { admin, access: String(body.access_token), refresh: String(body.refresh_token) };
    };

    /** The token's request runs no token statement: the cache answered. */
    const assertCached = async (token: string) => {
      assert.equal(await scimStatus(t, token), 200);
      log.reset();
      assert.equal(await scimStatus(t, token), 200);
      assert.ok(!log.statements.includes('tokenWithTeam'), `served from the cache: ${log.statements.join(', ')}`);
    };

    it('a token is read on its first request only; an unknown token is read every time', async () => {
      const token = await t.tokenFor(t.team.id, ['read', 'write']);
      log.reset();
      assert.equal(await scimStatus(t, token), 200);
      assert.deepEqual(log.statements.filter((s) => s === 'tokenWithTeam'), ['tokenWithTeam']);
      log.reset();
      assert.equal(await scimStatus(t, token), 200);
      assert.deepEqual(log.statements.filter((s) => s === 'tokenWithTeam'), []);
      for (let i = 0; i < 2; i++) {
        log.reset();
        assert.equal(await scimStatus(t, 'rc_at_unknown'), 401);
        assert.deepEqual(log.statements, ['tokenWithTeam']);
      }
    });

    it('RFC 7009: /oauth/revoke of an access token: the next request is 401', async () => {
      const { access } = await signIn();
      await assertCached(access);
      assert.equal((await postForm(t, '/oauth/revoke', { token: access }, { client })).statusCode, 200);
      assert.equal(await scimStatus(t, access), 401);
    });

    it('RFC 7009 2.1: /oauth/revoke of a refresh token ends its grant: the grant\'s access token is 401 next', async () => {
      const { access, refresh } = await signIn();
      await assertCached(access);
      assert.equal((await postForm(t, '/oauth/revoke', { token: refresh, token_type_hint: 'refresh_token' }, { client })).statusCode, 200);
      assert.equal(await scimStatus(t, access), 401);
    });

    it('RFC 9700 4.14.2: a replayed refresh token revokes its grant: the rotated access token is 401 next', async () => {
      const { refresh } = await signIn();
      const rotated = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }, { client });
      assert.equal(rotated.statusCode, 200, rotated.body);
      const access = String(json(rotated).access_token);
      await assertCached(access);
      const replay = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }, { client });
      assert.equal(replay.statusCode, 400);
      assert.equal(json(replay).error, 'invalid_grant');
      assert.equal(await scimStatus(t, access), 401);
    });

    it('DESIGN 5: deactivating the user (PATCH active false) ends its token on the next request', async () => {
      const { admin, access } = await signIn();
      await assertCached(access);
      const res = await t.request('PATCH', `/v2/scim/Users/${admin.id}`, patchOp([{ op: 'replace', path: 'active', value: false }]));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(await scimStatus(t, access), 401);
    });

    it('DELETE /Users/{id} (deactivation in a hiding team) ends the user\'s token on the next request', async () => {
      const { admin, access } = await signIn();
      await assertCached(access);
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${admin.id}`)).statusCode, 204);
      assert.equal(await scimStatus(t, access), 401);
    });

    it('a new password or a changed userType ends the user\'s tokens on the next request', async () => {
      const first = await signIn();
      await assertCached(first.access);
      const pw = await t.request('PATCH', `/v2/scim/Users/${first.admin.id}`, patchOp([{ op: 'replace', path: 'password', value: 'another long passphrase 42' }]));
      assert.equal(pw.statusCode, 200, pw.body);
      assert.equal(await scimStatus(t, first.access), 401);

      const second = await signIn();
      await assertCached(second.access);
      const type = await t.request('PATCH', `/v2/scim/Users/${second.admin.id}`, patchOp([{ op: 'replace', path: 'userType', value: 'employee' }]));
      assert.equal(type.statusCode, 200, type.body);
      assert.equal(await scimStatus(t, second.access), 401);
    });

    it('rotating a client secret ends the client\'s tokens at once; deleting a client too', async () => {
      const other = await registerClient(t);
      const { access } = await signIn(other);
      const untouched = (await signIn()).access;
      await assertCached(access);
      await assertCached(untouched);
      const rotated = await rotateClientSecret(adminDeps(t), other.id);
      assert.ok(rotated.revoked >= 2, 'the access and refresh token of the grant');
      assert.equal(await scimStatus(t, access), 401);
      assert.equal(await scimStatus(t, untouched), 200, 'another client\'s token is not touched');
      // The old secret is refused; the new one works.
      const old = await passwordGrant(t, other, await registerAdmin(t, `admin${++n}@acme.example`));
      assert.equal(old.statusCode, 401);

      const third = await registerClient(t);
      const viaThird = (await signIn(third)).access;
      await assertCached(viaThird);
      await deleteClient(adminDeps(t), third.id);
      assert.equal(await scimStatus(t, viaThird), 401);
    });

    it('RFC 6749 2.3.1: the token endpoint reads a client once; a rotated secret or a deleted client is refused on the next request', async () => {
      const c = await registerClient(t);
      const admin = await registerAdmin(t, `admin${++n}@acme.example`);
      assert.equal((await passwordGrant(t, c, admin)).statusCode, 200);
      log.reset();
      const again = await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName, password: admin.password }, { client: { id: c.id, secret: 'rc_cs_wrong' } });
      assert.equal(again.statusCode, 401, 'a wrong secret is still refused when the client is cached');
      assert.ok(!log.statements.includes('clientById'), `served from the cache: ${log.statements.join(', ')}`);

      const rotated = await rotateClientSecret(adminDeps(t), c.id);
      assert.equal((await passwordGrant(t, c, admin)).statusCode, 401, 'the old secret');
      assert.equal((await passwordGrant(t, { id: c.id, secret: rotated.client_secret }, admin)).statusCode, 200, 'the new secret');
      await deleteClient(adminDeps(t), c.id);
      assert.equal((await passwordGrant(t, { id: c.id, secret: rotated.client_secret }, admin)).statusCode, 401, 'a deleted client');
    });

    it('a team setting changed while its token is cached applies to the next request (the cached team row is dropped)', async () => {
      const { team, token } = await t.addTeam(`shows${++n}`);
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
      const created = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers, payload: JSON.stringify({ userName: 'gone@acme.example' }) });
      const id = String(json(created).id);
      await t.app.inject({ method: 'PATCH', url: `/v2/scim/Users/${id}`, headers, payload: JSON.stringify(patchOp([{ op: 'replace', path: 'active', value: false }])) });
      const read = () => t.app.inject({ method: 'GET', url: `/v2/scim/Users/${id}`, headers });
      assert.equal((await read()).statusCode, 404, 'hidden while the team hides deactivated users');
      await updateTeam(adminDeps(t), team.name, 'visible');
      const shown = await read();
      assert.equal(shown.statusCode, 200, 'the new setting, not the cached team row');
      assert.equal(json(shown).active, false);
    });

    it('bounded: at most maxEntries tokens, each for at most the TTL and never past the token\'s expiry', async () => {
      const cache = new BearerCache(t.storage, t.clock, { ttlSeconds: 60, maxEntries: 2 });
      try {
        const tokens = await Promise.all([0, 1, 2].map(() => t.tokenFor(t.team.id, ['read'])));
        const reads = async (token: string) => {
          log.reset();
          assert.ok(await cache.verify(token));
          return log.statements.filter((s) => s === 'tokenWithTeam').length;
        };
        assert.equal(await reads(tokens[0]!), 1);
        assert.equal(await reads(tokens[1]!), 1);
        assert.equal(await reads(tokens[0]!), 0);
        assert.equal(await reads(tokens[2]!), 1);
        assert.equal(cache.size, 2);
        assert.equal(await reads(tokens[0]!), 1, 'the oldest entry made room');

        // The TTL: served until it ends, read again after.
        assert.equal(await reads(tokens[2]!), 0);
        t.clock.advance(61_000);
        assert.equal(await reads(tokens[2]!), 1);

        // A token that expires before the TTL ends is not served past its expiry.
        const short = (await issueAccessToken(t.storage.db, t.clock, { teamId: t.team.id, userId: null, clientId: null, scope: ['read'], ttlSeconds: 10 })).token;
        assert.equal(await reads(short), 1);
        assert.equal(await reads(short), 0);
        t.clock.advance(10_500);
        log.reset();
        assert.equal(await cache.verify(short), undefined, 'expired: not served from memory');
      } finally {
        cache.close();
      }
    });

    it('a lookup that began before a revocation notice is not kept (it may have read the row before the write)', async () => {
      const cache = new BearerCache(t.storage, t.clock, { ttlSeconds: 60, maxEntries: 10 });
      try {
        const token = await t.tokenFor(t.team.id, ['read']);
        const pending = cache.verify(token);
        (t.storage.revocations as Revocations).emit({ kind: 'user', id: 'SOMEONE0000000000000' });
        assert.ok(await pending);
        assert.equal(cache.size, 0);
        assert.ok(await cache.verify(token));
        assert.equal(cache.size, 1, 'a lookup after the notice is kept');
      } finally {
        cache.close();
      }
    });

    it('BEARER_CACHE_SECONDS=0 turns the cache off: every request reads its token', async () => {
      const off = await createTestApp({ engine, wrapStorage: (s) => log.wrap(s), deps: { bearerCache: { ttlSeconds: 0 } } });
      try {
        for (let i = 0; i < 2; i++) {
          log.reset();
          assert.equal(await scimStatus(off, off.token), 200);
          assert.deepEqual(log.statements.filter((s) => s === 'tokenWithTeam'), ['tokenWithTeam']);
        }
      } finally {
        await off.close();
      }
    });
  });
}
