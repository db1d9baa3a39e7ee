/**
 * The console's word search sorted by userName (src/console/directory.ts userWords, with
 * sortBy=userName; and as the console runs it, accent-folded, scim/word-search.ts, by the
 * accent-folded userName), and other ORs holding a userName prefix (one or two prefixes alone, a prefix
 * or a family name), found from the userName index range (repos/list/by-key-prefix.ts) by the
 * range alone, a merge with the other branches, a walk of the userName order, or, when none holds
 * the page, the ordered filtered query (the plan's `otherwise`): on random users (random
 * userNames, given and family names and externalIds in mixed case, with LIKE's wildcards;
 * userNames shared by hidden users; creation times shared), for a random filter, words, direction, page size and the
 * steps' limits made small so that every step answers, the pages return exactly the users the
 * filter matches, each once, in the order RFC 7644 3.4.2.3 sorting promises (the folded userName
 * by code point, then creation time and id): read forwards by cursor, backwards by cursor from
 * the last page, and by offset with totalResults. One seed drives the data; a failure names it,
 * DATA_SEED replays it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { userRowFor } from '../support/rows.ts';
import { userWords } from '../../src/console/directory.ts';
import { newId } from '../../src/ids.ts';
import { compareCodePoints, searchFold } from '../../src/text.ts';
import { USER_SEARCH_ORDER, userWordSearch } from '../../src/scim/word-search.ts';
import type { OrderKey, Predicate } from '../../src/storage/predicate.ts';
import { lowerFilter, lowerSort } from '../../src/scim/filter/lower.ts';
import { parseListQuery } from '../../src/scim/query.ts';
import { userResourceType } from '../../src/scim/schema/registry.ts';
import { USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import { planList } from '../../src/storage/repos/list/plan.ts';
import type { KeyPrefixLimits } from '../../src/storage/repos/list/plan.ts';
import type { ListPage, ListWindow, Position } from '../../src/storage/repos/list/window.ts';
import { runPlan } from '../../src/storage/repos/paging.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import type { UserRow } from '../../src/storage/repos/users.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

/** Set to a seed from a failure message to replay that run. */
const DATA_SEED: number | undefined = undefined;
const USERS = 60;
const RUNS = 100;

/** Few letters, so that words match several users; both cases, an accent, LIKE's wildcards. */
const letter = fc.constantFrom('a', 'b', 'A', 'B', 'é', 'É', '_', '%', 'z');
const word = (min: number, max: number) => fc.array(letter, { minLength: min, maxLength: max }).map((l) => l.join(''));

interface Person {
  readonly userName: string;
  readonly given: string | undefined;
  readonly family: string | undefined;
  readonly externalId: string | undefined;
  readonly active: boolean;
  /** Index of the creation second (shared by several users). */
  readonly second: number;
}

const person = fc.record({
  userName: word(1, 4),
  given: fc.option(word(1, 3), { nil: undefined }),
  family: fc.option(word(1, 3), { nil: undefined }),
  externalId: fc.option(word(1, 2), { nil: undefined }),
  active: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
  second: fc.integer({ min: 0, max: 20 }),
});

const fold = (s: string | undefined): string | undefined => s?.toLowerCase();

/** A filter of the property, with what it means (the oracle); `where` and `sort` given as storage's own (the console's words), else from `text`. */
interface Filter {
  readonly text: (q: string, q2: string) => string;
  readonly holds: (r: UserRow, q: string, q2: string) => boolean;
  readonly where?: (q: string) => Predicate;
  readonly sort?: OrderKey;
  readonly key?: (r: UserRow) => string;
}

for (const engine of engines) {
  describe(`word search sorted by userName, from the userName index, on ${engine.name}`, () => {
    const seed = DATA_SEED ?? Math.floor(Math.random() * 2 ** 31);
    const label = `(data seed ${seed}, ${engine.name})`;
    let database: TestDatabase;
    let storage: Storage;
    const teamId = newId();
    const rows: UserRow[] = [];

    before(async () => {
      database = await engine.open();
      storage = database.storage;
      await insertTeam(storage.db, { id: teamId, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: '2026-01-01T00:00:00.000Z' });
      const people = fc.sample(fc.array(person, { minLength: USERS, maxLength: USERS }), { seed, numRuns: 1 })[0]!;
      const held = new Set<string>();
      for (const p of people) {
        const body = {
          schemas: [USER_SCHEMA],
          userName: p.userName,
          active: p.active,
          ...(p.externalId !== undefined ? { externalId: p.externalId } : {}),
          ...(p.given !== undefined || p.family !== undefined ? { name: { ...(p.given !== undefined ? { givenName: p.given } : {}), ...(p.family !== undefined ? { familyName: p.family } : {}) } } : {}),
        };
        const createdAt = new Date(Date.UTC(2026, 0, 2, 0, 0, p.second)).toISOString();
        const row = userRowFor(storage, teamId, body, createdAt);
        // One holder per folded userName (migration 006); other users of the name hold nothing,
        // so that equal sort keys (tied by creation time, then id) occur among listed users too.
        const claim = row.user_name_claim !== null && !held.has(row.user_name_key) ? row.user_name_claim : null;
        if (claim !== null) held.add(claim);
        rows.push({ ...row, user_name_claim: claim });
      }
      await storage.db.insertInto('users').values(rows).execute();
    });
    after(() => database.dispose());

    /**
     * The filters: the console's words, and other ORs holding a userName prefix (one prefix
     * alone, two prefixes, a prefix and a family name), each with what it means, as the oracle.
     */
    const filters: Record<string, Filter> = {
      // The console's search (scim/word-search.ts): storage predicates on the accent-folded
      // columns, listed by the accent-folded userName. `text` only names it in a failure.
      'accent-folded words': {
        text: (q) => `console words ${JSON.stringify(q)}`,
        where: (q) => userWordSearch(q),
        sort: USER_SEARCH_ORDER,
        key: (r) => r.user_name_search,
        holds: (r, q) =>
          r.user_name_search.startsWith(searchFold(q)) || !!r.given_name_search?.startsWith(searchFold(q)) || !!r.family_name_search?.startsWith(searchFold(q)) || r.external_id === q,
      },
      words: {
        text: (q) => userWords(q),
        holds: (r, q) => r.user_name_key.startsWith(fold(q)!) || !!fold(r.given_name ?? undefined)?.startsWith(fold(q)!) || !!fold(r.family_name ?? undefined)?.startsWith(fold(q)!) || r.external_id === q,
      },
      prefix: { text: (q) => `userName sw ${JSON.stringify(q)}`, holds: (r, q) => r.user_name_key.startsWith(fold(q)!) },
      'two prefixes': {
        text: (q, q2) => `userName sw ${JSON.stringify(q)} or userName sw ${JSON.stringify(q2)}`,
        holds: (r, q, q2) => r.user_name_key.startsWith(fold(q)!) || r.user_name_key.startsWith(fold(q2)!),
      },
      'prefix or family name': {
        text: (q, q2) => `userName sw ${JSON.stringify(q)} or name.familyName sw ${JSON.stringify(q2)}`,
        holds: (r, q, q2) => r.user_name_key.startsWith(fold(q)!) || !!fold(r.family_name ?? undefined)?.startsWith(fold(q2)!),
      },
    };

    /** What the search must list, in order: the oracle, over the rows as written. */
    const expected = (holds: (r: UserRow) => boolean, onlyActive: boolean, descending: boolean, key: (r: UserRow) => string = (r) => r.user_name_key): string[] => {
      return rows
        .filter((r) => r.deleted_at === null && (!onlyActive || r.active === 1))
        .filter(holds)
        .sort((a, b) => {
          const byKey = compareCodePoints(key(a), key(b));
          if (byKey !== 0) return descending ? -byKey : byKey;
          return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
        })
        .map((r) => r.id);
    };

    /** A page as listRows finds it, with the key-prefix steps run under `limits` instead of its own. */
    async function page(window: ListWindow, limits: KeyPrefixLimits): Promise<ListPage<UserRow>> {
      const plan = planList({ ...window, table: 'users', engine: storage.hooks });
      if (plan.kind !== 'byKeyPrefix') assert.fail(`the word search is a key-prefix page, not ${plan.kind} ${label}`);
      return runPlan<UserRow>(storage.db, 'users', teamId, window, { ...plan, limits });
    }

    it('forwards and backwards by cursor, and by offset: every match once, in userName order', async () => {
      const request = fc.record({
        filter: fc.constantFrom(...Object.keys(filters)),
        q: word(1, 2),
        q2: word(1, 2),
        descending: fc.boolean(),
        onlyActive: fc.boolean(),
        limit: fc.integer({ min: 1, max: 7 }),
        few: fc.constantFrom(0, 1, 3, 1000),
        walk: fc.constantFrom(1, 10, 30, 80, 10_000),
        chunk: fc.constantFrom(1, 3, 7, 1000),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ filter, q, q2, descending, onlyActive, limit, few, walk, chunk }) => {
          const { text, holds, where, sort, key } = filters[filter]!;
          const query = where ? undefined : parseListQuery(userResourceType, { filter: text(q, q2), sortBy: 'userName' });
          const base = { where: where ? where(q) : lowerFilter(query!.filter!, { members: 'active' }), sort: sort ?? lowerSort(query!.sortBy!), descending, onlyActive, limit };
          const limits = { few, walk, chunk };
          const want = expected((r) => holds(r, q, q2), onlyActive, descending, key);
          const context = `${text(q, q2)} ${descending ? 'descending' : 'ascending'} onlyActive=${onlyActive} limit=${limit} few=${few} walk=${walk} chunk=${chunk} ${label}`;

          // Forwards: nextCursor after nextCursor.
          const forward: string[][] = [];
          let from: Position | undefined;
          for (let i = 0; i <= want.length + 1; i++) {
            const p = await page({ ...base, seek: { direction: 'after', ...(from ? { from } : {}) } }, limits);
            if (p.rows.length > 0) forward.push(p.rows.map((r) => r.id));
            if (!p.more) break;
            from = p.positions.at(-1);
          }
          assert.deepEqual(forward.flat(), want, `forwards: ${context}`);

          // Backwards from the last page: previousCursor after previousCursor gives the pages again.
          if (forward.length > 1) {
            const backward: string[] = [];
            let first = (await page({ ...base, seek: { direction: 'after', ...(from ? { from } : {}) } }, limits)).positions[0];
            for (let i = 0; i <= want.length && first; i++) {
              const p = await page({ ...base, seek: { direction: 'before', from: first } }, limits);
              backward.unshift(...p.rows.map((r) => r.id));
              if (!p.more) break;
              first = p.positions[0];
            }
            assert.deepEqual(backward, want.slice(0, want.length - forward.at(-1)!.length), `backwards: ${context}`);
          }

          // By offset (RFC 7644 index paging): each slice and the total.
          for (let offset = 0; offset <= want.length; offset += limit) {
            const p = await page({ ...base, offset }, limits);
            assert.deepEqual(p.rows.map((r) => r.id), want.slice(offset, offset + limit), `offset ${offset}: ${context}`);
            assert.equal(p.total, want.length, `total at offset ${offset}: ${context}`);
          }
        }),
        { numRuns: RUNS, seed },
      );
    });
  });
}
