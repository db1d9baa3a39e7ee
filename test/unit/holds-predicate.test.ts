/**
 * Storage's `holds` predicate (issue 31, the `access` parameter of user lists): its SQL on each
 * dialect (an active user with a direct grant, or a member of a group mapped to the entry, every
 * literal a bound parameter, the type tests only when given), its cost (an index probe; under
 * `not` a scan), its parameterised shape (statements.ts keys), and that it applies to users only.
 * Its results on real rows are the property test's subject (test/storage/access-property.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Dialect } from 'kysely';
import { postgresHooks, sqliteHooks } from '../../src/storage/dialect.ts';
import type { Predicate } from '../../src/storage/predicate.ts';
import { comparesByEquality, withParams } from '../../src/storage/predicate.ts';
import { predicateSql } from '../../src/storage/predicate-sql.ts';
import { filterTerms, NESTED_ROWS, scans } from '../../src/storage/scan-cost.ts';
import type { Database } from '../../src/storage/types.ts';

const compilerOnly = (postgres: boolean): Dialect => ({
  createAdapter: () => (postgres ? new PostgresAdapter() : new SqliteAdapter()),
  createDriver: () => new DummyDriver(),
  createIntrospector: (db) => (postgres ? new PostgresIntrospector(db) : new SqliteIntrospector(db)),
  createQueryCompiler: () => (postgres ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
});

const ROLE: Predicate = { kind: 'holds', grant: 'role', value: 'admin' };
const TYPED: Predicate = { kind: 'holds', grant: 'entitlement', value: 'e5', directType: 'License', mappedTypeKey: 'license' };

const norm = (text: string) => text.replace(/\s+/g, ' ');

for (const [name, hooks] of [['sqlite', sqliteHooks], ['postgres', postgresHooks]] as const) {
  describe(`the holds predicate on ${name}`, () => {
    const db = new Kysely<Database>({ dialect: compilerOnly(name === 'postgres') });
    const compiled = (p: Predicate) => db.selectFrom('users as r').select('r.id').where(predicateSql(hooks, 'users', p)).compile();
    const $ = (n: number) => (name === 'postgres' ? `$${n}` : '?');

    it('a role: an active user with a direct grant of it, or a member of a group mapped to it', () => {
      const q = compiled(ROLE);
      assert.equal(
        norm(q.sql),
        norm(`select "r"."id" from "users" as "r" where ("r"."active" = 1 and (exists (select 1 from user_grants hg where hg.team_id = "r"."team_id" and hg.kind = ${$(1)} and hg.value = ${$(2)}  and hg.user_id = "r"."id")
    or exists (select 1 from access_mappings ham join group_members hgm on hgm.group_id = ham.group_id where ham.team_id = "r"."team_id" and ham.kind = ${$(3)} and ham.value = ${$(4)}  and hgm.user_id = "r"."id")))`),
      );
      assert.deepEqual(q.parameters, ['role', 'admin', 'role', 'admin']);
    });

    it('an entitlement outside the catalog: the stored type and the mappings\' type key tested too', () => {
      const q = compiled(TYPED);
      assert.match(norm(q.sql), new RegExp(`and hg\\.type = ${$(3).replace('$', '\\$').replace('?', '\\?')} and hg\\.user_id`));
      assert.match(norm(q.sql), new RegExp(`and ham\\.type_key = ${$(6).replace('$', '\\$').replace('?', '\\?')} and hgm\\.user_id`));
      assert.deepEqual(q.parameters, ['entitlement', 'e5', 'License', 'entitlement', 'e5', 'license']);
    });

    it('users only', () => {
      assert.throws(() => db.selectFrom('groups as r').select('r.id').where(predicateSql(hooks, 'groups', ROLE)).compile(), /users only/);
    });

    it('costs an index probe but walks its holders (a scan place and the deadline, not a cost); with a key equality, one row; under not, a scan of the listed rows', () => {
      assert.deepEqual(filterTerms(ROLE, 'users', hooks), { scanned: 0, ranged: 1, byKey: false, walks: true });
      assert.equal(scans(filterTerms(ROLE, 'users', hooks)), true);
      const byId: Predicate = { kind: 'and', left: { kind: 'text', scalar: { at: 'column', column: 'id' }, op: 'eq', value: 'U1', folded: false }, right: ROLE };
      assert.deepEqual(filterTerms(byId, 'users', hooks), { scanned: 0, ranged: 2, byKey: true, walks: true });
      assert.equal(scans(filterTerms(byId, 'users', hooks)), false);
      assert.deepEqual(filterTerms({ kind: 'not', predicate: ROLE }, 'users', hooks), { scanned: NESTED_ROWS, ranged: 0, byKey: false });
    });
  });
}

describe('the holds predicate\'s shape', () => {
  it('every literal becomes a parameter; equality only', () => {
    const shaped = withParams(TYPED, (v) => `<${String(v)}>`);
    assert.deepEqual(shaped, { kind: 'holds', grant: 'entitlement', value: '<e5>', directType: '<License>', mappedTypeKey: '<license>' });
    assert.deepEqual(withParams(ROLE, (v) => `<${String(v)}>`), { kind: 'holds', grant: 'role', value: '<admin>' });
    assert.equal(comparesByEquality(TYPED), true);
  });
});
