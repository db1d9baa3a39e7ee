/**
 * Evaluates a bound filter (bind.ts) in memory: against a whole resource representation, or
 * against one element of a multi-valued attribute (PATCH value filters such as
 * `emails[type eq "work"]`). It is also the oracle of the SQL compiler: to-sql.ts must return
 * exactly the resources this module accepts. Semantics: a multi-valued attribute matches when
 * any element does; an absent value fails every comparison except `ne`; case-insensitive
 * attributes compare after toLowerCase; ordering compares code points.
 */
import type { AttributeDef, ResourceTypeDef } from '../schema/types.ts';
import type { AttrPath, CompareNode, Filter } from './ast.ts';
import { targetOf } from './bind.ts';

type Json = Record<string, unknown>;

export const isCaseInsensitive = (leaf: AttributeDef): boolean =>
  !leaf.caseExact && (leaf.type === 'string' || leaf.type === 'reference');

export const foldCase = (text: string): string => text.toLowerCase();

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** RFC 7644 3.4.2.2 `pr`: non-null, not an empty string, array or object. */
export function isPresent(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

/** Compares by Unicode code point, as SQLite and PostgreSQL's "C" collation do on UTF-8. */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function compareScalar(leaf: AttributeDef, actual: unknown, node: Pick<CompareNode, 'op' | 'value'>): boolean {
  const { op, value } = node;
  if (leaf.type === 'boolean') {
    const eq = typeof actual === 'boolean' && actual === value;
    return op === 'ne' ? !eq : eq;
  }
  if (typeof actual !== 'string') return op === 'ne';
  const folded = isCaseInsensitive(leaf);
  const x = folded ? foldCase(actual) : actual;
  const v = folded ? foldCase(String(value)) : String(value);
  switch (op) {
    case 'eq':
      return x === v;
    case 'ne':
      return x !== v;
    case 'co':
      return x.includes(v);
    case 'sw':
      return x.startsWith(v);
    case 'ew':
      return x.endsWith(v);
    case 'gt':
      return compareCodePoints(x, v) > 0;
    case 'ge':
      return compareCodePoints(x, v) >= 0;
    case 'lt':
      return compareCodePoints(x, v) < 0;
    case 'le':
      return compareCodePoints(x, v) <= 0;
  }
}

function testScalar(leaf: AttributeDef, actual: unknown, node: Filter): boolean {
  if (node.kind === 'present') return isPresent(actual);
  if (node.kind === 'compare') return compareScalar(leaf, actual, node);
  throw new Error(`unexpected ${node.kind} node in a scalar test`);
}

/** Whether one element (an object of sub-attributes of `attr`) matches a bound value filter. */
export function matchesElement(attr: AttributeDef, filter: Filter, element: unknown): boolean {
  switch (filter.kind) {
    case 'and':
      return matchesElement(attr, filter.left, element) && matchesElement(attr, filter.right, element);
    case 'or':
      return matchesElement(attr, filter.left, element) || matchesElement(attr, filter.right, element);
    case 'not':
      return !matchesElement(attr, filter.filter, element);
    case 'compare':
    case 'present': {
      const sub = attr.subAttributes?.find((s) => s.name === filter.path.attr);
      if (!sub) throw new Error(`unbound sub-attribute ${filter.path.attr}`);
      return testScalar(sub, isObject(element) ? element[sub.name] : undefined, filter);
    }
    case 'valuePath':
      throw new Error('value filters cannot be nested');
  }
}

/** The elements a multi-valued (or single complex) attribute holds. */
function elementsOf(attr: AttributeDef, value: unknown): unknown[] {
  if (attr.multiValued) return Array.isArray(value) ? value : [];
  return isObject(value) ? [value] : [];
}

/** The value of a bound path's attribute in a representation (under its extension URN if any). */
function attributeValue(rt: ResourceTypeDef, filter: { readonly path: AttrPath }, resource: Json) {
  const target = targetOf(rt, filter.path);
  const container = target.extension !== undefined ? resource[target.extension] : resource;
  return { ...target, value: isObject(container) ? container[target.attr.name] : undefined };
}

/** Whether a full representation (with `id`, `meta`, `groups` or `members`) matches a bound filter. */
export function matches(rt: ResourceTypeDef, filter: Filter, resource: Json): boolean {
  switch (filter.kind) {
    case 'and':
      return matches(rt, filter.left, resource) && matches(rt, filter.right, resource);
    case 'or':
      return matches(rt, filter.left, resource) || matches(rt, filter.right, resource);
    case 'not':
      return !matches(rt, filter.filter, resource);
    case 'compare':
    case 'present': {
      const { attr, sub, value } = attributeValue(rt, filter, resource);
      if (attr.multiValued) {
        const elements = elementsOf(attr, value);
        if (!sub) return filter.kind === 'present' ? elements.length > 0 : false;
        return elements.some((e) => testScalar(sub, isObject(e) ? e[sub.name] : undefined, filter));
      }
      if (sub) return testScalar(sub, isObject(value) ? value[sub.name] : undefined, filter);
      return testScalar(attr, value, filter);
    }
    case 'valuePath': {
      const { attr, value } = attributeValue(rt, filter, resource);
      return elementsOf(attr, value).some((e) => matchesElement(attr, filter.filter, e));
    }
  }
}
