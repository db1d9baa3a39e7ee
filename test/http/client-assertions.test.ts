/**
 * private_key_jwt (RFC 7523 2.2 and 3, OpenID Connect Core 9, RFC 7521 4.2) over HTTP, on every
 * engine: a client that registered its public keys authenticates at /oauth/token, /oauth/revoke
 * and /oauth/introspect with an assertion it signed (RS256, PS256, ES256), and every check of the
 * issue's item 5 has its failing case, each answered with the same bland `invalid_client`
 * (401 with a challenge). A failing assertion counts against the client's limits like a wrong
 * secret; another client keeps working. The reason is in the operator's log, not in the answer.
 */
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { exportSPKI, importJWK } from 'jose';
import type { CryptoKey } from 'jose';
import { createTestApp, json, BASE_URL } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { clientAssertion, epoch, handMadeJws, jwksOf, keyPair, postWithAssertion } from '../support/assertions.ts';
import type { TestKeyPair } from '../support/assertions.ts';
import { engines } from '../support/engines.ts';
import { EntraStandIn } from '../support/entra-standin.ts';
import { adminDeps, postForm, registerClient, scimStatus } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';
import { deleteClient } from '../../src/admin.ts';
import { JWT_BEARER } from '../../src/oauth/assertion-auth.ts';
import { addClientKey, addFederation } from '../../src/oauth/client-trust.ts';

const refused = (res: LightMyRequestResponse) => {
  assert.equal(res.statusCode, 401, res.body);
  assert.deepEqual(json(res), { error: 'invalid_client', error_description: 'Client authentication failed' });
  assert.match(String(res.headers['www-authenticate']), /^Basic realm="rollcall"/);
};

for (const engine of engines) {
  describe(`private_key_jwt (${engine.name})`, () => {
    let t: TestApp;
    let client: TestClient;
    let rsa: TestKeyPair;
    let logLines: string[];
    beforeEach(async () => {
      logLines = [];
      t = await createTestApp({ engine, config: { logLevel: 'info' }, logStream: { write: (line) => void logLines.push(line) } });
      client = await registerClient(t, [], t.team.name);
      rsa = await keyPair('RS256');
      await addClientKey(adminDeps(t), client.id, { jwks: jwksOf(rsa) });
    });
    afterEach(() => t.close());

    /** Refused, and the operator's log says why (so each case fails for its own check). */
    const refusedFor = (res: LightMyRequestResponse, reason: RegExp) => {
      refused(res);
      const line = logLines.filter((l) => l.includes('client assertion refused')).at(-1) ?? '';
      const logged = (JSON.parse(line || '{}') as { reason?: string }).reason ?? '';
      assert.match(logged, reason);
    };

    const grant = (assertion: string, extra: Record<string, string> = {}, address?: string) =>
      postWithAssertion(t, '/oauth/token', assertion, { grant_type: 'client_credentials', ...extra }, address !== undefined ? { address } : {});

    it('RFC 7523 2.2: an RS256, PS256 or ES256 assertion of a registered key gets a token that works on SCIM', async () => {
      const ps = await keyPair('PS256');
      const ec = await keyPair('ES256');
      await addClientKey(adminDeps(t), client.id, { jwks: jwksOf(ps, ec) });
      for (const key of [rsa, ps, ec]) {
        const res = await grant(await clientAssertion(t, key, client.id));
        assert.equal(res.statusCode, 200, `${key.alg}: ${res.body}`);
        assert.equal(json(res).token_type, 'bearer');
        assert.equal(await scimStatus(t, String(json(res).access_token)), 200);
      }
    });

    it('RFC 7523 3: aud may be the token endpoint URL or the issuer identifier, in a list too; client_id may be sent if it matches', async () => {
      assert.equal((await grant(await clientAssertion(t, rsa, client.id, { aud: BASE_URL }))).statusCode, 200);
      assert.equal((await grant(await clientAssertion(t, rsa, client.id, { aud: ['https://elsewhere.example', `${BASE_URL}/oauth/token`] }))).statusCode, 200);
      assert.equal((await grant(await clientAssertion(t, rsa, client.id), { client_id: client.id })).statusCode, 200);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id), { client_id: 'ABCDEFGHIJ0123456789' }), /client_id differs/);
    });

    it('RFC 7523 2.2: keys registered as a jwks_uri are fetched when an assertion needs them', async () => {
      const published = await EntraStandIn.start(() => t.clock.now());
      try {
        const other = await registerClient(t, [], t.team.name);
        await addClientKey(adminDeps(t), other.id, { jwksUri: published.jwksUri });
        const now = epoch(t);
        const own = { iss: other.id, sub: other.id, jti: randomUUID(), exp: now + 300 };
        const res = await postWithAssertion(t, '/oauth/token', await published.assertion({ audience: `${BASE_URL}/oauth/token`, claims: own }), { grant_type: 'client_credentials' });
        assert.equal(res.statusCode, 200, res.body);
        // Keys fetched for one client never sign for another.
        refusedFor(await grant(await published.assertion({ audience: `${BASE_URL}/oauth/token`, claims: { ...own, iss: client.id, sub: client.id, jti: randomUUID() } })), /no registered key matches/);
      } finally {
        await published.close();
      }
    });

    it('RFC 7009 / RFC 7662: revocation and introspection take the assertion too', async () => {
      const issued = json(await grant(await clientAssertion(t, rsa, client.id)));
      const token = String(issued.access_token);
      const seen = await postWithAssertion(t, '/oauth/introspect', await clientAssertion(t, rsa, client.id), { token });
      assert.equal(seen.statusCode, 200, seen.body);
      assert.equal(json(seen).active, true);
      assert.equal(json(seen).client_id, client.id);
      const revoked = await postWithAssertion(t, '/oauth/revoke', await clientAssertion(t, rsa, client.id), { token });
      assert.equal(revoked.statusCode, 200, revoked.body);
      assert.equal(await scimStatus(t, token), 401);
    });

    it('RFC 7523 3 items 1-3: a wrong iss or sub, or an aud of something else, is invalid_client', async () => {
      const other = await registerClient(t, [], t.team.name);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { iss: other.id })), /a federated assertion needs the client_id/);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { sub: other.id })), /a federated assertion needs the client_id/);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { aud: 'https://rollcall.test/oauth/revoke' })), /"aud" names neither/);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { aud: undefined })), /"aud" names neither/);
      // Signed by this client's key, claiming to be the other client: the other has no such key.
      refusedFor(await grant(await clientAssertion(t, rsa, other.id)), /registered no keys/);
    });

    it('RFC 7523 3 items 4-5: exp is required, an expired assertion fails (60 s of skew), exp more than 10 minutes ahead fails', async () => {
      const now = epoch(t);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { exp: undefined })), /"exp" claim/);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { iat: now - 400, exp: now - 61 })), /"exp" claim timestamp check failed/);
      assert.equal((await grant(await clientAssertion(t, rsa, client.id, { iat: now - 400, exp: now - 30 }))).statusCode, 200, 'within the skew');
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { exp: now + 11 * 60 + 60 })), /more than 600 s ahead/);
    });

    it('RFC 7523 3 item 6: an assertion not yet valid (nbf or iat in the future beyond the skew) fails', async () => {
      const now = epoch(t);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { nbf: now + 120 })), /"nbf"/);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { iat: now + 120 })), /"iat" is in the future/);
      assert.equal((await grant(await clientAssertion(t, rsa, client.id, { nbf: now + 30, iat: now + 30 }))).statusCode, 200, 'within the skew');
    });

    it('RFC 7523 3 item 7: jti is required and single-use while the assertion lives', async () => {
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { jti: undefined })), /"jti" is missing/);
      const once = await clientAssertion(t, rsa, client.id);
      assert.equal((await grant(once)).statusCode, 200);
      refusedFor(await grant(once), /replay/);
      refusedFor(await postWithAssertion(t, '/oauth/introspect', once, { token: 'x' }), /replay/);
      // The same jti in a new assertion is a replay too.
      const jti = randomUUID();
      assert.equal((await grant(await clientAssertion(t, rsa, client.id, { jti }))).statusCode, 200);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { jti })), /replay/);
    });

    it('RFC 7518 3.1 / RFC 8725 3.1: alg none, HS256 signed with the public key, and an unknown kid fail', async () => {
      const now = epoch(t);
      const claims = { iss: client.id, sub: client.id, aud: `${BASE_URL}/oauth/token`, iat: now, exp: now + 300, jti: randomUUID() };
      refusedFor(await grant(handMadeJws({ alg: 'none', kid: rsa.kid }, claims, () => '')), /algorithm "none" is not accepted/);
      const publicPem = JSON.stringify(rsa.publicJwk);
      const hmac = handMadeJws({ alg: 'HS256', kid: rsa.kid }, { ...claims, jti: randomUUID() }, (input) => createHmac('sha256', publicPem).update(input).digest('base64url'));
      refusedFor(await grant(hmac), /algorithm "HS256" is not accepted/);
      // The classic confusion: the PEM of the public key as the HMAC secret.
      const pem = await exportSPKI(await importJWK(rsa.publicJwk, 'RS256') as CryptoKey);
      const viaPem = handMadeJws({ alg: 'HS256', kid: rsa.kid }, { ...claims, jti: randomUUID() }, (input) => createHmac('sha256', pem).update(input).digest('base64url'));
      refusedFor(await grant(viaPem), /algorithm "HS256" is not accepted/);
      const stranger = await keyPair('RS256');
      refusedFor(await grant(await clientAssertion(t, stranger, client.id)), /no registered key matches/);
      refusedFor(await grant(await clientAssertion(t, stranger, client.id, {}, { kid: rsa.kid })), /signature verification failed/);
    });

    it('RFC 7517 4.3: a key whose alg is PS256 does not verify an RS256 assertion', async () => {
      const pinned = await keyPair('RS256', { alg: 'PS256' });
      await addClientKey(adminDeps(t), client.id, { jwks: jwksOf(pinned) });
      refusedFor(await grant(await clientAssertion(t, pinned, client.id)), /no registered key matches/);
    });

    it('an assertion over 8 KiB is refused unread', async () => {
      refusedFor(await grant(await clientAssertion(t, rsa, client.id, { padding: 'x'.repeat(8 * 1024) })), /over 8192 bytes/);
      refusedFor(await grant(`${'a'.repeat(9000)}.b.c`, { client_id: client.id }), /over 8192 bytes/);
    });

    it('RFC 7521 4.2 / RFC 6749 5.2: one method only; an unknown assertion type is invalid_client; a half-sent assertion is invalid_request', async () => {
      const assertion = await clientAssertion(t, rsa, client.id);
      const withSecret = await postWithAssertion(t, '/oauth/token', assertion, { grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret });
      assert.equal(withSecret.statusCode, 400);
      assert.equal(json(withSecret).error, 'invalid_request');
      const withBasic = await t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
        payload: new URLSearchParams({ grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion }).toString(),
      });
      assert.equal(withBasic.statusCode, 400);
      assert.equal(json(withBasic).error, 'invalid_request');
      refused(await postWithAssertion(t, '/oauth/token', assertion, { grant_type: 'client_credentials' }, { type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }));
      const half = await postForm(t, '/oauth/token', { grant_type: 'client_credentials', client_assertion: assertion });
      assert.equal(half.statusCode, 400);
      assert.equal(json(half).error, 'invalid_request');
      refusedFor(await grant('not.a.jwt'), /not a compact JWS/);
      const inQuery = await t.app.inject({
        method: 'POST',
        url: `/oauth/token?client_assertion=${await clientAssertion(t, rsa, client.id)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `grant_type=client_credentials&client_assertion_type=${encodeURIComponent(JWT_BEARER)}`,
      });
      assert.equal(inQuery.statusCode, 400, 'RFC 6749 2.3.1: no credentials in the URI');
      assert.equal(json(inQuery).error, 'invalid_request');
    });

    it('deleting a client deletes what it trusted', async () => {
      await addFederation(adminDeps(t), client.id, { issuer: 'https://login.example/tenant/v2.0', subject: 'workload' });
      await deleteClient(adminDeps(t), client.id);
      assert.deepEqual(await t.storage.db.selectFrom('client_keys').select('id').where('client_id', '=', client.id).execute(), []);
      assert.deepEqual(await t.storage.db.selectFrom('client_federations').select('id').where('client_id', '=', client.id).execute(), []);
      refusedFor(await grant(await clientAssertion(t, rsa, client.id)), /no such client/);
    });

    it('the reason is logged for the operator, never answered', async () => {
      refused(await grant(await clientAssertion(t, rsa, client.id, { aud: 'https://elsewhere.example' })));
      const line = logLines.find((l) => l.includes('client assertion refused'));
      assert.ok(line, 'a log line for the refusal');
      assert.match(line, /"reason":"\\"aud\\" names neither audience/);
      assert.match(line, new RegExp(client.id));
    });
  });

  describe(`private_key_jwt failures and the limits (${engine.name})`, () => {
    let t: TestApp;
    afterEach(() => t.close());

    it('13.5: failing assertions count like wrong secrets (then slow_down); the right assertion and another client keep working', async () => {
      t = await createTestApp({ engine, limits: { clientFailures: { points: 3, seconds: 600, blockSeconds: 600 } } });
      const client = await registerClient(t, [], t.team.name);
      const other = await registerClient(t, [], t.team.name);
      const key = await keyPair('ES256');
      const otherKey = await keyPair('ES256');
      await addClientKey(adminDeps(t), client.id, { jwks: jwksOf(key) });
      await addClientKey(adminDeps(t), other.id, { jwks: jwksOf(otherKey) });
      const attacker = '203.0.113.7';
      const stranger = await keyPair('ES256');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const res = await postWithAssertion(t, '/oauth/token', await clientAssertion(t, stranger, client.id, {}, { kid: key.kid }), { grant_type: 'client_credentials' }, { address: attacker });
        statuses.push(res.statusCode);
      }
      assert.deepEqual(statuses.slice(0, 2), [401, 401]);
      assert.equal(statuses.at(-1), 429, statuses.join(','));
      const slowed = await postWithAssertion(t, '/oauth/token', await clientAssertion(t, stranger, client.id, {}, { kid: key.kid }), { grant_type: 'client_credentials' }, { address: attacker });
      assert.equal(json(slowed).error, 'slow_down');
      assert.ok(Number(slowed.headers['retry-after']) > 0);
      // Wrong secrets from that address count against the same client too.
      const wrongSecret = await postForm(t, '/oauth/token', { grant_type: 'client_credentials' }, { client: { id: client.id, secret: 'rc_cs_wrong' } });
      assert.equal(wrongSecret.statusCode, 401);
      const right = await postWithAssertion(t, '/oauth/token', await clientAssertion(t, key, client.id), { grant_type: 'client_credentials' }, { address: attacker });
      assert.equal(right.statusCode, 200, 'a right assertion is never refused for others\' failures');
      const another = await postWithAssertion(t, '/oauth/token', await clientAssertion(t, otherKey, other.id), { grant_type: 'client_credentials' }, { address: attacker });
      assert.equal(another.statusCode, 200, another.body);
    });
  });
}
