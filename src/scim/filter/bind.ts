/**
 * Checks a parsed filter (or a sortBy path) against a resource type's schema, once, and returns
 * it bound: a distinct tree (`BoundFilter`, `BoundSort`) whose leaves carry the attribute they
 * resolved to, so that nothing after this module resolves a name again. Aliases (the contract's
 * Group `display` and `value`) are replaced by what they stand for, a complex attribute compared
 * without a sub-attribute reads its `value` (RFC 7644 3.4.2.2, the `members eq "<id>"`
 * membership probe), literals are typed to the attribute (dateTime normalized, `eq null` read as
 * "not present"). Anything the lowering to storage (lower.ts) and the in-memory evaluator
 * (evaluate.ts) could not both answer is refused here with 400 `invalidFilter`, so those two
 * never disagree. It writes no SQL and knows nothing of storage.
 */
import { badRequest } from '../errors.ts';
import { commonAttributes } from '../schema/common.ts';
import { findAttribute, findSubAttribute, formatPath, resolvePath } from '../schema/registry.ts';
import type { AttributeDef, ResourceTypeDef } from '../schema/types.ts';
import type { AttrPath, CompareNode, CompareOp, Filter } from './ast.ts';

const invalid = (detail: string) => badRequest('invalidFilter', detail);

/** What a bound path points at: the attribute and, for complex ones, the sub-attribute. */
export interface FilterTarget {
  readonly attr: AttributeDef;
  readonly sub?: AttributeDef;
  /** The extension schema URN the attribute lives under, if any. */
  readonly extension?: string;
}

/** A literal typed to its attribute: text (strings, references, dateTimes), a number or a boolean. */
export type BoundLiteral = string | number | boolean;

/**
 * A filter bound to a schema. Leaves carry their target: on a whole path the attribute (and
 * sub-attribute); inside a value filter (`emails[type eq "work"]`) the outer attribute with the
 * sub-attribute named inside.
 */
export type BoundFilter =
  | { readonly kind: 'and' | 'or'; readonly left: BoundFilter; readonly right: BoundFilter }
  | { readonly kind: 'not'; readonly filter: BoundFilter }
  | { readonly kind: 'compare'; readonly target: FilterTarget; readonly op: CompareOp; readonly value: BoundLiteral }
  | { readonly kind: 'present'; readonly target: FilterTarget }
  | { readonly kind: 'valuePath'; readonly target: FilterTarget; readonly filter: BoundFilter };

/** A sortBy bound once (RFC 7644 3.4.2.3): its target, a complex attribute by its `value`. */
export interface BoundSort {
  readonly target: FilterTarget;
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
function bindLiteral(node: CompareNode, leaf: AttributeDef, text: string): BoundLiteral {
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
function bindTest(node: Filter & { kind: 'compare' | 'present' }, resolve: (p: AttrPath) => FilterTarget): BoundFilter {
  const text = formatPath(node.path);
  const target = withImplicitValue(resolve(node.path), text, node.kind === 'present');
  assertFilterable(target, text);
  if (node.kind === 'present') return Object.freeze({ kind: 'present' as const, target });
  if (node.value === null && (node.op === 'eq' || node.op === 'ne')) {
    // "x eq null" asks for an absent x; "x ne null" for a present one.
    const present = Object.freeze({ kind: 'present' as const, target });
    return node.op === 'ne' ? present : Object.freeze({ kind: 'not' as const, filter: present });
  }
  return Object.freeze({ kind: 'compare' as const, target, op: node.op, value: bindLiteral(node, leafOf(target), text) });
}

function bindWith(filter: Filter, resolve: (p: AttrPath) => FilterTarget, rt: ResourceTypeDef | undefined): BoundFilter {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return Object.freeze({ kind: filter.kind, left: bindWith(filter.left, resolve, rt), right: bindWith(filter.right, resolve, rt) });
    case 'not':
      return Object.freeze({ kind: 'not' as const, filter: bindWith(filter.filter, resolve, rt) });
    case 'compare':
    case 'present':
      return bindTest(filter, resolve);
    case 'valuePath': {
      const text = formatPath(filter.path);
      if (!rt) throw invalid('value filters cannot be nested');
      if (filter.path.sub !== undefined) throw invalid(`"${text}[...]": a value filter applies to an attribute, not a sub-attribute`);
      const outer = unalias(rt, targetOf(rt, filter.path));
      if (outer.attr.type !== 'complex') throw invalid(`"${text}" is not complex: it takes no value filter`);
      const inner = bindWith(filter.filter, (p) => subTarget(outer, p), undefined);
      return Object.freeze({ kind: 'valuePath' as const, target: outer, filter: inner });
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
export function bindFilter(rt: ResourceTypeDef, filter: Filter): BoundFilter {
  return bindWith(filter, (p) => unalias(rt, targetOf(rt, p)), rt);
}

/**
 * Binds a sortBy path (RFC 7644 3.4.2.3): aliases followed, a complex attribute by its `value`,
 * a multi-valued one by its primary (else first) element (lower.ts). Attributes that cannot be
 * ordered (complex without `value`, memberships, never-returned, meta's derived parts) are 400
 * `invalidValue`.
 */
export function bindSort(rt: ResourceTypeDef, path: AttrPath): BoundSort {
  const text = formatPath(path);
  const refused = () => badRequest('invalidValue', `cannot sort by "${text}"`);
  const resolved = unaliasSort(rt, targetOfSort(rt, path));
  let target = resolved;
  if (target.attr.type === 'complex' && !target.sub) {
    const value = findSubAttribute(target.attr, 'value');
    if (!value) throw refused();
    target = { ...target, sub: value };
  }
  const leaf = leafOf(target);
  const membership = target.attr.storage?.kind === 'members' || target.attr.storage?.kind === 'groups';
  if (leaf.type === 'complex' || membership || leaf.returned === 'never' || (target.attr.name === 'meta' && leaf.storage?.kind !== 'meta')) throw refused();
  return Object.freeze({ target });
}

function targetOfSort(rt: ResourceTypeDef, path: AttrPath): FilterTarget {
  const resolved = resolvePath(rt, path, 'invalidValue');
  return {
    attr: resolved.attr,
    ...(resolved.sub ? { sub: resolved.sub } : {}),
    ...(resolved.extension ? { extension: resolved.extension.id } : {}),
  };
}

function unaliasSort(rt: ResourceTypeDef, target: FilterTarget): FilterTarget {
  if (target.attr.aliasOf === undefined) return target;
  const real = findAttribute([...commonAttributes, ...rt.schema.attributes], target.attr.aliasOf);
  if (!real) throw badRequest('invalidValue', `unknown attribute "${target.attr.aliasOf}"`);
  return { attr: real };
}

/**
 * Binds a value filter of a PATCH path (`emails[type eq "work"]`) against the attribute it
 * selects elements of. Failures are 400 `invalidPath`.
 */
export function bindElementFilter(attr: AttributeDef, filter: Filter): BoundFilter {
  try {
    return bindWith(filter, (p) => subTarget({ attr }, p), undefined);
  } catch (error) {
    if (error instanceof Error && 'scimType' in error) throw badRequest('invalidPath', error.message);
    throw error;
  }
}
