/**
 * Issue 31, the console's Roles & entitlements pages at the HTTP level, on both engines: the
 * team's catalog (roles; entitlement types, required or not, multi- or single-valued, with their
 * entitlements) and the forms that add and remove each and set the discovery schemas; a removal
 * of an entry users hold refused with the counts, then forced after the admin confirms; the group
 * mappings (a group named by id or displayName) added and removed; a user's effective access on
 * its page with where each grant came from. Every form needs the CSRF token, every change is
 * audited as the console admin, hostile values are escaped, refusals are shown on the page (never
 * a 500), and an admin of one team neither sees nor changes another team's catalog or mappings.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { auditEvents } from '../../src/admin.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { grantDirect } from '../support/access.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const HOSTILE = '<script>alert(1)</script>"&\'';

async function signedIn(t: TestApp, userName = 'admin@acme.example', team = t.team.name): Promise<PageSession> {
  await registerAdmin(t, userName, PASSWORD, team);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: userName, password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return page;
}

/** Posts a console form with the CSRF token of the page `from`. */
async function submit(page: PageSession, from: string, action: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
  const csrf = hiddenFields((await page.get(from)).body, action)._csrf!;
  return page.post(action, { _csrf: csrf, ...fields });
}

async function group(t: TestApp, displayName: string, members: string[] = [], token = t.token): Promise<string> {
  const res = await t.request('POST', '/v2/scim/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName, members: members.map((value) => ({ value })) }, { authorization: `Bearer ${token}` });
  assert.equal(res.statusCode, 201, res.body);
  return String(json(res).id);
}

async function user(t: TestApp, userName: string, token = t.token): Promise<string> {
  const res = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName }, { authorization: `Bearer ${token}` });
  assert.equal(res.statusCode, 201, res.body);
  return String(json(res).id);
}

/** The page's main text, tags removed and entities decoded, whitespace collapsed. */
const text = (html: string): string =>
  (/<main[^>]*>([\s\S]*)<\/main>/.exec(html)?.[1] ?? html)
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

const consoleAudit = async (t: TestApp, action: string, team = t.team.name) =>
  (await auditEvents(adminDeps(t), team, undefined, 200)).filter((e) => e.action === action && (e.actor as { via: string }).via === 'console');

const CATALOG = {
  roles: [
    { value: 'admin', displayName: 'Administrator', description: 'Everything' },
    { value: 'viewer', displayName: 'Viewer' },
  ],
  types: [
    { name: 'License', endpoint: '/Licenses', required: true, multiValued: false, entitlements: [{ value: 'e5', displayName: 'Office E5' }, { value: 'e3', displayName: 'Office E3' }] },
    { name: 'Permission set', endpoint: '/PermissionSets', entitlements: [{ value: 'billing', displayName: 'Billing' }] },
  ],
};

for (const engine of engines) {
  describe(`console Roles & entitlements (${engine.name})`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine });
    });
    afterEach(() => t.close());

    it('shows the catalog: roles, types (required, multi- or single-valued) with their entitlements, the schemas setting; linked from the nav; values escaped', async () => {
      const page = await signedIn(t);
      const empty = await page.get('/console/access');
      assert.equal(empty.statusCode, 200);
      assert.match(empty.body, /<a href="\/console\/access" aria-current="page">Roles &amp; entitlements<\/a>/);
      assert.match(text(empty.body), /This team has no catalog/);
      assert.match((await page.get('/console')).body, /<a href="\/console\/access">Roles &amp; entitlements<\/a>/, 'in the nav of every page');

      await seedCatalog(t.storage, t.team.id, { ...CATALOG, roles: [...CATALOG.roles, { value: HOSTILE, displayName: `<b>${HOSTILE}</b>` }] });
      const shown = await page.get('/console/access');
      assert.equal(shown.statusCode, 200);
      const words = text(shown.body);
      assert.doesNotMatch(words, /This team has no catalog/);
      assert.match(words, /admin Administrator Everything/);
      assert.match(words, /viewer Viewer/);
      assert.match(words, /License \/Licenses required: every user holds at least one; single-valued: a user holds at most one/);
      assert.match(words, /Permission set \/PermissionSets optional; multi-valued: a user may hold several/);
      assert.match(words, /e3 Office E3 .*e5 Office E5/);
      assert.ok(!shown.body.includes('<script>alert(1)</script>') && !shown.body.includes('<b>'), 'hostile values are escaped');
      assert.ok(shown.body.includes(`<b>${HOSTILE}</b>`.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')));
      assert.match(shown.body, /<option value="okta" selected>/);
    });

    it("shows a user's effective access on its page: direct and via groups (linked), display names from the catalog", async () => {
      await seedCatalog(t.storage, t.team.id, CATALOG);
      const page = await signedIn(t);
      const bjensen = await user(t, 'bjensen@acme.example');
      const nobody = await user(t, 'nobody@acme.example');
      const admins = await group(t, `Admins ${HOSTILE}`, [bjensen]);
      await grantDirect(t.storage, t.team.id, bjensen, 'role', 'admin');
      await grantDirect(t.storage, t.team.id, bjensen, 'entitlement', 'e5', 'License');
      const mapped = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: admins, entry: 'role:admin' });
      assert.equal(mapped.statusCode, 303, mapped.body);
      assert.equal((await submit(page, '/console/access/mappings', '/console/access/mappings', { group: admins, entry: 'entitlement:Permission set:billing' })).statusCode, 303);

      const shown = await page.get(`/console/users/${bjensen}`);
      assert.equal(shown.statusCode, 200);
      const words = text(shown.body);
      assert.match(words, new RegExp(`Access .*Roles Role Display name Sources admin Administrator direct, via group Admins ${HOSTILE.replace(/[()]/g, '\\$&')}`));
      assert.match(words, /Entitlements Type Entitlement Display name Sources License e5 Office E5 direct Permission set billing Billing via group Admins/);
      assert.ok(shown.body.includes(`href="/console/groups/${admins}"`), 'the group is linked');
      assert.ok(!shown.body.includes('<script>alert(1)</script>'));

      const none = await page.get(`/console/users/${nobody}`);
      assert.match(text(none.body), /Access .*No roles\. .*No entitlements\./);
      assert.equal((await page.get('/console/users/NOSUCHUSER')).statusCode, 404);
    });

    it('maps a group by id or displayName to a role or an entitlement, idempotently, and unmaps it; refusals shown on the page; audited as the admin', async () => {
      await seedCatalog(t.storage, t.team.id, CATALOG);
      const page = await signedIn(t);
      const admins = await group(t, 'Admins');
      const ops = await group(t, 'Ops');
      const form = await page.get('/console/access/mappings');
      assert.equal(form.statusCode, 200);
      assert.match(text(form.body), /No group is mapped/);
      assert.match(form.body, /<option value="role:admin">Administrator \(admin\)<\/option>/);
      assert.match(form.body, /<optgroup label="Entitlements: License"><option value="entitlement:License:e3">/);

      const byName = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: 'Admins', entry: 'role:admin' });
      assert.equal(byName.statusCode, 303, byName.body);
      assert.equal(byName.headers.location, '/console/access/mappings?done=mapped');
      const byId = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: ops, entry: 'entitlement:License:e5' });
      assert.equal(byId.statusCode, 303, byId.body);
      const again = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: admins, entry: 'role:admin' });
      assert.equal(again.headers.location, '/console/access/mappings?done=already-mapped');
      assert.equal((await consoleAudit(t, 'access_mapped')).length, 2, 'the repeated mapping wrote nothing');

      const list = await page.get('/console/access/mappings?done=mapped');
      const words = text(list.body);
      assert.match(words, /Group mapped: its members hold it now\./);
      assert.match(words, /Admins role admin Administrator/);
      assert.match(words, /Ops entitlement \(License\) e5 Office E5/);
      const one = text((await page.get(`/console/access/mappings?group=${ops}`)).body);
      assert.match(one, /Only the mappings of group Ops/);
      assert.doesNotMatch(one, /Admins role admin/);
      assert.equal((await page.get('/console/access/mappings?group=NOSUCHGROUP')).statusCode, 404);

      // Refused: shown on the page with the domain's message and status, nothing written.
      const unknownGroup = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: 'Nobody <here>', entry: 'role:admin' });
      assert.equal(unknownGroup.statusCode, 404);
      assert.match(text(unknownGroup.body), /The team has no group with the id or displayName "Nobody <here>"/);
      assert.ok(unknownGroup.body.includes('value="Nobody &lt;here&gt;"'), 'the form keeps what was typed');
      const unknownEntry = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: ops, entry: 'role:superuser' });
      assert.equal(unknownEntry.statusCode, 400);
      assert.match(text(unknownEntry.body), /"superuser" is not a role in the team's catalog \(admin, viewer\)/);
      const noChoice = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: ops, entry: '' });
      assert.equal(noChoice.statusCode, 400);
      assert.match(text(noChoice.body), /choose a role or an entitlement/);
      assert.equal((await consoleAudit(t, 'access_mapped')).length, 2);

      // No CSRF token: refused before anything happens.
      const forged = await page.post('/console/access/mappings', { group: ops, entry: 'role:viewer' });
      assert.equal(forged.statusCode, 403);
      assert.equal((await consoleAudit(t, 'access_mapped')).length, 2);

      const unmapped = await submit(page, '/console/access/mappings', '/console/access/mappings/remove', { group: ops, entry: 'entitlement:License:e5' });
      assert.equal(unmapped.statusCode, 303, unmapped.body);
      assert.equal(unmapped.headers.location, '/console/access/mappings?done=unmapped');
      assert.doesNotMatch(text((await page.get('/console/access/mappings')).body), /Ops entitlement/);
      const twice = await submit(page, '/console/access/mappings', '/console/access/mappings/remove', { group: ops, entry: 'entitlement:License:e5' });
      assert.equal(twice.statusCode, 404);
      assert.match(text(twice.body), /is not mapped to the entitlement of type License "e5"/);
      const audited = await consoleAudit(t, 'access_unmapped');
      assert.equal(audited.length, 1);
    });

    it("isolation: an admin of one team neither sees nor changes another team's catalog or mappings", async () => {
      const other = await t.addTeam('globex');
      await seedCatalog(t.storage, other.team.id, { roles: [{ value: 'globex-root', displayName: 'Globex root' }] });
      const globexGroup = await group(t, 'Globex admins', [], other.token);
      await seedCatalog(t.storage, t.team.id, CATALOG);
      const page = await signedIn(t);
      const catalog = await page.get('/console/access');
      assert.ok(!catalog.body.includes('globex-root'), "another team's roles are not shown");

      const foreignGroup = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: globexGroup, entry: 'role:admin' });
      assert.equal(foreignGroup.statusCode, 404);
      const foreignName = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: 'Globex admins', entry: 'role:admin' });
      assert.equal(foreignName.statusCode, 404);
      const foreignEntry = await submit(page, '/console/access/mappings', '/console/access/mappings', { group: await group(t, 'Acme'), entry: 'role:globex-root' });
      assert.equal(foreignEntry.statusCode, 400);
      assert.equal((await page.get(`/console/access/mappings?group=${globexGroup}`)).statusCode, 404);

      // The other team's admin sees its own catalog, and none of acme's.
      const theirs = await signedIn(t, 'root@globex.example', 'globex');
      const their = await theirs.get('/console/access');
      assert.ok(their.body.includes('globex-root') && !their.body.includes('Office E5'));
    });
  });
}
