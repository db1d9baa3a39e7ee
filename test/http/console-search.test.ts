/**
 * Issue 12 item 2 at the user's level: the console's plain-word user search (a prefix of the
 * userName, given or family name, or the exact externalId) lists its matches by userName, says
 * so, and pages through them by its Next and Previous links: every active match once, none
 * missing, in userName order, whichever way the page is found (repos/list/by-key-prefix.ts: the userName
 * range alone, a walk of the userName order, a merge of the range with few name matches, the
 * ordered query when neither holds the page). Another chosen order is kept (creation,
 * userName descending). The SCIM API's own list of the same filter stays in creation order.
 * 7,390 users, so that every step is taken; on every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { userRowFor } from '../support/rows.ts';
import { userWords } from '../../src/console/directory.ts';
import { USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import type { UserRow } from '../../src/storage/repos/users.ts';
import { FEW_MATCHES, PROBE_ROWS } from '../../src/storage/repos/list/plan.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const GIVEN = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'Ken', 'Margaret', 'Dennis', 'Radia', 'Leslie', 'Niklaus', 'Shafi', 'Tim', 'Adele'];
const FAMILY = ['Lovelace', 'Hopper', 'Turing', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Thompson', 'Hamilton', 'Ritchie', 'Perlman', 'Lamport', 'Wirth', 'Goldwasser', 'Berners-Lee', 'Goldberg'];
const BASE = 6_000;
const CLUSTER = 700;
const RARE = 90;
const LATER = 600;

interface Shown {
  readonly ids: string[];
  readonly names: string[];
  readonly next: string | undefined;
  readonly previous: string | undefined;
  readonly body: string;
}

const link = (body: string, rel: string): string | undefined => new RegExp(`href="([^"]*)" rel="${rel}"`).exec(body)?.[1]?.replace(/&amp;/g, '&');

for (const engine of engines) {
  describe(`console word search on ${engine.name}: by userName, page after page`, () => {
    let t: TestApp;
    let page: PageSession;
    const users: UserRow[] = [];

    before(async () => {
      t = await createTestApp({ engine });
      await registerAdmin(t, 'root@console.example', PASSWORD);
      page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      const signIn = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'root@console.example', password: PASSWORD });
      assert.equal(signIn.statusCode, 303, signIn.body);
      // userNames in an order unlike the creation order (7919 is prime to 6,000), a few users
      // deactivated (hidden), and a cluster of "Zed"s whose userNames sort after everyone else's.
      const start = Date.UTC(2026, 0, 1);
      for (let n = 0; n < BASE; n++) {
        const body = {
          schemas: [USER_SCHEMA],
          userName: `p${String((n * 7919) % BASE).padStart(5, '0')}@t.example`,
          name: { givenName: GIVEN[n % 16], familyName: FAMILY[Math.floor(n / 16) % 16] },
          externalId: `ext-${n}`,
          active: n % 97 !== 5,
        };
        users.push(userRowFor(t.storage, t.team.id, body, new Date(start + n * 10).toISOString()));
      }
      // A few "Yves"es, their userNames among everyone else's.
      for (let i = 0; i < RARE; i++) {
        const body = { schemas: [USER_SCHEMA], userName: `p${String(i * 66).padStart(5, '0')}y@t.example`, name: { givenName: 'Yves', familyName: 'Rare' }, externalId: `yext-${i}` };
        users.push(userRowFor(t.storage, t.team.id, body, new Date(start + i * 600 + 7).toISOString()));
      }
      // Many "Walt"s, none among the first thousand userNames, dense after them.
      for (let i = 0; i < LATER; i++) {
        const body = { schemas: [USER_SCHEMA], userName: `p${String(1500 + i * 5).padStart(5, '0')}w@t.example`, name: { givenName: 'Walt', familyName: 'Later' }, externalId: `wext-${i}` };
        users.push(userRowFor(t.storage, t.team.id, body, new Date(start + i * 100 + 3).toISOString()));
      }
      for (let i = 0; i < CLUSTER; i++) {
        const body = { schemas: [USER_SCHEMA], userName: `zz${String(i).padStart(4, '0')}@t.example`, name: { givenName: 'Zed', familyName: 'Quinn' }, externalId: `zext-${i}` };
        users.push(userRowFor(t.storage, t.team.id, body, new Date(start + i * 90 + 5).toISOString()));
      }
      for (let i = 0; i < users.length; i += 500) await t.storage.db.insertInto('users').values(users.slice(i, i + 500)).execute();
    });
    after(() => t.close());

    async function show(path: string): Promise<Shown> {
      const res = await page.get(path);
      assert.equal(res.statusCode, 200, res.body.slice(0, 500));
      const rows = [...res.body.matchAll(/<a href="\/console\/users\/([A-Z0-9]+)" dir="auto">([^<]*)<\/a>/g)];
      return { ids: rows.map((m) => m[1]!), names: rows.map((m) => m[2]!), next: link(res.body, 'next'), previous: link(res.body, 'prev'), body: res.body };
    }

    /** Every page from `path` on, by its Next page links. */
    async function walk(path: string): Promise<Shown[]> {
      const pages: Shown[] = [];
      let at: string | undefined = path;
      while (at !== undefined) {
        const shown = await show(at);
        assert.ok(shown.names.length <= 50, at);
        pages.push(shown);
        assert.ok(pages.length <= 200, 'the pages end');
        at = shown.next;
      }
      return pages;
    }

    /** The active users a word matches (the hint's rule), by userName. */
    const matching = (q: string): UserRow[] => {
      const f = q.toLowerCase();
      return users.filter(
        (u) => u.active === 1 && (u.user_name_key.startsWith(f) || u.given_name!.toLowerCase().startsWith(f) || u.family_name!.toLowerCase().startsWith(f) || u.external_id === q),
      );
    };
    const byUserName = (list: readonly UserRow[]): string[] => list.map((u) => u.user_name).sort();
    const byCreation = (list: readonly UserRow[]): string[] =>
      [...list].sort((a, b) => (a.created_at === b.created_at ? (a.id < b.id ? -1 : 1) : a.created_at < b.created_at ? -1 : 1)).map((u) => u.user_name);

    const searches: [string, string][] = [
      ['p05', 'a userName prefix (1,000 users) amid the order: merged with no name match, then the range alone'],
      ['p00', 'a userName prefix (1,000 users) at the start of the order: the same'],
      ['yves', `a given name (${RARE} users, one in 67 of the order): merged`],
      ['ada', `a given name (${BASE / 16} users, one in 16 of the order): walked`],
      ['a', `given and family names (over ${FEW_MATCHES} users, dense in the order): walked`],
      ['walt', `a given name (${LATER} users, over ${FEW_MATCHES}) that the first thousand userNames do not hold: a longer walk`],
      ['zed', `a given name (${CLUSTER} users) that the first ${PROBE_ROWS} userNames do not hold: the ordered query, then walks`],
      ['ext-42', 'an externalId: merged'],
    ];
    for (const [q, what] of searches) {
      it(`q=${q}, ${what}: every match once, by userName, through the Next links; the page says the order`, async () => {
        const pages = await walk(`/console/users?q=${encodeURIComponent(q)}`);
        const expected = byUserName(matching(q));
        assert.ok(expected.length > 0);
        assert.deepEqual(pages.flatMap((p) => p.names), expected);
        assert.equal(new Set(pages.flatMap((p) => p.ids)).size, expected.length, 'each user once');
        assert.match(pages[0]!.body, /Ordered by userName/);
        assert.match(pages[0]!.body, /<option value="userName" selected>/);
        // Previous page links lead back to the pages before.
        if (pages.length >= 3) {
          const back = await show(pages[2]!.previous!);
          assert.deepEqual(back.names, pages[1]!.names);
          assert.deepEqual((await show(back.previous!)).names, pages[0]!.names);
        }
      });
    }

    it('a chosen order is kept: userName descending, or creation', async () => {
      const descending = await walk('/console/users?q=p00&sortBy=userName&order=desc');
      assert.deepEqual(descending.flatMap((p) => p.names), byUserName(matching('p00')).reverse());
      const created = await walk('/console/users?q=ada&sortBy=created');
      assert.deepEqual(created.flatMap((p) => p.names), byCreation(matching('ada')));
      assert.match(created[0]!.body, /<option value="created" selected>/);
    });

    it('the SCIM API lists the same filter in creation order, as before (no sortBy)', async () => {
      const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(userWords('p00'))}&attributes=userName&count=100`);
      assert.equal(res.statusCode, 200, res.body);
      const listed = (json(res).Resources as { userName: string }[]).map((r) => r.userName);
      assert.deepEqual(listed, byCreation(matching('p00')).slice(0, 100));
    });
  });
}
