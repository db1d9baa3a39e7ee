/**
 * Issue 30 item 2 at the HTTP level, on every engine: the directory readable and actionable.
 * A user's page reads as a person reads it (names, emails, phone numbers, addresses, the team's
 * extension under its schema's name, times as <time> with the exact time on hover) and not as
 * JSON; the filter box knows the team's extension attributes (the console's SCIM context is built
 * with the team's types, as the API's is); lists say their position and count ("51-100 of 121",
 * "of more than 1,000" when filtered); groups list their member counts, a group's members are searched and
 * numbered by page; deactivated users are listed under their own filter in both team modes and
 * reactivated; users are created, edited, deactivated (after a confirmation) and reactivated, and
 * members added and removed, through the SCIM services: audited as the console admin, refused
 * with the SCIM error's message, each change answered by a redirect (post/redirect/get).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { auditEvents } from '../../src/admin.ts';
import { PATCH_OP, USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';
import { userRowFor } from '../support/rows.ts';
import { addCounts } from '../../src/storage/repos/counters.ts';

const PASSWORD = 'correct horse battery staple';
const HR = 'urn:acme:params:scim:schemas:extension:HR:2.0:User';
const HR_SCHEMA = {
  id: HR,
  name: 'Human resources',
  description: 'HR attributes',
  attributes: [
    { name: 'costCenter', type: 'string' },
    { name: 'level', type: 'integer' },
    { name: 'remote', type: 'boolean' },
  ],
};
const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';

async function signIn(t: TestApp): Promise<{ page: PageSession; adminId: string }> {
  const admin = await registerAdmin(t, 'admin@acme.example', PASSWORD);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return { page, adminId: admin.id };
}

/** Posts the form of `path`'s page whose action is `action`, with `fields`. */
async function submit(page: PageSession, path: string, action: string, fields: Record<string, string>) {
  const shown = await page.get(path);
  assert.equal(shown.statusCode, 200, shown.body.slice(0, 400));
  return page.post(action, { ...hiddenFields(shown.body, action), ...fields });
}

const userNames = (body: string): string[] => [...body.matchAll(/<a href="\/console\/users\/[A-Z0-9]+" dir="auto">([^<]*)<\/a>/g)].map((m) => m[1]!);

for (const engine of engines) {
  describe(`console directory on ${engine.name}`, () => {
    let t: TestApp;
    let page: PageSession;
    let adminId: string;
    let adaId: string;

    before(async () => {
      t = await createTestApp({ engine });
      ({ page, adminId } = await signIn(t));
      const schema = await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: HR_SCHEMA });
      assert.equal(schema.statusCode, 201, schema.body);
      const ada = await t.request('POST', '/v2/scim/Users', {
        schemas: [USER_SCHEMA, HR],
        userName: 'ada@acme.example',
        name: { givenName: 'Ada', familyName: 'Lovelace' },
        emails: [{ value: 'ada@work.example', type: 'work', primary: true }, { value: 'ada@home.example', type: 'home' }],
        phoneNumbers: [{ value: '+44 20 7946 0958', type: 'mobile' }],
        addresses: [{ streetAddress: '12 St James Square', locality: 'London', postalCode: 'SW1Y 4JH', country: 'GB', type: 'work' }],
        [HR]: { costCenter: 'R&D-42', level: 7, remote: true },
      });
      assert.equal(ada.statusCode, 201, ada.body);
      adaId = String(json(ada).id);
    });
    after(() => t.close());

    it("a user's page reads as a person reads it: names, emails, phones, addresses, the team's extension under its schema's name, times with the exact time on hover; no JSON", async () => {
      const res = await page.get(`/console/users/${adaId}`);
      assert.equal(res.statusCode, 200, res.body.slice(0, 400));
      assert.match(res.body, /<dt>Name<\/dt><dd><span dir="auto">Ada Lovelace<\/span>/);
      assert.match(res.body, /ada@work\.example<\/span> <span class="muted">\(work, primary\)/);
      assert.match(res.body, /ada@home\.example<\/span> <span class="muted">\(home\)/);
      assert.match(res.body, /\+44 20 7946 0958<\/span> <span class="muted">\(mobile\)/);
      assert.match(res.body, /12 St James Square, London, SW1Y 4JH, GB/);
      assert.match(res.body, /<h3 id="[^"]+">Human resources<\/h3>/);
      assert.match(res.body, /<dt>costCenter<\/dt><dd><span dir="auto">R&amp;D-42<\/span>/);
      assert.match(res.body, /<dt>remote<\/dt><dd>yes<\/dd>/);
      assert.match(res.body, /<dt>Created<\/dt><dd><time datetime="2026-[^"]+" title="2026-[^"]+ UTC">[^<]+<\/time>/);
      assert.doesNotMatch(res.body, /<pre/);
      assert.doesNotMatch(res.body, /&quot;givenName&quot;/);
    });

    it("the filter box accepts the team's extension attributes (not \"Unknown schema\")", async () => {
      const res = await page.get(`/console/users?filter=${encodeURIComponent(`${HR}:costCenter eq "R&D-42"`)}`);
      assert.equal(res.statusCode, 200, res.body.slice(0, 2000));
      assert.deepEqual(userNames(res.body), ['ada@acme.example']);
      assert.match(res.body, /1-1 of 1/);
    });

    it('create a user through SCIM: post/redirect/get, audited as the console admin; a duplicate userName is refused with the SCIM message, the form kept', async () => {
      const created = await submit(page, '/console/users/new', '/console/users/new', {
        userName: 'grace@acme.example', givenName: 'Grace', familyName: 'Hopper', email: 'grace@work.example', phone: '+1 555 0100', [`${HR}:costCenter`]: 'NAVY', [`${HR}:level`]: '9', [`${HR}:remote`]: 'false',
      });
      assert.equal(created.statusCode, 303, created.body.slice(0, 2000));
      const location = String(created.headers.location);
      const id = /^\/console\/users\/([A-Z0-9]+)\?done=created$/.exec(location)?.[1];
      assert.ok(id, location);
      assert.match((await page.get(location)).body, /User created\./);
      const scim = json(await t.request('GET', `/v2/scim/Users/${id}`));
      assert.equal(scim.userName, 'grace@acme.example');
      assert.deepEqual(scim.name, { givenName: 'Grace', familyName: 'Hopper' });
      assert.deepEqual(scim[HR], { costCenter: 'NAVY', level: 9, remote: false });
      assert.equal((scim.emails as { value: string }[])[0]!.value, 'grace@work.example');
      const events = await auditEvents(adminDeps(t), t.team.name, undefined, 100);
      const create = events.find((e) => e.action === 'create' && e.resourceId === id);
      assert.deepEqual(create?.actor, { via: 'console', clientId: null, userId: adminId });

      const again = await submit(page, '/console/users/new', '/console/users/new', { userName: 'GRACE@acme.example', givenName: 'Second' });
      assert.equal(again.statusCode, 409);
      assert.match(again.body, /class="alert"[^>]*>userName &quot;GRACE@acme\.example&quot; is already taken/);
      assert.match(again.body, /value="Second"/);
      const bad = await submit(page, '/console/users/new', '/console/users/new', { userName: 'lvl@acme.example', [`${HR}:level`]: 'high' });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.body, /class="alert"/);
      assert.equal(json(await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "lvl@acme.example"')}`)).totalResults, 0, 'nothing written');
    });

    it('edit a user: only the changed values are patched; nothing changed says so', async () => {
      const edit = `/console/users/${adaId}/edit`;
      const form = await page.get(edit);
      assert.match(form.body, /name="email" type="text" value="ada@work\.example"/);
      const fields = Object.fromEntries([...form.body.matchAll(/<input id="[^"]*" name="([^"]+)" type="text" value="([^"]*)"/g)].map((m) => [m[1]!.replace(/&amp;/g, '&'), m[2]!.replace(/&amp;/g, '&')]));
      const saved = await page.post(edit, { ...hiddenFields(form.body, edit), ...fields, [`${HR}:remote`]: 'true', givenName: 'Augusta Ada', email: 'countess@work.example' });
      assert.equal(saved.statusCode, 303, saved.body.slice(0, 2000));
      assert.equal(saved.headers.location, `/console/users/${adaId}?done=saved`);
      const scim = json(await t.request('GET', `/v2/scim/Users/${adaId}`));
      assert.equal((scim.name as Record<string, string>).givenName, 'Augusta Ada');
      assert.deepEqual((scim.emails as { value: string }[]).map((m) => m.value), ['countess@work.example', 'ada@home.example']);
      assert.deepEqual(scim[HR], { costCenter: 'R&D-42', level: 7, remote: true });
      const unchanged = await submit(page, edit, edit, { ...fields, givenName: 'Augusta Ada', email: 'countess@work.example', [`${HR}:remote`]: 'true' });
      assert.equal(unchanged.headers.location, `/console/users/${adaId}?done=unchanged`);
    });

    it('deactivate asks for a confirmation; then the user leaves SCIM reads (hidden team), is listed under Deactivated, and is reactivated', async () => {
      const ok = await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'leaver@acme.example' });
      const id = String(json(ok).id);
      const confirm = await page.get(`/console/users/${id}/deactivate`);
      assert.match(confirm.body, /Deactivate <span dir="auto">leaver@acme\.example<\/span>\?/);
      assert.match(confirm.body, /leaves every SCIM read/);
      const { confirm: _confirmed, ...withoutConfirm } = hiddenFields(confirm.body, `/console/users/${id}/deactivate`);
      const unconfirmed = await page.post(`/console/users/${id}/deactivate`, withoutConfirm);
      assert.equal(unconfirmed.statusCode, 400);
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 200, 'not deactivated without the confirmation');
      const done = await submit(page, `/console/users/${id}/deactivate`, `/console/users/${id}/deactivate`, { confirm: 'yes' });
      assert.equal(done.statusCode, 303);
      assert.equal(done.headers.location, `/console/users/${id}?done=deactivated`);
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 404);
      assert.doesNotMatch((await page.get('/console/users')).body, /leaver@acme\.example/);
      const listed = await page.get('/console/users?status=deactivated');
      assert.deepEqual(userNames(listed.body), ['leaver@acme.example']);
      assert.match(listed.body, /1-1 of 1 deactivated users/);
      const shown = await page.get(`/console/users/${id}`);
      assert.match(shown.body, /This user is deactivated/);
      const back = await submit(page, `/console/users/${id}`, `/console/users/${id}/reactivate`, {});
      assert.equal(back.statusCode, 303);
      assert.equal((await t.request('GET', `/v2/scim/Users/${id}`)).statusCode, 200);
      const actions = (await auditEvents(adminDeps(t), t.team.name, undefined, 200)).filter((e) => e.resourceId === id).map((e) => [e.action, (e.actor as { via: string }).via]);
      assert.deepEqual(actions.map((a) => a.join(' ')).sort(), ['activate console', 'create scim', 'patch console']);
    });

    it('reactivating while an active user holds the userName shows the SCIM 409; an admin cannot deactivate themselves', async () => {
      const first = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'twice@acme.example' })).id);
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${first}`)).statusCode, 204);
      assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'twice@acme.example' })).statusCode, 201);
      const refused = await submit(page, `/console/users/${first}`, `/console/users/${first}/reactivate`, {});
      assert.equal(refused.statusCode, 409);
      assert.match(refused.body, /class="alert"[^>]*>userName &quot;twice@acme\.example&quot; is already taken by user [A-Z0-9]+/);
      const self = await submit(page, `/console/users/${adminId}/deactivate`, `/console/users/${adminId}/deactivate`, { confirm: 'yes' });
      assert.equal(self.statusCode, 400);
      assert.match(self.body, /You cannot deactivate yourself/);
    });

    it('lists say their position and count: "1-50 of N", "51-100 of N" on the next page; a filtered count over 1,000 says "more than 1,000"; the unfiltered count is exact', async () => {
      const rows = [];
      for (let i = 0; i < 10_050; i++) rows.push(userRowFor(t.storage, t.team.id, { schemas: [USER_SCHEMA], userName: `bulk${String(i).padStart(5, '0')}@acme.example` }, new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString()));
      for (let i = 0; i < rows.length; i += 500) await t.storage.db.insertInto('users').values(rows.slice(i, i + 500)).execute();
      const first = await page.get('/console/users?q=bulk');
      assert.equal(first.statusCode, 200);
      assert.match(first.body, /1-50 of more than 1,000\./);
      const next = /href="([^"]*)" rel="next"/.exec(first.body)![1]!.replace(/&amp;/g, '&');
      assert.match((await page.get(next)).body, /51-100 of more than 1,000\./);
      const narrow = await page.get(`/console/users?filter=${encodeURIComponent('userName sw "bulk0001"')}`);
      assert.match(narrow.body, /1-10 of 10\./);
      const fewer = await page.get(`/console/users?filter=${encodeURIComponent('userName sw "bulk000"')}`);
      assert.match(fewer.body, /1-50 of 100\./);
      const second = /href="([^"]*)" rel="next"/.exec(fewer.body)![1]!.replace(/&amp;/g, '&');
      const shown = await page.get(second);
      assert.match(shown.body, /51-100 of 100\./);
      // The unfiltered list counts from the team's counters (rows written by SCIM), exactly, as SCIM's totalResults.
      const total = Number(json(await t.request('GET', '/v2/scim/Users?count=0')).totalResults);
      assert.match((await page.get('/console/users')).body, new RegExp(`1-50 of ${total.toLocaleString('en-US')}\\.`));
    });

    it('groups list their member counts; a group page searches its members and numbers their pages; members are added (by userName search) and removed', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 120; i++) ids.push(String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: `m${String(i).padStart(3, '0')}@acme.example` })).id));
      const group = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Engineering', members: ids.map((value) => ({ value })) });
      assert.equal(group.statusCode, 201, group.body);
      const gid = String(json(group).id);
      await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Empty' });
      const list = await page.get('/console/groups');
      assert.match(list.body, /Engineering<\/a><\/td><td data-label="Members">120<\/td>/);
      assert.match(list.body, /Empty<\/a><\/td><td data-label="Members">0<\/td>/);
      assert.match(list.body, /1-2 of 2\./);

      const first = await page.get(`/console/groups/${gid}`);
      assert.match(first.body, /1-50 of 120 members\./);
      assert.match(first.body, /aria-current="page">1<\/a>/);
      const third = await page.get(`/console/groups/${gid}?page=3`);
      assert.match(third.body, /101-120 of 120 members\./);
      assert.equal(userNames(third.body).length, 20);
      const searched = await page.get(`/console/groups/${gid}?mq=M01`);
      assert.deepEqual(userNames(searched.body).sort(), Array.from({ length: 10 }, (_, i) => `m01${i}@acme.example`));
      assert.match(searched.body, /1-10 of 10 members whose userName starts with/);
      assert.equal((await page.get(`/console/groups/${gid}?page=0`)).statusCode, 400);

      const found = await page.get(`/console/groups/${gid}?add=grace`);
      assert.match(found.body, /aria-label="Add grace@acme\.example"/);
      const grace = /name="user" value="([A-Z0-9]+)"><button type="submit" class="secondary" aria-label="Add grace/.exec(found.body)![1]!;
      const added = await page.post(`/console/groups/${gid}/members/add`, { ...hiddenFields(found.body, `/console/groups/${gid}/members/add`), user: grace });
      assert.equal(added.statusCode, 303);
      assert.equal(added.headers.location, `/console/groups/${gid}?done=added#members`);
      const members = async () => ((json(await t.request('GET', `/v2/scim/Groups/${gid}`)).members as { value: string }[]) ?? []).map((m) => m.value);
      assert.ok((await members()).includes(grace));
      const removed = await submit(page, `/console/groups/${gid}`, `/console/groups/${gid}/members/remove`, { user: ids[0]! });
      assert.equal(removed.statusCode, 303);
      const now = await members();
      assert.ok(!now.includes(ids[0]!));
      assert.equal(now.length, 120);
      const events = await auditEvents(adminDeps(t), t.team.name, undefined, 1000);
      assert.equal(events.filter((e) => e.resourceId === gid && (e.actor as { via: string }).via === 'console').length, 2, 'both member changes audited as the console admin');
      const candidates = await page.get(`/console/groups/${gid}?add=m00`);
      const unknown = await page.post(`/console/groups/${gid}/members/add`, { ...hiddenFields(candidates.body, `/console/groups/${gid}/members/add`), user: 'NOSUCHUSER' });
      assert.ok(unknown.statusCode >= 400 && unknown.statusCode < 500, String(unknown.statusCode));
      assert.match(unknown.body, /class="alert"/);
    });
  });

  describe(`console member search on ${engine.name}`, () => {
    it("finds a group's members by the start of their userName, in userName order, after renames, leaving hidden users out", async () => {
      const t = await createTestApp({ engine });
      try {
        const { page } = await signIn(t);
        const create = async (userName: string) => String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName })).id);
        const zed = await create('Team.Zed@acme.example');
        const ana = await create('team.Ána@acme.example');
        const bob = await create('team.bob@acme.example');
        const gone = await create('team.gone@acme.example');
        const paused = await create('team.paused@acme.example');
        // Users of the team with the prefix who are no members are not found.
        await create('team.outsider@acme.example');
        const group = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Search', members: [zed, ana, gone, paused].map((value) => ({ value })) });
        assert.equal(group.statusCode, 201, group.body);
        const gid = String(json(group).id);
        // One member added alone (the single-member write), the others by the group's create.
        const added = await t.request('PATCH', `/v2/scim/Groups/${gid}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: bob }] }] });
        assert.equal(added.statusCode, 204, added.body);
        const search = async (words: string) => {
          const res = await page.get(`/console/groups/${gid}?mq=${encodeURIComponent(words)}`);
          assert.equal(res.statusCode, 200, res.body.slice(0, 300));
          // The members table only (the group's history names members too).
          const members = res.body.slice(res.body.indexOf('<h2 id="members">'), res.body.indexOf('<h3>Add members</h3>'));
          return { names: userNames(members), body: res.body };
        };
        assert.deepEqual((await search('TEAM.')).names, ['team.Ána@acme.example', 'team.bob@acme.example', 'team.gone@acme.example', 'team.paused@acme.example', 'Team.Zed@acme.example']);
        // A rename moves the member in the search: the old name's prefix no longer finds it.
        const renamed = await t.request('PATCH', `/v2/scim/Users/${bob}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'userName', value: 'robert@acme.example' }] });
        assert.equal(renamed.statusCode, 200, renamed.body);
        assert.deepEqual((await search('team.b')).names, []);
        assert.deepEqual((await search('rob')).names, ['robert@acme.example']);
        // Deleted and (in a team that hides them) deactivated users are no members a search shows.
        assert.equal((await t.request('DELETE', `/v2/scim/Users/${gone}`)).statusCode, 204);
        const off = await t.request('PATCH', `/v2/scim/Users/${paused}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] });
        assert.equal(off.statusCode, 200, off.body);
        const left = await search('team');
        assert.deepEqual(left.names, ['team.Ána@acme.example', 'Team.Zed@acme.example']);
        assert.match(left.body, /1-2 of 2 members whose userName starts with/);
        assert.deepEqual((await search('TEAM.ana')).names, ['team.Ána@acme.example'], 'accents and case ignored');
        // A team whose counters say it hides more users than the index walk leaves out by id: the
        // search reads each match's user row instead, with the same answer.
        await addCounts(t.storage.db, t.team.id, { usersDeleted: 20_000 }, new Date().toISOString());
        const read = await search('team');
        assert.deepEqual(read.names, ['team.Ána@acme.example', 'Team.Zed@acme.example']);
        assert.match(read.body, /1-2 of 2 members whose userName starts with/);
      } finally {
        await t.close();
      }
    });
  });

  describe(`console directory on ${engine.name}, a team that shows deactivated users`, () => {
    it('deactivated users are listed under their own filter there too, and reactivated', async () => {
      const t = await createTestApp({ engine, deactivatedUsers: 'visible' });
      try {
        const { page } = await signIn(t);
        const id = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'paused@acme.example', active: false })).id);
        await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'working@acme.example' });
        assert.deepEqual(userNames((await page.get('/console/users?status=deactivated')).body), ['paused@acme.example']);
        // A word search among them lists them in creation order (their partial index's order).
        const searched = await page.get('/console/users?status=deactivated&q=PAUS');
        assert.deepEqual(userNames(searched.body), ['paused@acme.example']);
        assert.match(searched.body, /Ordered by creation./);
        assert.deepEqual(userNames((await page.get('/console/users?status=active')).body).sort(), ['admin@acme.example', 'working@acme.example']);
        assert.equal((await page.get('/console/users?status=nonsense')).statusCode, 400);
        const back = await submit(page, `/console/users/${id}`, `/console/users/${id}/reactivate`, {});
        assert.equal(back.statusCode, 303);
        assert.equal(json(await t.request('GET', `/v2/scim/Users/${id}`)).active, true);
        const confirm = await page.get(`/console/users/${id}/deactivate`);
        assert.match(confirm.body, /reads active: false/);
      } finally {
        await t.close();
      }
    });
  });
}
