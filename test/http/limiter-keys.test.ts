/**
 * Issue 13.1: the brute-force counters cannot be made to grow by what a caller sends. Client ids
 * and login names longer than any real one are refused before anything is counted or looked up,
 * the counters' keys are digests, and the four endpoints that take credentials are limited per
 * source address (429 with Retry-After: an RFC 6749 5.2 body on the JSON endpoints, the HTML
 * error page on the sign-in form). The heap is measured in a child process started with
 * --expose-gc (test/support/heap-probe.ts), after full collections before and after the attack.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { basic, hiddenFields, PageSession, passwordGrant, postForm, registerAdmin, registerClient } from '../support/oauth.ts';

const PROBE = join(import.meta.dirname, '../support/heap-probe.ts');

describe('13.1 limiter keys stay bounded', () => {
  it('4,000 requests with random 30 kB client ids and user names leave the heap flat (under 16 MB of growth)', () => {
    const run = spawnSync(process.execPath, ['--expose-gc', PROBE, '4000', '30000'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 0, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { growth: number; statuses: Record<string, number> };
    // Before the fix this grew by 65 MB (each failure kept its 30 kB key for 5 to 15 minutes).
    assert.ok(result.growth < 16 * 1024 * 1024, `heap grew by ${(result.growth / 1024 / 1024).toFixed(1)} MB`);
    // Every request was answered as a failed authentication: nothing was throttled, nothing broke.
    assert.deepEqual(Object.keys(result.statuses).sort(), ['400', '401'], JSON.stringify(result.statuses));
  });

  describe('over-long identifiers and the per-address limit', () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ limits: { oauthPerAddress: { points: 4, seconds: 600 }, signinPerAddress: { points: 2, seconds: 600 } } });
    });
    afterEach(() => t.close());

    it('a client id that cannot exist is invalid_client without a lookup; a 300-character user name is invalid_grant', async () => {
      const client = await registerClient(t);
      const admin = await registerAdmin(t);
      const long = await postForm(t, '/oauth/token', { grant_type: 'client_credentials' }, { authorization: basic({ id: 'A'.repeat(60_000), secret: 'x' }) });
      assert.equal(long.statusCode, 401);
      assert.equal(json(long).error, 'invalid_client');
      const name = await passwordGrant(t, client, { userName: `${'a'.repeat(300)}@acme.example`, password: admin.password });
      assert.equal(name.statusCode, 400);
      assert.equal(json(name).error, 'invalid_grant');
      assert.equal((await passwordGrant(t, client, admin)).statusCode, 200);
    });

    it('token, revoke and introspect share a per-address limit of failed requests: 429 slow_down with Retry-After; successes do not count; another address is unaffected', async () => {
      const client = await registerClient(t);
      for (let i = 0; i < 10; i++) assert.equal((await postForm(t, '/oauth/introspect', { token: 'x' }, { client })).statusCode, 200);
      const wrong = { id: client.id, secret: 'rc_cs_wrong' };
      const statuses: number[] = [];
      for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect', '/oauth/token', '/oauth/revoke']) {
        statuses.push((await postForm(t, path, { grant_type: 'client_credentials', token: 'x' }, { client: wrong })).statusCode);
      }
      assert.deepEqual(statuses, [401, 401, 401, 401, 429]);
      // Once over, the address is refused before anything else is looked at.
      const limited = await postForm(t, '/oauth/introspect', { token: 'x' }, { client });
      assert.equal(limited.statusCode, 429);
      assert.equal(json(limited).error, 'slow_down');
      assert.match(String(limited.headers['retry-after']), /^\d+$/);
      const elsewhere = await t.app.inject({
        method: 'POST',
        url: '/oauth/introspect',
        remoteAddress: '192.0.2.9',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) },
        payload: 'token=x',
      });
      assert.equal(elsewhere.statusCode, 200, elsewhere.body);
    });

    it('requests the client backoff already refuses (429) still count against the address: its limit is reached, not escaped', async () => {
      const app = await createTestApp({ limits: { oauthPerAddress: { points: 8, seconds: 600 }, clientFailures: { points: 3, seconds: 600 } } });
      try {
        const client = await registerClient(app);
        const wrong = { id: client.id, secret: 'rc_cs_wrong' };
        const statuses: number[] = [];
        for (let i = 0; i < 20; i++) statuses.push((await postForm(app, '/oauth/token', { grant_type: 'client_credentials' }, { client: wrong })).statusCode);
        // 3 wrong secrets, then the client backoff (429); the address limit (8 failures) then refuses everything.
        assert.deepEqual(statuses.slice(0, 3), [401, 401, 401]);
        assert.ok(statuses.slice(3).every((s) => s === 429), statuses.join(','));
        const after = await postForm(app, '/oauth/token', { grant_type: 'client_credentials' }, { client });
        assert.equal(after.statusCode, 429, 'the address is over its limit, whatever the secret');
        assert.match(String(json(after).error_description), /Too many/);
      } finally {
        await app.close();
      }
    });

    it('the sign-in form is limited per address: the HTML error page with Retry-After', async () => {
      const client = await registerClient(t);
      const page = new PageSession(t);
      const form = await page.get(`/oauth/authorize?client_id=${client.id}&response_type=code`);
      const fields = hiddenFields(form.body);
      for (let i = 0; i < 2; i++) assert.equal((await page.post('/oauth/authorize', { ...fields, username: 'x'.repeat(9000), password: 'guess' })).statusCode, 401);
      const limited = await page.post('/oauth/authorize', { ...fields, username: 'admin@acme.example', password: 'guess' });
      assert.equal(limited.statusCode, 429);
      assert.match(String(limited.headers['content-type']), /^text\/html/);
      assert.match(limited.body, /Too many attempts/);
      assert.match(String(limited.headers['retry-after']), /^\d+$/);
    });
  });
});
