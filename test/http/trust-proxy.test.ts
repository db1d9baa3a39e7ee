/**
 * Issue 13.6: behind a proxy, the per-address limit cannot be bypassed by writing addresses into
 * X-Forwarded-For. The client writes the left-most entries; only the entries the trusted proxies
 * appended (read from the right: a hop count or the proxies' addresses) name the client. The
 * configuration comes from loadConfig, as `rollcall serve` reads it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { basic, hiddenFields, Jar, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const PROXY = '10.0.0.5';

/** An address the attacker makes up for each request. */
const spoofed = (): string => `198.18.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

async function withProxyApp(trustProxy: string, work: (t: TestApp, client: TestClient) => Promise<void>): Promise<void> {
  const t = await createTestApp({
    config: { trustProxy: loadConfig({}, { TRUST_PROXY: trustProxy }).trustProxy },
    limits: { oauthPerAddress: { points: 3, seconds: 600 }, signinPerAddress: { points: 3, seconds: 600 } },
  });
  try {
    await work(t, await registerClient(t));
  } finally {
    await t.close();
  }
}

/** An introspection request; with `wrong`, a failed one (only failures count against an address). */
const introspect = (t: TestApp, client: TestClient, socket: string, forwardedFor: string, wrong = true) =>
  t.app.inject({
    method: 'POST',
    url: '/oauth/introspect',
    remoteAddress: socket,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(wrong ? { id: client.id, secret: 'rc_cs_wrong' } : client), 'x-forwarded-for': forwardedFor },
    payload: 'token=nothing',
  });

describe('13.6 TRUST_PROXY and spoofed X-Forwarded-For', () => {
  it('TRUST_PROXY=on is one hop: a new left-most address per request does not escape the per-address limit (3)', async () => {
    await withProxyApp('on', async (t, client) => {
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await introspect(t, client, PROXY, `${spoofed()}, 198.51.100.7`)).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429]);
      // Another client behind the same proxy has its own count.
      assert.equal((await introspect(t, client, PROXY, '198.51.100.8', false)).statusCode, 200);
    });
  });

  it('TRUST_PROXY=on: sign-in form posts with a spoofed left-most address are limited per real address (3)', async () => {
    await withProxyApp('on', async (t, client) => {
      const page = await t.app.inject({ method: 'GET', url: `/oauth/authorize?client_id=${client.id}&response_type=code`, remoteAddress: PROXY });
      const jar = new Jar();
      jar.take(page);
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) {
        const posted = await t.app.inject({
          method: 'POST',
          url: '/oauth/authorize',
          remoteAddress: PROXY,
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `${spoofed()}, 198.51.100.7` },
          payload: new URLSearchParams({ ...hiddenFields(page.body), username: 'admin@acme.example', password: `guess ${i}` }).toString(),
        });
        statuses.push(posted.statusCode);
      }
      assert.deepEqual(statuses, [401, 401, 401, 429, 429, 429]);
    });
  });

  it('TRUST_PROXY=2 takes the second entry from the right (two proxies); more entries on the left change nothing', async () => {
    await withProxyApp('2', async (t, client) => {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await introspect(t, client, PROXY, `${spoofed()}, ${spoofed()}, 198.51.100.7, 10.0.0.9`)).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
    });
  });

  it('TRUST_PROXY=10.0.0.0/8,192.168.0.1: the header counts only from a listed proxy, read from the right', async () => {
    await withProxyApp('10.0.0.0/8,192.168.0.1', async (t, client) => {
      // Straight from the internet, the header is ignored: the socket address is counted.
      const direct: number[] = [];
      for (let i = 0; i < 4; i++) direct.push((await introspect(t, client, '203.0.113.9', spoofed())).statusCode);
      assert.deepEqual(direct, [401, 401, 401, 429]);
      // Through the proxies (192.168.0.1 appended by 10.0.0.5), the first untrusted entry from the right.
      const proxied: number[] = [];
      for (let i = 0; i < 4; i++) proxied.push((await introspect(t, client, PROXY, `${spoofed()}, 198.51.100.7, 192.168.0.1`)).statusCode);
      assert.deepEqual(proxied, [401, 401, 401, 429]);
    });
  });
});
