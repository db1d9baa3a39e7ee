/**
 * Issue 13 item 2 (DESIGN.md section 4 "bounds"): every attribute has bounds from the schema.
 * Over a bound is 400 invalidValue naming the attribute, on POST, PUT and PATCH alike: strings
 * (4,096 characters; 2,048 characters and 2,048 UTF-8 bytes, also case-folded, for userName,
 * displayName and externalId, which are indexed), elements per multi-valued attribute (1,000),
 * the stored document (256 KiB). On PostgreSQL no userName that passes can fail the btree index
 * (it answered 500 to an 8 kB one). A PATCH that adds many elements de-duplicates in linear time:
 * it used to compare each with all (8,000 emails froze the event loop for 7.7 s).
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** Random text of `count` characters from a block of `bytes`-byte UTF-8 characters: PostgreSQL cannot compress it away. */
function randomText(count: number, bytes: 1 | 3 | 4): string {
  const [from, span] = bytes === 1 ? [0x61, 26] : bytes === 3 ? [0x4e00, 0x5000] : [0x20000, 0xa000];
  return Array.from({ length: count }, () => String.fromCodePoint(from + randomInt(span))).join('');
}

const emails = (n: number, tag: string, size = 0) => Array.from({ length: n }, (_, i) => ({ value: `${tag}${i}${'x'.repeat(size)}@acme.example`, type: 'work' }));

for (const engine of engines) {
  describe(`attribute bounds on ${engine.name} (issue 13 item 2)`, () => {
    let t: TestApp;
    let id: string;
    let groupId: string;
    before(async () => {
      t = await createTestApp({ engine });
      id = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'bounded@acme.example' })).id);
      groupId = String(json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Bounded' })).id);
    });
    after(() => t.close());

    /** POST, PUT and PATCH each carrying `attribute: value`; each must be 400 invalidValue naming `named`. */
    async function refusedEverywhere(attribute: string, value: unknown, named: string): Promise<void> {
      const writes = [
        ['POST', '/v2/scim/Users', { schemas: [USER], userName: `new-${randomInt(1e9)}@acme.example`, [attribute]: value }],
        ['PUT', `/v2/scim/Users/${id}`, { schemas: [USER], userName: 'bounded@acme.example', [attribute]: value }],
        ['PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: attribute, value }] }],
      ] as const;
      for (const [method, url, body] of writes) {
        const res = await t.request(method, url, body);
        assert.equal(res.statusCode, 400, `${method} ${attribute}: ${res.body.slice(0, 200)}`);
        assert.equal(json(res).scimType, 'invalidValue', `${method} ${attribute}`);
        assert.match(String(json(res).detail), new RegExp(named), `${method} ${attribute}`);
      }
    }

    it('userName, displayName and externalId: over 2,048 characters is 400 invalidValue naming them', async () => {
      await refusedEverywhere('userName', 'u'.repeat(2049), 'userName');
      await refusedEverywhere('displayName', 'd'.repeat(2049), 'displayName');
      await refusedEverywhere('externalId', 'e'.repeat(2049), 'externalId');
    });

    it('indexed names over 2,048 UTF-8 bytes, as written or case-folded, are refused too', async () => {
      await refusedEverywhere('userName', randomText(600, 4), 'userName');
      // İ is 2 bytes and folds to i + U+0307 (3 bytes): 1,000 of them are 2,000 bytes but 3,000 folded.
      await refusedEverywhere('userName', 'İ'.repeat(1000), 'userName');
      await refusedEverywhere('externalId', randomText(700, 3), 'externalId');
    });

    it('other strings: over 4,096 characters is refused naming the attribute (sub-attributes too)', async () => {
      await refusedEverywhere('nickName', 'n'.repeat(4097), 'nickName');
      await refusedEverywhere('name', { givenName: 'g'.repeat(4097) }, 'name.givenName');
      await refusedEverywhere('emails', [{ value: `${'m'.repeat(4097)}@acme.example` }], 'emails');
    });

    it('a multi-valued attribute holds at most 1,000 values, also when PATCH adds them bit by bit', async () => {
      await refusedEverywhere('emails', emails(1001, 'a'), 'emails');
      const first = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'emails', value: emails(600, 'b') }] });
      assert.equal(first.statusCode, 200, first.body.slice(0, 200));
      const second = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'emails', value: emails(600, 'c') }] });
      assert.equal(second.statusCode, 400);
      assert.equal(json(second).scimType, 'invalidValue');
      assert.match(String(json(second).detail), /emails holds more than 1000 values/);
      // Nothing of the refused PATCH was written.
      assert.equal((json(await t.request('GET', `/v2/scim/Users/${id}`)).emails as unknown[]).length, 600);
      await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'emails' }] });
    });

    it('a resource over 256 KiB stored is refused, naming its largest attribute', async () => {
      // 900 emails of about 330 bytes: under the element bound and the 1 MiB body limit, over 256 KiB.
      await refusedEverywhere('emails', emails(900, 'big', 300), 'largest attribute is emails');
    });

    it('groups: displayName bounds on POST, PUT and PATCH; members are rows and have no element bound', async () => {
      const long = randomText(683, 3);
      for (const [method, url, body] of [
        ['POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: long }],
        ['PUT', `/v2/scim/Groups/${groupId}`, { schemas: [GROUP], displayName: long }],
        ['PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'displayName', value: long }] }],
      ] as const) {
        const res = await t.request(method, url, body);
        assert.equal(res.statusCode, 400, method);
        assert.equal(json(res).scimType, 'invalidValue');
        assert.match(String(json(res).detail), /displayName/);
      }
      // 1,005 users (inserted as rows, quickly) all become members in one PATCH: no element bound.
      const ids = Array.from({ length: 1005 }, () => newId());
      const at = new Date().toISOString();
      await t.storage.db.insertInto('users').values(ids.map((uid, i) => ({
        id: uid, team_id: t.team.id, user_name: `row${i}@acme.example`, user_name_key: `row${i}@acme.example`, external_id: null, active: 1, user_type: null,
        display_name: null, given_name: null, family_name: null, user_name_search: `row${i}@acme.example`, given_name_search: null, family_name_search: null, password_hash: null, data: JSON.stringify({ userName: `row${i}@acme.example`, active: true }),
        version: 1, created_at: at, updated_at: at,
      }))).execute();
      const res = await t.request('PATCH', `/v2/scim/Groups/${groupId}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: ids.map((v) => ({ value: v })) }] });
      assert.equal(res.statusCode, 204, res.body.slice(0, 200));
      assert.equal((json(await t.request('GET', `/v2/scim/Groups/${groupId}`)).members as unknown[]).length, 1005);
    });

    it('names at the bounds are stored and found, whatever their bytes (PostgreSQL never 500s on its index)', async () => {
      const names = [
        'a'.repeat(2048),
        randomText(512, 4),
        randomText(682, 3),
        'İ'.repeat(682),
        randomText(2048, 1),
      ];
      for (const userName of names) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName, externalId: randomText(682, 3), displayName: randomText(512, 4) });
        assert.equal(res.statusCode, 201, `${[...userName].length} chars, ${Buffer.byteLength(userName)} bytes: ${res.body.slice(0, 200)}`);
        const found = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
        assert.equal(json(found).totalResults, 1);
      }
      const group = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: randomText(682, 3), externalId: randomText(512, 4) });
      assert.equal(group.statusCode, 201, group.body.slice(0, 200));
    });

    it('an 8 kB userName is 400, not the 500 PostgreSQL gave', async () => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: randomText(8000, 1) });
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).scimType, 'invalidValue');
    });
  });
}

describe('PATCH de-duplication in linear time (issue 13 item 2)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  /**
   * The work `run` does, counted rather than timed (issue 27 item 14): de-duplication keys an
   * element by its JSON (patch.ts keyOf), so the JSON.stringify calls while the request runs
   * grow with the elements once each when linear, and with their square when every new element
   * is compared with every existing one.
   */
  async function blocked<T>(run: () => Promise<T>): Promise<{ calls: number; result: T }> {
    const original = JSON.stringify;
    let calls = 0;
    JSON.stringify = ((...args: Parameters<typeof original>) => {
      calls++;
      return original(...args);
    }) as typeof original;
    try {
      const result = await run();
      return { calls, result };
    } finally {
      JSON.stringify = original;
    }
  }

  it('adding 1,000 emails onto a user with none, then the same 1,000 again, keys each element a bounded number of times (linear, not pairwise)', async (ctx) => {
    const id = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'many@acme.example' })).id);
    const add = (value: unknown) => t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'emails', value }] });
    // Half of them in one PATCH, the other half together with the first half again (all duplicates).
    const all = emails(1000, 'e');
    const first = await blocked(() => add(all.slice(0, 500)));
    assert.equal(first.result.statusCode, 200);
    const second = await blocked(() => add(all));
    assert.equal(second.result.statusCode, 200, second.result.body.slice(0, 200));
    assert.equal((json(second.result).emails as unknown[]).length, 1000);
    const again = await blocked(() => add(all));
    assert.equal((json(again.result).emails as unknown[]).length, 1000);
    ctx.diagnostic(`JSON.stringify calls: ${first.calls} / ${second.calls} / ${again.calls}`);
    // Linear: a few keys per element (500 new; then 1,000 of which 500 new; then 1,000 duplicates).
    // Pairwise comparison would take hundreds of thousands.
    for (const run of [first, second, again]) assert.ok(run.calls < 10 * all.length, `${run.calls} JSON.stringify calls for ${all.length} emails`);
  });

  it('1,000 add operations of 45 emails each (under 1 MiB) are refused once the attribute passes its bound, not compared to the end', async (ctx) => {
    const id = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'ops@acme.example' })).id);
    const Operations = Array.from({ length: 1000 }, (_, i) => ({ op: 'add', path: 'emails', value: Array.from({ length: 45 }, (_, j) => ({ value: `${i}-${j}` })) }));
    assert.ok(JSON.stringify({ schemas: [PATCH_OP], Operations }).length < 1024 * 1024);
    const flood = await blocked(() => t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations }));
    ctx.diagnostic(`JSON.stringify calls: ${flood.calls}`);
    assert.equal(flood.result.statusCode, 400);
    assert.equal(json(flood.result).scimType, 'invalidValue');
    assert.match(String(json(flood.result).detail), /emails/);
    // Refused as the attribute passes its bound: the elements keyed are those up to the bound,
    // not the 45,000 of the request (nor the square of them).
    assert.ok(flood.calls < 45_000, `${flood.calls} JSON.stringify calls for 45,000 emails`);
  });

  it('3,000 emails in one PATCH are refused at once (400 naming emails) instead of compared pairwise', async (ctx) => {
    const id = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'flood@acme.example' })).id);
    const flood = await blocked(() => t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'emails', value: emails(3000, 'f') }] }));
    ctx.diagnostic(`JSON.stringify calls: ${flood.calls}`);
    assert.equal(flood.result.statusCode, 400);
    assert.match(String(json(flood.result).detail), /emails/);
    // Refused before any pairwise comparison: fewer keys than elements.
    assert.ok(flood.calls < 3000, `${flood.calls} JSON.stringify calls for 3,000 emails`);
  });
});
