/**
 * Every difference between SQLite and PostgreSQL that code above the driver must know, behind
 * one object of named hooks. Nothing else in Rollcall asks which engine it runs on.
 */
import { sql } from 'kysely';
import type { CompiledQuery, Expression, Kysely, QueryExecutorProvider, RawBuilder, SqlBool } from 'kysely';
import { numberedByReaders, numberedByWriters } from './feed-numbering.ts';
import type { FeedNumbering } from './feed-numbering.ts';
import { escapeLike, prefixUpperBound, reverseCodePoints } from './text-range.ts';

/**
 * Where a JSON scalar is read from: a document column (of the table alias `table`, or unqualified
 * in an index definition), or the current array element.
 */
export type JsonBase = { readonly table?: string; readonly column: string } | 'element';

export type EngineName = 'sqlite' | 'postgres';

/** An index of a table, as the engine's catalog tells it. */
export interface IndexState {
  readonly name: string;
  readonly valid: boolean;
  readonly building: boolean;
}

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
  /** The column (`table.column`) a driver error found NULL against its NOT NULL, if it is such an error. */
  notNullColumn(error: unknown): string | undefined;
  /**
   * A scalar at `keys` inside a JSON document, or NULL: inside the column `column` of table
   * alias `table`, or (base `element`) inside the current element of `elements(...)`. `text`
   * gives strings as text; `bool` gives JSON true/false as 1/0; `number` gives a JSON number as
   * a number (NULL for any other JSON type, so a string never compares as one). Keys are stored
   * attribute names, written into the SQL as literals (never bound), so that an expression
   * index over the same read (migration 012, extension-indexes.ts) matches the query's expression.
   * Total over any document (such an index evaluates it on every team's rows); a key a path could
   * misread (`"`, `\`, anything but printable ASCII) is refused with a RangeError instead.
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
  /**
   * Whether a `co` test can be answered by an index (PostgreSQL's trigram indexes, migration
   * 012); on SQLite it is a scan, best done in the list's own order (repos/list/indexed.ts).
   */
  readonly substringIndexed: boolean;
  /** Text made to compare by code point, as SQLite does by default (PostgreSQL: COLLATE "C"). */
  ordered(expr: Expression<unknown>): RawBuilder<unknown>;
  /**
   * Case-sensitive substring tests (`co`, `sw`, `ew`), written so that an index can answer them
   * (migration 012): PostgreSQL's LIKE (escaped) under a pg_trgm GIN index; on SQLite `sw` as a
   * range of the binary order beside the exact test, and, when `indexed` says the expression has
   * a reversed-text index (`rc_reverse`), `ew` as a range of the reversed text. When `indexed`
   * says the expression is a text column with a plain index after the team (a folded key), SQLite
   * tests `co` in a scan of that index, which reads the row of a match only.
   */
  contains(expr: Expression<unknown>, value: string, indexed: boolean): RawBuilder<SqlBool>;
  startsWith(expr: Expression<unknown>, value: string): RawBuilder<SqlBool>;
  endsWith(expr: Expression<unknown>, value: string, indexed: boolean): RawBuilder<SqlBool>;
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
   * The distinct `user_id`s the `arms` select (each a plain SELECT of a `user_id` column that an
   * index yields in user_id order), ascending, the first `limit`: a merge of the arms' index
   * orders that stops once `limit` are out, so the work is about `limit` rows plus one probe per
   * arm, however many rows each arm could read. PostgreSQL: a Merge Append of the arms, each
   * `distinct ... order by user_id limit`, under Unique and Limit (a UNION would hash or sort
   * every arm). SQLite: a compound UNION with ORDER BY, which SQLite runs as a merge of its
   * terms, each reading its index in order (an arm with its own LIMIT would be sorted first).
   * At most 500 arms (SQLite's compound limit).
   */
  mergeUserIds(arms: readonly RawBuilder<unknown>[], limit: number): RawBuilder<{ user_id: string }>;
  /**
   * Whether a WITH may hold an INSERT/UPDATE whose RETURNING feeds the statement after it, so
   * two dependent writes go in one statement (one round trip). PostgreSQL: yes; SQLite's WITH
   * takes SELECTs only (and a statement there costs no round trip). Only chain.ts reads it: a
   * write chain runs as one statement or as its steps.
   */
  readonly writableCtes: boolean;
  /**
   * Whether a transaction must lock the rows it reads to decide what it writes (SELECT ... FOR
   * UPDATE / FOR SHARE): PostgreSQL, where transactions of many connections interleave; not
   * SQLite, whose one connection runs one transaction at a time (and has no such clause). Read by
   * repositories that lock (repos/catalog.ts, repos/grants.ts).
   */
  readonly rowLocks: boolean;
  /**
   * How the change feed's events are numbered (storage/feed-numbering.ts): after their commit, by
   * the feed's readers, on PostgreSQL (migration 015: `rc_number_events` under the team's counter
   * row; numbering in the write would hold that row's lock, and with it the team's other writers,
   * through the commit); in their insert on SQLite, which has one writer at a time.
   */
  readonly feed: FeedNumbering;
  /**
   * How the expression index of a team's extension attribute is built (repos/expression-indexes.ts),
   * outside any request and transaction. PostgreSQL builds it CONCURRENTLY, so writes go on
   * meanwhile; one index serves every team that wants the expression, unpartial so that it keeps
   * statistics of the expression. SQLite has no concurrent build: a build holds the write lock,
   * so each team gets its own index, partial on its `team_id` (`expressionIndexScope`), whose expression is
   * evaluated on that team's rows only. `where` is that predicate, a literal the planner matches
   * against a query's bound `team_id`.
   */
  createExpressionIndex(name: string, table: string, columns: RawBuilder<unknown>, where: RawBuilder<unknown> | undefined): RawBuilder<unknown>;
  /** Drops an expression index (PostgreSQL: CONCURRENTLY, without blocking writes). */
  dropExpressionIndex(name: string): RawBuilder<unknown>;
  /** The predicate an expression index of `teamId`'s attribute is partial on (SQLite), or undefined when one index serves every team (PostgreSQL). */
  expressionIndexScope(teamId: string): RawBuilder<unknown> | undefined;
  /** The indexes on `table` (the connection's schema on PostgreSQL): valid, or still being built (PostgreSQL's CONCURRENTLY). */
  indexStates(db: QueryExecutorProvider, table: string): Promise<IndexState[]>;
  /**
   * How a statement is held to a deadline (storage/deadline.ts): PostgreSQL interrupts it itself
   * (`statement_timeout`, set for the transaction the statements run in, `limitStatements`);
   * node:sqlite has no progress handler or interrupt, so SQLite tests the deadline on every row
   * the statement evaluates (`withinDeadline`, a function that throws once it has passed, which
   * stops the statement).
   */
  readonly deadlineIn: 'session' | 'rows';
  /** PostgreSQL: the statements of the transaction `trx` are interrupted after `ms` milliseconds. */
  limitStatements(trx: QueryExecutorProvider, ms: number): Promise<void>;
  /** SQLite: a condition true while the clock is before `deadline` (epoch ms), that stops the statement after it. */
  withinDeadline(deadline: Expression<unknown>): RawBuilder<SqlBool>;
  /** Whether a driver error is a statement stopped at its deadline. */
  isDeadline(error: unknown): boolean;
  /**
   * PostgreSQL: the statement that sets this session's statement deadline to `ms` (0: none), or,
   * with `undefined`, back to the connection's own (the pool's ceiling, connect.ts
   * `statementTimeoutMs`). SQLite has no session deadline: undefined, nothing to send.
   */
  sessionStatementTimeout(ms: number | undefined): RawBuilder<unknown> | undefined;
}

/**
 * A statement that only sets something for the rest of its transaction (PostgreSQL's
 * `limitStatements`), whose answer nobody reads: the driver may send it with the transaction's
 * next statement (pg-driver.ts).
 */
export interface TransactionSettingQuery extends CompiledQuery {
  readonly transactionSetting: true;
}

export const isTransactionSetting = (query: CompiledQuery): boolean => (query as Partial<TransactionSettingQuery>).transactionSetting === true;

/** The message of the error `rc_alive` throws (sqlite-adapter.ts) when a statement's deadline has passed. */
export const SQLITE_DEADLINE_MESSAGE = 'rollcall: the statement ran past its deadline';

const codeOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;

/**
 * PostgreSQL's "cached plan must not change result type": a migration changed a table under a
 * prepared statement (pg-statements.ts runs it unnamed from then on).
 */
export const isStalePlan = (error: unknown): boolean => codeOf(error) === '0A000' && /cached plan must not change result type/.test(messageOf(error));

const constraintOf = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'constraint' in error ? String(error.constraint) : undefined;

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The keys a JSON path may name: printable ASCII except `"` and `\`. SQLite's path reads a
 * quoted key up to the next `"` (it has no escape for one) and takes a `\` inside for a JSON
 * escape, so such a key would name another path, or none, and the error would come from every
 * row an expression index evaluates, whichever team's. Stored attribute names and schema URNs
 * never hold them (schema/extensions.ts refuses them at registration); a key outside this set
 * is a bug, thrown before any SQL is written, on both engines alike.
 */
const JSON_KEY = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

const checkedKeys = (keys: readonly string[]): readonly string[] => {
  for (const k of keys) if (!JSON_KEY.test(k)) throw new RangeError(`a JSON path cannot name the key ${JSON.stringify(k)}: keys are printable ASCII without " and \\`);
  return keys;
};

const jsonPathSqlite = (keys: readonly string[]): string => '$' + checkedKeys(keys).map((k) => `."${k}"`).join('');

/** A PostgreSQL text[] literal's body: each key double-quoted (it holds neither `"` nor `\`). */
const textArrayPostgres = (keys: readonly string[]): string => `{${checkedKeys(keys).map((k) => `"${k}"`).join(',')}}`;

const documentColumn = (base: { readonly table?: string; readonly column: string }) =>
  sql.ref(base.table === undefined ? base.column : `${base.table}.${base.column}`);

/** `lo <= x < hi` (hi absent: open above), beside which the caller keeps its exact test. */
const range = (x: Expression<unknown>, lo: string, hi: string | undefined): RawBuilder<SqlBool> =>
  hi === undefined ? sql<SqlBool>`${x} >= ${lo}` : sql<SqlBool>`${x} >= ${lo} and ${x} < ${hi}`;

export const sqliteHooks: DialectHooks = {
  name: 'sqlite',
  revocationNoticeSql: 'select ? as rollcall_revocation',
  writableCtes: false,
  rowLocks: false,
  feed: numberedByWriters,
  deadlineIn: 'rows',
  limitStatements: async () => {
    throw new Error('SQLite statements are held to their deadline row by row (withinDeadline)');
  },
  // rc_alive is registered on every connection by sqlite-adapter.ts; it is not deterministic, so
  // SQLite calls it for every row rather than once per statement.
  withinDeadline: (deadline) => sql<SqlBool>`rc_alive(${deadline})`,
  sessionStatementTimeout: () => undefined,
  isDeadline: (error) => messageOf(error).includes(SQLITE_DEADLINE_MESSAGE),
  parseJson: (value) => (typeof value === 'string' ? JSON.parse(value) : (value as Record<string, unknown>)),
  toJson: (value) => JSON.stringify(value),
  isUniqueViolation: (error) =>
    // Not the feed's key (events.team_id, events.seq): the database's fault, not the request's.
    !/constraint failed: events\.team_id, events\.seq/.test(messageOf(error)) &&
    (/UNIQUE constraint failed|PRIMARY KEY/.test(messageOf(error)) || codeOf(error) === 'SQLITE_CONSTRAINT_UNIQUE' || codeOf(error) === 'SQLITE_CONSTRAINT_PRIMARYKEY'),
  isRetryable: (error) => /database is locked|SQLITE_BUSY/.test(messageOf(error)),
  notNullColumn: (error) => /NOT NULL constraint failed: (\w+\.\w+)/.exec(messageOf(error))?.[1],
  json: (base, keys, as) => {
    // The element itself (a multi-valued simple attribute): json_each's value is already SQL
    // (text, a number, 1/0), and json_extract would read a string element as malformed JSON.
    if (base === 'element' && keys.length === 0) return as === 'number' ? sql`(case when e.type in ('integer', 'real') then e.value end)` : sql`e.value`;
    const source = base === 'element' ? sql`e.value` : documentColumn(base);
    const path = sql.lit(jsonPathSqlite(keys));
    const value = sql`json_extract(${source}, ${path})`;
    return as === 'number' ? sql`(case when json_type(${source}, ${path}) in ('integer', 'real') then ${value} end)` : value;
  },
  elements: (table, column, keys) => sql`json_each(${sql.ref(`${table}.${column}`)}, ${jsonPathSqlite(keys)}) as e`,
  elementIndex: () => sql`e.key`,
  // rc_lower is registered on every connection by sqlite-adapter.ts (SQLite's lower() is ASCII only).
  lower: (expr) => sql<string>`rc_lower(${expr})`,
  substringIndexed: false,
  ordered: (expr) => sql`${expr}`,
  // `>= ''` holds for every text: a range that makes the planner scan the column's index
  // (team_id, key) and test each key there, instead of walking the team's rows by another index
  // and reading every row's page.
  contains: (expr, value, indexed) =>
    indexed ? sql<SqlBool>`(${expr} >= '' and instr(${expr}, ${value}) > 0)` : sql<SqlBool>`instr(${expr}, ${value}) > 0`,
  // Every text starting with v lies in [v, prefixUpperBound(v)) of the binary order: a range of
  // an index on the expression ((team_id, user_name_key) for userName).
  startsWith: (expr, value) => sql<SqlBool>`(${range(expr, value, prefixUpperBound(value))} and substr(${expr}, 1, length(${value})) = ${value})`,
  endsWith: (expr, value, indexed) => {
    const exact = sql<SqlBool>`(length(${expr}) >= length(${value}) and substr(${expr}, length(${expr}) - length(${value}) + 1) = ${value})`;
    if (!indexed) return exact;
    const reversed = reverseCodePoints(value);
    return sql<SqlBool>`(${range(sql`rc_reverse(${expr})`, reversed, prefixUpperBound(reversed))} and ${exact})`;
  },
  // ORDER BY inside an aggregate: SQLite 3.44 and later.
  jsonRows: (items, orderBy) => sql`json_group_array(json_array(${sql.join([...items])}) order by ${sql.join([...orderBy])})`,
  mergeUserIds: (arms, limit) => sql<{ user_id: string }>`${sql.join([...arms], sql` union `)} order by 1 limit ${limit}`,
  createExpressionIndex: (name, table, columns, where) =>
    sql`create index if not exists ${sql.id(name)} on ${sql.table(table)} (${columns})${where ? sql` where ${where}` : sql``}`,
  dropExpressionIndex: (name) => sql`drop index if exists ${sql.id(name)}`,
  expressionIndexScope: (teamId) => sql`team_id = ${sql.lit(teamId)}`,
  indexStates: async (db, table) => (await indexNames(db, 'sqlite', table)).map((name) => ({ name, valid: true, building: false })),
};

export const postgresHooks: DialectHooks = {
  name: 'postgres',
  revocationNoticeSql: "select pg_notify('rollcall_revocations', $1)",
  writableCtes: true,
  rowLocks: true,
  feed: numberedByReaders,
  deadlineIn: 'session',
  // set_config(..., true) is SET LOCAL with a bound value: it ends with the transaction.
  // Sent with the transaction's next statement, in its round trip (pg-driver.ts).
  limitStatements: async (trx, ms) => {
    const query: TransactionSettingQuery = { ...sql`select set_config('statement_timeout', ${String(Math.trunc(ms))}, true)`.compile(trx), transactionSetting: true };
    await trx.getExecutor().executeQuery(query);
  },
  withinDeadline: () => {
    throw new Error('PostgreSQL interrupts statements itself (limitStatements)');
  },
  // 57014 query_canceled: statement_timeout (or a cancel request).
  isDeadline: (error) => codeOf(error) === '57014',
  sessionStatementTimeout: (ms) => (ms === undefined ? sql`reset statement_timeout` : sql`select set_config('statement_timeout', ${String(Math.trunc(ms))}, false)`),
  parseJson: (value) => (typeof value === 'string' ? JSON.parse(value) : (value as Record<string, unknown>)),
  toJson: (value) => JSON.stringify(value),
  // The feed's own key (events_pk) is never the request's fault: a clash there is the
  // database's (a restore gone wrong), a server error, not a 409.
  isUniqueViolation: (error) => codeOf(error) === '23505' && constraintOf(error) !== 'events_pk',
  // Serialization failures, deadlocks, and a prepared statement whose table a migration changed
  // (pg-statements.ts: it runs unnamed on the retry).
  isRetryable: (error) => codeOf(error) === '40001' || codeOf(error) === '40P01' || isStalePlan(error),
  notNullColumn: (error) => {
    if (codeOf(error) !== '23502') return undefined;
    const { table, column } = error as { table?: string; column?: string };
    return table && column ? `${table}.${column}` : undefined;
  },
  json: (base, keys, as) => {
    const source = base === 'element' ? sql`e.v` : documentColumn(base);
    const path = sql`${sql.lit(textArrayPostgres(keys))}::text[]`;
    const text = sql`(${source} #>> ${path})`;
    if (as === 'number') return sql`(case when jsonb_typeof(${source} #> ${path}) = 'number' then ${text}::numeric end)`;
    return as === 'bool' ? sql`(case ${text} when 'true' then 1 when 'false' then 0 end)` : text;
  },
  elements: (table, column, keys) =>
    sql`jsonb_array_elements(case when jsonb_typeof(${sql.ref(`${table}.${column}`)} #> ${sql.val(checkedKeys(keys))}::text[]) = 'array' then ${sql.ref(`${table}.${column}`)} #> ${sql.val(checkedKeys(keys))}::text[] else '[]'::jsonb end) with ordinality as e(v, i)`,
  elementIndex: () => sql`e.i`,
  // libc's lower() maps one character at a time and depends on the database's LC_CTYPE (ΟΔΟΣ ->
  // οδοσ, İ -> i; nothing beyond ASCII under "C"); ICU's root locale applies Unicode's full,
  // context-sensitive mapping as toLowerCase does (ΟΔΟΣ -> οδος, İ -> i̇), whatever the database.
  lower: (expr) => sql<string>`lower(${expr} collate "und-x-icu")`,
  substringIndexed: true,
  ordered: (expr) => sql`(${expr} collate "C")`,
  // LIKE (with `\\` escaping the wildcards) rather than strpos/left/right: pg_trgm GIN indexes
  // answer all three (migration 012); a prefix of the folded userName is also a range of its
  // "C"-collated B-tree (migration 014; PostgreSQL derives the range from the pattern for an index
  // whose collation is C), and a suffix of a folded key a prefix of its reverse(), indexed with
  // text_pattern_ops (trigrams common to many rows make GIN slow where a B-tree range is not).
  contains: (expr, value) => sql<SqlBool>`${expr} like ${`%${escapeLike(value)}%`}`,
  startsWith: (expr, value) => sql<SqlBool>`${expr} like ${`${escapeLike(value)}%`}`,
  endsWith: (expr, value, indexed) =>
    indexed ? sql<SqlBool>`reverse(${expr}) like ${`${escapeLike(reverseCodePoints(value))}%`}` : sql<SqlBool>`${expr} like ${`%${escapeLike(value)}`}`,
  jsonRows: (items, orderBy) => sql`coalesce(json_agg(json_build_array(${sql.join([...items])}) order by ${sql.join([...orderBy])}), '[]'::json)`,
  mergeUserIds: (arms, limit) =>
    sql<{ user_id: string }>`select distinct s.user_id from (${sql.join(
      arms.map((arm, i) => sql`(select distinct ${sql.raw(`a${i}`)}.user_id from (${arm}) ${sql.raw(`a${i}`)} order by 1 limit ${limit})`),
      sql` union all `,
    )}) s order by s.user_id limit ${limit}`,
  // CONCURRENTLY runs in no transaction block: the builder sends it alone on a pooled connection.
  createExpressionIndex: (name, table, columns, where) =>
    sql`create index concurrently if not exists ${sql.id(name)} on ${sql.table(table)} (${columns})${where ? sql` where ${where}` : sql``}`,
  dropExpressionIndex: (name) => sql`drop index concurrently if exists ${sql.id(name)}`,
  expressionIndexScope: () => undefined,
  async indexStates(db, table) {
    const rows = (await sql<{ name: string; valid: boolean; building: boolean }>`select c.relname as name, i.indisvalid as valid,
        exists (select 1 from pg_stat_progress_create_index p where p.index_relid = i.indexrelid) as building
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_class t on t.oid = i.indrelid join pg_namespace n on n.oid = t.relnamespace
      where n.nspname = current_schema() and t.relname = ${table}`.execute(db)).rows;
    return rows.map((r) => ({ name: r.name, valid: r.valid === true, building: r.building === true }));
  },
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

/** The names of the indexes on `table` (the connection's schema on PostgreSQL). */
export async function indexNames(db: QueryExecutorProvider, engine: EngineName, table: string): Promise<string[]> {
  const rows =
    engine === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = ${table}`.execute(db)).rows
      : (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = ${table}`.execute(db)).rows;
  return rows.map((r) => r.name);
}
