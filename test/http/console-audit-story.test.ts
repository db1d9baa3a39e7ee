/**
 * Issue 30 item 4 at the HTTP level: the audit log as a story. One readable line per event
 * ("admin@acme.example added 500 members to Engineering through the SCIM API"), the actor and the
 * resource named and linked to their console pages, the details folded in a <details> element (a
 * member change shows its count and the first few names, never its ids); the same lines in a
 * user's and a group's history; real date pickers whose bad values are a 400 with a plain
 * message; newest first, paged; the actor filter takes a userName. The finding: 50 audit rows of
 * 500-member changes made a 17,000 px page of member ids; now such a page names at most five
 * members a row and stays small. The page's names are read in bulk: the statements a page runs
 * do not grow with its rows. On every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createConnection } from '../../src/oauth/connections.ts';
import { issueProvisioningToken } from '../../src/oauth/provisioning.ts';
import { issueAccessToken } from '../../src/oauth/tokens.ts';
import { GROUP_SCHEMA, PATCH_OP, USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { loadUsers } from '../support/rows.ts';
import { StatementLog } from '../support/storage-spy.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const ADMIN = 'admin@acme.example';

/** A page's text as a person reads it: tags dropped, entities decoded, spaces collapsed. */
const textOf = (html: string): string =>
  html
    .replace(/<\/?(a|span|time)\b[^>]*>/g, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');

/** The rows of the page's audit table. */
const rowsOf = (html: string): string[] => html.split('<tbody>')[1]?.split('</tbody>')[0]?.split('<tr>').slice(1) ?? [];

for (const engine of engines) {
  describe(`console audit log as a story on ${engine.name}`, () => {
    let t: TestApp;
    let page: PageSession;
    let adminId: string;
    let groupId: string;
    let memberIds: string[];
    const statements = new StatementLog();
    /** The admin's own SCIM token: its requests are audited with the admin as actor, via scim. */
    const asAdmin = async (method: string, url: string, body?: unknown) => {
      const token = (await issueAccessToken(t.storage.db, t.clock, { teamId: t.team.id, userId: adminId, clientId: null, scope: ['read', 'write'], ttlSeconds: 3600 })).token;
      return t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
    };

    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => statements.wrap(s) });
      adminId = (await registerAdmin(t, ADMIN, PASSWORD)).id;
      page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: ADMIN, password: PASSWORD })).statusCode, 303);
      memberIds = (await loadUsers(t.storage, t.team, { naming: { prefix: 'm', domain: 'acme.example' }, count: 500 })).ids;
      const group = await asAdmin('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Engineering' });
      assert.equal(group.statusCode, 201, group.body);
      groupId = String(group.json().id);
      // 50 rows of 500-member changes: 25 times all 500 added, then all 500 removed.
      for (let i = 0; i < 25; i++) {
        for (const op of ['add', 'remove'] as const) {
          const body = op === 'add'
            ? { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: memberIds.map((value) => ({ value })) }] }
            : { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'members' }] };
          const res = await asAdmin('PATCH', `/v2/scim/Groups/${groupId}`, body);
          assert.equal(res.statusCode, op === 'add' ? 204 : 204, res.body);
        }
      }
    });

    after(async () => {
      await t?.close();
    });

    it('the finding: 50 rows of 500-member changes make a short page that names at most five members a row', async () => {
      const res = await page.get('/console/audit');
      assert.equal(res.statusCode, 200);
      const rows = rowsOf(res.body);
      assert.equal(rows.length, 50, 'a page of 50 events');
      // Of 500 members, only the first five of each change appear, as linked names.
      const shown = memberIds.filter((id) => res.body.includes(id));
      assert.ok(shown.length <= 5, `${shown.length} member ids on the page`);
      assert.ok(res.body.length < 120_000, `the page is ${res.body.length} characters`);
      for (const row of rows) {
        assert.match(row, /<details><summary>Details<\/summary>/, 'details folded');
        assert.ok((row.match(/href="\/console\/users\//g) ?? []).length <= 6, 'the actor and at most five members linked');
      }
      const text = textOf(res.body);
      assert.match(text, /admin@acme\.example added 500 members to Engineering through the SCIM API/);
      assert.match(text, /admin@acme\.example removed every member from Engineering through the SCIM API/);
      // The first change's details: its count, the first five names, how many more.
      assert.match(text, /Added 500 members: m0000000@acme\.example, m0000001@acme\.example, m0000002@acme\.example, m0000003@acme\.example, m0000004@acme\.example and 495 more/);
      assert.match(res.body, new RegExp(`<a href="/console/users/${adminId}" dir="auto">admin@acme\\.example</a>`), 'the actor links to their page');
      assert.match(res.body, new RegExp(`<a href="/console/groups/${groupId}" dir="auto">Engineering</a>`), 'the group links to its page');
      assert.match(res.body, /<time datetime="2026-01-01T[^"]+" title="2026-01-01 [\d:]+ UTC">/, 'times are relative with the exact time on hover');
    });

    it('names are read in bulk: a page of 50 events runs no more statements than a page of two', async () => {
      statements.reset();
      await page.get('/console/audit?action=create');
      const one = statements.statements.length + statements.built.length;
      statements.reset();
      await page.get('/console/audit');
      const fifty = statements.statements.length + statements.built.length;
      assert.ok(fifty <= one + 4, `a page of 50 ran ${fifty} statements, a page of two ran ${one}`);
      assert.ok(fifty <= 12, `${fifty} statements for one audit page`);
    });

    it('newest first and paged: Older events, then Newest events back', async () => {
      const first = await page.get('/console/audit');
      const older = /href="([^"]+)" rel="next">Older events/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
      assert.ok(older, 'a link to older events');
      const second = await page.get(older);
      assert.equal(second.statusCode, 200);
      const times = (html: string) => [...html.matchAll(/<time datetime="([^"]+)"/g)].map((m) => m[1]!);
      const all = [...times(first.body), ...times(second.body)];
      assert.deepEqual(all, [...all].sort().reverse(), 'newest first across pages');
      assert.match(textOf(second.body), /admin@acme\.example created group Engineering through the SCIM API/);
      assert.match(second.body, /<a href="\/console\/audit">Newest events<\/a>/);
    });

    it('a user\'s and a group\'s history tell the same stories', async () => {
      const created = await asAdmin('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA], userName: 'ada@acme.example', name: { givenName: 'Ada' } });
      const adaId = String(created.json().id);
      await asAdmin('PATCH', `/v2/scim/Users/${adaId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'title', value: 'Countess' }] });
      await asAdmin('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: adaId }] }] });
      const user = textOf((await page.get(`/console/users/${adaId}`)).body);
      assert.match(user, /admin@acme\.example created user ada@acme\.example through the SCIM API/);
      assert.match(user, /admin@acme\.example changed title of user ada@acme\.example through the SCIM API/);
      const group = await page.get(`/console/groups/${groupId}`);
      assert.match(textOf(group.body), /admin@acme\.example added ada@acme\.example to Engineering through the SCIM API/);
      assert.ok(memberIds.slice(5).every((id) => !group.body.includes(id)), 'the group page lists no member ids of its history');
      assert.equal((await asAdmin('DELETE', `/v2/scim/Users/${adaId}`)).statusCode, 204);
      assert.match(textOf((await page.get('/console/audit?action=deactivate')).body), /admin@acme\.example deactivated user ada@acme\.example through the SCIM API/);
      // A group deleted for good keeps its name in the log (from the row's own summary).
      const temp = await asAdmin('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: 'Temporary team' });
      assert.equal((await asAdmin('DELETE', `/v2/scim/Groups/${String(temp.json().id)}`)).statusCode, 204);
      assert.match(textOf((await page.get('/console/audit?action=delete')).body), /admin@acme\.example deleted group Temporary team through the SCIM API/);
    });

    it('date pickers: real date inputs; a date filter keeps its day; a bad or reversed date is a 400 that says why', async () => {
      const form = await page.get('/console/audit');
      assert.match(form.body, /<input id="from" name="from" type="date"/);
      assert.match(form.body, /<input id="to" name="to" type="date"/);
      const day = await page.get('/console/audit?from=2026-01-01&to=2026-01-01');
      assert.equal(day.statusCode, 200);
      assert.equal(rowsOf(day.body).length, 50, 'the events of that day (the whole day, To inclusive)');
      assert.match(day.body, /value="2026-01-01"/);
      const none = await page.get('/console/audit?from=2026-01-02');
      assert.match(none.body, /No audit events\./);
      const bad = await page.get('/console/audit?from=2026-02-30');
      assert.equal(bad.statusCode, 400);
      assert.match(textOf(bad.body), /From is not a date: pick one, or write it as 2026-01-31/);
      assert.match(bad.body, /<input id="from" name="from" type="date" value="2026-02-30" aria-invalid="true"/);
      const reversed = await page.get('/console/audit?from=2026-03-01&to=2026-02-01');
      assert.equal(reversed.statusCode, 400);
      assert.match(textOf(reversed.body), /From \(2026-03-01\) is after To \(2026-02-01\)/);
      const withTime = await page.get(`/console/audit?to=${encodeURIComponent('2026-01-01T00:00')}`);
      assert.equal(withTime.statusCode, 200);
      assert.match(withTime.body, /<input id="to" name="to" type="datetime-local" value="2026-01-01T00:00"/);
    });

    it('the actor filter takes a userName; an unknown one is a 400 naming it', async () => {
      const mine = await page.get(`/console/audit?actor=${encodeURIComponent(ADMIN)}&action=members`);
      assert.equal(mine.statusCode, 200);
      assert.ok(rowsOf(mine.body).length > 0);
      const unknown = await page.get(`/console/audit?actor=${encodeURIComponent('nobody@acme.example')}`);
      assert.equal(unknown.statusCode, 400);
      assert.match(textOf(unknown.body), /no user or connection of this team is named "nobody@acme\.example"/);
    });

    it('a connection acting is named and linked ("Entra ID production added 3 members to Engineering"), and the actor filter takes its name', async () => {
      const actor = { via: 'cli' as const, clientId: null, userId: null };
      const connection = await createConnection(t.storage, t.clock, { teamId: t.team.id, name: 'Entra ID production', provider: 'entra', actor, requestId: null });
      const { token } = await issueProvisioningToken(t.storage, t.clock, { teamId: t.team.id, connectionId: connection.id, name: 'gallery', scope: ['read', 'write'], ttlSeconds: 3600, actor, requestId: null });
      const patched = await t.app.inject({
        method: 'PATCH',
        url: `/v2/scim/Groups/${groupId}`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({ schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: memberIds.slice(0, 3).map((value) => ({ value })) }] }),
      });
      assert.equal(patched.statusCode, 204, patched.body);
      const log = await page.get(`/console/audit?actor=${encodeURIComponent('entra id PRODUCTION')}`);
      assert.equal(log.statusCode, 200);
      assert.equal(rowsOf(log.body).length, 1, 'only what the connection did');
      assert.match(textOf(log.body), /Entra ID production added 3 members to Engineering/);
      assert.match(log.body, new RegExp(`<a href="/console/connections/${connection.id}" dir="auto">Entra ID production</a>`));
      assert.match(textOf((await page.get('/console/audit?action=token_issued')).body), /The operator \(CLI\) issued token “gallery” for Entra ID production/);
      assert.match(textOf((await page.get('/console/audit?action=connection_created')).body), /The operator \(CLI\) created connection Entra ID production/);
    });

    it('hostile names in stories are escaped', async () => {
      const hostile = await asAdmin('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName: '<img src=x onerror=alert(1)>' });
      assert.equal(hostile.statusCode, 201);
      const body = (await page.get('/console/audit?action=create')).body;
      assert.doesNotMatch(body, /<img src=x/);
      assert.match(body, /&lt;img src=x onerror=alert\(1\)&gt;/);
    });
  });
}
