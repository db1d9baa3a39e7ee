/**
 * A filter's estimated cost (storage/scan-cost.ts), from the filter as a client writes it through
 * parse, bind and lower, on each engine's hooks: tests an index answers cost their recheck on at
 * most PROBE_ROWS rows, a key equality reads one row, every other test (a JSON read, a folded
 * pattern, an element or membership subquery, anything under `not`) costs one evaluation per
 * listed row, NESTED_ROWS for an element or membership. A seeded property test checks the
 * estimate can be trusted as a bound: another alternative (`or`), a negation or more rows never
 * make a filter cheaper.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { bindFilter } from '../../src/scim/filter/bind.ts';
import { lowerFilter, lowerSort } from '../../src/scim/filter/lower.ts';
import { bindSort } from '../../src/scim/filter/bind.ts';
import { parseAttrPath } from '../../src/scim/path.ts';
import { parseFilter } from '../../src/scim/filter/parse.ts';
import { CORE_TYPES } from '../../src/scim/schema/extensions.ts';
import { postgresHooks, sqliteHooks } from '../../src/storage/dialect.ts';
import type { DialectHooks } from '../../src/storage/dialect.ts';
import type { Predicate } from '../../src/storage/predicate.ts';
import type { ResourceTable } from '../../src/storage/predicate-sql.ts';
import { PROBE_ROWS } from '../../src/storage/repos/list/plan.ts';
import { costOf, filterCost, filterTerms, NESTED_ROWS, scans, sortScans } from '../../src/storage/scan-cost.ts';

const lowered = (table: ResourceTable, filter: string): Predicate =>
  lowerFilter(bindFilter(table === 'users' ? CORE_TYPES.User : CORE_TYPES.Group, parseFilter(filter)), { members: 'active' });

const ROWS = 1_000_000;
const N = NESTED_ROWS;

/** [filter, table, scanned tests on SQLite, on PostgreSQL, index-answered tests on SQLite, on PostgreSQL, byKey]. */
const CASES: readonly [string, ResourceTable, number, number, number, number, boolean][] = [
  ['userName eq "a"', 'users', 0, 0, 1, 1, true],
  ['externalId eq "a"', 'users', 0, 0, 1, 1, true],
  ['id eq "a"', 'groups', 0, 0, 1, 1, true],
  ['displayName eq "a"', 'groups', 0, 0, 1, 1, true],
  ['userName sw "a"', 'users', 0, 0, 1, 1, false],
  ['name.familyName sw "a"', 'users', 0, 0, 1, 1, false],
  ['userName ew "a"', 'users', 0, 0, 1, 1, false],
  // SQLite tests `co` on every key of the index; PostgreSQL's trigrams answer it.
  ['userName co "a"', 'users', 1, 0, 0, 1, false],
  ['name.givenName ew "a"', 'users', 1, 0, 0, 1, false],
  ['displayName co "a"', 'groups', 1, 0, 0, 1, false],
  // No index: a JSON read (folded), a column compared folded without a folded copy, a presence.
  ['title ew "a"', 'users', 1, 1, 0, 0, false],
  ['title eq "a"', 'users', 1, 1, 0, 0, false],
  ['userName gt "a"', 'users', 0, 0, 1, 1, false],
  ['displayName gt "a"', 'groups', 1, 1, 0, 0, false],
  ['name.familyName ge "a"', 'users', 1, 1, 0, 0, false],
  ['title pr', 'users', 1, 1, 0, 0, false],
  ['active eq true', 'users', 1, 1, 0, 0, false],
  // The deactivated users: a partial index holds them (migration 033); under `not`, a scan.
  ['active eq false', 'users', 0, 0, 1, 1, false],
  ['not (active eq false)', 'users', 1, 1, 0, 0, false],
  ['active eq false and title ew "a"', 'users', 1, 1, 1, 1, false],
  ['userName sw "a" and active eq false', 'users', 0, 0, 2, 2, false],
  // Elements and memberships: a subquery per row.
  ['emails[value co "a"]', 'users', N, N, 0, 0, false],
  ['emails co "a"', 'users', N, N, 0, 0, false],
  ['emails[type eq "work" and value ew "a"]', 'users', 2 * N, 2 * N, 0, 0, false],
  ['groups.display co "a"', 'users', N, N, 0, 0, false],
  ['members.value eq "a"', 'groups', N, N, 0, 0, false],
  // Under `not` no index answers: the complement is a scan.
  ['not (userName sw "a")', 'users', 1, 1, 0, 0, false],
  ['not (userName eq "a")', 'users', 1, 1, 0, 0, false],
  // A key equality in a conjunction reads one row; in a disjunction it does not narrow.
  ['userName eq "a" and title ew "b"', 'users', 1, 1, 1, 1, true],
  ['title ew "b" and (externalId eq "x" and title co "c")', 'users', 2, 2, 1, 1, true],
  ['userName eq "a" or title ew "b"', 'users', 1, 1, 1, 1, false],
  ['userName eq "a" or externalId eq "b"', 'users', 0, 0, 2, 2, true],
  ['not (userName eq "a" and title ew "b")', 'users', 2, 2, 0, 0, false],
  [Array.from({ length: 200 }, (_, i) => `title ew "x${i}"`).join(' or '), 'users', 200, 200, 0, 0, false],
];

describe('filterTerms: which tests an index answers', () => {
  for (const [filter, table, sqliteScanned, pgScanned, sqliteRanged, pgRanged, byKey] of CASES) {
    it(`${table} ${filter.length > 60 ? `${filter.slice(0, 60)}...` : filter}`, () => {
      for (const [hooks, scanned, ranged] of [[sqliteHooks, sqliteScanned, sqliteRanged], [postgresHooks, pgScanned, pgRanged]] as [DialectHooks, number, number][]) {
        const terms = filterTerms(lowered(table, filter), table, hooks);
        assert.deepEqual(terms, { scanned, ranged, byKey }, hooks.name);
        assert.equal(scans(terms), scanned > 0 && !byKey, hooks.name);
      }
    });
  }
});

describe('a flag a partial index holds', () => {
  it('is a range in creation order, the index\'s, and a scanned test in the userName order', async () => {
    const deactivated = lowered('users', 'active eq false');
    assert.deepEqual(filterTerms(deactivated, 'users', sqliteHooks, false, true), { scanned: 0, ranged: 1, byKey: false });
    assert.deepEqual(filterTerms(deactivated, 'users', sqliteHooks, false, false), { scanned: 1, ranged: 0, byKey: false });
    const ex = undefined as never;
    assert.equal((await filterCost(ex, sqliteHooks, 'users', 'team', deactivated, false)).cost, PROBE_ROWS);
    // By userName (an order an index gives, so no sort marks the list a scan) the flag is scanned:
    // a walk of the userName index would test it on every user it passes.
    assert.equal(scans(filterTerms(deactivated, 'users', sqliteHooks, false, false)), true);
  });
});

describe('costOf: tests times rows', () => {
  it('a scanned test costs every listed row; a ranged one at most PROBE_ROWS; a key read one row', () => {
    assert.equal(costOf({ scanned: 3, ranged: 0, byKey: false }, ROWS).cost, 3 * ROWS);
    assert.equal(costOf({ scanned: 0, ranged: 2, byKey: false }, ROWS).cost, 2 * PROBE_ROWS);
    assert.equal(costOf({ scanned: 0, ranged: 2, byKey: false }, 10).cost, 20);
    assert.equal(costOf({ scanned: 5, ranged: 1, byKey: true }, ROWS).cost, 6);
    assert.equal(costOf({ scanned: 5, ranged: 1, byKey: true }, 0).cost, 0);
  });

  it('index ranges alone are bounded without the team\'s count: PROBE_ROWS each', async () => {
    const ex = undefined as never;
    const cost = await filterCost(ex, sqliteHooks, 'users', 'team', lowered('users', 'userName sw "a" or userName gt "b"'), true);
    assert.equal(cost.cost, 2 * PROBE_ROWS);
  });

  it("the issue's filter over 20,000 users: 4,000,000 row evaluations", () => {
    const filter = Array.from({ length: 200 }, (_, i) => `title ew "x${i}"`).join(' or ');
    assert.equal(costOf(filterTerms(lowered('users', filter), 'users', sqliteHooks), 20_000).cost, 4_000_000);
  });
});

describe('sortScans: which orders an index gives', () => {
  const sorted = (table: ResourceTable, path: string) => lowerSort(bindSort(table === 'users' ? CORE_TYPES.User : CORE_TYPES.Group, parseAttrPath(path, 'invalidValue')));
  it('the folded userName is read in order from its index; every other key is computed per row and sorted', () => {
    assert.equal(sortScans(sorted('users', 'userName'), 'users'), false);
    for (const path of ['title', 'name.familyName', 'meta.lastModified', 'emails', 'externalId', 'id']) assert.equal(sortScans(sorted('users', path), 'users'), true, path);
    assert.equal(sortScans(sorted('groups', 'displayName'), 'groups'), true);
  });

  it('a sort no index gives makes the list a scan, not costlier; one row read by key is no scan, sorted or not', async () => {
    const ex = undefined as never;
    const bySort = await filterCost(ex, sqliteHooks, 'users', 'team', undefined, true, sorted('users', 'title'));
    assert.deepEqual([bySort.cost, scans(bySort)], [0, true]);
    const keyed = await filterCost(ex, sqliteHooks, 'users', 'team', lowered('users', 'userName eq "a"'), true, sorted('users', 'title'));
    assert.deepEqual([keyed.cost, scans(keyed)], [1, false]);
    const byName = await filterCost(ex, sqliteHooks, 'users', 'team', undefined, true, sorted('users', 'userName'));
    assert.deepEqual([byName.cost, scans(byName)], [0, false]);
  });
});

/** Filters built from leaves of every kind above, nested with and / or / not. */
const LEAVES = ['userName eq "a"', 'externalId eq "b"', 'userName sw "c"', 'userName co "d"', 'title ew "e"', 'emails[value co "f"]', 'groups.display co "g"', 'active eq true', 'name.givenName ew "h"'];
const filterText: fc.Arbitrary<string> = fc.letrec<{ f: string }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...LEAVES),
    fc.tuple(tie('f'), fc.constantFrom('and', 'or'), tie('f')).map(([l, op, r]) => `(${l} ${op} ${r})`),
    tie('f').map((f) => `not (${f})`),
  ),
})).f;

describe('the estimate is a bound', () => {
  it('another alternative, a negation or more rows never make a filter cheaper (seeded)', () => {
    fc.assert(
      fc.property(filterText, filterText, fc.integer({ min: 1, max: 2_000_000 }), fc.integer({ min: 0, max: 2_000_000 }), fc.constantFrom(sqliteHooks, postgresHooks), (a, b, rows, more, hooks) => {
        const cost = (f: string, n = rows) => costOf(filterTerms(lowered('users', f), 'users', hooks), n).cost;
        assert.ok(cost(`${a} or ${b}`) >= Math.max(cost(a), cost(b)));
        assert.ok(cost(`not (${a})`) >= cost(a));
        assert.ok(cost(a, rows + more) >= cost(a));
        assert.ok(Number.isSafeInteger(cost(a)) && cost(a) >= 0);
      }),
      { seed: 27, numRuns: 300 },
    );
  });
});
