/**
 * SCIM delta query (draft-sehgal-scim-delta-query; scim/delta.ts) over HTTP, on every engine and
 * under both mounts: ServiceProviderConfig's deltaQuery; a token from /.deltaToken or from the
 * last page of a full scan asked with deltaQuery; a delta after creates, changes, deletes and
 * hides (tombstones with meta.isDeleted), a reactivated user back as a change; pages by cursor
 * with writes in between (each resource once per delta, the writes in the next one); the
 * draft's messages on GET, POST /.search and POST /.delta; its errors (invalidValue,
 * expiredDeltaToken once the feed was pruned past the token, invalidCursor; refused at the server
 * root); Shared Signals rows passed over.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { appendSignal } from '../../src/events/feed.ts';
import { pruneEvents } from '../../src/storage/repos/events.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

type Json = Record<string, unknown>;
type Meta = { resourceType?: string; isDeleted?: boolean; location?: string };

const resources = (body: Json): Json[] => (body.Resources as Json[] | undefined) ?? [];

for (const engine of engines) {
  describe(`SCIM delta query (draft-sehgal-scim-delta-query) on ${engine.name}`, () => {
    let t: TestApp;

    before(async () => {
      t = await createTestApp({ engine });
    });
    after(async () => {
      await t.close();
    });

    const createUser = async (userName: string, extra: Json = {}, prefix = '/v2/scim'): Promise<string> => {
      const res = await t.request('POST', `${prefix}/Users`, { schemas: [USER], userName, ...extra });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };
    const patchUser = async (id: string, ops: Json[]) => {
      const res = await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: ops });
      assert.equal(res.statusCode, 200, res.body);
    };
    const token = async (kind: 'Users' | 'Groups', prefix = '/v2/scim'): Promise<string> => {
      const res = await t.request('GET', `${prefix}/${kind}/.deltaToken`);
      assert.equal(res.statusCode, 200, res.body);
      const body = json(res);
      assert.deepEqual(resources(body), []);
      assert.match(String(body.nextDeltaToken), /^[A-Za-z0-9_-]+$/, 'RFC 3986 unreserved characters only');
      return String(body.nextDeltaToken);
    };
    /** Every page of the delta since `since` (GET, `count` a page), and the next token. */
    const walk = async (kind: 'Users' | 'Groups', since: string, count = 100, between?: (page: number) => Promise<void>) => {
      const seen: Json[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 1000; page++) {
        const q = new URLSearchParams({ deltaToken: since, count: String(count), ...(cursor ? { cursor } : {}) });
        const res = await t.request('GET', `/v2/scim/${kind}?deltaQuery&${q}`);
        assert.equal(res.statusCode, 200, res.body);
        const body = json(res);
        seen.push(...resources(body));
        if (body.nextDeltaToken !== undefined) {
          assert.equal(body.nextCursor, undefined, 'the last page has no nextCursor');
          return { seen, next: String(body.nextDeltaToken), pages: page + 1 };
        }
        assert.equal(typeof body.nextCursor, 'string');
        cursor = String(body.nextCursor);
        await between?.(page);
      }
      throw new Error('the delta never ended');
    };

    it('ServiceProviderConfig advertises deltaQuery as the draft says, marked as a draft implementation', async () => {
      for (const prefix of ['/v2/scim', '/scim']) {
        const spc = json(await t.request('GET', `${prefix}/ServiceProviderConfig`)) as { deltaQuery?: { supported?: boolean; deltaTokenExpiry?: number; description?: string } };
        assert.equal(spc.deltaQuery?.supported, true);
        assert.equal(spc.deltaQuery?.deltaTokenExpiry, 30 * 24 * 60, 'the feed retention (30 days) in minutes');
        assert.match(String(spc.deltaQuery?.description), /draft implementation of draft-sehgal-scim-delta-query/);
      }
    });

    it('reports creates and changes as they are now, deletes and hides as tombstones, each once', async () => {
      const since = await token('Users');
      const kept = await createUser('delta-kept', { title: 'one' });
      const changed = await createUser('delta-changed');
      const hidden = await createUser('delta-hidden');
      const createdThenHidden = await createUser('delta-brief');
      await patchUser(changed, [{ op: 'replace', path: 'title', value: 'two' }]);
      await patchUser(changed, [{ op: 'replace', path: 'title', value: 'three' }]);
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${hidden}`)).statusCode, 204);
      await patchUser(createdThenHidden, [{ op: 'replace', path: 'active', value: false }]);

      const { seen, next } = await walk('Users', since);
      assert.deepEqual(seen.map((r) => r.id), [kept, changed, hidden, createdThenHidden], 'in the order of each one\'s last change');
      const byId = new Map(seen.map((r) => [String(r.id), r]));
      assert.equal(byId.get(kept)!.title, 'one');
      assert.equal(byId.get(changed)!.title, 'three', 'the current representation, not the first change');
      assert.equal((byId.get(changed)!.meta as Meta).isDeleted, undefined);
      for (const id of [hidden, createdThenHidden]) {
        const stone = byId.get(id)!;
        assert.deepEqual(stone.schemas, [USER]);
        assert.equal((stone.meta as Meta).resourceType, 'User');
        assert.equal((stone.meta as Meta).isDeleted, true);
        assert.equal(stone.userName, undefined, 'a tombstone carries no attributes');
      }

      // Reactivated, the hidden user is back as a change in the next delta; nothing else is.
      const res = await t.request('PUT', `/v2/scim/Users/${hidden}/activate`);
      assert.equal(res.statusCode, 200, res.body);
      const again = await walk('Users', next);
      assert.deepEqual(again.seen.map((r) => r.id), [hidden]);
      assert.equal(again.seen[0]!.userName, 'delta-hidden');
      assert.equal((again.seen[0]!.meta as Meta).isDeleted, undefined);
      // Nothing changed since: an empty last page with a token.
      const none = await walk('Users', again.next);
      assert.deepEqual(none.seen, []);
    });

    it('a team that shows deactivated users: a deactivation is a change, a DELETE a tombstone', async () => {
      const other = await t.addTeam('delta-visible', { deactivatedUsers: 'visible' });
      const as = (method: string, url: string, body?: unknown) =>
        t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${other.token}`, ...(body ? { 'content-type': 'application/scim+json' } : {}) }, ...(body ? { payload: JSON.stringify(body) } : {}) });
      const since = String(json(await as('GET', '/v2/scim/Users/.deltaToken')).nextDeltaToken);
      const a = String(json(await as('POST', '/v2/scim/Users', { schemas: [USER], userName: 'vis-a' })).id);
      const b = String(json(await as('POST', '/v2/scim/Users', { schemas: [USER], userName: 'vis-b' })).id);
      assert.equal((await as('PATCH', `/v2/scim/Users/${a}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] })).statusCode, 200);
      assert.equal((await as('DELETE', `/v2/scim/Users/${b}`)).statusCode, 204);
      const body = json(await as('GET', `/v2/scim/Users?deltaQuery=true&deltaToken=${since}`));
      const [first, second] = resources(body);
      assert.equal(first!.id, a);
      assert.equal(first!.active, false);
      assert.equal(second!.id, b);
      assert.equal((second!.meta as Meta).isDeleted, true);
      // The other team's token is not this team's.
      const res = await t.request('GET', `/v2/scim/Users?deltaQuery&deltaToken=${since}`);
      assert.equal(res.statusCode, 400);
      assert.equal(json(res).scimType, 'invalidValue');
    });

    it('Groups: created, renamed and deleted groups; a Users token is refused', async () => {
      const since = await token('Groups', '/scim');
      const one = String(json(await t.request('POST', '/scim/Groups', { schemas: [GROUP], displayName: 'delta-one' })).id);
      const two = String(json(await t.request('POST', '/scim/Groups', { schemas: [GROUP], displayName: 'delta-two' })).id);
      assert.equal((await t.request('PATCH', `/scim/Groups/${one}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'delta-uno' }] })).statusCode, 204);
      assert.equal((await t.request('DELETE', `/scim/Groups/${two}`)).statusCode, 204);
      const res = await t.request('GET', `/scim/Groups?deltaQuery&deltaToken=${since}`);
      assert.equal(res.statusCode, 200, res.body);
      const seen = resources(json(res));
      assert.deepEqual(seen.map((r) => r.id), [one, two]);
      assert.equal(seen[0]!.displayName, 'delta-uno');
      assert.deepEqual(seen[1], { schemas: [GROUP], id: two, meta: { resourceType: 'Group', isDeleted: true, location: `https://rollcall.test/v2/scim/Groups/${two}` } });
      const wrong = await t.request('GET', `/scim/Users?deltaQuery&deltaToken=${since}`);
      assert.equal(wrong.statusCode, 400);
      assert.deepEqual({ schemas: json(wrong).schemas, scimType: json(wrong).scimType }, { schemas: [ERROR], scimType: 'invalidValue' });
    });

    it('pages by cursor with writes in between: each resource once, the writes in the next delta', async () => {
      const since = await token('Users');
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push(await createUser(`paged-${i}`));
      const late: string[] = [];
      const { seen, next, pages } = await walk('Users', since, 2, async (page) => {
        // Changes to users already reported, to one not reported yet, and a new user.
        await patchUser(ids[0]!, [{ op: 'replace', path: 'title', value: `after page ${page}` }]);
        await patchUser(ids[6]!, [{ op: 'replace', path: 'title', value: `after page ${page}` }]);
        late.push(await createUser(`paged-late-${page}`));
      });
      assert.equal(pages, 4);
      assert.deepEqual(seen.map((r) => r.id), ids, 'exactly the delta\'s resources, once each, none of the later writes');
      const following = await walk('Users', next);
      assert.deepEqual(new Set(following.seen.map((r) => String(r.id))), new Set([ids[0]!, ids[6]!, ...late]));
      assert.equal(following.seen.length, 2 + late.length);
    });

    it('the draft\'s POST forms: /.search with deltaQuery and deltaToken, and /.delta (a read)', async () => {
      const since = await token('Users');
      const id = await createUser('posted');
      const search = await t.request('POST', '/v2/scim/Users/.search', { schemas: [SEARCH], deltaQuery: 'true', deltaToken: since, attributes: ['userName'] });
      assert.equal(search.statusCode, 200, search.body);
      assert.deepEqual(resources(json(search)).map((r) => [r.id, r.userName, r.title]), [[id, 'posted', undefined]]);
      assert.equal(typeof json(search).nextDeltaToken, 'string');

      const reader = await t.tokenFor(t.team.id, ['read']);
      const delta = await t.app.inject({
        method: 'POST',
        url: '/scim/Users/.delta',
        headers: { authorization: `Bearer ${reader}`, 'content-type': 'application/scim+json' },
        payload: JSON.stringify({ schemas: [SEARCH], deltaToken: since, count: 1 }),
      });
      assert.equal(delta.statusCode, 200, delta.body);
      assert.deepEqual(resources(json(delta)).map((r) => r.id), [id]);
      const missing = await t.request('POST', '/v2/scim/Users/.delta', { schemas: [SEARCH] });
      assert.equal(missing.statusCode, 400);
      assert.equal(json(missing).scimType, 'invalidValue');
    });

    it('a full scan asked with deltaQuery pages by cursor and ends with a token taken before it began', async () => {
      const seen = new Set<string>();
      let cursor = '';
      let nextDeltaToken: string | undefined;
      let changedDuringScan: string | undefined;
      for (let page = 0; page < 1000 && nextDeltaToken === undefined; page++) {
        const res = await t.request('GET', `/v2/scim/Users?deltaQuery&count=3&cursor=${encodeURIComponent(cursor)}`);
        assert.equal(res.statusCode, 200, res.body);
        const body = json(res);
        for (const r of resources(body)) seen.add(String(r.id));
        if (page === 0) {
          // Changed after it was read: the scan's token must still see this change.
          changedDuringScan = String(resources(body)[0]!.id);
          await patchUser(changedDuringScan, [{ op: 'replace', path: 'title', value: 'during the scan' }]);
        }
        if (body.nextDeltaToken !== undefined) nextDeltaToken = String(body.nextDeltaToken);
        else cursor = String(body.nextCursor);
      }
      const all = json(await t.request('GET', '/v2/scim/Users?count=1000'));
      assert.equal(seen.size, all.totalResults, 'every visible user once');
      const after = await walk('Users', nextDeltaToken!);
      assert.ok(after.seen.some((r) => r.id === changedDuringScan && r.title === 'during the scan'));
      const refused = await t.request('GET', '/v2/scim/Users?deltaQuery&startIndex=1');
      assert.equal(json(refused).scimType, 'invalidValue');
    });

    it('Shared Signals rows are passed over: neither reported nor hiding a change', async () => {
      const since = await token('Users');
      const id = await createUser('signalled');
      const other = await createUser('signalled-too');
      for (const resourceId of [id, other]) {
        await appendSignal({ clock: t.clock }, t.storage.db, {
          teamId: t.team.id,
          resourceType: 'User',
          resourceId,
          version: 1,
          externalId: null,
          actor: { via: 'scim', clientId: null, userId: null },
          txn: null,
          event: 'https://schemas.openid.net/secevent/risc/event-type/account-enabled',
          subject: { format: 'opaque', id: resourceId },
          payload: {},
        });
      }
      const { seen, next } = await walk('Users', since);
      assert.deepEqual(seen.map((r) => r.id), [id, other], 'each at its SCIM change');
      assert.deepEqual((await walk('Users', next)).seen, []);
    });

    it('errors in the draft\'s terms: invalidValue, invalidCursor, and expiredDeltaToken past the retention', async () => {
      const bad = async (url: string, scimType: string) => {
        const res = await t.request('GET', url);
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
        assert.equal(json(res).scimType, scimType, url);
      };
      const since = await token('Users');
      await bad('/v2/scim/Users?deltaToken=' + since, 'invalidValue');
      await bad('/v2/scim/Users?deltaQuery=maybe', 'invalidValue');
      await bad('/v2/scim/Users?deltaQuery&deltaToken=not-ours', 'invalidValue');
      await bad(`/v2/scim/Users?deltaQuery&deltaToken=${since}&filter=${encodeURIComponent('userName eq "x"')}`, 'invalidValue');
      await bad(`/v2/scim/Users?deltaQuery&deltaToken=${since}&cursor=AAAA`, 'invalidCursor');
      await bad('/v2/scim/?deltaQuery', 'invalidValue');
      const rootSearch = await t.request('POST', '/scim/.search', { schemas: [SEARCH], deltaQuery: true, deltaToken: since });
      assert.equal(json(rootSearch).scimType, 'invalidValue');

      await createUser('before-pruning');
      await createUser('before-pruning-2');
      // A cursor in the middle of its delta: the rest of the delta is pruned with the rest.
      const paged = json(await t.request('GET', `/v2/scim/Users?deltaQuery&deltaToken=${since}&count=1`));
      assert.equal(typeof paged.nextCursor, 'string');
      // Every event is past a retention ending in the far future: the feed is pruned empty.
      assert.ok((await pruneEvents(t.storage.db, '2999-01-01T00:00:00.000Z', 100_000)) > 0);
      await bad(`/v2/scim/Users?deltaQuery&deltaToken=${since}`, 'expiredDeltaToken');
      await bad(`/v2/scim/Users?deltaQuery&deltaToken=${since}&cursor=${String(paged.nextCursor)}`, 'expiredDeltaToken');
      // A token taken now still works, and reports what happens next.
      const fresh = await token('Users');
      const id = await createUser('after-pruning');
      assert.deepEqual((await walk('Users', fresh)).seen.map((r) => r.id), [id]);
    });
  });
}
