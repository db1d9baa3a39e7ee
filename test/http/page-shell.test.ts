/**
 * The page shell shared by the authorization pages (/oauth) and the console (/console): both
 * families refuse a form without its CSRF token with the same 403 page, keep the CSRF secret in a
 * Strict, HttpOnly, Secure cookie of their own path, send the same security headers on their error
 * pages, and answer a failure they did not expect with a logged 500 that shows the browser only a
 * bland message (never the error, a stack or SQL).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin, registerClient } from '../support/oauth.ts';

const BLAND = 'Rollcall could not complete the request. Try again in a moment.';
const SECRET_FAILURE = 'SELECT secret FROM somewhere: the database is gone';

/** Makes every query fail while armed, as a database that went away would. */
class Outage implements KyselyPlugin {
  armed = false;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.armed) throw new Error(SECRET_FAILURE);
    return args.result;
  }
}

/** One page family: a page that carries a form, and the form's post. */
interface Family {
  readonly name: string;
  readonly path: string;
  readonly csrfCookie: string;
  page(t: TestApp, clientId: string): string;
  readonly post: string;
}

const FAMILIES: readonly Family[] = [
  { name: 'authorization pages', path: '/oauth', csrfCookie: 'rollcall_csrf', page: (_t, clientId) => `/oauth/authorize?client_id=${clientId}&response_type=code`, post: '/oauth/authorize' },
  { name: 'console', path: '/console', csrfCookie: 'rollcall_console_csrf', page: () => '/console/sign-in', post: '/console/sign-in' },
];

function assertErrorPageHeaders(res: LightMyRequestResponse, what: string): void {
  assert.equal(res.headers['content-type'], 'text/html; charset=utf-8', what);
  assert.equal(res.headers['cache-control'], 'no-store', what);
  assert.match(String(res.headers['content-security-policy']), /default-src 'none'/, what);
  assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, what);
  assert.equal(res.headers['x-frame-options'], 'DENY', what);
  assert.equal(res.headers['referrer-policy'], 'no-referrer', what);
  assert.match(String(res.headers['strict-transport-security']), /max-age=/, what);
  assert.equal(res.headers['access-control-allow-origin'], undefined, what);
}

for (const engine of engines) {
  describe(`page shell: the OAuth pages and the console alike (${engine.name})`, () => {
    it('a form without its CSRF token is a 403 error page; the CSRF cookie is Strict, HttpOnly, Secure, on the family path', async () => {
      const t = await createTestApp({ engine });
      try {
        const admin = await registerAdmin(t);
        const client = await registerClient(t);
        for (const family of FAMILIES) {
          const session = new PageSession(t);
          const page = await session.get(family.page(t, client.id));
          assert.equal(page.statusCode, 200, `${family.name}: ${page.body.slice(0, 300)}`);
          const csrfCookie = [page.headers['set-cookie']].flat().find((c) => c?.startsWith(`${family.csrfCookie}=`));
          assert.ok(csrfCookie, `${family.name}: sets ${family.csrfCookie}`);
          assert.match(csrfCookie, new RegExp(`Path=${family.path}(;|$)`));
          assert.match(csrfCookie, /HttpOnly/);
          assert.match(csrfCookie, /Secure/);
          assert.match(csrfCookie, /SameSite=Strict/);
          const fields = hiddenFields(page.body);
          delete fields._csrf;
          const forged = await session.post(family.post, { ...fields, username: admin.userName, password: admin.password });
          assert.equal(forged.statusCode, 403, family.name);
          assertErrorPageHeaders(forged, family.name);
          assert.match(forged.body, /expired/, family.name);
          assert.equal([forged.headers['set-cookie']].flat().some((c) => c?.startsWith('rollcall_session=') || c?.startsWith('rollcall_console=')), false, `${family.name}: no session for a forged post`);
        }
      } finally {
        await t.close();
      }
    });

    it('a failure the page did not expect is a logged 500 that shows only a bland message', async () => {
      const outage = new Outage();
      const lines: string[] = [];
      const t = await createTestApp({ engine, wrapStorage: (s) => ({ ...s, db: s.db.withPlugin(outage) }), config: { logLevel: 'error' }, logStream: { write: (line) => void lines.push(line) } });
      try {
        const admin = await registerAdmin(t);
        const client = await registerClient(t);
        for (const family of FAMILIES) {
          const session = new PageSession(t);
          const page = await session.get(family.page(t, client.id));
          assert.equal(page.statusCode, 200, family.name);
          lines.length = 0;
          outage.armed = true;
          const res = await session.post(family.post, { ...hiddenFields(page.body), username: admin.userName, password: admin.password });
          outage.armed = false;
          assert.equal(res.statusCode, 500, `${family.name}: ${res.body.slice(0, 300)}`);
          assertErrorPageHeaders(res, family.name);
          assert.ok(res.body.includes(BLAND), `${family.name}: the bland message`);
          assert.doesNotMatch(res.body, /SELECT|database is gone|\.ts:\d+/, `${family.name}: no error text, SQL or stack`);
          const logged = lines.map((line) => JSON.parse(line) as { msg?: string; err?: { message?: string } }).find((l) => l.msg?.startsWith('unhandled error'));
          assert.equal(logged?.err?.message, SECRET_FAILURE, `${family.name}: the error is logged`);
        }
      } finally {
        await t.close();
      }
    });
  });
}
