/**
 * The `granted` predicate (a user's roles and entitlements read from user_grants, storage/
 * predicate.ts), compiled by storage alone (predicate-sql.ts): golden SQL per dialect, the same
 * predicates run on every engine over the same users, and on PostgreSQL the plan of "who holds
 * role R": the holders read from the grants key (an index range), not every user tested. The
 * filter's cost (scan-cost.ts) calls that equality a range and the rest a scan.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import type { Dialect } from 'kysely';
import { postgresHooks, sqliteHooks } from '../../src/storage/dialect.ts';
import { predicateSql } from '../../src/storage/predicate-sql.ts';
import { filterTerms } from '../../src/storage/scan-cost.ts';
import { listUsers } from '../../src/storage/repos/users.ts';
import type { Database } from '../../src/storage/types.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';
import { grantCases } from './grants-predicate-cases.ts';

const compilerOnly = (postgres: boolean): Dialect => ({
  createAdapter: () => (postgres ? new PostgresAdapter() : new SqliteAdapter()),
  createDriver: () => new DummyDriver(),
  createIntrospector: (db) => (postgres ? new PostgresIntrospector(db) : new SqliteIntrospector(db)),
  createQueryCompiler: () => (postgres ? new PostgresQueryCompiler() : new SqliteQueryCompiler()),
});

const GOLDEN: Record<'sqlite' | 'postgres', Record<string, [string, unknown[]]>> = {
  sqlite: {
    "role value eq (the holders' index range)": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = ? and g.kind = 'role' and (\"g\".\"value\" is not null and \"g\".\"value\" = ?)))", ["T1","admin"]],
    "any role": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = ? and g.kind = 'role' and 1 = 1))", ["T1"]],
    "entitlement type eq, folded": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = ? and g.kind = 'entitlement' and (rc_lower(nullif(\"g\".\"type\", '')) is not null and rc_lower(nullif(\"g\".\"type\", '')) = ?)))", ["T1","license"]],
    "entitlement of a type and a value": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = ? and g.kind = 'entitlement' and ((rc_lower(nullif(\"g\".\"type\", '')) is not null and rc_lower(nullif(\"g\".\"type\", '')) = ?) and (\"g\".\"value\" is not null and \"g\".\"value\" = ?))))", ["T1","license","e5"]],
    "entitlement type known": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = ? and g.kind = 'entitlement' and (nullif(\"g\".\"type\", '') is not null)))", ["T1"]],
    "not a role value": ["not (\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = ? and g.kind = 'role' and (\"g\".\"value\" is not null and \"g\".\"value\" = ?)))", ["T1","admin"]],
    "role value sw": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = ? and g.kind = 'role' and (\"g\".\"value\" is not null and (\"g\".\"value\" >= ? and \"g\".\"value\" < ? and substr(\"g\".\"value\", 1, length(?)) = ?))))", ["T1","vi","vj","vi","vi"]],
  },
  postgres: {
    "role value eq (the holders' index range)": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = $1 and g.kind = 'role' and (\"g\".\"value\" is not null and \"g\".\"value\" = $2)))", ["T1","admin"]],
    "any role": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = $1 and g.kind = 'role' and 1 = 1))", ["T1"]],
    "entitlement type eq, folded": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = $1 and g.kind = 'entitlement' and (lower(nullif(\"g\".\"type\", '') collate \"und-x-icu\") is not null and lower(nullif(\"g\".\"type\", '') collate \"und-x-icu\") = $2)))", ["T1","license"]],
    "entitlement of a type and a value": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = $1 and g.kind = 'entitlement' and ((lower(nullif(\"g\".\"type\", '') collate \"und-x-icu\") is not null and lower(nullif(\"g\".\"type\", '') collate \"und-x-icu\") = $2) and (\"g\".\"value\" is not null and \"g\".\"value\" = $3))))", ["T1","license","e5"]],
    "entitlement type known": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = $1 and g.kind = 'entitlement' and (nullif(\"g\".\"type\", '') is not null)))", ["T1"]],
    "not a role value": ["not (\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = $1 and g.kind = 'role' and (\"g\".\"value\" is not null and \"g\".\"value\" = $2)))", ["T1","admin"]],
    "role value sw": ["(\"r\".\"id\" in (select g.user_id from user_grants g where g.team_id = $1 and g.kind = 'role' and (\"g\".\"value\" is not null and \"g\".\"value\" like $2)))", ["T1","vi%"]],
  },
};

for (const [name, hooks] of [['sqlite', sqliteHooks], ['postgres', postgresHooks]] as const) {
  describe(`grants predicates compile to golden SQL on ${name}`, () => {
    const db = new Kysely<Database>({ dialect: compilerOnly(name === 'postgres') });
    for (const c of grantCases('T1')) {
      it(`predicate: ${c.name}`, () => {
        const q = db.selectFrom('users as r').select('r.id').where(predicateSql(hooks, 'users', c.predicate)).compile();
        const [text, parameters] = GOLDEN[name][c.name]!;
        assert.equal(q.sql, `select "r"."id" from "users" as "r" where ${text}`);
        assert.deepEqual(q.parameters, parameters);
      });
    }
  });
}

describe('the cost of a grants test (scan-cost.ts)', () => {
  const [eq, any, type, typeAndValue, , not, sw] = grantCases('T1').map((c) => filterTerms(c.predicate, 'users', sqliteHooks));
  it('an equality on the value (alone or with a type) is an index range; the rest, and any negation, scan', () => {
    assert.deepEqual([eq, typeAndValue].map((t) => [t!.ranged, t!.scanned]), [[1, 0], [1, 0]]);
    for (const t of [any, type, not, sw]) assert.ok(t!.scanned > 0 && t!.ranged === 0);
  });
});

/** What each case selects from the users below, by userName. */
const EXPECTED: Record<string, string[]> = {
  "role value eq (the holders' index range)": ['ada', 'bob'],
  'any role': ['ada', 'bob', 'cy'],
  'entitlement type eq, folded': ['ada', 'cy'],
  'entitlement of a type and a value': ['ada'],
  'entitlement type known': ['ada', 'cy', 'dee'],
  'not a role value': ['cy', 'dee', 'eve'],
  'role value sw': ['cy'],
};

for (const engine of engines) {
  describe(`grants predicates run on ${engine.name}`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
      const users = [
        { userName: 'ada', roles: [{ value: 'admin' }], entitlements: [{ value: 'e5', type: 'License' }] },
        { userName: 'bob', roles: [{ value: 'admin', primary: true }, { value: 'Viewer' }] },
        { userName: 'cy', roles: [{ value: 'viewer' }], entitlements: [{ value: 'e3', type: 'LICENSE' }] },
        { userName: 'dee', entitlements: [{ value: 'e5', type: 'Permission' }] },
        { userName: 'eve' },
      ];
      for (const u of users) assert.equal((await t.request('POST', '/v2/scim/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], ...u })).statusCode, 201);
      // Another team's holders never answer.
      const other = await t.addTeam('other');
      const res = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: { userName: 'zed', roles: [{ value: 'admin' }], entitlements: [{ value: 'e5', type: 'License' }] } });
      assert.equal(res.statusCode, 201, res.body);
    });
    after(() => t.close());

    for (const c of grantCases('')) {
      it(`${c.name} selects the expected users`, async () => {
        const predicate = JSON.parse(JSON.stringify(c.predicate).replaceAll('"team":""', `"team":${JSON.stringify(t.team.id)}`));
        const rows = (await listUsers(t.storage.db, t.team.id, { where: predicate, descending: false, limit: 100, offset: 0 })).rows;
        assert.deepEqual(rows.map((r) => r.user_name).sort(), [...EXPECTED[c.name]!].sort());
      });
    }
  });
}

const sqlite = engines.find((e) => e.name === 'sqlite')!;

describe('SQLite: "who holds role R" reads the holders from the grants key', () => {
  it('the plan searches user_grants by its primary key and looks the users up by theirs', async () => {
    const t = await createTestApp({ engine: sqlite });
    try {
      const where = predicateSql(sqliteHooks, 'users', grantCases(t.team.id)[0]!.predicate);
      const query = t.storage.db.selectFrom('users as r').select('r.id').where('r.team_id', '=', t.team.id).where(where).orderBy('r.created_at').orderBy('r.id').limit(51).compile();
      const plan = (await t.storage.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]))).rows.map((r) => r.detail).join('\n');
      assert.match(plan, /SEARCH g USING (COVERING )?INDEX sqlite_autoindex_user_grants_1 \(team_id=\? AND kind=\? AND value=\?\)/, plan);
      assert.doesNotMatch(plan, /SCAN g\b/, plan);
    } finally {
      await t.close();
    }
  });
});

const postgres = engines.find((e) => e.name === 'postgres');

describe('PostgreSQL: "who holds role R" reads the holders from the grants key', { skip: postgres ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ engine: postgres! });
    await seedCatalog(t.storage, t.team.id, { roles: [{ value: 'admin' }, { value: 'viewer' }] });
    // 3,000 users of whom 30 hold admin, written straight to the tables (the subject is the plan).
    await sql`insert into users (id, team_id, user_name, user_name_key, user_name_claim, active, data, version, created_at, updated_at)
      select 'u' || i, ${t.team.id}, 'user' || i, 'user' || i, 'user' || i, 1,
        case when i % 100 = 0 then '{"roles":[{"value":"admin"}]}' else '{"roles":[{"value":"viewer"}]}' end::jsonb, 1, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
      from generate_series(1, 3000) i`.execute(t.storage.db);
    await sql`insert into user_grants (team_id, kind, value, type, user_id, is_primary)
      select ${t.team.id}, 'role', case when i % 100 = 0 then 'admin' else 'viewer' end, '', 'u' || i, 0 from generate_series(1, 3000) i`.execute(t.storage.db);
    await sql`analyze users`.execute(t.storage.db);
    await sql`analyze user_grants`.execute(t.storage.db);
  });
  after(() => t?.close());

  it('the filter roles[value eq "admin"] over SCIM answers the 30 holders, and its plan reads user_grants by its key', async () => {
    const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('roles[value eq "admin"]')}&attributes=id&count=100`);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(json(res).totalResults, 30);
    const where = predicateSql(postgresHooks, 'users', grantCases(t.team.id)[0]!.predicate);
    const query = t.storage.db.selectFrom('users as r').select('r.id').where('r.team_id', '=', t.team.id).where(where).orderBy('r.created_at').orderBy('r.id').limit(51).compile();
    const plan = (await sql.raw<{ 'QUERY PLAN': string }>(`explain ${query.sql.replace(/\$(\d+)/g, (_, i) => `'${String(query.parameters[Number(i) - 1])}'`)}`).execute(t.storage.db)).rows.map((r) => r['QUERY PLAN']).join('\n');
    assert.match(plan, /Index (Only )?Scan using user_grants_pk on user_grants|Bitmap Index Scan on user_grants_pk/, plan);
    assert.doesNotMatch(plan, /Seq Scan on user_grants/, plan);
  });
});
