/**
 * Every difference between SQLite and PostgreSQL that code above the driver must know, behind
 * one object of named hooks. Nothing else in Rollcall asks which engine it runs on.
 */
import { sql } from 'kysely';
import type { Expression, Kysely, RawBuilder, SqlBool } from 'kysely';

/** Where a JSON scalar is read from: a document column, or the current array element. */
export type JsonBase = { readonly table: string; readonly column: string } | 'element';

export type EngineName = 'sqlite' | 'postgres';

export interface DialectHooks {
  readonly name: EngineName;
  /** A stored JSON document as read from the driver (text on SQLite, parsed jsonb on pg). */
  parseJson(value: unknown): Record<string, unknown>;
  /** A document as a statement parameter. */
  toJson(value: unknown): string;
  /** Whether a driver error is a unique-constraint violation. */
  isUniqueViolation(error: unknown): boolean;
  /** Whether a driver error is a lost serialization/lock race worth retrying. */
  isRetryable(error: unknown): boolean;
  /**
   * A scalar at `keys` inside a JSON document, or NULL: inside the column `column` of table
   * alias `table`, or (base `element`) inside the current element of `elements(...)`. `text`
   * gives strings as text; `bool` gives JSON true/false as 1/0; `number` gives a JSON number as
   * a number (NULL for any other JSON type, so a string never compares as one). Keys are stored
   * attribute names.
   */
  json(base: JsonBase, keys: readonly string[], as: 'text' | 'bool' | 'number'): RawBuilder<unknown>;
  /**
   * A FROM item yielding the elements of the JSON array at `keys` of `table.column`, under the
   * alias that `json('element', ...)` reads. No rows when the array is absent.
   */
  elements(table: string, column: string, keys: readonly string[]): RawBuilder<unknown>;
  /** The position of the current element of `elements(...)` in its array (ascending = array order). */
  elementIndex(): RawBuilder<unknown>;
  /** Lower-cases text the way JavaScript's toLowerCase does (full Unicode case folding). */
  lower(expr: Expression<unknown>): RawBuilder<string>;
  /** Text made to compare by code point, as SQLite does by default (PostgreSQL: COLLATE "C"). */
  ordered(expr: Expression<unknown>): RawBuilder<unknown>;
  /** Case-sensitive substring tests that need no LIKE escaping. */
  contains(expr: Expression<unknown>, value: string): RawBuilder<SqlBool>;
  startsWith(expr: Expression<unknown>, value: string): RawBuilder<SqlBool>;
  endsWith(expr: Expression<unknown>, value: string): RawBuilder<SqlBool>;
  /**
   * The statement a revocation notice runs in the write's transaction, its one parameter the
   * notice (revocations.ts): PostgreSQL hands it to every instance LISTENing when the
   * transaction commits; SQLite has one process and only needs it to pass the driver.
   */
  readonly revocationNoticeSql: string;
  /**
   * An aggregate: a JSON array holding, per row, the JSON array of `items`, in `orderBy`'s order;
   * `[]` for no rows. Read back with parseJson (text on SQLite; pg parses json itself). It lets a
   * read by id bring its related rows in the same statement (one round trip on PostgreSQL).
   */
  jsonRows(items: readonly Expression<unknown>[], orderBy: readonly Expression<unknown>[]): RawBuilder<unknown>;
  /**
   * Whether a WITH may hold an INSERT/UPDATE whose RETURNING feeds the statement after it, so
   * two dependent writes go in one statement (one round trip). PostgreSQL: yes; SQLite's WITH
   * takes SELECTs only (and a statement there costs no round trip).
   */
  readonly writableCtes: boolean;
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const jsonPathSqlite = (keys: readonly string[]): string =>
  '$' + keys.map((k) => `."${k.replace(/"/g, '""')}"`).join('');

export const sqliteHooks: DialectHooks = {
  name: 'sqlite',
  revocationNoticeSql: 'select ? as rollcall_revocation',
  writableCtes: false,
  parseJson: (value) => (typeof value === 'string' ? JSON.parse(value) : (value as Record<string, unknown>)),
  toJson: (value) => JSON.stringify(value),
  isUniqueViolation: (error) =>
    /UNIQUE constraint failed|PRIMARY KEY/.test(messageOf(error)) ||
    codeOf(error) === 'SQLITE_CONSTRAINT_UNIQUE' ||
    codeOf(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY',
  isRetryable: (error) => /database is locked|SQLITE_BUSY/.test(messageOf(error)),
  json: (base, keys, as) => {
    // The element itself (a multi-valued simple attribute): json_each's value is already SQL
    // (text, a number, 1/0), and json_extract would read a string element as malformed JSON.
    if (base === 'element' && keys.length === 0) return as === 'number' ? sql`(case when e.type in ('integer', 'real') then e.value end)` : sql`e.value`;
    const source = base === 'element' ? sql`e.value` : sql.ref(`${base.table}.${base.column}`);
    const value = sql`json_extract(${source}, ${jsonPathSqlite(keys)})`;
    return as === 'number' ? sql`(case when json_type(${source}, ${jsonPathSqlite(keys)}) in ('integer', 'real') then ${value} end)` : value;
  },
  elements: (table, column, keys) => sql`json_each(${sql.ref(`${table}.${column}`)}, ${jsonPathSqlite(keys)}) as e`,
  elementIndex: () => sql`e.key`,
  // rc_lower is registered on every connection by sqlite-adapter.ts (SQLite's lower() is ASCII only).
  lower: (expr) => sql<string>`rc_lower(${expr})`,
  ordered: (expr) => sql`${expr}`,
  contains: (expr, value) => sql<SqlBool>`instr(${expr}, ${value}) > 0`,
  startsWith: (expr, value) => sql<SqlBool>`substr(${expr}, 1, length(${value})) = ${value}`,
  endsWith: (expr, value) => sql<SqlBool>`(length(${expr}) >= length(${value}) and substr(${expr}, length(${expr}) - length(${value}) + 1) = ${value})`,
  // ORDER BY inside an aggregate: SQLite 3.44 and later.
  jsonRows: (items, orderBy) => sql`json_group_array(json_array(${sql.join([...items])}) order by ${sql.join([...orderBy])})`,
};

export const postgresHooks: DialectHooks = {
  name: 'postgres',
  revocationNoticeSql: "select pg_notify('rollcall_revocations', $1)",
  writableCtes: true,
  parseJson: (value) => (typeof value === 'string' ? JSON.parse(value) : (value as Record<string, unknown>)),
  toJson: (value) => JSON.stringify(value),
  isUniqueViolation: (error) => codeOf(error) === '23505',
  isRetryable: (error) => codeOf(error) === '40001' || codeOf(error) === '40P01',
  json: (base, keys, as) => {
    const source = base === 'element' ? sql`e.v` : sql.ref(`${base.table}.${base.column}`);
    const text = sql`(${source} #>> ${sql.val(keys)}::text[])`;
    if (as === 'number') return sql`(case when jsonb_typeof(${source} #> ${sql.val(keys)}::text[]) = 'number' then ${text}::numeric end)`;
    return as === 'bool' ? sql`(case ${text} when 'true' then 1 when 'false' then 0 end)` : text;
  },
  elements: (table, column, keys) =>
    sql`jsonb_array_elements(case when jsonb_typeof(${sql.ref(`${table}.${column}`)} #> ${sql.val(keys)}::text[]) = 'array' then ${sql.ref(`${table}.${column}`)} #> ${sql.val(keys)}::text[] else '[]'::jsonb end) with ordinality as e(v, i)`,
  elementIndex: () => sql`e.i`,
  // libc's lower() maps one character at a time and depends on the database's LC_CTYPE (ΟΔΟΣ ->
  // οδοσ, İ -> i; nothing beyond ASCII under "C"); ICU's root locale applies Unicode's full,
  // context-sensitive mapping as toLowerCase does (ΟΔΟΣ -> οδος, İ -> i̇), whatever the database.
  lower: (expr) => sql<string>`lower(${expr} collate "und-x-icu")`,
  ordered: (expr) => sql`(${expr} collate "C")`,
  contains: (expr, value) => sql<SqlBool>`strpos(${expr}, ${value}::text) > 0`,
  startsWith: (expr, value) => sql<SqlBool>`left(${expr}, length(${value}::text)) = ${value}::text`,
  endsWith: (expr, value) => sql<SqlBool>`right(${expr}, length(${value}::text)) = ${value}::text`,
  jsonRows: (items, orderBy) => sql`coalesce(json_agg(json_build_array(${sql.join([...items])}) order by ${sql.join([...orderBy])}), '[]'::json)`,
};

/**
 * The application's tables and their primary-key columns, as each engine's catalogue lists them
 * (storage/copy.ts): SQLite's sqlite_master and table_info pragma, PostgreSQL's information
 * schema for the connection's current schema. Kysely's own migration tables are left out.
 */
export async function tablesOf(db: Kysely<unknown>, engine: EngineName): Promise<{ name: string; primaryKey: string[] }[]> {
  if (engine === 'sqlite') {
    const names = (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' order by name`.execute(db)).rows;
    const out: { name: string; primaryKey: string[] }[] = [];
    for (const { name } of names) {
      const columns = (await sql<{ name: string; pk: number }>`select name, pk from pragma_table_info(${name})`.execute(db)).rows;
      out.push({ name, primaryKey: columns.filter((c) => Number(c.pk) > 0).sort((a, b) => Number(a.pk) - Number(b.pk)).map((c) => c.name) });
    }
    return out;
  }
  const names = (await sql<{ name: string }>`select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'kysely_%' order by table_name`.execute(db)).rows;
  const keys = (await sql<{ table_name: string; column_name: string; ordinal_position: number }>`select k.table_name, k.column_name, k.ordinal_position
    from information_schema.table_constraints c join information_schema.key_column_usage k
      on k.constraint_name = c.constraint_name and k.table_schema = c.table_schema and k.table_name = c.table_name
    where c.table_schema = current_schema() and c.constraint_type = 'PRIMARY KEY'`.execute(db)).rows;
  return names.map(({ name }) => ({
    name,
    primaryKey: keys.filter((k) => k.table_name === name).sort((a, b) => Number(a.ordinal_position) - Number(b.ordinal_position)).map((k) => k.column_name),
  }));
}

