/**
 * The console's search ignores case and accents ("jose" finds José): each user's userName, given
 * and family name, and each group's displayName, stored as text.ts `searchFold` folds them, in
 * columns the console's word search alone reads (scim/word-search.ts; SCIM filters keep
 * comparing the case-folded keys, accent-sensitive as RFC 7644 has them), indexed after the team:
 *
 * - `users.user_name_search` (NOT NULL: a word search is listed by it, and the list planner reads
 *   its index ranges in order, repos/list/by-key-prefix.ts), `users.given_name_search`,
 *   `users.family_name_search` (NULL with the name), `groups.display_name_search`;
 * - each indexed as `(team_id, column)`, under COLLATE "C" on PostgreSQL: code-point order, the
 *   order a sort by it compares in (dialect.ts `ordered`), and a B-tree PostgreSQL reads `LIKE
 *   'v%'` from as a range. SQLite's binary collation is that order already.
 *
 * The backfill: the fold is JavaScript's (Unicode normalization and case mapping neither engine
 * reproduces exactly), but on ASCII text it is plain lower-casing (test/unit/search-fold.test.ts),
 * which both engines' lower() do alike (PostgreSQL's under COLLATE "C"); so one UPDATE folds every row as if it were ASCII, and
 * the rows holding other characters (length in bytes above length in characters) are read and
 * written again in batches, folded by `searchFold`.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { searchFold } from '../../text.ts';
import type { EngineName } from '../dialect.ts';

/** Rows folded in JavaScript per statement (4 parameters each: below SQLite's 32,766). */
const BATCH = 1000;

const nonAscii = (column: string) => sql`(${sql.ref(column)} is not null and octet_length(${sql.ref(column)}) <> length(${sql.ref(column)}))`;

const fold = (value: string | null): string | null => (value === null ? null : searchFold(value));

/** Folds `table`'s `pairs` (source column, folded column) of the rows that hold non-ASCII text, by id in batches. */
async function refoldNonAscii(db: Kysely<unknown>, table: string, pairs: readonly (readonly [string, string])[]): Promise<void> {
  const anyNonAscii = sql.join(pairs.map(([source]) => nonAscii(source)), sql` or `);
  let after = '';
  for (;;) {
    const rows = (await sql<Record<string, string | null> & { id: string }>`select id, ${sql.join(pairs.map(([source]) => sql.ref(source)))} from ${sql.table(table)}
      where id > ${after} and (${anyNonAscii}) order by id limit ${BATCH}`.execute(db)).rows;
    if (rows.length === 0) return;
    const values = rows.map((row) => sql`(${sql.join([row.id, ...pairs.map(([source]) => fold(row[source] ?? null))])})`);
    const names = sql.join(['id', ...pairs.map(([, folded]) => folded)].map((n) => sql.id(n)));
    const sets = sql.join(pairs.map(([, folded]) => sql`${sql.id(folded)} = v.${sql.id(folded)}`));
    // A common table expression names the VALUES columns on both engines (SQLite has no `AS v(a, b)`).
    await sql`with v(${names}) as (values ${sql.join(values)}) update ${sql.table(table)} set ${sets} from v where ${sql.table(table)}.id = v.id`.execute(db);
    after = rows.at(-1)!.id;
    if (rows.length < BATCH) return;
  }
}

export function migration032(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`alter table users add column user_name_search text not null default ''`.execute(db);
      await sql`alter table users add column given_name_search text`.execute(db);
      await sql`alter table users add column family_name_search text`.execute(db);
      await sql`alter table groups add column display_name_search text not null default ''`.execute(db);
      // ASCII lower-casing: SQLite's lower() does only that; PostgreSQL's under "C" too (under a
      // Turkish collation it would write ı for I).
      const lower = (column: string) => (engine === 'postgres' ? sql`lower(${sql.ref(column)} collate "C")` : sql`lower(${sql.ref(column)})`);
      await sql`update users set user_name_search = ${lower('user_name')}, given_name_search = ${lower('given_name')}, family_name_search = ${lower('family_name')}`.execute(db);
      await sql`update groups set display_name_search = ${lower('display_name')}`.execute(db);
      await refoldNonAscii(db, 'users', [['user_name', 'user_name_search'], ['given_name', 'given_name_search'], ['family_name', 'family_name_search']]);
      await refoldNonAscii(db, 'groups', [['display_name', 'display_name_search']]);
      const ordered = (column: string) => (engine === 'postgres' ? sql`${sql.ref(column)} collate "C"` : sql.ref(column));
      await sql`create index users_team_user_name_search on users (team_id, ${ordered('user_name_search')})`.execute(db);
      await sql`create index users_team_given_name_search on users (team_id, ${ordered('given_name_search')})`.execute(db);
      await sql`create index users_team_family_name_search on users (team_id, ${ordered('family_name_search')})`.execute(db);
      await sql`create index groups_team_display_name_search on groups (team_id, ${ordered('display_name_search')})`.execute(db);
    },
  };
}
