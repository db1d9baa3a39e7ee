/**
 * Compiles storage predicates and sort keys (predicate.ts) into SQL over a resource table, through
 * the dialect hooks only (dialect.ts): it never asks which engine it runs on. It owns the table
 * aliases and the membership joins: the resource row is `r`, its membership rows `rm`, the
 * related user `ru` (of a group) or group `rg` (of a user), a JSON array element `e` (the
 * hooks' alias), a user's grants row `g`. Literals are always bound parameters; every test is two-valued (an absent value
 * fails it), so `not` is the complement, as the SCIM evaluator means it.
 */
import { sql } from 'kysely';
import type { Expression, RawBuilder, SqlBool } from 'kysely';
import type { DialectHooks, JsonBase } from './dialect.ts';
import type { Predicate, ReadAs, Scalar, OrderKey } from './predicate.ts';

/** The tables a predicate can be asked of. */
export type ResourceTable = 'users' | 'groups';

/** The resource row's alias in every list and search query. */
export const ROW = 'r';

interface Scope {
  readonly hooks: DialectHooks;
  readonly table: ResourceTable;
  /** Columns unqualified (an index definition) rather than of the row alias `r`. */
  readonly unqualified?: boolean;
}

const documentOf = (scope: Scope): JsonBase => (scope.unqualified ? { column: 'data' } : { table: ROW, column: 'data' });
const columnOf = (scope: Scope, column: string) => sql.ref(scope.unqualified ? column : `${ROW}.${column}`);

/** The related row's columns: a group's member user, or a user's group. */
const RELATED = {
  groups: { id: 'rm.user_id', name: 'ru.user_name', foldedName: 'ru.user_name_key' },
  users: { id: 'rm.group_id', name: 'rg.display_name', foldedName: 'rg.display_name_key' },
} as const;

function read(scope: Scope, scalar: Scalar, as: ReadAs): RawBuilder<unknown> {
  const { hooks } = scope;
  switch (scalar.at) {
    case 'column':
      return sql`${columnOf(scope, scalar.column)}`;
    case 'document':
      return hooks.json(documentOf(scope), scalar.keys, as === 'flag' ? 'bool' : as);
    case 'element':
      return hooks.json('element', scalar.keys, as === 'flag' ? 'bool' : as);
    case 'related':
      return sql`${sql.ref(scalar.field === 'id' ? RELATED[scope.table].id : RELATED[scope.table].name)}`;
    case 'grant':
      // A row stores an element without a type as '': absent, as the document has it.
      return scalar.field === 'value' ? sql`${sql.ref('g.value')}` : sql`nullif(${sql.ref('g.type')}, '')`;
  }
}

/** The scalar's text case-folded: its folded column when it has one, else folded in SQL. */
function folded(scope: Scope, scalar: Scalar): RawBuilder<unknown> {
  if (scalar.at === 'column' && scalar.folded !== undefined) return sql`${columnOf(scope, scalar.folded)}`;
  if (scalar.at === 'related' && scalar.field === 'name') return sql`${sql.ref(RELATED[scope.table].foldedName)}`;
  return scope.hooks.lower(read(scope, scalar, 'text'));
}

function compile(scope: Scope, p: Predicate): RawBuilder<SqlBool> {
  const { hooks } = scope;
  switch (p.kind) {
    case 'always':
      return sql<SqlBool>`1 = 1`;
    case 'and':
      return sql<SqlBool>`(${compile(scope, p.left)} and ${compile(scope, p.right)})`;
    case 'or':
      return sql<SqlBool>`(${compile(scope, p.left)} or ${compile(scope, p.right)})`;
    case 'not':
      return sql<SqlBool>`not ${compile(scope, p.predicate)}`;
    case 'known':
      return sql<SqlBool>`(${read(scope, p.scalar, p.as)} is not null)`;
    case 'flag': {
      const x = read(scope, p.scalar, 'flag');
      // A column's flag compares with a literal: both engines choose a partial index of its
      // value (repos/list/indexed.ts PARTIAL_INDEXED_FLAGS) only when the statement says the value.
      const value = p.scalar.at === 'column' ? sql.lit(p.value ? 1 : 0) : sql`${p.value ? 1 : 0}`;
      return sql<SqlBool>`(${x} is not null and ${x} = ${value})`;
    }
    case 'number': {
      const x = read(scope, p.scalar, 'number');
      return sql<SqlBool>`(${x} is not null and ${x} ${sql.raw(NUMBER_OPS[p.op])} ${p.value})`;
    }
    case 'text': {
      const x = p.folded ? folded(scope, p.scalar) : read(scope, p.scalar, 'text');
      const v = p.value;
      const known = sql`${x} is not null`;
      switch (p.op) {
        case 'eq':
          return sql<SqlBool>`(${known} and ${x} = ${v})`;
        case 'co':
          // A folded column (userName, a group's displayName) has an index after the team (migration 006).
          return sql<SqlBool>`(${known} and ${hooks.contains(x, v, p.folded && p.scalar.at === 'column' && p.scalar.folded !== undefined)})`;
        case 'sw':
          return sql<SqlBool>`(${known} and ${hooks.startsWith(x, v)})`;
        case 'ew':
          // A folded column (userName, a group's displayName) has a reversed-text index (migration 012).
          return sql<SqlBool>`(${known} and ${hooks.endsWith(x, v, p.folded && p.scalar.at === 'column' && p.scalar.folded !== undefined)})`;
        case 'gt':
        case 'ge':
        case 'lt':
        case 'le':
          return sql<SqlBool>`(${known} and ${hooks.ordered(x)} ${sql.raw(NUMBER_OPS[p.op])} ${hooks.ordered(sql.val(v))})`;
      }
      throw new Error('unreachable');
    }
    case 'anyElement':
      return sql<SqlBool>`exists (select 1 from ${hooks.elements(ROW, 'data', p.array)} where ${compile(scope, p.where)})`;
    case 'related': {
      if (scope.table === 'groups') {
        // Deleted users are never members anyone sees; hidden deactivated ones when asked.
        const users = p.users === 'active' ? sql`and ru.active = 1 and ru.deleted_at is null` : sql`and ru.deleted_at is null`;
        return sql<SqlBool>`exists (select 1 from group_members rm join users ru on ru.id = rm.user_id where rm.group_id = ${sql.ref(`${ROW}.id`)} ${users} and ${compile(scope, p.where)})`;
      }
      return sql<SqlBool>`exists (select 1 from group_members rm join groups rg on rg.id = rm.group_id where rm.user_id = ${sql.ref(`${ROW}.id`)} and ${compile(scope, p.where)})`;
    }
    case 'granted': {
      if (scope.table !== 'users') throw new Error('only users hold grants');
      // Uncorrelated: the engine reads the entry's rows from the key (team, kind, value, ...) and
      // looks their users up, rather than testing every listed user.
      return sql<SqlBool>`(${sql.ref(`${ROW}.id`)} in (select g.user_id from user_grants g where g.team_id = ${p.team} and g.kind = ${sql.lit(p.grant)} and ${compile(scope, p.where)}))`;
    }
    case 'deadline':
      return hooks.withinDeadline(sql.val(p.deadline));
    case 'holds':
      return holds(scope, p);
  }
}

/**
 * An active user holding an entry: a direct grant, probed by the user (`user_grants_user`) or by
 * the entry's key (`user_grants_pk`), or a mapped group of the entry it belongs to
 * (`access_mappings_pk`, then `group_members_pk` (group_id, user_id)).
 */
function holds(scope: Scope, p: Predicate & { kind: 'holds' }): RawBuilder<SqlBool> {
  if (scope.table !== 'users') throw new Error('holds applies to users only');
  const user = columnOf(scope, 'id');
  const team = columnOf(scope, 'team_id');
  const directType = p.directType !== undefined ? sql`and hg.type = ${p.directType}` : sql``;
  const mappedType = p.mappedTypeKey !== undefined ? sql`and ham.type_key = ${p.mappedTypeKey}` : sql``;
  return sql<SqlBool>`(${columnOf(scope, 'active')} = 1 and (exists (select 1 from user_grants hg where hg.team_id = ${team} and hg.kind = ${p.grant} and hg.value = ${p.value} ${directType} and hg.user_id = ${user})
    or exists (select 1 from access_mappings ham join group_members hgm on hgm.group_id = ham.group_id where ham.team_id = ${team} and ham.kind = ${p.grant} and ham.value = ${p.value} ${mappedType} and hgm.user_id = ${user})))`;
}

const NUMBER_OPS = { eq: '=', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;

/** The WHERE condition of `predicate` over `table` (aliased `r`). */
export function predicateSql(hooks: DialectHooks, table: ResourceTable, predicate: Predicate): Expression<SqlBool> {
  return compile({ hooks, table }, predicate);
}

/** How a sort key's scalar orders: booleans as 1/0, numbers as numbers, text by code point (folded or not). */
function orderedValue(scope: Scope, scalar: Scalar, as: ReadAs, fold: boolean): RawBuilder<unknown> {
  if (as !== 'text') return read(scope, scalar, as);
  return scope.hooks.ordered(fold ? folded(scope, scalar) : read(scope, scalar, 'text'));
}

/** The ORDER BY expression of a sort key over `table` (aliased `r`); NULL when absent. */
export function sortKeySql(hooks: DialectHooks, table: ResourceTable, key: OrderKey): Expression<unknown> {
  const scope = { hooks, table };
  if (key.kind === 'scalar') return orderedValue(scope, key.scalar, key.as, key.folded);
  const value = orderedValue(scope, key.scalar, key.as, key.folded);
  const preference = key.preferred ? sql`coalesce(${hooks.json('element', key.preferred, 'bool')}, 0) desc, ` : sql``;
  return sql`(select ${value} from ${hooks.elements(ROW, 'data', key.array)} order by ${preference}${hooks.elementIndex()} limit 1)`;
}

/**
 * The expression a text test of `key` compares (its folded form when `key.folded`), written
 * unqualified for an index definition: the very expression `predicateSql` writes for an `eq` on
 * that scalar, so that an expression index over it answers the filter (extension-indexes.ts).
 */
export function indexedExpressionSql(hooks: DialectHooks, table: ResourceTable, key: OrderKey & { kind: 'scalar' }): RawBuilder<unknown> {
  const scope: Scope = { hooks, table, unqualified: true };
  return key.folded ? folded(scope, key.scalar) : read(scope, key.scalar, key.as);
}
