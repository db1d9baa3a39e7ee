/**
 * Issue 12, item 4 (operator fixes) at the HTTP level: an unreachable Redis is one warning line
 * and /readyz reports the rate limits degraded (still 200); ServiceProviderConfig's
 * documentationUri is a page that exists; a client_credentials-only client needs no redirect URI;
 * client and team changes write audit rows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { auditEvents, createClient, deleteClient, rotateClientSecret, updateTeam } from '../../src/admin.ts';
import { createTestApp, json } from '../support/app.ts';
import { adminDeps, postForm } from '../support/oauth.ts';

const requireRedis = process.env.REQUIRE_REDIS === '1';

describe('operator fixes (issue 12 item 4)', () => {
  it('an unreachable Redis is one warning line, and /readyz says rate limits are degraded (200)', async () => {
    const lines: string[] = [];
    const t = await createTestApp({ config: { redisUrl: 'redis://127.0.0.1:1', logLevel: 'info' }, logStream: { write: (l) => void lines.push(l) } });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(ready.statusCode, 200);
      assert.equal(json(ready).rateLimits, 'degraded');
      const redisLines = lines.filter((l) => /redis/i.test(l));
      assert.equal(redisLines.length, 1, redisLines.join('\n'));
      assert.match(redisLines[0]!, /unreachable.*retrying quietly/);
      assert.equal(JSON.parse(redisLines[0]!).level, 40);
    } finally {
      await t.close();
    }
  });

  it('/readyz says where rate limits are counted: memory without Redis, redis with it', async (context) => {
    const t = await createTestApp();
    try {
      assert.equal(json(await t.app.inject({ method: 'GET', url: '/readyz' })).rateLimits, 'memory');
    } finally {
      await t.close();
    }
    if (!requireRedis) return context.diagnostic('REQUIRE_REDIS unset: the reachable case is run by the full suite');
    const r = await createTestApp({ config: { redisUrl: 'redis://127.0.0.1:6379' } });
    try {
      for (let i = 0; i < 50 && json(await r.app.inject({ method: 'GET', url: '/readyz' })).rateLimits !== 'redis'; i++) await new Promise((res) => setTimeout(res, 50));
      assert.equal(json(await r.app.inject({ method: 'GET', url: '/readyz' })).rateLimits, 'redis');
    } finally {
      await r.close();
    }
  });

  it("ServiceProviderConfig's documentationUri is a page that exists", async () => {
    const t = await createTestApp();
    try {
      const config = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
      const uri = new URL(String(config.documentationUri));
      const page = await t.app.inject({ method: 'GET', url: uri.pathname });
      assert.equal(page.statusCode, 200);
      assert.match(String(page.headers['content-type']), /text\/html/);
      assert.match(page.body, /\/v2\/scim/);
    } finally {
      await t.close();
    }
  });

  it('a client used only for client_credentials needs no redirect URI', async () => {
    const t = await createTestApp();
    try {
      const created = await createClient(adminDeps(t), { name: 'Sync job', redirectUris: [], team: 'acme' });
      assert.deepEqual(created.redirect_uris, []);
      const token = await postForm(t, '/oauth/token', { grant_type: 'client_credentials' }, { client: { id: created.client_id, secret: created.client_secret } });
      assert.equal(token.statusCode, 200, token.body);
      await assert.rejects(createClient(adminDeps(t), { name: 'Web app', redirectUris: [] }), /--redirect-uri, or --team/);
    } finally {
      await t.close();
    }
  });

  it('client create / rotate-secret / delete and team update write audit rows', async () => {
    const t = await createTestApp();
    try {
      const deps = adminDeps(t);
      const client = await createClient(deps, { name: 'Okta', redirectUris: ['https://okta.example/cb'], team: 'acme' });
      await rotateClientSecret(deps, client.client_id);
      await deleteClient(deps, client.client_id);
      await updateTeam(deps, 'acme', 'visible');
      const events = (await auditEvents(deps, 'acme', undefined, 100)).map((e) => [e.action, e.resourceType, e.resourceId]);
      assert.deepEqual(events, [
        ['client_created', 'Client', client.client_id],
        ['client_secret_rotated', 'Client', client.client_id],
        ['client_deleted', 'Client', client.client_id],
        ['team_updated', 'Team', t.team.id],
      ]);
      const events2 = JSON.stringify(await auditEvents(deps, 'acme', undefined, 100));
      assert.doesNotMatch(events2, /rc_cs_/, 'no secret in the audit trail');
    } finally {
      await t.close();
    }
  });
});
