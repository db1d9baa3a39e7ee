/**
 * Issue 27 item 3: a team's schema extension cannot break another team. A URN holding `"` made
 * the JSON path of its `uniqueness: server` attribute's expression index unreadable to SQLite,
 * and that index, shared by the users table of every team, failed on every other team's write
 * that carried the enterprise extension (500). URNs with `"`, `\` or a control character are
 * refused at registration (400 invalidValue, naming the character), and an index expression is
 * total over any document: another team's values of any JSON type under the same path are
 * indexed, never an error.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

type Json = Record<string, unknown>;

const CORE = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

for (const engine of engines) {
  describe(`extension URNs cannot break other teams on ${engine.name}`, () => {
    let t: TestApp;
    let other: { token: string };

    const as = (token: string, method: string, url: string, body?: unknown) =>
      t.app.inject({
        method: method as 'POST',
        url,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }) },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    const register = (token: string, schema: unknown) => as(token, 'POST', '/v2/admin/Schemas', { resourceType: 'User', schema });
    const enterpriseUser = (userName: string) => ({ schemas: [CORE, ENTERPRISE], userName, [ENTERPRISE]: { employeeNumber: '42', department: 'R&D' } });

    /** A 400 in RFC 7644 3.12's shape whose detail names `what`. */
    const assertRefused = (res: Awaited<ReturnType<typeof register>>, what: string) => {
      assert.equal(res.statusCode, 400, res.body);
      const body = json(res);
      assert.deepEqual(body.schemas, [ERROR]);
      assert.equal(body.status, '400');
      assert.equal(body.scimType, 'invalidValue');
      assert.match(String(body.detail), new RegExp(what.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')), String(body.detail));
    };

    before(async () => {
      t = await createTestApp({ engine });
      other = await t.addTeam('other');
    });
    after(() => t.close());

    it('a URN holding " that prefixes the enterprise URN is refused, and other teams keep writing the enterprise extension', async () => {
      const hostile = { id: `${ENTERPRISE}"x`, attributes: [{ name: 'badge', type: 'string', uniqueness: 'server' }] };
      const registered = await register(t.token, hostile);
      // Other teams' writes carrying the enterprise extension first: what the attack broke.
      const created = await as(other.token, 'POST', '/v2/scim/Users', enterpriseUser('bea'));
      assert.equal(created.statusCode, 201, created.body);
      const id = String(json(created).id);
      const replaced = await as(other.token, 'PUT', `/v2/scim/Users/${id}`, { ...enterpriseUser('bea'), [ENTERPRISE]: { employeeNumber: '43' } });
      assert.equal(replaced.statusCode, 200, replaced.body);
      const patched = await as(other.token, 'PATCH', `/v2/scim/Users/${id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', path: `${ENTERPRISE}:department`, value: 'Ops' }],
      });
      assert.equal(patched.statusCode, 200, patched.body);
      assertRefused(registered, 'schema.id');
      assertRefused(registered, '"');
      // The refused registration left nothing behind: the team has no extension.
      const listed = await as(t.token, 'GET', '/v2/admin/Schemas');
      assert.equal(listed.statusCode, 200, listed.body);
      assert.doesNotMatch(listed.body, /"x/);
    });

    it('a URN holding \\ or a control character is refused, naming the rule', async () => {
      assertRefused(await register(t.token, { id: 'urn:acme:ext\\User', attributes: [{ name: 'a', type: 'string', uniqueness: 'server' }] }), 'schema.id');
      assertRefused(await register(t.token, { id: 'urn:acme:ext\\User', attributes: [{ name: 'a', type: 'string' }] }), '\\');
      assertRefused(await register(t.token, { id: 'urn:acme:ext\u0001User', attributes: [{ name: 'a', type: 'string' }] }), 'schema.id');
    });

    it('an attribute or sub-attribute name holding " or \\ is refused', async () => {
      for (const name of ['bad"name', 'bad\\name']) {
        assertRefused(await register(t.token, { id: 'urn:acme:ext:names', attributes: [{ name, type: 'string', uniqueness: 'server' }] }), 'schema.attributes[0].name');
        const nested = { id: 'urn:acme:ext:names', attributes: [{ name: 'outer', type: 'complex', subAttributes: [{ name, type: 'string' }] }] };
        assertRefused(await register(t.token, nested), 'subAttributes[0].name');
      }
    });

    it("one team's index reads any JSON value another team keeps under the same path", async () => {
      // Team A indexes urn:shared:ext `code` (a string, folded); team B declares the same URN with
      // `code` of other types, so B's documents hold numbers, booleans, objects and arrays under the
      // very path A's index evaluates on every row of the users table.
      const urn = 'urn:shared:params:scim:schemas:extension:Codes:1.0:User';
      const a = await register(t.token, { id: urn, attributes: [{ name: 'code', type: 'string', uniqueness: 'server' }] });
      assert.equal(a.statusCode, 201, a.body);
      assert.deepEqual(json(a).indexed, ['code']);
      const values: [string, unknown][] = [
        ['integer', { name: 'code', type: 'integer' }],
        ['decimal', { name: 'code', type: 'decimal' }],
        ['boolean', { name: 'code', type: 'boolean' }],
        ['complex', { name: 'code', type: 'complex', subAttributes: [{ name: 'v', type: 'string' }] }],
        ['multi', { name: 'code', type: 'string', multiValued: true }],
      ];
      const written: Record<string, unknown> = { integer: 7, decimal: 2.5, boolean: true, complex: { v: 'Q' }, multi: ['a', 'b'] };
      for (const [kind, attribute] of values) {
        const team = await t.addTeam(`b-${kind}`);
        const b = await register(team.token, { id: urn, attributes: [attribute] });
        assert.equal(b.statusCode, 201, b.body);
        const created = await as(team.token, 'POST', '/v2/scim/Users', { schemas: [CORE, urn], userName: `u-${kind}`, [urn]: { code: written[kind] } });
        assert.equal(created.statusCode, 201, `${kind}: ${created.body}`);
      }
      const mine = await as(t.token, 'POST', '/v2/scim/Users', { schemas: [CORE, urn], userName: 'ann', [urn]: { code: 'X-7' } });
      assert.equal(mine.statusCode, 201, mine.body);
      const found = await as(t.token, 'GET', `/v2/scim/Users?filter=${encodeURIComponent(`${urn}:code eq "x-7"`)}&attributes=userName`);
      assert.equal(found.statusCode, 200, found.body);
      assert.deepEqual(((json(found).Resources as Json[] | undefined) ?? []).map((r) => r.userName), ['ann']);
    });
  });
}
