/**
 * Federated credentials (Entra workload identity federation; RFC 7523 2.2 and 3, RFC 7521 4.2)
 * over HTTP on every engine, against a local stand-in for Entra ID (test/support/entra-standin.ts):
 * the stand-in signs assertions shaped like Entra's (RS256 with `kid` and `x5t`, `aud` a bare
 * application id, `uti` for `jti`, `tid`, `azp`, `oid`, `ver`), publishes its keys through its
 * OpenID configuration, rotates them, and misbehaves when told. `Federated_Identity_Test` replays
 * the Entra gallery validator's test of that name. Every check of the issue's item 5 has its
 * failing case, answered `invalid_client` (401 with a challenge) and nothing more.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { handMadeJws, postWithAssertion } from '../support/assertions.ts';
import { engines } from '../support/engines.ts';
import { EntraStandIn } from '../support/entra-standin.ts';
import type { EntraAssertionOptions } from '../support/entra-standin.ts';
import { adminDeps, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';
import { addFederation } from '../../src/oauth/client-trust.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

/**
 * The key fetcher's timeout in these tests: an issuer that hangs fails its request after this.
 * Long enough for a healthy loopback issuer to answer on a loaded host.
 */
const FETCH_TIMEOUT_MS = 2_000;

const refused = (res: LightMyRequestResponse) => {
  assert.equal(res.statusCode, 401, res.body);
  assert.deepEqual(json(res), { error: 'invalid_client', error_description: 'Client authentication failed' });
  assert.match(String(res.headers['www-authenticate']), /^Basic realm="rollcall"/);
};

for (const engine of engines) {
  describe(`federated credentials: Entra workload identity federation (${engine.name})`, () => {
    let t: TestApp;
    let entra: EntraStandIn;
    let client: TestClient;
    let logLines: string[];
    beforeEach(async () => {
      logLines = [];
      t = await createTestApp({ engine, config: { logLevel: 'info' }, logStream: { write: (line) => void logLines.push(line) }, deps: { keyFetch: { timeoutMs: FETCH_TIMEOUT_MS } } });
      entra = await EntraStandIn.start(() => t.clock.now());
      client = await registerClient(t, [], t.team.name);
      await addFederation(adminDeps(t), client.id, { issuer: entra.issuer, subject: entra.objectId });
    });
    afterEach(async () => {
      await t.close();
      await entra.close();
    });

    /** Entra's token request: grant_type=client_credentials, client_id, the assertion. */
    const grant = async (assertion: string | Promise<string>, form: Record<string, string> = {}, address?: string) =>
      postWithAssertion(t, '/oauth/token', await assertion, { grant_type: 'client_credentials', client_id: client.id, ...form }, address !== undefined ? { address } : {});
    const entraAssertion = (options: Partial<EntraAssertionOptions> = {}) => entra.assertion({ audience: client.id, ...options });

    const refusedFor = (res: LightMyRequestResponse, reason: RegExp) => {
      refused(res);
      const line = logLines.filter((l) => l.includes('client assertion refused')).at(-1) ?? '{}';
      assert.match(String((JSON.parse(line) as { reason?: string }).reason), reason);
    };

    it('Federated_Identity_Test: a token from an Entra-signed assertion via client_credentials works on the SCIM API', async () => {
      const res = await grant(entraAssertion());
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.equal(body.token_type, 'bearer');
      assert.ok(Number(body.expires_in) >= 3600 && Number(body.expires_in) <= 21_600, `expires_in ${body.expires_in}`);
      assert.equal(body.refresh_token, undefined);
      const token = String(body.access_token);
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' };
      const created = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers, payload: JSON.stringify({ schemas: [USER], userName: 'ada@contoso.example', active: true }) });
      assert.equal(created.statusCode, 201, created.body);
      const id = String(json(created).id);
      const found = await t.app.inject({ method: 'GET', url: '/v2/scim/Users?filter=userName%20eq%20%22ada@contoso.example%22', headers });
      assert.equal(json(found).totalResults, 1);
      const patched = await t.app.inject({ method: 'PATCH', url: `/v2/scim/Users/${id}`, headers, payload: JSON.stringify({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }) });
      assert.equal(patched.statusCode, 200, patched.body);
    });

    it('an assertion whose iss, sub or uti holds NUL is invalid_client, never a 500', async () => {
      const base = { aud: client.id, iat: Math.floor(t.clock.now().getTime() / 1000), exp: Math.floor(t.clock.now().getTime() / 1000) + 3600 };
      for (const claims of [
        { ...base, iss: `${entra.issuer}\u0000`, sub: entra.objectId, uti: 'nul-1' },
        { ...base, iss: entra.issuer, sub: `${entra.objectId}\u0000`, uti: 'nul-2' },
        { ...base, iss: 'x'.repeat(3000), sub: entra.objectId, uti: 'nul-3' },
      ]) {
        refusedFor(await grant(handMadeJws({ alg: 'RS256', kid: entra.kid }, claims, () => 'c2lnbmF0dXJl')), /not text that can name a credential/);
      }
      refusedFor(await grant(entraAssertion({ claims: { uti: 'a\u0000b' } })), /neither "jti" nor "uti"/);
    });

    it("Entra's token request with scope=scim gets a token for read and write", async () => {
      const res = await grant(entraAssertion(), { scope: 'scim' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(json(res).scope, 'read write');
      const headers = { authorization: `Bearer ${String(json(res).access_token)}`, 'content-type': 'application/scim+json' };
      const created = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers, payload: JSON.stringify({ schemas: [USER], userName: 'scim-scope@contoso.example' }) });
      assert.equal(created.statusCode, 201, created.body);
    });

    it("Entra's shapes pass: aud a bare application id, uti in place of jti, tid/azp/oid/ver, kid and x5t in the header; the request's client_id decides the client", async () => {
      const appId = '8f2c5d4e-6a1b-4c3d-9e8f-0a1b2c3d4e5f';
      const other = await registerClient(t, [], t.team.name);
      await addFederation(adminDeps(t), other.id, { issuer: entra.issuer, subject: entra.objectId, audience: appId });
      const assertion = await entra.assertion({ audience: appId });
      const [header, payload] = assertion.split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>);
      assert.equal(header!.alg, 'RS256');
      assert.ok(header!.kid && header!.x5t);
      assert.equal(payload!.jti, undefined);
      assert.ok(payload!.uti && payload!.tid && payload!.azp && payload!.oid && payload!.ver);
      refusedFor(await grant(assertion), /"aud" names neither/);
      assert.equal((await postWithAssertion(t, '/oauth/token', await entra.assertion({ audience: appId }), { grant_type: 'client_credentials', client_id: other.id })).statusCode, 200);
    });

    it('the checks of iss, sub and aud: each wrong one is invalid_client; client_id is required', async () => {
      refusedFor(await grant(entraAssertion({ claims: { iss: `${entra.issuer}x` } })), /trusts no such issuer and subject/);
      refusedFor(await grant(entraAssertion({ claims: { sub: '00000000-0000-0000-0000-000000000000' } })), /trusts no such issuer and subject/);
      refusedFor(await grant(entraAssertion({ audience: 'api://someone-else' })), /"aud" names neither/);
      const noClientId = await postWithAssertion(t, '/oauth/token', await entraAssertion(), { grant_type: 'client_credentials' });
      refused(noClientId);
      const stranger = await registerClient(t, [], t.team.name);
      refusedFor(await grant(entraAssertion(), { client_id: stranger.id }), /trusts no such issuer/);
    });

    it('times: expired, not yet valid (nbf and iat in the future), and living longer than 24 hours fail; 60 s of skew is allowed', async () => {
      refusedFor(await grant(entraAssertion({ issuedInSeconds: -7200, lifetimeSeconds: 3600 })), /"exp" claim timestamp check failed/);
      refusedFor(await grant(entraAssertion({ issuedInSeconds: 300 })), /"nbf"/);
      refusedFor(await grant(entraAssertion({ issuedInSeconds: 300, claims: { nbf: undefined } })), /"iat" is in the future/);
      refusedFor(await grant(entraAssertion({ lifetimeSeconds: 25 * 3600 })), /longer than 86400 s/);
      refusedFor(await grant(entraAssertion({ claims: { exp: undefined } })), /"exp"/);
      assert.equal((await grant(entraAssertion({ issuedInSeconds: 30 }))).statusCode, 200, 'within the skew');
    });

    it('uti (or jti) is required and single-use while the assertion lives', async () => {
      refusedFor(await grant(entraAssertion({ claims: { uti: undefined } })), /neither "jti" nor "uti"/);
      const once = await entraAssertion();
      assert.equal((await grant(once)).statusCode, 200);
      refusedFor(await grant(once), /replay/);
      assert.equal((await grant(entraAssertion({ claims: { uti: undefined, jti: 'jti-instead' } }))).statusCode, 200);
    });

    it('alg none, HS256 signed with the published public key, and an assertion over 8 KiB fail', async () => {
      const claims = entra.claims({ audience: client.id }) as Record<string, unknown>;
      refusedFor(await grant(handMadeJws({ alg: 'none', kid: entra.kid }, claims, () => '')), /algorithm "none"/);
      const published = JSON.stringify(entra.jwks().keys[0]);
      const hmac = handMadeJws({ alg: 'HS256', kid: entra.kid, typ: 'JWT' }, { ...claims, uti: 'another' }, (input) => createHmac('sha256', published).update(input).digest('base64url'));
      refusedFor(await grant(hmac), /algorithm "HS256"/);
      refusedFor(await grant(entraAssertion({ claims: { padding: 'x'.repeat(8 * 1024) } })), /over 8192 bytes/);
    });

    it("RFC 7517 4.2: the issuer's key published with use=enc does not verify", async () => {
      entra.misbehaviour = 'encryption-key';
      refusedFor(await grant(entraAssertion()), /no registered key matches/);
    });

    it('an unknown kid fails; after the issuer rotates its keys the new key works and the old one no longer does', async () => {
      assert.equal((await grant(entraAssertion())).statusCode, 200);
      const unpublished = await entra.unpublishedSigner();
      refusedFor(await grant(unpublished({ audience: client.id })), /no registered key matches/);
      const before = await entraAssertion();
      await entra.rotate();
      // The fetcher asks again for an unknown kid at most once a minute per issuer.
      t.clock.advance(61_000);
      const res = await grant(entraAssertion());
      assert.equal(res.statusCode, 200, res.body);
      refused(await grant(before));
    });

    for (const [mode, what, reason] of [
      ['hang', 'hangs', new RegExp(`no key set within ${FETCH_TIMEOUT_MS} ms`)],
      ['huge', 'answers 5 MB', /over the 65536-byte limit|more than 65536 bytes/],
      ['redirect', 'redirects', /302|redirect/],
      ['fail', 'answers 503', /503/],
    ] as const) {
      it(`an issuer that ${what} fails only the request that needs it, as invalid_client`, async () => {
        entra.misbehaviour = mode;
        refusedFor(await grant(entraAssertion()), reason);
        // Other clients, and secrets, are untouched meanwhile.
        const bySecret = await t.app.inject({
          method: 'POST',
          url: '/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
          payload: 'grant_type=client_credentials',
        });
        assert.equal(bySecret.statusCode, 200, bySecret.body);
        entra.misbehaviour = null;
        t.clock.advance(5 * 60_000);
        const recovered = await grant(entraAssertion());
        assert.equal(recovered.statusCode, 200, recovered.body);
      });
    }

    it('keys are fetched under the egress policy: a loopback issuer is refused unless ALLOW_RECEIVERS allows it', async () => {
      await t.close();
      logLines = [];
      t = await createTestApp({ engine, config: { logLevel: 'info', allowReceivers: [] }, logStream: { write: (line) => void logLines.push(line) }, deps: { keyFetch: { timeoutMs: FETCH_TIMEOUT_MS } } });
      client = await registerClient(t, [], t.team.name);
      await addFederation(adminDeps(t), client.id, { issuer: entra.issuer, subject: entra.objectId });
      refusedFor(await grant(entraAssertion()), /refused by the egress policy|loopback/);
      assert.equal(entra.served.size, 0, 'the stand-in was never asked');
    });

    it('13.5: failing assertions count like wrong secrets (then slow_down), and never lock out another client', async () => {
      await t.close();
      t = await createTestApp({ engine, limits: { clientFailures: { points: 3, seconds: 600, blockSeconds: 600 } }, deps: { keyFetch: { timeoutMs: FETCH_TIMEOUT_MS } } });
      client = await registerClient(t, [], t.team.name);
      await addFederation(adminDeps(t), client.id, { issuer: entra.issuer, subject: entra.objectId });
      const other = await registerClient(t, [], t.team.name);
      await addFederation(adminDeps(t), other.id, { issuer: entra.issuer, subject: entra.objectId });
      const attacker = '203.0.113.9';
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await grant(entraAssertion({ audience: 'api://wrong' }), {}, attacker)).statusCode);
      assert.deepEqual(statuses.slice(0, 2), [401, 401]);
      assert.equal(statuses.at(-1), 429, statuses.join(','));
      const slowed = await grant(entraAssertion({ audience: 'api://wrong' }), {}, attacker);
      assert.equal(json(slowed).error, 'slow_down');
      assert.equal((await grant(entraAssertion(), {}, attacker)).statusCode, 200, 'the right assertion still works');
      const another = await postWithAssertion(t, '/oauth/token', await entra.assertion({ audience: other.id }), { grant_type: 'client_credentials', client_id: other.id }, { address: attacker });
      assert.equal(another.statusCode, 200, another.body);
    });
  });
}
