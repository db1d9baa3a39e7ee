/**
 * Issue 30 item 7 (the exports) at the HTTP level: GET /console/users.csv, /console/groups.csv
 * and /console/audit.csv. The directory's columns come from the team's schemas, its extensions
 * included (named `<urn>:<attribute>`, returned-never attributes and the relationships left
 * out); every user once across the export's pages (2,100 users: three SCIM pages); the list's
 * search or filter and the audit page's filters applied; RFC 4180 quoting; a cell a spreadsheet
 * would run as a formula starts with a quote (OWASP); a bad filter or date is a 400 page before
 * any CSV; the answer is streamed (no Content-Length); each export is audited and told in the
 * log; the lists link to their export. On every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseCsv } from '../../src/import/csv.ts';
import { GROUP_SCHEMA, USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { loadUsers } from '../support/rows.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const ADMIN = 'admin@acme.example';
const EXT = 'urn:acme:params:scim:schemas:Badge:1.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const LOADED = 2_100;
const TRICKY = 'a,b "c"\r\nd';

/** The records of a CSV answer, as the import's RFC 4180 reader reads them. */
const records = (body: string): string[][] => parseCsv(body).map((r) => {
  assert.equal(r.problem, undefined, `line ${r.line}: ${r.problem}`);
  return [...r.fields];
});

const textOf = (html: string): string => html.replace(/<\/?(a|span|time)\b[^>]*>/g, '').replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&amp;/g, '&').replace(/\s+/g, ' ');

for (const engine of engines) {
  describe(`console CSV exports on ${engine.name}`, () => {
    let t: TestApp;
    let page: PageSession;

    before(async () => {
      t = await createTestApp({ engine });
      await registerAdmin(t, ADMIN, PASSWORD);
      page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: ADMIN, password: PASSWORD })).statusCode, 303);
      const registered = await t.request('POST', '/v2/admin/Schemas', {
        resourceType: 'User',
        schema: { id: EXT, name: 'Badge', attributes: [{ name: 'costCenter', type: 'string' }, { name: 'pin', type: 'string', returned: 'never' }, { name: 'badge', type: 'complex', subAttributes: [{ name: 'code', type: 'string', returned: 'never' }, { name: 'label', type: 'string' }] }] },
      });
      assert.equal(registered.statusCode, 201, registered.body);
      await loadUsers(t.storage, t.team, { naming: { prefix: 'e', domain: 'acme.example' }, count: LOADED });
      for (const [userName, costCenter] of [['=HYPERLINK("http://evil.example")', '+cmd|calc'], ['tricky@acme.example', TRICKY], ['@sum@acme.example', '-2']] as const) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER_SCHEMA, EXT], userName, [EXT]: { costCenter, pin: '4242', badge: { code: 'SECRET-7', label: 'front door' } } });
        assert.equal(res.statusCode, 201, res.body);
      }
      for (const displayName of ['Engineering', '=cmd']) assert.equal((await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP_SCHEMA], displayName, externalId: `x-${displayName}` })).statusCode, 201);
    });

    after(async () => {
      await t?.close();
    });

    it('users.csv: every user once, the team\'s extensions as columns, formulas neutralised, RFC 4180 quoting, streamed', async () => {
      const res = await page.get('/console/users.csv');
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
      assert.match(String(res.headers['content-disposition']), /^attachment; filename="users-\d{4}-\d\d-\d\d\.csv"$/);
      assert.equal(res.headers['content-length'], undefined, 'streamed, not sent whole');
      assert.equal(res.headers['cache-control'], 'no-store');
      const [header, ...rows] = records(res.body);
      for (const column of ['id', 'externalId', 'meta.created', 'meta.lastModified', 'userName', 'name.givenName', 'emails', `${ENTERPRISE}:employeeNumber`, `${EXT}:costCenter`, `${EXT}:badge.label`]) {
        assert.ok(header!.includes(column), `column ${column} in ${header!.join(',')}`);
      }
      for (const never of ['password', 'groups', `${EXT}:pin`, `${EXT}:badge.code`]) assert.ok(!header!.includes(never), `no column ${never}`);
      assert.doesNotMatch(res.body, /SECRET-7|4242/, 'returned-never values are not exported');
      assert.equal(rows.length, LOADED + 4, 'the loaded users, the three created and the admin');
      const ids = rows.map((r) => r[header!.indexOf('id')]!);
      assert.equal(new Set(ids).size, ids.length, 'no user twice across pages');
      const cell = (userName: string, column: string) => rows.find((r) => r[header!.indexOf('userName')] === userName)?.[header!.indexOf(column)];
      assert.equal(cell("'=HYPERLINK(\"http://evil.example\")", `${EXT}:costCenter`), "'+cmd|calc", 'formula cells start with a quote');
      assert.equal(cell("'@sum@acme.example", `${EXT}:costCenter`), "'-2");
      assert.equal(cell('tricky@acme.example', `${EXT}:costCenter`), TRICKY, 'commas, quotes and line breaks round-trip');
      assert.equal(cell('tricky@acme.example', `${EXT}:badge.label`), 'front door');
      assert.equal(cell('e0000007@acme.example', `${ENTERPRISE}:employeeNumber`), '7');
      assert.equal(cell('e0000007@acme.example', 'emails'), 'work: e0000007@acme.example (primary)');
      assert.ok(res.body.includes('"\'=HYPERLINK(""http://evil.example"")"'), 'quotes doubled inside a quoted field');
      assert.ok(res.body.endsWith('\r\n') && !/[^\r]\n/.test(res.body.replace(/"[^"]*"/g, '')), 'CRLF between records');
    });

    it('the list\'s search or SCIM filter applies; a bad filter is a 400 page, before any CSV', async () => {
      const words = records((await page.get('/console/users.csv?q=e00001')).body);
      assert.equal(words.length - 1, 100, 'e0000100..e0000199');
      const filtered = records((await page.get(`/console/users.csv?filter=${encodeURIComponent(`${EXT}:costCenter pr`)}`)).body);
      assert.equal(filtered.length - 1, 3);
      const bad = await page.get(`/console/users.csv?filter=${encodeURIComponent('userName zz 1')}`);
      assert.equal(bad.statusCode, 400);
      assert.match(String(bad.headers['content-type']), /text\/html/);
      assert.match(textOf(bad.body), /The export could not start: /);
    });

    it('groups.csv: the groups, without their members', async () => {
      const res = await page.get('/console/groups.csv');
      assert.equal(res.statusCode, 200);
      const [header, ...rows] = records(res.body);
      assert.ok(header!.includes('displayName') && header!.includes('externalId'));
      assert.ok(!header!.includes('members'));
      assert.deepEqual(rows.map((r) => r[header!.indexOf('displayName')]).sort(), ["'=cmd", 'Engineering']);
    });

    it('audit.csv: the page\'s filters applied, one story a row; a bad date is a 400 page', async () => {
      const res = await page.get('/console/audit.csv?action=create&from=2026-01-01');
      assert.equal(res.statusCode, 200);
      const [header, ...rows] = records(res.body);
      assert.deepEqual(header, ['at', 'event', 'action', 'actor', 'via', 'connection', 'resourceType', 'resourceId', 'resource', 'requestId', 'details', 'eventId']);
      assert.ok(rows.length >= 6, `${rows.length} create events`);
      assert.ok(rows.every((r) => r[2] === 'create'));
      assert.ok(rows.some((r) => r[1] === 'A provisioning token created user tricky@acme.example'), rows.map((r) => r[1]).join('\n'));
      const bad = await page.get('/console/audit.csv?from=2026-13-01');
      assert.equal(bad.statusCode, 400);
      assert.match(textOf(bad.body), /From is not a date/);
    });

    it('exports are audited: who exported what, with which filter, told in the log', async () => {
      await page.get('/console/users.csv?q=e00002');
      const log = await page.get('/console/audit?action=exported');
      const text = textOf(log.body);
      assert.match(text, /admin@acme\.example exported users as CSV in the console/);
      assert.match(text, /admin@acme\.example exported the audit log as CSV in the console/);
      assert.match(text, /Search e00002/, "the search as typed (the page's words, not a SCIM filter)");
    });

    it('the lists link to their export, with their search', async () => {
      assert.match((await page.get('/console/users?q=ada')).body, /href="\/console\/users\.csv\?q=ada" download>Export these users as CSV/);
      assert.match((await page.get('/console/groups')).body, /href="\/console\/groups\.csv" download>Export these groups as CSV/);
      assert.match((await page.get('/console/audit?action=create')).body, /href="\/console\/audit\.csv\?action=create" download>Export as CSV/);
    });
  });
}
