/**
 * Which list request takes which plan (src/storage/repos/list/plan.ts `planList`), without a
 * database: one row per case, the window as a SCIM request would lower it (filter, sortBy, paging
 * and the team's facts), the engine's dialect facts, and the plan it takes, with the reason in
 * the row's name. Every plan is taken by at least one row. That each plan returns the plain
 * query's page is the property tests' part (test/storage/list-plan-property.test.ts and the tests
 * it names).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { userWords } from '../../src/console/directory.ts';
import { lowerFilter, lowerSort } from '../../src/scim/filter/lower.ts';
import { parseListQuery } from '../../src/scim/query.ts';
import { groupResourceType, userResourceType } from '../../src/scim/schema/registry.ts';
import { postgresHooks, sqliteHooks } from '../../src/storage/dialect.ts';
import type { ResourceTable } from '../../src/storage/predicate-sql.ts';
import { FEW_MATCHES, FROM_END_AFTER, planList, PROBE_ROWS, WALK_CHUNK } from '../../src/storage/repos/list/plan.ts';
import type { ListPlan, ListPlanKind } from '../../src/storage/repos/list/plan.ts';
import type { ListWindow } from '../../src/storage/repos/list/window.ts';

const POSITION = { createdAt: '2026-01-01T00:00:00.000Z', id: 'u1' };

/** A request as the services lower it: a filter and sortBy, a paging method, the team's facts. */
interface Request {
  readonly table: ResourceTable;
  readonly filter?: string;
  readonly sortBy?: string;
  readonly window?: Partial<ListWindow>;
}

function windowOf({ table, filter, sortBy, window }: Request): ListWindow {
  const rt = table === 'users' ? userResourceType : groupResourceType;
  const query = parseListQuery(rt, { ...(filter !== undefined ? { filter } : {}), ...(sortBy !== undefined ? { sortBy } : {}) });
  return {
    ...(query.filter ? { where: lowerFilter(query.filter, { members: 'active' }) } : {}),
    ...(query.sortBy ? { sort: lowerSort(query.sortBy) } : {}),
    descending: false,
    onlyActive: true,
    limit: 50,
    offset: 0,
    ...window,
  };
}

const steps: ListPlan = { kind: 'matchSteps', limits: { few: FEW_MATCHES, probe: PROBE_ROWS } };
const keyPrefixLimits = { few: FEW_MATCHES, walk: PROBE_ROWS, chunk: WALK_CHUNK };
const seek = { seek: { direction: 'after', from: POSITION } } as const;
const offsetQuery: ListPlan = { kind: 'offsetQuery' };
const seekQuery: ListPlan = { kind: 'seekQuery' };
/** The word search's other disjuncts, as lowered: everything after its userName prefix. */
const wordsRest = (q: string) => windowOf({ table: 'users', filter: userWords(q).replace(/^userName sw "[^"]*" or /, '') }).where;

/** [why, request, plan on SQLite, plan on PostgreSQL (when it differs)] */
const cases: [string, Request, ListPlan, ListPlan?][] = [
  // countOnly
  ['count=0 asks for the total alone, whatever the filter, order or paging', { table: 'users', filter: 'userName sw "a"', sortBy: 'userName', window: { limit: 0, offset: 4000 } }, { kind: 'countOnly' }],
  ['count=0 by cursor', { table: 'groups', window: { limit: 0, ...seek } }, { kind: 'countOnly' }],

  // matchSteps
  ['unsorted userName sw: a prefix range a broad value fills', { table: 'users', filter: 'userName sw "ann"' }, steps],
  ['unsorted name.familyName sw: the folded family name has a prefix index', { table: 'users', filter: 'name.familyName sw "sm"' }, steps],
  ['unsorted userName ew: the reversed key on SQLite, trigrams on PostgreSQL', { table: 'users', filter: 'userName ew "@example.com"' }, steps],
  ['unsorted userName co: a scan of the folded key index on SQLite, trigrams on PostgreSQL', { table: 'users', filter: 'userName co "ann"' }, steps],
  ['unsorted name.givenName ew: no suffix index on SQLite (the plain query), trigrams on PostgreSQL', { table: 'users', filter: 'name.givenName ew "na"' }, offsetQuery, steps],
  ['unsorted Group displayName co: the folded displayName key', { table: 'groups', filter: 'displayName co "eng"' }, steps],
  ['a prefix anywhere in an AND or under a NOT still may match many', { table: 'users', filter: 'not (userName sw "a") and title eq "x"' }, steps],
  ['matchSteps by cursor: the steps seek past the position', { table: 'users', filter: 'userName sw "ann"', window: seek }, steps],
  ['matchSteps for a later slice (resumeAfter): the steps seek after it', { table: 'users', filter: 'userName sw "ann"', window: { offset: 50, resumeAfter: POSITION } }, steps],
  ['matchSteps deep in the list: the steps decide whether the probe can reach it', { table: 'users', filter: 'userName sw "ann"', window: { offset: 4000 } }, steps],

  // byKeyPrefix
  ['userName sw sorted by userName: the prefix is a range of the userName index, in order', { table: 'users', filter: 'userName sw "Ann"', sortBy: 'userName' }, { kind: 'byKeyPrefix', prefixes: ['ann'], rest: undefined, limits: keyPrefixLimits, otherwise: offsetQuery }],
  [
    "the console's word search sorted by userName: the prefix merged with the other disjuncts",
    { table: 'users', filter: userWords('ann'), sortBy: 'userName', window: seek },
    { kind: 'byKeyPrefix', prefixes: ['ann'], rest: wordsRest('ann'), limits: keyPrefixLimits, otherwise: seekQuery },
  ],
  [
    'two userName prefixes sorted by userName descending, deep by offset: the plain offset query otherwise',
    { table: 'users', filter: 'userName sw "a" or userName sw "b"', sortBy: 'userName', window: { descending: true, offset: 4000 } },
    { kind: 'byKeyPrefix', prefixes: ['a', 'b'], rest: undefined, limits: keyPrefixLimits, otherwise: offsetQuery },
  ],
  ['sorted by userName but the prefix is under an AND: not a disjunct, the plain query', { table: 'users', filter: 'userName sw "a" and title eq "x"', sortBy: 'userName' }, offsetQuery],
  ['a userName prefix sorted by displayName: no index gives that order, the plain query', { table: 'users', filter: 'userName sw "a"', sortBy: 'displayName' }, offsetQuery],
  ['a displayName prefix sorted by displayName on Groups: no index read in order there', { table: 'groups', filter: 'displayName sw "a"', sortBy: 'displayName' }, offsetQuery],

  // resumedSlice
  ['a later slice in creation order, unfiltered: sought after the slice before', { table: 'users', window: { offset: 50, resumeAfter: POSITION } }, { kind: 'resumedSlice', after: POSITION }],
  ['a later slice deep in the list, descending: still sought, not counted', { table: 'users', window: { offset: 5000, descending: true, resumeAfter: POSITION } }, { kind: 'resumedSlice', after: POSITION }],
  ['a later slice filtered by a test no index range fills', { table: 'groups', filter: 'externalId eq "x"', window: { offset: 50, resumeAfter: POSITION } }, { kind: 'resumedSlice', after: POSITION }],
  ['a later slice of a sorted list: resumeAfter is ignored, the plain query', { table: 'users', sortBy: 'title', window: { offset: 50, resumeAfter: POSITION } }, offsetQuery],

  // offsetByBuckets
  [`unfiltered users, ascending, offset ${FROM_END_AFTER}: the creation-time counters find the start`, { table: 'users', window: { offset: FROM_END_AFTER } }, { kind: 'offsetByBuckets' }],
  ['unfiltered users showing deactivated ones, deep: the counters count both states', { table: 'users', window: { offset: 250_000, onlyActive: false } }, { kind: 'offsetByBuckets' }],

  // offsetByIndex
  ['unfiltered, offset 1: the offset walked in the covering index, from the start', { table: 'users', window: { offset: 1 } }, { kind: 'offsetByIndex', fromEndPastHalf: false }],
  [`unfiltered, offset ${FROM_END_AFTER - 1}: still a short walk, no counters read`, { table: 'groups', window: { offset: FROM_END_AFTER - 1 } }, { kind: 'offsetByIndex', fromEndPastHalf: false }],
  ['unfiltered users, descending and deep: no buckets in that direction; from the end past half', { table: 'users', window: { offset: FROM_END_AFTER, descending: true } }, { kind: 'offsetByIndex', fromEndPastHalf: true }],
  ['unfiltered Groups, deep: no creation buckets for groups; from the end past half', { table: 'groups', window: { offset: 5000 } }, { kind: 'offsetByIndex', fromEndPastHalf: true }],

  // offsetQuery
  ['the first page, unfiltered: the plain query (prepared once hot)', { table: 'users' }, offsetQuery],
  ['userName eq, the first page: a key lookup, the plain query', { table: 'users', filter: 'userName eq "ann@example.com"' }, offsetQuery],
  ['a filter no index range fills, deep: the plain query at its offset', { table: 'users', filter: 'title eq "x"', window: { offset: 5000 } }, offsetQuery],
  ['sorted by a key, deep: the plain query at its offset', { table: 'users', sortBy: 'name.familyName', window: { offset: 5000 } }, offsetQuery],

  // seekQuery
  ['cursor, unfiltered, in creation order: the plain seek', { table: 'users', window: seek }, seekQuery],
  ['cursor from the start, sorted by title: the plain seek', { table: 'users', sortBy: 'title', window: { seek: { direction: 'after' } } }, seekQuery],
  ['cursor backwards, filtered by externalId eq: the plain seek', { table: 'groups', filter: 'externalId eq "x"', window: { seek: { direction: 'before', from: POSITION } } }, seekQuery],
  ['a cursor wins over an offset and resumeAfter: the plain seek', { table: 'users', window: { ...seek, offset: 5000, resumeAfter: POSITION } }, seekQuery],
];

const engines = [
  { name: 'SQLite', hooks: sqliteHooks, index: 2 },
  { name: 'PostgreSQL', hooks: postgresHooks, index: 3 },
] as const;

describe('planList: which window takes which plan', () => {
  for (const engine of engines) {
    for (const [why, request, onSqlite, onPostgres] of cases) {
      const expected = engine.index === 3 && onPostgres ? onPostgres : onSqlite;
      it(`${engine.name}: ${why} -> ${expected.kind}`, () => {
        assert.deepEqual(planList({ ...windowOf(request), table: request.table, engine: engine.hooks }), expected);
      });
    }
  }

  it('every plan is taken by some row, on each engine', () => {
    const every: Record<ListPlanKind, true> = { countOnly: true, matchSteps: true, byKeyPrefix: true, resumedSlice: true, offsetByBuckets: true, offsetByIndex: true, offsetQuery: true, seekQuery: true };
    for (const engine of engines) {
      const taken = new Set(cases.map(([, , onSqlite, onPostgres]) => (engine.index === 3 && onPostgres ? onPostgres : onSqlite).kind));
      assert.deepEqual([...taken].sort(), Object.keys(every).sort(), engine.name);
    }
  });

  it('the engine comes in the window as data: the same request plans differently by substringIndexed alone', () => {
    const window = windowOf({ table: 'users', filter: 'name.familyName co "mi"' });
    assert.equal(planList({ ...window, table: 'users', engine: { substringIndexed: false } }).kind, 'offsetQuery');
    assert.equal(planList({ ...window, table: 'users', engine: { substringIndexed: true } }).kind, 'matchSteps');
  });
});
