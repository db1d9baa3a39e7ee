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
    { name: 'License', endpoint: '/Licenses', multiValued: false, entitlements: [{ value: 'e5', displayName: 'Office E5' }, { value: 'e3', displayName: 'Office E3' }] },
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

      // (A required type only here: with one, every user written must hold one of its entitlements.)
      const types = [...CATALOG.types, { name: 'Seat', endpoint: '/Seats', required: true, entitlements: [{ value: 'seat-1', displayName: 'Seat one' }] }];
      await seedCatalog(t.storage, t.team.id, { roles: [...CATALOG.roles, { value: HOSTILE, displayName: `<b>${HOSTILE}</b>` }], types });
      const shown = await page.get('/console/access');
      assert.equal(shown.statusCode, 200);
      const words = text(shown.body);
      assert.doesNotMatch(words, /This team has no catalog/);
      assert.match(words, /admin Administrator Everything/);
      assert.match(words, /viewer Viewer/);
      assert.match(words, /License \/Licenses optional; single-valued: a user holds at most one/);
      assert.match(words, /Seat \/Seats required: every user holds at least one; multi-valued: a user may hold several/);
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
      await grantDirect(t.request, bjensen, 'role', 'admin');
      await grantDirect(t.request, bjensen, 'entitlement', 'e5', 'License');
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

    it('lists who holds an entry, directly or through a group, in pages of 50; a bad cursor is shown on the page', async () => {
      await seedCatalog(t.storage, t.team.id, CATALOG);
      const page = await signedIn(t);
      const members: string[] = [];
      for (let i = 0; i < 51; i++) members.push(await user(t, `member${String(i).padStart(2, '0')}@acme.example`));
      const everyone = await group(t, 'Everyone', members);
      await grantDirect(t.request, members[0]!, 'role', 'viewer');
      assert.equal((await submit(page, '/console/access/mappings', '/console/access/mappings', { group: everyone, entry: 'role:viewer' })).statusCode, 303);
      const catalog = await page.get('/console/access');
      assert.ok(catalog.body.includes('href="/console/access/holders?entry=role%3Aviewer"'), 'linked from the catalog');
      assert.ok(catalog.body.includes('href="/console/access/holders?entry=entitlement%3ALicense%3Ae5"'));

      const first = await page.get('/console/access/holders?entry=role%3Aviewer');
      assert.equal(first.statusCode, 200);
      assert.match(text(first.body), /Holders of viewer .*The active users who hold the role viewer \( ?Viewer ?\)/);
      assert.equal([...first.body.matchAll(/<a href="\/console\/users\//g)].length, 50);
      const next = /<a href="([^"]+)" rel="next">Next holders<\/a>/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
      assert.ok(next, 'a next page');
      const second = await page.get(next);
      assert.equal([...second.body.matchAll(/<a href="\/console\/users\//g)].length, 1);
      assert.doesNotMatch(second.body, /rel="next"/);
      const firstIds = new Set([...first.body.matchAll(/href="\/console\/users\/([^"]+)"/g)].map((m) => m[1]));
      const lastId = /href="\/console\/users\/([^"]+)"/.exec(second.body)?.[1];
      assert.ok(lastId && !firstIds.has(lastId) && firstIds.size === 50, 'every holder once');
      assert.match(text(first.body + second.body), /member00@acme\.example direct, via group Everyone/);
      assert.match(text(first.body + second.body), /member50@acme\.example via group Everyone/);

      assert.match(text((await page.get('/console/access/holders?entry=entitlement%3ALicense%3Ae5')).body), /Nobody holds it\./);
      const bad = await page.get('/console/access/holders?entry=role%3Aviewer&cursor=garbage');
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /class="alert"/);
      assert.equal((await page.get('/console/access/holders?entry=nonsense')).statusCode, 400);
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
      assert.ok((await page.get(`/console/groups/${ops}`)).body.includes(`href="/console/access/mappings?group=${ops}"`), "a group's page links to its mappings");
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

    it('adds a role, an entitlement type and an entitlement from the forms, changes one, sets the schemas; refusals shown with the form as sent; CSRF required; audited as the admin', async () => {
      const page = await signedIn(t);
      const added = await submit(page, '/console/access', '/console/access/roles', { value: 'admin', displayName: 'Administrator', description: '' });
      assert.equal(added.statusCode, 303, added.body);
      assert.equal(added.headers.location, '/console/access?done=role-added');
      assert.match(text((await page.get('/console/access?done=role-added')).body), /Role added\. .*admin Administrator/);
      assert.equal((await submit(page, '/console/access', '/console/access/roles', { value: 'admin', displayName: 'Administrator', description: '' })).headers.location, '/console/access?done=role-unchanged');
      assert.equal((await submit(page, '/console/access', '/console/access/roles', { value: 'admin', displayName: 'Admin', description: 'All of it' })).headers.location, '/console/access?done=role-updated');
      assert.equal((await consoleAudit(t, 'role_added')).length, 1);
      assert.equal((await consoleAudit(t, 'role_updated')).length, 1);

      const badRole = await submit(page, '/console/access', '/console/access/roles', { value: ' lead', displayName: `Lead ${HOSTILE}`, description: '' });
      assert.equal(badRole.statusCode, 400);
      assert.match(text(badRole.body), /value: must not begin or end with whitespace/);
      assert.ok(badRole.body.includes('value=" lead"') && badRole.body.includes(`value="Lead &lt;script&gt;`), 'the form keeps what was sent, escaped');

      // A required type needs an entitlement first (the catalog refuses a required type of none).
      const emptyRequired = await submit(page, '/console/access', '/console/access/types', { name: 'License', endpoint: '/Licenses', required: '1', multiValued: 'single', description: 'Seats' });
      assert.equal(emptyRequired.statusCode, 400);
      assert.match(text(emptyRequired.body), /entitlement type License is required but has no entitlements/);
      const type = await submit(page, '/console/access', '/console/access/types', { name: 'License', endpoint: '/Licenses', multiValued: 'single', description: 'Seats' });
      assert.equal(type.headers.location, '/console/access?done=type-added', type.body);
      const reserved = await submit(page, '/console/access', '/console/access/types', { name: 'User', endpoint: '/Licences', multiValued: 'multi', description: '' });
      assert.equal(reserved.statusCode, 400);
      assert.match(text(reserved.body), /"User" is a SCIM resource type Rollcall serves/);
      assert.match(reserved.body, /<option value="multi" selected>/);
      const noSlash = await submit(page, '/console/access', '/console/access/types', { name: 'Seat', endpoint: 'Seats', multiValued: 'single', description: '' });
      assert.equal(noSlash.statusCode, 400);
      assert.match(text(noSlash.body), /endpoint: must be "\/" then a letter/);
      assert.match(noSlash.body, /<option value="single" selected>/);

      const entitlement = await submit(page, '/console/access', '/console/access/entitlements', { type: 'License', value: 'e5', displayName: 'Office E5', description: '' });
      assert.equal(entitlement.headers.location, '/console/access?done=entitlement-added', entitlement.body);
      const noType = await submit(page, '/console/access', '/console/access/entitlements', { type: 'Seat', value: 'e3', displayName: 'Office E3', description: '' });
      assert.equal(noType.statusCode, 404);
      assert.match(text(noType.body), /has no entitlement type "Seat"/);
      const required = await submit(page, '/console/access', '/console/access/types', { name: 'License', endpoint: '/Licenses', required: '1', multiValued: 'single', description: 'Seats' });
      assert.equal(required.headers.location, '/console/access?done=type-updated', required.body);
      const words = text((await page.get('/console/access')).body);
      assert.match(words, /admin Admin All of it/);
      assert.match(words, /License \/Licenses required: every user holds at least one; single-valued: a user holds at most one\. Seats/);
      assert.match(words, /e5 Office E5/);

      const schemas = await submit(page, '/console/access', '/console/access/schemas', { schemas: 'ietf' });
      assert.equal(schemas.headers.location, '/console/access?done=schemas-set');
      assert.match((await page.get('/console/access')).body, /<option value="ietf" selected>/);
      assert.equal((await consoleAudit(t, 'catalog_schemas_set')).length, 1);
      const badSchemas = await submit(page, '/console/access', '/console/access/schemas', { schemas: 'saml' });
      assert.equal(badSchemas.statusCode, 400);
      assert.match(text(badSchemas.body), /schemas: must be one of okta, ietf/);

      const forged = await page.post('/console/access/roles', { value: 'forged', displayName: 'Forged' });
      assert.equal(forged.statusCode, 403);
      assert.ok(!(await page.get('/console/access')).body.includes('forged'));
    });

    it('removing an entry users hold or groups map is refused with the counts, then forced after the admin confirms: taken from the users and the groups', async () => {
      await seedCatalog(t.storage, t.team.id, CATALOG);
      const page = await signedIn(t);
      const res = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'bjensen@acme.example', roles: [{ value: 'admin' }, { value: 'viewer' }] });
      assert.equal(res.statusCode, 201, res.body);
      const bjensen = String(json(res).id);
      const admins = await group(t, 'Admins', [bjensen]);
      assert.equal((await submit(page, '/console/access/mappings', '/console/access/mappings', { group: admins, entry: 'role:admin' })).statusCode, 303);

      // Nobody holds "billing", no group maps it: removed at once.
      const free = await submit(page, '/console/access', '/console/access/entitlements/remove', { type: 'Permission set', value: 'billing' });
      assert.equal(free.headers.location, '/console/access?done=entitlement-removed', free.body);
      assert.match(text((await page.get(free.headers.location as string)).body), /Entitlement removed\./);

      const refused = await submit(page, '/console/access', '/console/access/roles/remove', { value: 'admin' });
      assert.equal(refused.statusCode, 409);
      const words = text(refused.body);
      assert.match(words, /Remove role "admin" anyway\?/);
      assert.match(words, /role "admin" is held by 1 user and mapped from 1 group; confirm below to remove it from them/);
      assert.ok(!refused.body.includes('force=true'), 'the API wording is not shown');
      assert.equal((await consoleAudit(t, 'role_removed')).length, 0, 'nothing removed yet');
      assert.ok(text((await page.get('/console/access')).body).includes('admin Administrator'));

      // The confirmation form repeats the removal with force.
      const confirm = hiddenFields(refused.body, '/console/access/roles/remove');
      assert.deepEqual({ value: confirm.value, force: confirm.force }, { value: 'admin', force: '1' });
      const forced = await page.post('/console/access/roles/remove', confirm);
      assert.equal(forced.statusCode, 303, forced.body);
      assert.equal(forced.headers.location, '/console/access?done=role-removed&users=1&groups=1');
      assert.match(text((await page.get(forced.headers.location as string)).body), /Role removed\. It was taken from 1 user; 1 group no longer maps to it\./);
      assert.doesNotMatch(text((await page.get('/console/access')).body), /admin Administrator/);
      const after = json(await t.request('GET', `/v2/scim/Users/${bjensen}`));
      assert.deepEqual((after.roles as { value: string }[]).map((r) => r.value), ['viewer'], "taken from the user's SCIM roles");
      assert.match(text((await page.get('/console/access/mappings')).body), /No group is mapped/);
      assert.equal((await consoleAudit(t, 'role_removed')).length, 1);

      // A type whose entitlement a user holds: refused, then forced.
      await grantDirect(t.request, bjensen, 'entitlement', 'e5', 'License');
      // Moving a held entitlement to another type is decided like a removal: confirmed, with the form as sent.
      const move = await submit(page, '/console/access', '/console/access/entitlements', { type: 'Permission set', value: 'e5', displayName: 'Office E5', description: '' });
      assert.equal(move.statusCode, 409);
      assert.match(text(move.body), /Move entitlement "e5" to type Permission set anyway\? .*entitlement "e5" is held by 1 user; confirm below/);
      const moveFields = hiddenFields(move.body, '/console/access/entitlements');
      assert.deepEqual({ type: moveFields.type, value: moveFields.value, displayName: moveFields.displayName, force: moveFields.force }, { type: 'Permission set', value: 'e5', displayName: 'Office E5', force: '1' });
      const typeRefused = await submit(page, '/console/access', '/console/access/types/remove', { name: 'License' });
      assert.equal(typeRefused.statusCode, 409);
      assert.match(text(typeRefused.body), /Remove entitlement type License and its entitlements anyway\?/);
      const typeForced = await page.post('/console/access/types/remove', hiddenFields(typeRefused.body, '/console/access/types/remove'));
      assert.equal(typeForced.statusCode, 303, typeForced.body);
      assert.doesNotMatch(text((await page.get('/console/access')).body), /License \/Licenses/);

      // Removing what is not there: the page says so (404), no 500.
      const gone = await submit(page, '/console/access', '/console/access/roles/remove', { value: 'admin' });
      assert.equal(gone.statusCode, 404);
      assert.match(text(gone.body), /has no role "admin"/);
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
      const foreignRole = await submit(page, '/console/access', '/console/access/roles/remove', { value: 'globex-root', force: '1' });
      assert.equal(foreignRole.statusCode, 404);
      assert.equal((await submit(page, '/console/access', '/console/access/roles', { value: 'acme-only', displayName: 'Acme only' })).statusCode, 303);
      assert.equal((await submit(page, '/console/access', '/console/access/schemas', { schemas: 'ietf' })).statusCode, 303);

      // The other team's admin sees its own catalog, and none of acme's.
      const theirs = await signedIn(t, 'root@globex.example', 'globex');
      const their = await theirs.get('/console/access');
      assert.ok(their.body.includes('globex-root') && !their.body.includes('Office E5') && !their.body.includes('acme-only'));
      assert.match(their.body, /<option value="okta" selected>/, "acme's schemas setting is acme's");
    });
  });
}
