/**
 * Listing over HTTP (RFC 7644 sections 3.4.2 and 3.4.3): ListResponse envelope with integer
 * fields, filters (the contract's single-quoted userName eq and the full grammar), sorting,
 * paging with exact startIndex echo, attributes / excludedAttributes, POST /.search, errors.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { TableReads } from '../support/storage-spy.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

for (const engine of engines) {
describe(`listing and filtering on ${engine.name}`, () => {
  let t: TestApp;
  const ids: Record<string, string> = {};
  const reads = new TableReads('users');

  before(async () => {
    t = await createTestApp({ engine, wrapStorage: (s) => reads.wrap(s) });
    const people = [
      { userName: 'alice@contoso.example', externalId: 'ext-alice', name: { givenName: 'Alice', familyName: 'Ng' }, title: 'Engineer', emails: [{ value: 'alice@contoso.example', type: 'work', primary: true }], [ENTERPRISE]: { department: 'R&D' } },
      { userName: 'bob@contoso.example', name: { givenName: 'Bob', familyName: 'Stone' }, title: 'Manager', emails: [{ value: 'bob@home.example', type: 'home' }] },
      { userName: 'carol@fabrikam.example', name: { givenName: 'Carol', familyName: 'Avery' }, emails: [{ value: 'carol@fabrikam.example', type: 'work' }], [ENTERPRISE]: { department: 'Sales' } },
      { userName: 'dave@fabrikam.example', name: { givenName: 'Dave', familyName: 'Brown' } },
      { userName: 'erin@contoso.example', name: { givenName: 'Erin', familyName: 'Zhu' }, active: false },
    ];
    for (const p of people) {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER, ENTERPRISE], ...p });
      assert.equal(res.statusCode, 201, res.body);
      ids[p.userName.split('@')[0]!] = String(json(res).id);
      t.clock.advance(1000);
    }
  });
  after(() => t.close());

  const list = async (query: string) => {
    const res = await t.request('GET', `/v2/scim/Users?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return json(res);
  };
  const userNames = (body: Record<string, unknown>) => (body.Resources as Record<string, unknown>[]).map((r) => String(r.userName));
  const filter = (f: string) => `filter=${encodeURIComponent(f)}`;

  it('Entra E1 / T1: a filter that matches nothing is 200 with an empty ListResponse of integers', async () => {
    const body = await list(filter('userName eq "nobody@x"'));
    assert.deepEqual(body.schemas, [LIST]);
    assert.equal(body.totalResults, 0);
    assert.equal(body.startIndex, 1);
    assert.equal(body.itemsPerPage, 0);
    assert.deepEqual(body.Resources, []);
  });

  it("contract 4.2: userName eq '<x>' with single quotes finds the user; Okta T3: in any case", async () => {
    assert.deepEqual(userNames(await list(filter("userName eq 'alice@contoso.example'"))), ['alice@contoso.example']);
    assert.deepEqual(userNames(await list(filter('userName eq "ALICE@Contoso.example"'))), ['alice@contoso.example']);
  });

  it('hidden deactivated users are left out of lists (contract 3)', async () => {
    const body = await list('');
    assert.equal(body.totalResults, 4);
    assert.equal(userNames(body).includes('erin@contoso.example'), false);
  });

  it('RFC 7644 3.4.2.2: operators, and/or/not, grouping, value paths, extension URNs', async () => {
    const cases: [string, string[]][] = [
      ['userName sw "b"', ['bob@contoso.example']],
      ['userName ew "fabrikam.example"', ['carol@fabrikam.example', 'dave@fabrikam.example']],
      ['userName co "contoso"', ['alice@contoso.example', 'bob@contoso.example']],
      ['title pr', ['alice@contoso.example', 'bob@contoso.example']],
      ['not (title pr)', ['carol@fabrikam.example', 'dave@fabrikam.example']],
      ['name.familyName gt "Ng"', ['bob@contoso.example']],
      ['name.familyName le "Brown"', ['carol@fabrikam.example', 'dave@fabrikam.example']],
      ['title eq "engineer" or title eq "manager"', ['alice@contoso.example', 'bob@contoso.example']],
      ['userName co "contoso" and not (title eq "Manager")', ['alice@contoso.example']],
      ['emails[type eq "work" and value co "@contoso"]', ['alice@contoso.example']],
      ['emails[type eq "work"].value eq "carol@fabrikam.example"', ['carol@fabrikam.example']],
      ['emails.value co "home"', ['bob@contoso.example']],
      ['externalId eq "ext-alice"', ['alice@contoso.example']],
      [`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "Sales"`, ['carol@fabrikam.example']],
      [`id eq "${ids.dave}"`, ['dave@fabrikam.example']],
      ['userName ne "alice@contoso.example" and name.givenName sw "C"', ['carol@fabrikam.example']],
    ];
    for (const [f, expected] of cases) {
      assert.deepEqual(userNames(await list(filter(f))).sort(), expected, f);
    }
  });

  it('RFC 7644 3.4.2.3: sortBy and sortOrder', async () => {
    assert.deepEqual(userNames(await list('sortBy=name.familyName')), ['carol@fabrikam.example', 'dave@fabrikam.example', 'alice@contoso.example', 'bob@contoso.example']);
    assert.deepEqual(userNames(await list('sortBy=userName&sortOrder=descending')), ['dave@fabrikam.example', 'carol@fabrikam.example', 'bob@contoso.example', 'alice@contoso.example']);
  });

  it('Entra T19: startIndex / count page with exact startIndex echo and stable order', async () => {
    const all = userNames(await list('count=100'));
    const first = await list('startIndex=1&count=2');
    assert.equal(first.startIndex, 1);
    assert.equal(first.itemsPerPage, 2);
    assert.equal(first.totalResults, 4);
    const second = await list('startIndex=3&count=2');
    assert.equal(second.startIndex, 3);
    assert.deepEqual([...userNames(first), ...userNames(second)], all);
    const past = await list('startIndex=10&count=2');
    assert.equal(past.totalResults, 4);
    assert.deepEqual(past.Resources, []);
    const zero = await list('count=0');
    assert.equal(zero.totalResults, 4);
    assert.deepEqual(zero.Resources, []);
  });

  it('RFC 7644 3.4.2: totalResults is exact on every page; a page that ends the list tells it, so only full or empty pages count', async () => {
    const reading = async (query: string) => {
      reads.reset();
      const body = await list(query);
      return { total: body.totalResults, startIndex: body.startIndex, found: userNames(body).length, selects: reads.count };
    };
    // The lookup identity providers make before every write: one query, no count.
    assert.deepEqual(await reading(filter('userName eq "alice@contoso.example"')), { total: 1, startIndex: 1, found: 1, selects: 1 });
    assert.deepEqual(await reading(filter('userName eq "nobody@x"')), { total: 0, startIndex: 1, found: 0, selects: 1 });
    assert.deepEqual(await reading('count=100'), { total: 4, startIndex: 1, found: 4, selects: 1 });
    // The last page, shorter than count, starts at 3: 2 + 2 matches.
    assert.deepEqual(await reading('startIndex=3&count=3'), { total: 4, startIndex: 3, found: 2, selects: 1 });
    // A full page, and an empty one past the end, cannot tell: without a filter the team's
    // counters tell (no second read of users); with one, they count.
    assert.deepEqual(await reading('startIndex=1&count=2'), { total: 4, startIndex: 1, found: 2, selects: 1 });
    assert.deepEqual(await reading('startIndex=3&count=2'), { total: 4, startIndex: 3, found: 2, selects: 1 });
    assert.deepEqual(await reading('startIndex=9&count=2'), { total: 4, startIndex: 9, found: 0, selects: 1 });
    assert.deepEqual(await reading(`startIndex=1&count=1&${filter('userName co "contoso"')}`), { total: 2, startIndex: 1, found: 1, selects: 2 });
    assert.deepEqual(await reading('count=0'), { total: 4, startIndex: 1, found: 0, selects: 0 });
  });

  it('RFC 7644 3.4.2.4: startIndex below 1 is taken as 1', async () => {
    const body = await list('startIndex=0&count=1');
    assert.equal(body.startIndex, 1);
  });

  it('RFC 7644 3.4.2.5: attributes and excludedAttributes shape the resources', async () => {
    const only = await list(`attributes=userName&${filter('userName eq "alice@contoso.example"')}`);
    const r = (only.Resources as Record<string, unknown>[])[0]!;
    assert.deepEqual(Object.keys(r).sort(), ['id', 'schemas', 'userName', 'meta'].filter((k) => k in r).sort());
    assert.equal('name' in r, false);
    const without = await list(`excludedAttributes=emails,name&${filter('userName eq "alice@contoso.example"')}`);
    const w = (without.Resources as Record<string, unknown>[])[0]!;
    assert.equal('emails' in w, false);
    assert.equal('name' in w, false);
    assert.equal(w.userName, 'alice@contoso.example');
  });

  it('RFC 7644 3.4.3: POST /Users/.search takes a SearchRequest body', async () => {
    const res = await t.request('POST', '/v2/scim/Users/.search', {
      schemas: [SEARCH],
      filter: 'userName co "fabrikam"',
      sortBy: 'userName',
      sortOrder: 'descending',
      startIndex: 1,
      count: 10,
      attributes: ['userName'],
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(userNames(json(res)), ['dave@fabrikam.example', 'carol@fabrikam.example']);
  });

  it('filters on Groups: displayName eq, members eq (AWS-style membership probe T22)', async () => {
    const g = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Readers', members: [{ value: ids.alice }] }));
    await t.request('POST', '/v2/scim/Groups', { displayName: 'Writers' });
    const byName = json(await t.request('GET', `/v2/scim/Groups?${filter('displayName eq "READERS"')}`));
    assert.equal(byName.totalResults, 1);
    const probe = json(await t.request('GET', `/v2/scim/Groups?${filter(`id eq "${String(g.id)}" and members eq "${ids.alice}"`)}`));
    assert.equal(probe.totalResults, 1);
    const miss = json(await t.request('GET', `/v2/scim/Groups?${filter(`id eq "${String(g.id)}" and members eq "${ids.bob}"`)}`));
    assert.equal(miss.totalResults, 0);
  });

  it('bad filters, sortBy and paging answer 400 with the right scimType, never 500', async () => {
    const bad: [string, string][] = [
      [filter('userName eq'), 'invalidFilter'],
      [filter('userName zz "x"'), 'invalidFilter'],
      [filter('shoeSize eq 42'), 'invalidFilter'],
      [filter('(userName eq "a"'), 'invalidFilter'],
      [filter('active gt true'), 'invalidFilter'],
      // Issue 13 item 10: escapes decoding to what no engine stores (PostgreSQL answered 500).
      [filter('userName eq "\\u0000"'), 'invalidFilter'],
      [filter('userName co "a\\u0000b" or displayName eq "\\ud800"'), 'invalidFilter'],
      ['sortBy=shoeSize', 'invalidValue'],
      ['sortOrder=sideways', 'invalidValue'],
      ['count=ten', 'invalidValue'],
      ['startIndex=1.5', 'invalidValue'],
    ];
    for (const [query, scimType] of bad) {
      const res = await t.request('GET', `/v2/scim/Users?${query}`);
      assert.equal(res.statusCode, 400, query);
      assert.equal(json(res).scimType, scimType, query);
    }
  });

  it('SQL injection through filter values and sortBy matches nothing and breaks nothing', async () => {
    for (const f of [`userName eq "x' or '1'='1"`, `userName eq "'; drop table users; --"`, `name.givenName co "%"`, `name.givenName sw "_"`]) {
      const body = await list(filter(f));
      assert.equal(body.totalResults, 0, f);
    }
    const res = await t.request('GET', `/v2/scim/Users?sortBy=${encodeURIComponent('userName; drop table users')}`);
    assert.equal(res.statusCode, 400);
    assert.equal((await list('')).totalResults, 4);
  });
});
}
