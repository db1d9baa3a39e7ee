/**
 * Issue 30 item 2, "search ignores case and accents", at the HTTP level on every engine: the
 * console's user search box finds José from "jose", Müller from "muller", Ångström from
 * "ANGSTROM" (userName, given and family names), lists the matches by the accent-folded userName,
 * pages through them; the group search and a group's member search do the same; a change of a
 * name is searched by its new spelling at once. SCIM filters keep RFC 7644's comparisons: the
 * API's `sw` and `eq` stay accent-sensitive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PATCH_OP, USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';

const userNames = (body: string): string[] => [...body.matchAll(/<a href="\/console\/users\/[A-Z0-9]+" dir="auto">([^<]*)<\/a>/g)].map((m) => m[1]!);
const groupNames = (body: string): string[] => [...body.matchAll(/<a href="\/console\/groups\/[A-Z0-9]+"[^>]*>([^<]*)<\/a>/g)].map((m) => m[1]!);
const link = (body: string, rel: string): string | undefined => new RegExp(`href="([^"]*)" rel="${rel}"`).exec(body)?.[1]?.replace(/&amp;/g, '&');

for (const engine of engines) {
  describe(`console search ignores case and accents on ${engine.name}`, () => {
    let t: TestApp;
    let page: PageSession;
    const ids = new Map<string, string>();

    const user = async (userName: string, givenName?: string, familyName?: string) => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName, ...(givenName || familyName ? { name: { ...(givenName ? { givenName } : {}), ...(familyName ? { familyName } : {}) } } : {}) });
      assert.equal(res.statusCode, 201, res.body);
      ids.set(userName, String(json(res).id));
    };
    const search = async (q: string) => {
      const res = await page.get(`/console/users?q=${encodeURIComponent(q)}`);
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      return userNames(res.body);
    };
    const scim = async (filter: string) =>
      (json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(filter)}&attributes=userName`)).Resources as { userName: string }[] ?? []).map((r) => r.userName).sort();

    before(async () => {
      t = await createTestApp({ engine });
      await registerAdmin(t, 'root@console.example', PASSWORD);
      page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      const signIn = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'root@console.example', password: PASSWORD });
      assert.equal(signIn.statusCode, 303, signIn.body);
      await user('jgarcia@acme.example', 'José', 'García');
      await user('jose.plain@acme.example', 'Jose', 'Plain');
      await user('Müller@acme.example', 'Hans');
      await user('mabel@acme.example', 'Mabel');
      await user('mz@acme.example', 'Zed');
      await user('astrid@acme.example', 'Astrid', 'Ångström');
      await user('kurt@acme.example', 'Kurt', 'Straße');
      await user('lars@acme.example', 'Lars', 'Ørsted');
    });
    after(() => t.close());

    it('"jose" finds José and Jose, "JOSÉ" both too, "garcia" finds García', async () => {
      assert.deepEqual(await search('jose'), ['jgarcia@acme.example', 'jose.plain@acme.example']);
      assert.deepEqual(await search('JOSÉ'), ['jgarcia@acme.example', 'jose.plain@acme.example']);
      assert.deepEqual(await search('garcia'), ['jgarcia@acme.example']);
    });

    it('"muller" finds the userName Müller@, "ANGSTROM" the family name Ångström; ß, ø are spelled out', async () => {
      assert.deepEqual(await search('muller'), ['Müller@acme.example']);
      assert.deepEqual(await search('MÜLL'), ['Müller@acme.example']);
      assert.deepEqual(await search('ANGSTROM'), ['astrid@acme.example']);
      assert.deepEqual(await search('strasse'), ['kurt@acme.example']);
      assert.deepEqual(await search('Straß'), ['kurt@acme.example']);
      assert.deepEqual(await search('orsted'), ['lars@acme.example']);
    });

    it('lists the matches by userName with accents ignored (Müller between mabel and mz), in pages', async () => {
      assert.deepEqual(await search('m'), ['mabel@acme.example', 'Müller@acme.example', 'mz@acme.example']);
      const down = await page.get('/console/users?q=m&sortBy=userName&order=desc');
      assert.deepEqual(userNames(down.body), ['mz@acme.example', 'Müller@acme.example', 'mabel@acme.example']);
      for (let i = 0; i < 60; i++) await user(`mé${String(i).padStart(2, '0')}@acme.example`);
      const first = await page.get('/console/users?q=ME');
      const names = userNames(first.body);
      assert.equal(names.length, 50);
      assert.match(first.body, /1-50 of 60\./);
      const next = link(first.body, 'next');
      assert.ok(next, 'a next page');
      const second = await page.get(next);
      assert.match(second.body, /51-60 of 60\./);
      const all = [...names, ...userNames(second.body)];
      assert.deepEqual(all, Array.from({ length: 60 }, (_, i) => `mé${String(i).padStart(2, '0')}@acme.example`));
    });

    it('a renamed user is found by its new spelling at once, no longer by the old one', async () => {
      const id = ids.get('astrid@acme.example')!;
      const res = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'name.familyName', value: 'Ødegård' }] });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await search('odegard'), ['astrid@acme.example']);
      assert.deepEqual(await search('angstrom'), []);
    });

    it('SCIM filters stay accent-sensitive (RFC 7644): only the console folds accents', async () => {
      assert.deepEqual(await scim('userName sw "muller"'), []);
      assert.deepEqual(await scim('userName sw "MÜLLER"'), ['Müller@acme.example']);
      assert.deepEqual(await scim('name.givenName eq "jose"'), ['jose.plain@acme.example']);
      assert.deepEqual(await scim('name.familyName sw "garcia"'), []);
    });

    it("the group search and a group's member search ignore accents too", async () => {
      const members = [ids.get('Müller@acme.example')!, ids.get('mabel@acme.example')!].map((value) => ({ value }));
      const group = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Équipe Réseau', members });
      assert.equal(group.statusCode, 201, group.body);
      await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Engineering' });
      const found = await page.get('/console/groups?q=EQUIPE');
      assert.equal(found.statusCode, 200);
      assert.deepEqual(groupNames(found.body), ['Équipe Réseau']);
      const scimGroups = json(await t.request('GET', `/v2/scim/Groups?filter=${encodeURIComponent('displayName sw "equipe"')}`));
      assert.equal(scimGroups.totalResults, 0, 'the SCIM filter stays accent-sensitive');
      const gid = String(json(group).id);
      const searched = await page.get(`/console/groups/${gid}?mq=mull`);
      assert.deepEqual(userNames(searched.body), ['Müller@acme.example']);
    });
  });
}
