/**
 * The users and groups CSV exports list what the page they are linked from lists (review of
 * issue 30, finding 6): the page's plain words ignoring case and accents ("jose" finds José, as
 * the list does: scim/word-search.ts), the page's status filter (deactivated users, in a team
 * that hides them from SCIM too), and the page's export link carries that status.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseCsv } from '../../src/import/csv.ts';
import { GROUP_SCHEMA, USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const ADMIN = 'admin@acme.example';

/** A CSV answer's values of `column`, sorted. */
function column(body: string, name: string): string[] {
  const [header, ...rows] = parseCsv(body).map((r) => [...r.fields]);
  const at = header!.indexOf(name);
  assert.ok(at >= 0, `column ${name}`);
  return rows.map((r) => r[at]!).sort();
}

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The href of the list page's export link. */
const exportHref = (html: string): string => unescape(/<a href="([^"]*\.csv[^"]*)" download>/.exec(html)?.[1] ?? '');

for (const engine of engines) {
  describe(`console CSV exports list what their page lists (${engine.name})`, () => {
    let t: TestApp;
    let page: PageSession;

    before(async () => {
      t = await createTestApp({ engine });
      await registerAdmin(t, ADMIN, PASSWORD);
      page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: ADMIN, password: PASSWORD })).statusCode, 303);
      for (const [userName, givenName, active] of [['jgarcia@acme.example', 'José', true], ['zmartin@acme.example', 'Zoë', true], ['josé.old@acme.example', 'José', false], ['ann@acme.example', 'Ann', false]] as const) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName, name: { givenName }, active });
        assert.equal(res.statusCode, 201, res.body);
      }
      for (const displayName of ['Équipe Paris', 'Engineering']) assert.equal((await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName })).statusCode, 201);
      assert.equal(json(await t.request('GET', '/v2/scim/Users?filter=name.givenName%20sw%20%22jose%22')).totalResults, 0, 'a SCIM filter minds accents (RFC 7644)');
    });

    after(async () => {
      await t?.close();
    });

    it('users.csv?q=jose finds José as the list does, accent-insensitively', async () => {
      const list = await page.get('/console/users?q=jose');
      assert.equal(list.statusCode, 200);
      assert.ok(list.body.includes('jgarcia@acme.example'));
      const csv = await page.get(exportHref(list.body));
      assert.equal(csv.statusCode, 200, csv.body);
      assert.deepEqual(column(csv.body, 'userName'), ['jgarcia@acme.example']);
      assert.deepEqual(column((await page.get('/console/users.csv?q=JOSE')).body, 'userName'), ['jgarcia@acme.example']);
      assert.deepEqual(column((await page.get('/console/users.csv?q=zoe')).body, 'userName'), ['zmartin@acme.example'], 'Zoë by her given name');
    });

    it('the status filter: the deactivated list links to an export of the deactivated users, in a team that hides them', async () => {
      const list = await page.get('/console/users?status=deactivated');
      assert.equal(list.statusCode, 200);
      const href = exportHref(list.body);
      assert.match(href, /status=deactivated/, 'the export link carries the status');
      assert.deepEqual(column((await page.get(href)).body, 'userName'), ['ann@acme.example', 'josé.old@acme.example']);
      assert.deepEqual(column((await page.get('/console/users.csv?q=jose&status=deactivated')).body, 'userName'), ['josé.old@acme.example']);
      assert.deepEqual(column((await page.get('/console/users.csv?status=active')).body, 'userName'), [ADMIN, 'jgarcia@acme.example', 'zmartin@acme.example']);
      const bad = await page.get('/console/users.csv?status=gone');
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /status is active or deactivated/);
    });

    it('groups.csv?q=equipe finds Équipe Paris as the list does', async () => {
      const list = await page.get('/console/groups?q=equipe');
      assert.ok(list.body.includes('Équipe Paris'));
      assert.deepEqual(column((await page.get(exportHref(list.body))).body, 'displayName'), ['Équipe Paris']);
    });
  });
}
