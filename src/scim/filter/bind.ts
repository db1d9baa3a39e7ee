/**
 * Checks a parsed filter against a resource type's schema and returns it in canonical form:
 * attribute names in their schema spelling, extension paths under their schema URN, aliases
 * (the contract's Group `display` and `value`) replaced by what they stand for, a complex
 * attribute compared without a sub-attribute read as its `value` (RFC 7644 3.4.2.2, the
 * `members eq "<id>"` membership probe), literals typed to the attribute (dateTime normalized,
 * `eq null` read as "not present"). Anything the SQL compiler and the in-memory evaluator could
 * not both answer is refused here with 400 `invalidFilter`, so those two never disagree.
 */
import { badRequest } from '../errors.ts';
import { commonAttributes } from '../schema/common.ts';
import { findAttribute, findSubAttribute, formatPath, resolvePath } from '../schema/registry.ts';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.ts';
import type { AttrPath, CompareNode, Filter, Literal } from './ast.ts';

const invalid = (detail: string) => badRequest('invalidFilter', detail);

/** What a bound path points at: the attribute and, for complex ones, the sub-attribute. */
export interface FilterTarget {
  readonly attr: AttributeDef;
  readonly sub?: AttributeDef;
  /** The extension schema URN the attribute lives under, if any. */
  readonly extension?: string;
}

/** The leaf definition whose type and caseExact decide a comparison. */
export const leafOf = (target: FilterTarget): AttributeDef => target.sub ?? target.attr;

/** Resolves a canonical (already bound) path; bound paths always resolve. */
export function targetOf(rt: ResourceTypeDef, path: AttrPath): FilterTarget {
  const resolved = resolvePath(rt, path, 'invalidFilter');
  return {
    attr: resolved.attr,
    ...(resolved.sub ? { sub: resolved.sub } : {}),
    ...(resolved.extension ? { extension: resolved.extension.id } : {}),
  };
}

/** Sub-attributes of the membership views that filters may use (both are columns of a join). */
const MEMBERSHIP_SUBS = new Set(['value', 'display']);

/** The bound path: whole (`emails.value`), or inside a value filter relative to it (`value`). */
function canonicalPath(target: FilterTarget, relative: boolean): AttrPath {
  if (relative && target.sub) return Object.freeze({ kind: 'attrPath' as const, attr: target.sub.name });
  return Object.freeze({
    kind: 'attrPath' as const,
    ...(target.extension !== undefined ? { uri: target.extension } : {}),
    attr: target.attr.name,
    ...(target.sub ? { sub: target.sub.name } : {}),
  });
}

/** Whether SQL can reach the attribute: meta's derived parts and never-returned ones cannot. */
function assertFilterable(target: FilterTarget, text: string): void {
  const leaf = leafOf(target);
  if (leaf.returned === 'never') throw invalid(`"${text}" cannot be filtered on`);
  if (target.attr.name === 'meta' && leaf.storage?.kind !== 'meta') throw invalid(`"${text}" cannot be filtered on`);
  const membership = target.attr.storage?.kind === 'members' || target.attr.storage?.kind === 'groups';
  if (membership && target.sub && !MEMBERSHIP_SUBS.has(target.sub.name)) {
    throw invalid(`"${text}" cannot be filtered on; use ${target.attr.name}.value or ${target.attr.name}.display`);
  }
}

/** Follows an alias (Group `display` -> displayName, `value` -> id) to the stored attribute. */
function unalias(rt: ResourceTypeDef, target: FilterTarget): FilterTarget {
  const aliasOf = target.attr.aliasOf;
  if (aliasOf === undefined) return target;
  const real = findAttribute([...commonAttributes, ...rt.schema.attributes], aliasOf);
  if (!real) throw invalid(`unknown attribute "${aliasOf}"`);
  return { attr: real };
}

/** A complex attribute compared as a whole means its `value` (RFC 7644 3.4.2.2). */
function withImplicitValue(target: FilterTarget, text: string, present: boolean): FilterTarget {
  if (target.attr.type !== 'complex' || target.sub) return target;
  if (present) return target;
  const value = findSubAttribute(target.attr, 'value');
  if (!value) throw invalid(`"${text}" is complex: compare one of its sub-attributes`);
  return { ...target, sub: value };
}

/** Types the literal to the attribute it is compared with; refuses what makes no sense. */
function bindLiteral(node: CompareNode, leaf: AttributeDef, text: string): Literal {
  const { op, value } = node;
  if (value === null) throw invalid(`"${text} ${op} null": only eq and ne compare with null`);
  switch (leaf.type) {
    case 'boolean':
      if (op !== 'eq' && op !== 'ne') throw invalid(`"${text}" is a boolean: only eq, ne and pr apply`);
      if (typeof value !== 'boolean') throw invalid(`"${text}" is a boolean: compare it with true or false`);
      return value;
    case 'dateTime': {
      if (op === 'co' || op === 'sw' || op === 'ew') throw invalid(`"${text}" is a dateTime: ${op} does not apply`);
      const ms = typeof value === 'string' ? Date.parse(value) : NaN;
      if (!/^\d{4}-\d\d-\d\d/.test(String(value)) || Number.isNaN(ms)) throw invalid(`"${text}" is a dateTime: compare it with an ISO 8601 timestamp`);
      return new Date(ms).toISOString();
    }
    case 'integer':
    case 'decimal':
      if (typeof value !== 'number') throw invalid(`"${text}" is a number`);
      if (op === 'co' || op === 'sw' || op === 'ew') throw invalid(`"${text}" is a number: ${op} does not apply`);
      return value;
    default:
      if (typeof value === 'boolean') throw invalid(`"${text}" is a string: compare it with a quoted value`);
      return String(value);
  }
}

/** Binds a comparison or presence test whose path is resolved by `resolve`. */
function bindTest(node: Filter & { kind: 'compare' | 'present' }, resolve: (p: AttrPath) => FilterTarget, relative: boolean): Filter {
  const text = formatPath(node.path);
  const target = withImplicitValue(resolve(node.path), text, node.kind === 'present');
  assertFilterable(target, text);
  const path = canonicalPath(target, relative);
  if (node.kind === 'present') return Object.freeze({ kind: 'present' as const, path });
  if (node.value === null && (node.op === 'eq' || node.op === 'ne')) {
    // "x eq null" asks for an absent x; "x ne null" for a present one.
    const present = Object.freeze({ kind: 'present' as const, path });
    return node.op === 'ne' ? present : Object.freeze({ kind: 'not' as const, filter: present });
  }
  return Object.freeze({ kind: 'compare' as const, path, op: node.op, value: bindLiteral(node, leafOf(target), text) });
}

function bindWith(filter: Filter, resolve: (p: AttrPath) => FilterTarget, rt: ResourceTypeDef | undefined): Filter {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return Object.freeze({ kind: filter.kind, left: bindWith(filter.left, resolve, rt), right: bindWith(filter.right, resolve, rt) });
    case 'not':
      return Object.freeze({ kind: 'not' as const, filter: bindWith(filter.filter, resolve, rt) });
    case 'compare':
    case 'present':
      return bindTest(filter, resolve, rt === undefined);
    case 'valuePath': {
      const text = formatPath(filter.path);
      if (!rt) throw invalid('value filters cannot be nested');
      if (filter.path.sub !== undefined) throw invalid(`"${text}[...]": a value filter applies to an attribute, not a sub-attribute`);
      const outer = unalias(rt, targetOf(rt, filter.path));
      if (outer.attr.type !== 'complex') throw invalid(`"${text}" is not complex: it takes no value filter`);
      const inner = bindWith(filter.filter, (p) => subTarget(outer, p), undefined);
      return Object.freeze({ kind: 'valuePath' as const, path: canonicalPath(outer, false), filter: inner });
    }
  }
}

/** Inside `attr[...]`, names are sub-attributes of `attr`. */
function subTarget(outer: FilterTarget, path: AttrPath): FilterTarget {
  const text = formatPath(path);
  if (path.uri !== undefined || path.sub !== undefined) throw invalid(`"${text}": inside a value filter, name a sub-attribute of ${outer.attr.name}`);
  const sub = findSubAttribute(outer.attr, path.attr);
  if (!sub) throw invalid(`"${text}" is not a sub-attribute of ${outer.attr.name}`);
  return { ...outer, sub };
}

/** Checks `filter` against `rt` and returns its canonical form; failures are 400 invalidFilter. */
export function bindFilter(rt: ResourceTypeDef, filter: Filter): Filter {
  return bindWith(filter, (p) => unalias(rt, targetOf(rt, p)), rt);
}

/**
 * Binds a value filter of a PATCH path (`emails[type eq "work"]`) against the attribute it
 * selects elements of. Failures are 400 `invalidPath`.
 */
export function bindElementFilter(attr: AttributeDef, filter: Filter): Filter {
  try {
    return bindWith(filter, (p) => subTarget({ attr }, p), undefined);
  } catch (error) {
    if (error instanceof Error && 'scimType' in error) throw badRequest('invalidPath', error.message);
    throw error;
  }
}
