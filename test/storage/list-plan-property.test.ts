/**
 * Every plan of the list planner (src/storage/repos/list/plan.ts) returns the plain query's page:
 * on random users and groups, for random windows that take the plan (its kind checked), with the
 * plan's step limits made small so that every step answers, `runPlan` with the plan gives exactly
 * the rows (whole, with each user's groups when asked), total, positions and `more` that the plain
 * query (`offsetQuery`, or `seekQuery` for a cursor) gives for the same window, on every engine.
 * Deep pages reach past FROM_END_AFTER, so the counters' plans answer too. One seed drives the
 * data and the windows; a failure names it, DATA_SEED replays it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { groupRow, userRowFor } from '../support/rows.ts';
import { userWords } from '../../src/console/directory.ts';
import { newId } from '../../src/ids.ts';
import { lowerFilter, lowerSort } from '../../src/scim/filter/lower.ts';
import { parseListQuery } from '../../src/scim/query.ts';
import { groupResourceType, userResourceType } from '../../src/scim/schema/registry.ts';
import { USER_SCHEMA } from '../../src/scim/schema/urns.ts';
import type { Storage } from '../../src/storage/connect.ts';
import type { ResourceTable } from '../../src/storage/predicate-sql.ts';
import { addCounts, userDelta, userStateOf } from '../../src/storage/repos/counters.ts';
import type { GroupRow } from '../../src/storage/repos/groups.ts';
import { FROM_END_AFTER, planList } from '../../src/storage/repos/list/plan.ts';
import type { ListPlan, ListPlanKind, PlainPlan } from '../../src/storage/repos/list/plan.ts';
import type { ListPage, ListWindow, Position } from '../../src/storage/repos/list/window.ts';
import { runPlan } from '../../src/storage/repos/paging.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import type { UserRow } from '../../src/storage/repos/users.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

/** Set to a seed from a failure message to replay that run. */
const DATA_SEED: number | undefined = undefined;
/** Past FROM_END_AFTER with deactivated users hidden, so that deep pages hold rows. */
const USERS = 1_300;
const GROUPS = 60;
const RUNS = 40;

/** Few letters, so that words match several users; both cases, an accent, LIKE's wildcards. */
const letter = fc.constantFrom('a', 'b', 'A', 'é', '_', '%', 'z');
const word = (min: number, max: number) => fc.array(letter, { minLength: min, maxLength: max }).map((l) => l.join(''));

const person = fc.record({
  userName: word(1, 5),
  given: fc.option(word(1, 3), { nil: undefined }),
  family: fc.option(word(1, 3), { nil: undefined }),
  title: fc.option(fc.constantFrom('x', 'y'), { nil: undefined }),
  state: fc.constantFrom('active', 'active', 'active', 'active', 'active', 'active', 'deactivated', 'deleted'),
  /** The creation second, over three hours: several hour and second buckets, seconds shared. */
  second: fc.integer({ min: 0, max: 3 * 3600 }),
});

for (const engine of engines) {
  describe(`every list plan returns the plain query's page, on ${engine.name}`, () => {
    const seed = DATA_SEED ?? Math.floor(Math.random() * 2 ** 31);
    const label = `(data seed ${seed}, ${engine.name})`;
    let database: TestDatabase;
    let storage: Storage;
    const teamId = newId();

    before(async () => {
      database = await engine.open();
      storage = database.storage;
      await insertTeam(storage.db, { id: teamId, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: '2026-01-01T00:00:00.000Z' });
      const people = fc.sample(fc.array(person, { minLength: USERS, maxLength: USERS }), { seed, numRuns: 1 })[0]!;
      const held = new Set<string>();
      const users: UserRow[] = [];
      for (const [i, p] of people.entries()) {
        const body = {
          schemas: [USER_SCHEMA],
          userName: `${p.userName}${i % 7 === 0 ? '' : i}`,
          active: p.state === 'active',
          ...(p.title !== undefined ? { title: p.title } : {}),
          ...(p.given !== undefined || p.family !== undefined ? { name: { ...(p.given !== undefined ? { givenName: p.given } : {}), ...(p.family !== undefined ? { familyName: p.family } : {}) } } : {}),
        };
        const createdAt = new Date(Date.UTC(2026, 0, 2, 0, 0, p.second)).toISOString();
        const row = userRowFor(storage, teamId, body, createdAt);
        // One holder per folded userName (migration 006): equal sort keys occur among listed users.
        const claim = row.user_name_claim !== null && p.state !== 'deleted' && !held.has(row.user_name_key) ? row.user_name_claim : null;
        if (claim !== null) held.add(claim);
        users.push({ ...row, user_name_claim: claim, deleted_at: p.state === 'deleted' ? createdAt : null });
      }
      const groups: GroupRow[] = fc
        .sample(fc.array(fc.tuple(word(1, 4), fc.integer({ min: 0, max: 3 * 3600 })), { minLength: GROUPS, maxLength: GROUPS }), { seed: seed + 1, numRuns: 1 })[0]!
        .map(([name, second], i) => groupRow(teamId, `${name}${i}`, { created_at: new Date(Date.UTC(2026, 0, 2, 0, 0, second)).toISOString() }));
      // The rows and their counts in one transaction, as the writers keep them.
      await storage.db.transaction().execute(async (trx) => {
        for (let i = 0; i < users.length; i += 200) await trx.insertInto('users').values(users.slice(i, i + 200)).execute();
        await trx.insertInto('groups').values(groups).execute();
        for (const r of users) await addCounts(trx, teamId, userDelta(undefined, userStateOf(r)), r.created_at);
        await addCounts(trx, teamId, { groups: groups.length });
      });
    });
    after(() => database.dispose());

    const windowOf = (table: ResourceTable, filter: string | undefined, sortBy: string | undefined, rest: Omit<ListWindow, 'where' | 'sort'>): ListWindow => {
      const query = parseListQuery(table === 'users' ? userResourceType : groupResourceType, { ...(filter !== undefined ? { filter } : {}), ...(sortBy !== undefined ? { sortBy } : {}) });
      return { ...(query.filter ? { where: lowerFilter(query.filter, { members: 'active' }) } : {}), ...(query.sortBy ? { sort: lowerSort(query.sortBy) } : {}), ...rest };
    };

    type Paging = { readonly offset: number } | { readonly resume: number } | { readonly seekFrom: number | 'start'; readonly direction: 'after' | 'before' };
    const shallow = fc.integer({ min: 0, max: 40 });
    const deep = fc.integer({ min: FROM_END_AFTER - 2, max: USERS + 2 });
    const offset = fc.oneof(shallow, deep).map((offset): Paging => ({ offset }));
    const resume = fc.oneof(fc.integer({ min: 1, max: 40 }), deep).map((resume): Paging => ({ resume }));
    const cursor = fc.record({ seekFrom: fc.oneof(fc.constant<'start'>('start'), shallow), direction: fc.constantFrom<'after' | 'before'>('after', 'before') }).map((c): Paging => c);

    /** One random request of each plan: table, filter, sortBy and paging that take it. */
    const requests: Partial<Record<ListPlanKind, fc.Arbitrary<{ table: ResourceTable; filter?: string; sortBy?: string; descending: boolean; paging: Paging; limit?: number }>>> = {
      countOnly: fc.record({
        table: fc.constantFrom<ResourceTable>('users', 'groups'),
        filter: fc.option(word(1, 2).map((w) => `externalId eq ${JSON.stringify(w)}`), { nil: undefined }),
        descending: fc.boolean(),
        paging: fc.oneof(offset, cursor),
        limit: fc.constant(0),
      }),
      matchSteps: fc.oneof(
        fc.record({
          table: fc.constant<ResourceTable>('users'),
          filter: fc.tuple(fc.constantFrom('userName sw', 'userName ew', 'userName co', 'name.familyName sw', 'name.givenName sw'), word(1, 2)).map(([t, w]) => `${t} ${JSON.stringify(w)}`),
          descending: fc.boolean(),
          paging: fc.oneof(offset, resume, cursor),
        }),
        fc.record({
          table: fc.constant<ResourceTable>('users'),
          filter: fc.tuple(word(1, 2), word(1, 2)).map(([w, w2]) => `not (userName sw ${JSON.stringify(w)}) or name.familyName sw ${JSON.stringify(w2)}`),
          descending: fc.boolean(),
          paging: fc.oneof(offset, resume, cursor),
        }),
        fc.record({
          table: fc.constant<ResourceTable>('groups'),
          filter: fc.tuple(fc.constantFrom('displayName sw', 'displayName co', 'displayName ew'), word(1, 2)).map(([t, w]) => `${t} ${JSON.stringify(w)}`),
          descending: fc.boolean(),
          paging: fc.oneof(offset, resume, cursor),
        }),
      ),
      byKeyPrefix: fc.record({
        table: fc.constant<ResourceTable>('users'),
        filter: fc
          .tuple(fc.constantFrom<((q: string, q2: string) => string)[]>(userWords, (q) => `userName sw ${JSON.stringify(q)}`, (q, q2) => `userName sw ${JSON.stringify(q)} or name.familyName sw ${JSON.stringify(q2)}`, (q, q2) => `userName sw ${JSON.stringify(q)} or userName sw ${JSON.stringify(q2)}`), word(1, 2), word(1, 2))
          .map(([text, q, q2]) => text(q, q2)),
        sortBy: fc.constant('userName'),
        descending: fc.boolean(),
        paging: fc.oneof(offset, cursor),
      }),
      resumedSlice: fc.oneof(
        fc.record({ table: fc.constant<ResourceTable>('users'), filter: fc.option(fc.constantFrom('title eq "x"', 'externalId pr', 'not (title eq "y")'), { nil: undefined }), descending: fc.boolean(), paging: resume }),
        fc.record({ table: fc.constant<ResourceTable>('groups'), filter: fc.option(fc.constantFrom('externalId pr', 'not (externalId pr)'), { nil: undefined }), descending: fc.boolean(), paging: resume }),
      ),
      offsetByBuckets: fc.record({ table: fc.constant<ResourceTable>('users'), descending: fc.constant(false), paging: deep.filter((o) => o >= FROM_END_AFTER).map((o): Paging => ({ offset: o })) }),
      offsetByIndex: fc.oneof(
        fc.record({ table: fc.constantFrom<ResourceTable>('users', 'groups'), descending: fc.boolean(), paging: fc.integer({ min: 1, max: FROM_END_AFTER - 1 }).map((o): Paging => ({ offset: o })) }),
        fc.record({ table: fc.constant<ResourceTable>('users'), descending: fc.constant(true), paging: deep.filter((o) => o >= FROM_END_AFTER).map((o): Paging => ({ offset: o })) }),
        fc.record({ table: fc.constant<ResourceTable>('groups'), descending: fc.boolean(), paging: fc.integer({ min: 1, max: GROUPS + 2 }).map((o): Paging => ({ offset: o })) }),
      ),
    };

    /** The plain query's plan for `window`. */
    const plainOf = (window: ListWindow): PlainPlan => (window.seek ? { kind: 'seekQuery' } : { kind: 'offsetQuery' });
    const plain = <R extends UserRow | GroupRow>(table: ResourceTable, window: ListWindow): Promise<ListPage<R>> => runPlan<R>(storage.db, table, teamId, window, plainOf(window));

    /** The position of the `n`th row of the list's order (from the plain query), or undefined past its end. */
    const positionAt = async (table: ResourceTable, base: ListWindow, n: number): Promise<Position | undefined> =>
      (await plain(table, { ...base, limit: n + 1, seek: { direction: 'after' } })).positions[n];

    /** The plan with its step limits made small (any limits give the same page). */
    const withLimits = (plan: ListPlan, few: number, walk: number, chunk: number): ListPlan => {
      if (plan.kind === 'matchSteps') return { ...plan, limits: { few, probe: walk } };
      if (plan.kind === 'byKeyPrefix') return { ...plan, limits: { few, walk, chunk } };
      return plan;
    };

    for (const [kind, request] of Object.entries(requests)) {
      it(`${kind}: the same page as the plain query, whichever step answers`, async () => {
        const property = fc.record({
          request: request!,
          onlyActive: fc.boolean(),
          withGroups: fc.boolean(),
          limit: fc.integer({ min: 1, max: 7 }),
          few: fc.constantFrom(0, 1, 3, 500),
          walk: fc.constantFrom(1, 10, 30, 80, 5000),
          chunk: fc.constantFrom(1, 3, 7, 1000),
        });
        await fc.assert(
          fc.asyncProperty(property, async ({ request, onlyActive, withGroups, limit, few, walk, chunk }) => {
            const { table, filter, sortBy, descending, paging } = request;
            const base = windowOf(table, filter, sortBy, { descending, onlyActive, withGroups, limit: request.limit ?? limit });
            let window: ListWindow;
            if ('offset' in paging) window = { ...base, offset: paging.offset };
            else if ('resume' in paging) {
              const resumeAfter = await positionAt(table, base, paging.resume - 1);
              // Past the list's end there is no row to resume after: the slice is an offset alone.
              window = { ...base, offset: paging.resume, ...(resumeAfter ? { resumeAfter } : {}) };
            } else {
              const from = paging.seekFrom === 'start' ? undefined : await positionAt(table, base, paging.seekFrom);
              window = { ...base, seek: { direction: from ? paging.direction : 'after', ...(from ? { from } : {}) } };
            }
            const plan = planList({ ...window, table, engine: storage.hooks });
            const context = `${JSON.stringify({ table, filter, sortBy, descending, paging, onlyActive, withGroups, limit: window.limit, few, walk, chunk })} ${label}`;
            // A resumed slice past the end has no position to resume after: the plain query plans it.
            if (kind === 'resumedSlice' && !window.resumeAfter) return;
            assert.equal(plan.kind, kind, `the window takes the plan: ${context}`);
            const got = await runPlan(storage.db, table, teamId, window, withLimits(plan, few, walk, chunk));
            // count=0 answers the total alone, by either paging method: the plain count.
            const want = kind === 'countOnly' ? await plain(table, { ...window, seek: undefined, offset: 0 }) : await plain(table, window);
            assert.deepEqual(got.rows, want.rows, `rows: ${context}`);
            assert.equal(got.total, want.total, `total: ${context}`);
            assert.deepEqual(got.positions, want.positions, `positions: ${context}`);
            assert.equal(got.more, kind === 'countOnly' ? false : want.more, `more: ${context}`);
          }),
          { numRuns: RUNS, seed },
        );
      });
    }

    it('the requests above take every plan but the plain query itself', () => {
      const every: Record<ListPlanKind, true> = { countOnly: true, matchSteps: true, byKeyPrefix: true, resumedSlice: true, offsetByBuckets: true, offsetByIndex: true, offsetQuery: true, seekQuery: true };
      const plainKinds: ListPlanKind[] = ['offsetQuery', 'seekQuery'];
      assert.deepEqual(Object.keys(requests).sort(), Object.keys(every).filter((k) => !plainKinds.includes(k as ListPlanKind)).sort());
    });
  });
}
