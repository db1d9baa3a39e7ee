/**
 * The storage predicates (src/storage/predicate.ts) compiled by storage alone
 * (predicate-sql.ts): golden SQL per dialect for each predicate form and sort key (Kysely's
 * SQLite and PostgreSQL compilers over a driver that runs nothing), then the same predicates run
 * on every engine over the same rows, which must select the same ids. The SCIM side lowers its
 * filters into these forms (src/scim/filter/lower.ts); test/storage/filter-property.test.ts holds
 * the whole walk to the in-memory evaluator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Dialect } from 'kysely';
import { postgresHooks, sqliteHooks } from '../../src/storage/dialect.ts';
import { predicateSql, sortKeySql } from '../../src/storage/predicate-sql.ts';
import type { Database } from '../../src/storage/types.ts';
import { listGroups } from '../../src/storage/repos/groups.ts';
import { listUsers } from '../../src/storage/repos/users.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { orderCases, predicateCases } from '../support/predicate-cases.ts';

const compilerOnly = (postgres: boolean): Dialect => ({
  createAdapter: () => (postgres ? new PostgresAdapter() : new SqliteAdapter()),
  createDriver: () => new DummyDriver(),
  createIntrospector: (db) => (postgres ? new PostgresIntrospector(db) : new SqliteIntrospector(db)),
  createQueryCompiler: () => (postgres ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
});

/** Golden WHERE / ORDER BY text and parameters, per dialect and case name. */
const GOLDEN: Record<'sqlite' | 'postgres', Record<string, [string, unknown[]]>> = {
  sqlite: {
    "always": ["1 = 1", []],
    "text eq on a column through its folded twin": ["(\"r\".\"user_name_key\" is not null and \"r\".\"user_name_key\" = ?)", ["ada@x"]],
    "text eq on a column, case-exact": ["(\"r\".\"external_id\" is not null and \"r\".\"external_id\" = ?)", ["E1"]],
    "text co folded in the document": ["(rc_lower(json_extract(\"r\".\"data\", '$.\"title\"')) is not null and instr(rc_lower(json_extract(\"r\".\"data\", '$.\"title\"')), ?) > 0)", ["eng"]],
    "text sw": ["(json_extract(\"r\".\"data\", '$.\"title\"') is not null and (json_extract(\"r\".\"data\", '$.\"title\"') >= ? and json_extract(\"r\".\"data\", '$.\"title\"') < ? and substr(json_extract(\"r\".\"data\", '$.\"title\"'), 1, length(?)) = ?))", ["Eng","Enh","Eng","Eng"]],
    "text ew": ["(json_extract(\"r\".\"data\", '$.\"title\"') is not null and (length(json_extract(\"r\".\"data\", '$.\"title\"')) >= length(?) and substr(json_extract(\"r\".\"data\", '$.\"title\"'), length(json_extract(\"r\".\"data\", '$.\"title\"')) - length(?) + 1) = ?))", ["eer","eer","eer"]],
    "text sw on a folded column (an index range)": ["(\"r\".\"user_name_key\" is not null and (\"r\".\"user_name_key\" >= ? and \"r\".\"user_name_key\" < ? and substr(\"r\".\"user_name_key\", 1, length(?)) = ?))", ["ad","ae","ad","ad"]],
    "text ew on a folded column (a reversed index range)": ["(\"r\".\"user_name_key\" is not null and (rc_reverse(\"r\".\"user_name_key\") >= ? and rc_reverse(\"r\".\"user_name_key\") < ? and (length(\"r\".\"user_name_key\") >= length(?) and substr(\"r\".\"user_name_key\", length(\"r\".\"user_name_key\") - length(?) + 1) = ?)))", ["x@a","x@b","a@x","a@x","a@x"]],
    "text co with LIKE wildcards taken literally": ["(\"r\".\"user_name_key\" is not null and (\"r\".\"user_name_key\" >= '' and instr(\"r\".\"user_name_key\", ?) > 0))", ["_%\\"]],
    "text gt by code point": ["(json_extract(\"r\".\"data\", '$.\"title\"') is not null and json_extract(\"r\".\"data\", '$.\"title\"') > ?)", ["M"]],
    "flag": ["(\"r\".\"active\" is not null and \"r\".\"active\" = 1)", []],
    "number le in an extension": ["((case when json_type(\"r\".\"data\", '$.\"urn:x:2.0:User\".\"badge\"') in ('integer', 'real') then json_extract(\"r\".\"data\", '$.\"urn:x:2.0:User\".\"badge\"') end) is not null and (case when json_type(\"r\".\"data\", '$.\"urn:x:2.0:User\".\"badge\"') in ('integer', 'real') then json_extract(\"r\".\"data\", '$.\"urn:x:2.0:User\".\"badge\"') end) <= ?)", [42]],
    "known text": ["(json_extract(\"r\".\"data\", '$.\"title\"') is not null)", []],
    "not, and, or": ["not ((json_extract(\"r\".\"data\", '$.\"title\"') is not null) or (1 = 1 and (json_extract(\"r\".\"data\", '$.\"active\"') is not null and json_extract(\"r\".\"data\", '$.\"active\"') = ?)))", [0]],
    "anyElement of an array": ["exists (select 1 from json_each(\"r\".\"data\", ?) as e where (rc_lower(json_extract(e.value, '$.\"type\"')) is not null and rc_lower(json_extract(e.value, '$.\"type\"')) = ?))", ["$.\"emails\"","work"]],
    "related: a group's active members by name": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.active = 1 and ru.deleted_at is null and (\"ru\".\"user_name_key\" is not null and (\"ru\".\"user_name_key\" >= ? and \"ru\".\"user_name_key\" < ? and substr(\"ru\".\"user_name_key\", 1, length(?)) = ?)))", ["ada","adb","ada","ada"]],
    "related: a group's not-deleted members by id": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.deleted_at is null and (\"rm\".\"user_id\" is not null and \"rm\".\"user_id\" = ?))", ["U1"]],
    "related: a user's groups by name": ["exists (select 1 from group_members rm join groups rg on rg.id = rm.group_id where rm.user_id = \"r\".\"id\" and (\"rg\".\"display_name_key\" is not null and \"rg\".\"display_name_key\" = ?))", ["eng"]],
    "folded column": ["\"r\".\"user_name_key\"", []],
    "document text": ["json_extract(\"r\".\"data\", '$.\"displayName\"')", []],
    "number": ["(case when json_type(\"r\".\"data\", '$.\"urn:x:2.0:User\".\"badge\"') in ('integer', 'real') then json_extract(\"r\".\"data\", '$.\"urn:x:2.0:User\".\"badge\"') end)", []],
    "first (primary) element": ["(select rc_lower(json_extract(e.value, '$.\"value\"')) from json_each(\"r\".\"data\", ?) as e order by coalesce(json_extract(e.value, '$.\"primary\"'), 0) desc, e.key limit 1)", ["$.\"emails\""]],
  },
  postgres: {
    "always": ["1 = 1", []],
    "text eq on a column through its folded twin": ["(\"r\".\"user_name_key\" is not null and \"r\".\"user_name_key\" = $1)", ["ada@x"]],
    "text eq on a column, case-exact": ["(\"r\".\"external_id\" is not null and \"r\".\"external_id\" = $1)", ["E1"]],
    "text co folded in the document": ["(lower((\"r\".\"data\" #>> '{\"title\"}'::text[]) collate \"und-x-icu\") is not null and lower((\"r\".\"data\" #>> '{\"title\"}'::text[]) collate \"und-x-icu\") like $1)", ["%eng%"]],
    "text sw": ["((\"r\".\"data\" #>> '{\"title\"}'::text[]) is not null and (\"r\".\"data\" #>> '{\"title\"}'::text[]) like $1)", ["Eng%"]],
    "text ew": ["((\"r\".\"data\" #>> '{\"title\"}'::text[]) is not null and (\"r\".\"data\" #>> '{\"title\"}'::text[]) like $1)", ["%eer"]],
    "text sw on a folded column (an index range)": ["(\"r\".\"user_name_key\" is not null and \"r\".\"user_name_key\" like $1)", ["ad%"]],
    "text ew on a folded column (a reversed index range)": ["(\"r\".\"user_name_key\" is not null and reverse(\"r\".\"user_name_key\") like $1)", ["x@a%"]],
    "text co with LIKE wildcards taken literally": ["(\"r\".\"user_name_key\" is not null and \"r\".\"user_name_key\" like $1)", ["%\\_\\%\\\\%"]],
    "text gt by code point": ["((\"r\".\"data\" #>> '{\"title\"}'::text[]) is not null and ((\"r\".\"data\" #>> '{\"title\"}'::text[]) collate \"C\") > ($1 collate \"C\"))", ["M"]],
    "flag": ["(\"r\".\"active\" is not null and \"r\".\"active\" = 1)", []],
    "number le in an extension": ["((case when jsonb_typeof(\"r\".\"data\" #> '{\"urn:x:2.0:User\",\"badge\"}'::text[]) = 'number' then (\"r\".\"data\" #>> '{\"urn:x:2.0:User\",\"badge\"}'::text[])::numeric end) is not null and (case when jsonb_typeof(\"r\".\"data\" #> '{\"urn:x:2.0:User\",\"badge\"}'::text[]) = 'number' then (\"r\".\"data\" #>> '{\"urn:x:2.0:User\",\"badge\"}'::text[])::numeric end) <= $1)", [42]],
    "known text": ["((\"r\".\"data\" #>> '{\"title\"}'::text[]) is not null)", []],
    "not, and, or": ["not (((\"r\".\"data\" #>> '{\"title\"}'::text[]) is not null) or (1 = 1 and ((case (\"r\".\"data\" #>> '{\"active\"}'::text[]) when 'true' then 1 when 'false' then 0 end) is not null and (case (\"r\".\"data\" #>> '{\"active\"}'::text[]) when 'true' then 1 when 'false' then 0 end) = $1)))", [0]],
    "anyElement of an array": ["exists (select 1 from jsonb_array_elements(case when jsonb_typeof(\"r\".\"data\" #> $1::text[]) = 'array' then \"r\".\"data\" #> $2::text[] else '[]'::jsonb end) with ordinality as e(v, i) where (lower((e.v #>> '{\"type\"}'::text[]) collate \"und-x-icu\") is not null and lower((e.v #>> '{\"type\"}'::text[]) collate \"und-x-icu\") = $3))", [["emails"],["emails"],"work"]],
    "related: a group's active members by name": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.active = 1 and ru.deleted_at is null and (\"ru\".\"user_name_key\" is not null and \"ru\".\"user_name_key\" like $1))", ["ada%"]],
    "related: a group's not-deleted members by id": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.deleted_at is null and (\"rm\".\"user_id\" is not null and \"rm\".\"user_id\" = $1))", ["U1"]],
    "related: a user's groups by name": ["exists (select 1 from group_members rm join groups rg on rg.id = rm.group_id where rm.user_id = \"r\".\"id\" and (\"rg\".\"display_name_key\" is not null and \"rg\".\"display_name_key\" = $1))", ["eng"]],
    "folded column": ["(\"r\".\"user_name_key\" collate \"C\")", []],
    "document text": ["((\"r\".\"data\" #>> '{\"displayName\"}'::text[]) collate \"C\")", []],
    "number": ["(case when jsonb_typeof(\"r\".\"data\" #> '{\"urn:x:2.0:User\",\"badge\"}'::text[]) = 'number' then (\"r\".\"data\" #>> '{\"urn:x:2.0:User\",\"badge\"}'::text[])::numeric end)", []],
    "first (primary) element": ["(select (lower((e.v #>> '{\"value\"}'::text[]) collate \"und-x-icu\") collate \"C\") from jsonb_array_elements(case when jsonb_typeof(\"r\".\"data\" #> $1::text[]) = 'array' then \"r\".\"data\" #> $2::text[] else '[]'::jsonb end) with ordinality as e(v, i) order by coalesce((case (e.v #>> '{\"primary\"}'::text[]) when 'true' then 1 when 'false' then 0 end), 0) desc, e.i limit 1)", [["emails"],["emails"]]],
  },
};

for (const [name, hooks] of [['sqlite', sqliteHooks], ['postgres', postgresHooks]] as const) {
  describe(`storage predicates compile to golden SQL on ${name}`, () => {
    const db = new Kysely<Database>({ dialect: compilerOnly(name === 'postgres') });
    for (const c of predicateCases) {
      it(`predicate: ${c.name}`, () => {
        const q = db.selectFrom(`${c.table} as r` as 'users as r').select('r.id').where(predicateSql(hooks, c.table, c.predicate)).compile();
        const [text, parameters] = GOLDEN[name][c.name]!;
        assert.equal(q.sql, `select "r"."id" from "${c.table}" as "r" where ${text}`);
        assert.deepEqual(q.parameters, parameters);
      });
    }
    for (const c of orderCases) {
      it(`sort key: ${c.name}`, () => {
        const q = db.selectFrom(`${c.table} as r` as 'users as r').select('r.id').orderBy(sortKeySql(hooks, c.table, c.key)).compile();
        const [text, parameters] = GOLDEN[name][c.name]!;
        assert.equal(q.sql, `select "r"."id" from "${c.table}" as "r" order by ${text}`);
        assert.deepEqual(q.parameters, parameters);
      });
    }
  });
}

type Json = Record<string, unknown>;

/** What each predicate case selects from the rows created below (by userName / displayName). */
const EXPECTED: Record<string, string[]> = {
  always: ['ada@x', 'bob@x', 'cy@x'],
  'text eq on a column through its folded twin': ['ada@x'],
  'text eq on a column, case-exact': ['ada@x'],
  'text co folded in the document': ['ada@x', 'bob@x'],
  'text sw': ['ada@x'],
  'text ew': ['ada@x'],
  'text sw on a folded column (an index range)': ['ada@x'],
  'text ew on a folded column (a reversed index range)': ['ada@x'],
  'text co with LIKE wildcards taken literally': [],
  'text gt by code point': ['bob@x', 'cy@x'],
  flag: ['ada@x', 'bob@x', 'cy@x'],
  'number le in an extension': ['ada@x'],
  'known text': ['ada@x', 'bob@x', 'cy@x'],
  'not, and, or': [],
  'anyElement of an array': ['ada@x'],
  "related: a group's active members by name": ['eng'],
  "related: a group's not-deleted members by id": [],
  "related: a user's groups by name": ['ada@x'],
};

for (const engine of engines) {
  describe(`the same predicates run on ${engine.name}`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
      const users = [
        { userName: 'ada@x', externalId: 'E1', title: 'Engineer', emails: [{ value: 'ada@x', type: 'work' }] },
        { userName: 'bob@x', title: 'engineering manager' },
        { userName: 'cy@x', title: 'Sales' },
      ];
      const ids: string[] = [];
      for (const u of users) {
        const res = await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], ...u });
        assert.equal(res.statusCode, 201, res.body);
        ids.push(String(json(res).id));
      }
      // The extension number is written straight into the stored document (no extension is declared here).
      // A number, and a string that must not compare as one.
      const write = (id: string, data: Json) => t.storage.db.updateTable('users').set({ data: JSON.stringify(data) }).where('id', '=', id).execute();
      await write(ids[0]!, { userName: 'ada@x', title: 'Engineer', 'urn:x:2.0:User': { badge: 7 }, emails: [{ value: 'ada@x', type: 'work' }] });
      await write(ids[1]!, { userName: 'bob@x', title: 'engineering manager', 'urn:x:2.0:User': { badge: '7' } });
      const group = await t.request('POST', '/v2/scim/Groups', { displayName: 'eng', members: [{ value: ids[0] }] });
      assert.equal(group.statusCode, 201, group.body);
    });
    after(() => t.close());

    for (const c of predicateCases) {
      it(`${c.name} selects the expected rows`, async () => {
        const window = { where: c.predicate, descending: false, limit: 100, offset: 0 };
        const names =
          c.table === 'users'
            ? (await listUsers(t.storage.db, t.team.id, window)).rows.map((r) => r.user_name)
            : (await listGroups(t.storage.db, t.team.id, window)).rows.map((r) => r.display_name);
        assert.deepEqual(names.sort(), [...EXPECTED[c.name]!].sort());
      });
    }
  });
}
