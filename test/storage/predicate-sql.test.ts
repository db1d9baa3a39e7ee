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
    "text co folded in the document": ["(rc_lower(json_extract(\"r\".\"data\", ?)) is not null and instr(rc_lower(json_extract(\"r\".\"data\", ?)), ?) > 0)", ["$.\"title\"", "$.\"title\"", "eng"]],
    "text sw": ["(json_extract(\"r\".\"data\", ?) is not null and substr(json_extract(\"r\".\"data\", ?), 1, length(?)) = ?)", ["$.\"title\"", "$.\"title\"", "Eng", "Eng"]],
    "text ew": ["(json_extract(\"r\".\"data\", ?) is not null and (length(json_extract(\"r\".\"data\", ?)) >= length(?) and substr(json_extract(\"r\".\"data\", ?), length(json_extract(\"r\".\"data\", ?)) - length(?) + 1) = ?))", ["$.\"title\"", "$.\"title\"", "eer", "$.\"title\"", "$.\"title\"", "eer", "eer"]],
    "text gt by code point": ["(json_extract(\"r\".\"data\", ?) is not null and json_extract(\"r\".\"data\", ?) > ?)", ["$.\"title\"", "$.\"title\"", "M"]],
    "flag": ["(\"r\".\"active\" is not null and \"r\".\"active\" = ?)", [1]],
    "number le in an extension": ["((case when json_type(\"r\".\"data\", ?) in ('integer', 'real') then json_extract(\"r\".\"data\", ?) end) is not null and (case when json_type(\"r\".\"data\", ?) in ('integer', 'real') then json_extract(\"r\".\"data\", ?) end) <= ?)", ["$.\"urn:x:2.0:User\".\"badge\"", "$.\"urn:x:2.0:User\".\"badge\"", "$.\"urn:x:2.0:User\".\"badge\"", "$.\"urn:x:2.0:User\".\"badge\"", 42]],
    "known text": ["(json_extract(\"r\".\"data\", ?) is not null)", ["$.\"title\""]],
    "not, and, or": ["not ((json_extract(\"r\".\"data\", ?) is not null) or (1 = 1 and (json_extract(\"r\".\"data\", ?) is not null and json_extract(\"r\".\"data\", ?) = ?)))", ["$.\"title\"", "$.\"active\"", "$.\"active\"", 0]],
    "anyElement of an array": ["exists (select 1 from json_each(\"r\".\"data\", ?) as e where (rc_lower(json_extract(e.value, ?)) is not null and rc_lower(json_extract(e.value, ?)) = ?))", ["$.\"emails\"", "$.\"type\"", "$.\"type\"", "work"]],
    "related: a group's active members by name": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.active = 1 and ru.deleted_at is null and (\"ru\".\"user_name_key\" is not null and substr(\"ru\".\"user_name_key\", 1, length(?)) = ?))", ["ada", "ada"]],
    "related: a group's not-deleted members by id": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.deleted_at is null and (\"rm\".\"user_id\" is not null and \"rm\".\"user_id\" = ?))", ["U1"]],
    "related: a user's groups by name": ["exists (select 1 from group_members rm join groups rg on rg.id = rm.group_id where rm.user_id = \"r\".\"id\" and (\"rg\".\"display_name_key\" is not null and \"rg\".\"display_name_key\" = ?))", ["eng"]],
    "folded column": ["\"r\".\"user_name_key\"", []],
    "document text": ["json_extract(\"r\".\"data\", ?)", ["$.\"displayName\""]],
    "number": ["(case when json_type(\"r\".\"data\", ?) in ('integer', 'real') then json_extract(\"r\".\"data\", ?) end)", ["$.\"urn:x:2.0:User\".\"badge\"", "$.\"urn:x:2.0:User\".\"badge\""]],
    "first (primary) element": ["(select rc_lower(json_extract(e.value, ?)) from json_each(\"r\".\"data\", ?) as e order by coalesce(json_extract(e.value, ?), 0) desc, e.key limit 1)", ["$.\"value\"", "$.\"emails\"", "$.\"primary\""]],
  },
  postgres: {
    "always": ["1 = 1", []],
    "text eq on a column through its folded twin": ["(\"r\".\"user_name_key\" is not null and \"r\".\"user_name_key\" = $1)", ["ada@x"]],
    "text eq on a column, case-exact": ["(\"r\".\"external_id\" is not null and \"r\".\"external_id\" = $1)", ["E1"]],
    "text co folded in the document": ["(lower((\"r\".\"data\" #>> $1::text[]) collate \"und-x-icu\") is not null and strpos(lower((\"r\".\"data\" #>> $2::text[]) collate \"und-x-icu\"), $3::text) > 0)", [["title"], ["title"], "eng"]],
    "text sw": ["((\"r\".\"data\" #>> $1::text[]) is not null and left((\"r\".\"data\" #>> $2::text[]), length($3::text)) = $4::text)", [["title"], ["title"], "Eng", "Eng"]],
    "text ew": ["((\"r\".\"data\" #>> $1::text[]) is not null and right((\"r\".\"data\" #>> $2::text[]), length($3::text)) = $4::text)", [["title"], ["title"], "eer", "eer"]],
    "text gt by code point": ["((\"r\".\"data\" #>> $1::text[]) is not null and ((\"r\".\"data\" #>> $2::text[]) collate \"C\") > ($3 collate \"C\"))", [["title"], ["title"], "M"]],
    "flag": ["(\"r\".\"active\" is not null and \"r\".\"active\" = $1)", [1]],
    "number le in an extension": ["((case when jsonb_typeof(\"r\".\"data\" #> $1::text[]) = 'number' then (\"r\".\"data\" #>> $2::text[])::numeric end) is not null and (case when jsonb_typeof(\"r\".\"data\" #> $3::text[]) = 'number' then (\"r\".\"data\" #>> $4::text[])::numeric end) <= $5)", [["urn:x:2.0:User", "badge"], ["urn:x:2.0:User", "badge"], ["urn:x:2.0:User", "badge"], ["urn:x:2.0:User", "badge"], 42]],
    "known text": ["((\"r\".\"data\" #>> $1::text[]) is not null)", [["title"]]],
    "not, and, or": ["not (((\"r\".\"data\" #>> $1::text[]) is not null) or (1 = 1 and ((case (\"r\".\"data\" #>> $2::text[]) when 'true' then 1 when 'false' then 0 end) is not null and (case (\"r\".\"data\" #>> $3::text[]) when 'true' then 1 when 'false' then 0 end) = $4)))", [["title"], ["active"], ["active"], 0]],
    "anyElement of an array": ["exists (select 1 from jsonb_array_elements(case when jsonb_typeof(\"r\".\"data\" #> $1::text[]) = 'array' then \"r\".\"data\" #> $2::text[] else '[]'::jsonb end) with ordinality as e(v, i) where (lower((e.v #>> $3::text[]) collate \"und-x-icu\") is not null and lower((e.v #>> $4::text[]) collate \"und-x-icu\") = $5))", [["emails"], ["emails"], ["type"], ["type"], "work"]],
    "related: a group's active members by name": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.active = 1 and ru.deleted_at is null and (\"ru\".\"user_name_key\" is not null and left(\"ru\".\"user_name_key\", length($1::text)) = $2::text))", ["ada", "ada"]],
    "related: a group's not-deleted members by id": ["exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = \"r\".\"id\" and ru.deleted_at is null and (\"rm\".\"user_id\" is not null and \"rm\".\"user_id\" = $1))", ["U1"]],
    "related: a user's groups by name": ["exists (select 1 from group_members rm join groups rg on rg.id = rm.group_id where rm.user_id = \"r\".\"id\" and (\"rg\".\"display_name_key\" is not null and \"rg\".\"display_name_key\" = $1))", ["eng"]],
    "folded column": ["(\"r\".\"user_name_key\" collate \"C\")", []],
    "document text": ["((\"r\".\"data\" #>> $1::text[]) collate \"C\")", [["displayName"]]],
    "number": ["(case when jsonb_typeof(\"r\".\"data\" #> $1::text[]) = 'number' then (\"r\".\"data\" #>> $2::text[])::numeric end)", [["urn:x:2.0:User", "badge"], ["urn:x:2.0:User", "badge"]]],
    "first (primary) element": ["(select (lower((e.v #>> $1::text[]) collate \"und-x-icu\") collate \"C\") from jsonb_array_elements(case when jsonb_typeof(\"r\".\"data\" #> $2::text[]) = 'array' then \"r\".\"data\" #> $3::text[] else '[]'::jsonb end) with ordinality as e(v, i) order by coalesce((case (e.v #>> $4::text[]) when 'true' then 1 when 'false' then 0 end), 0) desc, e.i limit 1)", [["value"], ["emails"], ["emails"], ["primary"]]],
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
