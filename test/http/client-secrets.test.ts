/**
 * Several secrets per client and a token lifetime per client over HTTP (DESIGN.md section 11;
 * issue 29 items 1, 2 and 7): any live secret authenticates at /oauth/token; a revoked or
 * expired one is invalid_client exactly as a wrong one; revoking a secret revokes its tokens
 * and no other; at most five live secrets; `rotate-secret` revokes every other secret; the
 * client's token lifetime is what expires_in / Expires_in report and when the token stops
 * working. `Validate_Credentials_Test` replays the Entra ID gallery validator's client
 * credentials test.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { addClientSecret, ClientSecretError, listClientSecrets, revokeClientSecret } from '../../src/oauth/client-secret-admin.ts';
import type { ClientChanger } from '../../src/oauth/client-secret-admin.ts';
import { createClient, rotateClientSecret as rotateFromCli } from '../../src/admin.ts';
import { updateClient } from '../../src/oauth/client-secret-admin.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, passwordGrant, postForm, registerAdmin, registerClient, scimStatus } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const changer = (t: TestApp): ClientChanger => ({ storage: t.storage, clock: t.clock, actor: CLI_ACTOR, requestId: null });

const rotateClientSecret = (t: TestApp, id: string) => rotateFromCli(adminDeps(t), id);
const updateClientAdmin = (t: TestApp, id: string, tokenLifetime: number) => updateClient(changer(t), id, { tokenLifetime });

const clientCredentials = (t: TestApp, client: TestClient, auth: 'basic' | 'form' = 'basic') => postForm(t, '/oauth/token', { grant_type: 'client_credentials' }, { client, auth });

async function tokenOf(t: TestApp, client: TestClient): Promise<string> {
  const res = await clientCredentials(t, client);
  assert.equal(res.statusCode, 200, res.body);
  return String(json(res).access_token);
}

/** What a refused client authentication answers, without the parts that vary per request. */
const refusal = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => ({ status: res.statusCode, body: JSON.parse(res.body) as unknown, challenge: res.headers['www-authenticate'] });

for (const engine of engines) {
  describe(`several secrets per client, on ${engine.name}`, () => {
    let t: TestApp;
    let first: TestClient;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      first = await registerClient(t, [], t.team.name);
    });
    afterEach(() => t.close());

    it('DESIGN 11: two live secrets both get tokens; revoking one refuses it and its tokens, the other secret and its tokens keep working', async () => {
      const added = await addClientSecret(changer(t), first.id, { name: 'next year' });
      assert.match(added.clientSecret, /^rc_cs_/);
      const second = { id: first.id, secret: added.clientSecret };
      const tokenA = await tokenOf(t, first);
      const tokenB = await tokenOf(t, second);
      assert.equal(await scimStatus(t, tokenA), 200);
      assert.equal(await scimStatus(t, tokenB), 200);

      const initial = (await listClientSecrets(changer(t), first.id)).find((s) => s.id !== added.id)!;
      const revoked = await revokeClientSecret(changer(t), first.id, initial.id);
      assert.equal(revoked.tokensRevoked, 1);
      assert.equal(await scimStatus(t, tokenA), 401);
      assert.equal(await scimStatus(t, tokenB), 200);
      const refused = await clientCredentials(t, first);
      assert.equal(refused.statusCode, 401);
      assert.equal(json(refused).error, 'invalid_client');
      assert.equal(await scimStatus(t, await tokenOf(t, second)), 200);
      assert.deepEqual((await listClientSecrets(changer(t), first.id)).map((s) => s.id), [added.id]);

      const trail = await t.storage.db.selectFrom('audit_events').select(['action', 'detail']).where('resource_id', '=', first.id).where('team_id', '=', t.team.id).execute();
      const actions = trail.map((e) => e.action);
      assert.ok(actions.includes('client_secret_added') && actions.includes('client_secret_revoked'), actions.join());
      assert.ok(trail.every((e) => !e.detail.includes(added.clientSecret)), 'no secret in the audit trail');
    });

    it('DESIGN 11: an expired secret is invalid_client with nothing more than a wrong secret gets, and counts as one', async () => {
      const shortLived = await addClientSecret(changer(t), first.id, { name: 'one day', days: 1 });
      const expiring = { id: first.id, secret: shortLived.clientSecret };
      assert.equal((await clientCredentials(t, expiring)).statusCode, 200);
      t.clock.advance(86_400_000 + 1000);
      const expired = await clientCredentials(t, expiring);
      const wrong = await clientCredentials(t, { id: first.id, secret: 'rc_cs_not-a-secret-of-this-client-at-all-0000000' });
      assert.equal(expired.statusCode, 401, expired.body);
      assert.deepEqual(refusal(expired), refusal(wrong));
      assert.equal(json(expired).error, 'invalid_client');
      // The limits count it: after enough failures even the live secret waits (limits.ts per client and address).
      let throttled = false;
      for (let i = 0; i < 30 && !throttled; i++) throttled = (await clientCredentials(t, expiring)).statusCode === 429;
      assert.ok(throttled, 'failures with an expired secret are limited like wrong secrets');
      const listed = await listClientSecrets(changer(t), first.id);
      assert.equal(listed.find((s) => s.id === shortLived.id)?.live, false);
    });

    it('DESIGN 11: a sixth live secret is refused; an expired one does not count', async () => {
      const shortLived = await addClientSecret(changer(t), first.id, { days: 1 });
      for (let i = 0; i < 3; i++) await addClientSecret(changer(t), first.id, { name: `s${i}` });
      await assert.rejects(addClientSecret(changer(t), first.id, { name: 'sixth' }), (e: unknown) => e instanceof ClientSecretError && /already has 5 live secrets/.test(e.message));
      t.clock.advance(86_400_000 + 1000);
      const sixth = await addClientSecret(changer(t), first.id, { name: 'sixth' });
      assert.notEqual(sixth.id, shortLived.id);
      await assert.rejects(addClientSecret(changer(t), first.id, { name: 'seventh' }), ClientSecretError);
    });

    it('DESIGN 11: expiry defaults to 2 years, at most 3; last use is written at most once a minute', async () => {
      const added = await addClientSecret(changer(t), first.id, {});
      assert.equal(Date.parse(added.expiresAt) - Date.parse(added.createdAt), 730 * 86_400_000);
      await assert.rejects(addClientSecret(changer(t), first.id, { days: 1096 }), ClientSecretError);
      await assert.rejects(addClientSecret(changer(t), first.id, { days: 0 }), ClientSecretError);
      const second = { id: first.id, secret: added.clientSecret };
      const used = async () => (await listClientSecrets(changer(t), first.id)).find((s) => s.id === added.id)!.lastUsedAt;
      assert.equal(await used(), null);
      await tokenOf(t, second);
      const once = await used();
      assert.ok(once !== null);
      t.clock.advance(10_000);
      await tokenOf(t, second);
      assert.equal(await used(), once, 'not written again within a minute');
      t.clock.advance(61_000);
      await tokenOf(t, second);
      assert.ok((await used())! > once!);
    });

    it('client rotate-secret: a new secret; every other secret and every token of the client revoked', async () => {
      const other = await addClientSecret(changer(t), first.id, { name: 'other' });
      const token = await tokenOf(t, first);
      const rotated = await rotateClientSecret(t, first.id);
      assert.equal(rotated.secrets_revoked, 2);
      assert.equal(await scimStatus(t, token), 401);
      assert.equal((await clientCredentials(t, first)).statusCode, 401);
      assert.equal((await clientCredentials(t, { id: first.id, secret: other.clientSecret })).statusCode, 401);
      assert.equal(await scimStatus(t, await tokenOf(t, { id: first.id, secret: rotated.client_secret })), 200);
      assert.equal((await listClientSecrets(changer(t), first.id)).length, 1);
    });

    it('DESIGN 11: a token lifetime of the client is reported in expires_in and Expires_in, and the token stops working then', async () => {
      await updateClientAdmin(t, first.id, 7200);
      const res = await clientCredentials(t, first);
      assert.equal(json(res).expires_in, 7200);
      assert.equal(json(res).Expires_in, '7200');
      const token = String(json(res).access_token);
      t.clock.advance(7100_000);
      assert.equal(await scimStatus(t, token), 200);
      t.clock.advance(101_000);
      assert.equal(await scimStatus(t, token), 401);
      await assert.rejects(updateClientAdmin(t, first.id, 299), ClientSecretError);
      await assert.rejects(updateClientAdmin(t, first.id, 86_401), ClientSecretError);
    });

    it('DESIGN 11: the token lifetime holds for every grant, the password grant and its refresh too', async () => {
      const created = await createClient(adminDeps(t), { name: 'Short', redirectUris: ['https://app.example/cb'], tokenLifetime: 600 });
      const client = { id: created.client_id, secret: created.client_secret };
      const admin = await registerAdmin(t);
      const granted = await passwordGrant(t, client, admin);
      assert.equal(json(granted).expires_in, 600);
      const refreshed = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(json(granted).refresh_token) }, { client });
      assert.equal(json(refreshed).Expires_in, '600');
    });

    it('Validate_Credentials_Test: client credentials give a token of 60 to 360 minutes that works on the SCIM API', async () => {
      // Entra's validator: the operator sets a token lifetime within Entra's range, Entra posts
      // client_credentials with the client id and secret in the form, then calls the tenant URL.
      const created = await createClient(adminDeps(t), { name: 'Entra provisioning', redirectUris: [], team: t.team.name, tokenLifetime: 5400 });
      const client = { id: created.client_id, secret: created.client_secret };
      for (const auth of ['form', 'basic'] as const) {
        const res = await clientCredentials(t, client, auth);
        assert.equal(res.statusCode, 200, res.body);
        const body = json(res);
        assert.equal(body.token_type, 'bearer');
        assert.ok(Number(body.expires_in) >= 3600 && Number(body.expires_in) <= 21_600, String(body.expires_in));
        assert.equal(body.expires_in, 5400);
        assert.equal(body.Expires_in, '5400');
        const users = await t.app.inject({ method: 'GET', url: '/v2/scim/Users?filter=userName%20eq%20%22validator%40example.com%22', headers: { authorization: `Bearer ${String(body.access_token)}` } });
        assert.equal(users.statusCode, 200, users.body);
        assert.equal(json(users).totalResults, 0);
      }
    });
  });
}
