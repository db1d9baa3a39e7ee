/**
 * Compiles a bound filter (bind.ts) into a Kysely boolean expression over the resource's table,
 * and a sortBy path into an ordering expression. Indexed columns serve the attributes the
 * schema maps to them (userName through its lower-cased key); everything else is read from the
 * JSON document through the dialect hooks; multi-valued attributes and memberships become
 * EXISTS subqueries. Every comparison is two-valued (an absent attribute compares false, never
 * NULL), so `not (...)` means exactly what evaluate.ts means by it: the property tests hold the
 * two to the same answers on every engine. Literals are always bound parameters.
 */
import { sql } from 'kysely';
import type { Expression, RawBuilder, SqlBool } from 'kysely';
import type { DialectHooks, JsonBase } from '../../storage/dialect.ts';
import { badRequest } from '../errors.ts';
import { resolvePath } from '../schema/registry.ts';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.ts';
import type { AttrPath, CompareNode, Filter } from './ast.ts';
import { leafOf, targetOf } from './bind.ts';
import type { FilterTarget } from './bind.ts';
import { foldCase, isCaseInsensitive } from './evaluate.ts';

export interface SqlScope {
  readonly hooks: DialectHooks;
  /** Alias of the resource's table in the query (`u` for users, `g` for groups). */
  readonly table: string;
  /** Group filters on `members`: whether deactivated users count (hidden teams: they do not). */
  readonly onlyActiveMembers?: boolean;
}

/** How SQL reads one scalar: as text, folded text, or a 1/0 boolean. */
interface Accessor {
  readonly text: Expression<unknown>;
  readonly folded: Expression<unknown>;
  readonly bool: Expression<unknown>;
}

const TRUE = sql<SqlBool>`1 = 1`;

function columnAccessor(scope: SqlScope, column: string, lowerColumn?: string): Accessor {
  const ref = sql.ref(`${scope.table}.${column}`);
  return { text: ref, bool: ref, folded: lowerColumn ? sql.ref(`${scope.table}.${lowerColumn}`) : scope.hooks.lower(ref) };
}

function jsonAccessor(hooks: DialectHooks, base: JsonBase, keys: readonly string[]): Accessor {
  const text = hooks.json(base, keys, 'text');
  return { text, folded: hooks.lower(text), bool: hooks.json(base, keys, 'bool') };
}

/** One comparison of a scalar, two-valued: false whenever the scalar is absent. */
function compareScalar(hooks: DialectHooks, leaf: AttributeDef, at: Accessor, node: Pick<CompareNode, 'op' | 'value'>): RawBuilder<SqlBool> {
  const { op, value } = node;
  if (leaf.type === 'boolean') {
    const eq = sql<SqlBool>`(${at.bool} is not null and ${at.bool} = ${value === true ? 1 : 0})`;
    return op === 'ne' ? sql<SqlBool>`not ${eq}` : eq;
  }
  const folded = isCaseInsensitive(leaf);
  const x = folded ? at.folded : at.text;
  const v = folded ? foldCase(String(value)) : String(value);
  const known = sql`${x} is not null`;
  switch (op) {
    case 'eq':
      return sql<SqlBool>`(${known} and ${x} = ${v})`;
    case 'ne':
      return sql<SqlBool>`not (${known} and ${x} = ${v})`;
    case 'co':
      return sql<SqlBool>`(${known} and ${hooks.contains(x, v)})`;
    case 'sw':
      return sql<SqlBool>`(${known} and ${hooks.startsWith(x, v)})`;
    case 'ew':
      return sql<SqlBool>`(${known} and ${hooks.endsWith(x, v)})`;
    case 'gt':
      return sql<SqlBool>`(${known} and ${hooks.ordered(x)} > ${hooks.ordered(sql.val(v))})`;
    case 'ge':
      return sql<SqlBool>`(${known} and ${hooks.ordered(x)} >= ${hooks.ordered(sql.val(v))})`;
    case 'lt':
      return sql<SqlBool>`(${known} and ${hooks.ordered(x)} < ${hooks.ordered(sql.val(v))})`;
    case 'le':
      return sql<SqlBool>`(${known} and ${hooks.ordered(x)} <= ${hooks.ordered(sql.val(v))})`;
  }
}

/** A test (compare or present) of one scalar. */
function testScalar(hooks: DialectHooks, leaf: AttributeDef, at: Accessor, node: Filter): RawBuilder<SqlBool> {
  if (node.kind === 'present') return sql<SqlBool>`(${leaf.type === 'boolean' ? at.bool : at.text} is not null)`;
  if (node.kind === 'compare') return compareScalar(hooks, leaf, at, node);
  throw new Error(`unexpected ${node.kind} node in a scalar test`);
}

/** Compiles `filter` where every path is a sub-attribute of `attr`, read by `accessorOf`. */
function compileElement(
  filter: Filter,
  attr: AttributeDef,
  hooks: DialectHooks,
  accessorOf: (sub: AttributeDef) => Accessor,
): RawBuilder<SqlBool> {
  switch (filter.kind) {
    case 'and':
      return sql<SqlBool>`(${compileElement(filter.left, attr, hooks, accessorOf)} and ${compileElement(filter.right, attr, hooks, accessorOf)})`;
    case 'or':
      return sql<SqlBool>`(${compileElement(filter.left, attr, hooks, accessorOf)} or ${compileElement(filter.right, attr, hooks, accessorOf)})`;
    case 'not':
      return sql<SqlBool>`not ${compileElement(filter.filter, attr, hooks, accessorOf)}`;
    case 'compare':
    case 'present': {
      const sub = attr.subAttributes?.find((s) => s.name === filter.path.attr);
      if (!sub) throw new Error(`unbound sub-attribute ${filter.path.attr}`);
      return testScalar(hooks, sub, accessorOf(sub), filter);
    }
    case 'valuePath':
      throw new Error('value filters cannot be nested');
  }
}

/** EXISTS over the membership rows of the current group (members) or user (groups). */
function membership(scope: SqlScope, attr: AttributeDef, where: (accessorOf: (sub: AttributeDef) => Accessor) => RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  const t = scope.table;
  if (attr.storage?.kind === 'members') {
    const accessorOf = (sub: AttributeDef): Accessor =>
      sub.name === 'display'
        ? { text: sql.ref('mu.user_name'), folded: sql.ref('mu.user_name_key'), bool: sql.ref('mu.user_name') }
        : { text: sql.ref('m.user_id'), folded: scope.hooks.lower(sql.ref('m.user_id')), bool: sql.ref('m.user_id') };
    // Members the response would not list (hidden deactivated, deleted) match nothing either.
    const active = scope.onlyActiveMembers ? sql`and mu.active = 1 and mu.deleted_at is null` : sql`and mu.deleted_at is null`;
    return sql<SqlBool>`exists (select 1 from group_members m join users mu on mu.id = m.user_id where m.group_id = ${sql.ref(`${t}.id`)} ${active} and ${where(accessorOf)})`;
  }
  const accessorOf = (sub: AttributeDef): Accessor =>
    sub.name === 'display'
      ? { text: sql.ref('gg.display_name'), folded: sql.ref('gg.display_name_key'), bool: sql.ref('gg.display_name') }
      : { text: sql.ref('gm.group_id'), folded: scope.hooks.lower(sql.ref('gm.group_id')), bool: sql.ref('gm.group_id') };
  return sql<SqlBool>`exists (select 1 from group_members gm join groups gg on gg.id = gm.group_id where gm.user_id = ${sql.ref(`${t}.id`)} and ${where(accessorOf)})`;
}

/** The JSON keys of an attribute inside the document: `[extension URN?, attribute]`. */
const docKeys = (target: FilterTarget): string[] =>
  target.extension !== undefined ? [target.extension, target.attr.name] : [target.attr.name];

/** Compiles a test on a whole path (not inside a value filter). */
function compileTest(rt: ResourceTypeDef, node: Filter & { kind: 'compare' | 'present' }, scope: SqlScope): RawBuilder<SqlBool> {
  const target = targetOf(rt, node.path);
  const { attr, sub } = target;
  const { hooks } = scope;
  const storage = (sub ?? attr).storage;
  if (storage?.kind === 'id') return testScalar(hooks, leafOf(target), columnAccessor(scope, 'id'), node);
  if (storage?.kind === 'column') return testScalar(hooks, leafOf(target), columnAccessor(scope, storage.column, storage.lowerColumn), node);
  if (storage?.kind === 'meta') return testScalar(hooks, leafOf(target), columnAccessor(scope, storage.column), node);
  if (attr.storage?.kind === 'members' || attr.storage?.kind === 'groups') {
    return membership(scope, attr, (accessorOf) => (sub ? testScalar(hooks, sub, accessorOf(sub), node) : TRUE));
  }
  const base = { table: scope.table, column: 'data' };
  if (attr.multiValued) {
    const cond = sub ? testScalar(hooks, sub, jsonAccessor(hooks, 'element', [sub.name]), node) : TRUE;
    return sql<SqlBool>`exists (select 1 from ${hooks.elements(scope.table, 'data', docKeys(target))} where ${cond})`;
  }
  const keys = sub ? [...docKeys(target), sub.name] : docKeys(target);
  return testScalar(hooks, leafOf(target), jsonAccessor(hooks, base, keys), node);
}

function compile(rt: ResourceTypeDef, filter: Filter, scope: SqlScope): RawBuilder<SqlBool> {
  switch (filter.kind) {
    case 'and':
      return sql<SqlBool>`(${compile(rt, filter.left, scope)} and ${compile(rt, filter.right, scope)})`;
    case 'or':
      return sql<SqlBool>`(${compile(rt, filter.left, scope)} or ${compile(rt, filter.right, scope)})`;
    case 'not':
      return sql<SqlBool>`not ${compile(rt, filter.filter, scope)}`;
    case 'compare':
    case 'present':
      return compileTest(rt, filter, scope);
    case 'valuePath': {
      const target = targetOf(rt, filter.path);
      const { attr } = target;
      const { hooks } = scope;
      if (attr.storage?.kind === 'members' || attr.storage?.kind === 'groups') {
        return membership(scope, attr, (accessorOf) => compileElement(filter.filter, attr, hooks, accessorOf));
      }
      if (attr.multiValued) {
        const cond = compileElement(filter.filter, attr, hooks, (sub) => jsonAccessor(hooks, 'element', [sub.name]));
        return sql<SqlBool>`exists (select 1 from ${hooks.elements(scope.table, 'data', docKeys(target))} where ${cond})`;
      }
      // A single-valued complex attribute (Entra's manager[value eq "..."]) is one element.
      const base = { table: scope.table, column: 'data' };
      const present = sql`${hooks.json(base, docKeys(target), 'text')} is not null`;
      const cond = compileElement(filter.filter, attr, hooks, (sub) => jsonAccessor(hooks, base, [...docKeys(target), sub.name]));
      return sql<SqlBool>`(${present} and ${cond})`;
    }
  }
}

/** The WHERE condition for a bound filter. */
export function filterToSql(rt: ResourceTypeDef, filter: Filter, scope: SqlScope): Expression<SqlBool> {
  return compile(rt, filter, scope);
}

/**
 * The ORDER BY expression for `sortBy` (RFC 7644 3.4.2.3): case-insensitive attributes sort by
 * their folded text; a multi-valued attribute sorts by its primary (else first) element.
 */
export function sortExpression(rt: ResourceTypeDef, path: AttrPath, scope: SqlScope): Expression<unknown> {
  const resolved = resolvePath(rt, path, 'invalidValue');
  const attr = resolved.attr.aliasOf !== undefined ? targetOf(rt, { kind: 'attrPath', attr: resolved.attr.aliasOf }).attr : resolved.attr;
  let sub = resolved.sub;
  if (attr.type === 'complex' && !sub) sub = attr.subAttributes?.find((s) => s.name === 'value');
  const leaf = sub ?? attr;
  if (!leaf || leaf.type === 'complex' || attr.storage?.kind === 'members' || attr.storage?.kind === 'groups' || leaf.returned === 'never' || (attr.name === 'meta' && leaf.storage?.kind !== 'meta')) {
    throw badRequest('invalidValue', `cannot sort by "${path.attr}${path.sub ? `.${path.sub}` : ''}"`);
  }
  const { hooks } = scope;
  const target: FilterTarget = { attr, ...(sub ? { sub } : {}), ...(resolved.extension ? { extension: resolved.extension.id } : {}) };
  const pick = (at: Accessor) => (leaf.type === 'boolean' ? at.bool : hooks.ordered(isCaseInsensitive(leaf) ? at.folded : at.text));
  const storage = leaf.storage;
  if (storage?.kind === 'id') return pick(columnAccessor(scope, 'id'));
  if (storage?.kind === 'column') return pick(columnAccessor(scope, storage.column, storage.lowerColumn));
  if (storage?.kind === 'meta') return pick(columnAccessor(scope, storage.column));
  if (attr.multiValued && sub) {
    const value = pick(jsonAccessor(hooks, 'element', [sub.name]));
    const primary = hooks.json('element', ['primary'], 'bool');
    return sql`(select ${value} from ${hooks.elements(scope.table, 'data', docKeys(target))} order by coalesce(${primary}, 0) desc, ${hooks.elementIndex()} limit 1)`;
  }
  const keys = sub ? [...docKeys(target), sub.name] : docKeys(target);
  return pick(jsonAccessor(hooks, { table: scope.table, column: 'data' }, keys));
}
