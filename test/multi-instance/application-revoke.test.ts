/**
 * Issue 30, item 3 across instances (PostgreSQL): two app instances on one database, each
 * keeping verified tokens in memory for 300 s (BEARER_CACHE_SECONDS' most). An admin revokes an
 * application's tokens on the console of instance A; instance B, which has the tokens in its
 * cache, refuses them at once: the revocation's notice (LISTEN/NOTIFY) dropped them, long before
 * its cache would have let go. First the test shows B really answers from memory: a token
 * revoked behind its back (a plain UPDATE that announces nothing) still works there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createClient, createTeam, createTeamUser } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { sha256 } from '../../src/ids.ts';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { BASE_URL, TEST_CONFIG } from '../support/app.ts';
import { createPgSchema, NO_POSTGRES, postgresUrl } from '../support/engines.ts';
import { hiddenFields, PageSession } from '../support/oauth.ts';
import { until } from '../support/wait.ts';

const PASSWORD = 'correct horse battery staple';
const CACHE_NOTE = 'the refusal on instance B (its cache keeps entries 300 s)';

describe('revoking an application in the console, across two instances on PostgreSQL', { skip: NO_POSTGRES }, () => {
  let schema: { url: string; drop(): Promise<void> };
  const storages: Storage[] = [];
  const apps: FastifyInstance[] = [];

  before(async () => {
    schema = await createPgSchema(postgresUrl!);
    for (let i = 0; i < 2; i++) {
      const storage = connect(schema.url, { poolSize: 4 });
      if (i === 0) await migrate(storage);
      storages.push(storage);
      const app = await buildApp({ config: { ...TEST_CONFIG, bearerCacheSeconds: 300 }, storage, clock: systemClock, delivery: false, asyncRequests: false });
      await app.ready();
      apps.push(app);
    }
  });
  after(async () => {
    for (const app of apps) await app.close();
    for (const storage of storages) await storage.close();
    await schema?.drop();
  });

  it("the application's tokens are refused by the other instance as soon as the revocation commits", async () => {
    const [a, b] = apps as [FastifyInstance, FastifyInstance];
    const deps = { storage: storages[0]!, clock: systemClock, baseUrl: BASE_URL };
    await createTeam(deps, 'acme');
    await createTeamUser(deps, 'acme', 'admin@acme.example', { password: PASSWORD, admin: true });
    const client = await createClient(deps, { name: 'Entra', redirectUris: [], team: 'acme' });
    const token = async () => {
      const res = await a.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
        payload: 'grant_type=client_credentials',
      });
      assert.equal(res.statusCode, 200, res.body);
      return String(res.json().access_token);
    };
    const status = async (app: FastifyInstance, bearer: string) => (await app.inject({ method: 'GET', url: '/v2/scim/Users?count=1', headers: { authorization: `Bearer ${bearer}` } })).statusCode;

    // B answers from memory: a token revoked behind its back still works there.
    const probe = await token();
    assert.equal(await status(b, probe), 200);
    await storages[0]!.db.updateTable('oauth_tokens').set({ revoked_at: new Date().toISOString() }).where('hash', '=', sha256(probe)).execute();
    assert.equal(await status(b, probe), 200, 'served from the cache of instance B');
    assert.equal(await status(a, probe), 401, 'instance A never cached it');

    const live = [await token(), await token()];
    for (const bearer of live) assert.equal(await status(b, bearer), 200, 'cached by instance B');

    const page = new PageSession({ app: a });
    const form = await page.get('/console/sign-in');
    assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);
    const path = `/console/admins/applications/${client.client_id}/revoke`;
    const confirm = await page.get(path);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /This ends <strong>2 live tokens<\/strong>/);
    const revoked = await page.post(path, hiddenFields(confirm.body, path));
    assert.equal(revoked.statusCode, 303);

    for (const bearer of live) {
      assert.equal(await status(a, bearer), 401, 'instance A: at once');
      await until(async () => (await status(b, bearer)) === 401, CACHE_NOTE);
    }
  });
});
