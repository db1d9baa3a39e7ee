/**
 * Evaluates a bound filter (bind.ts) in memory: against a whole resource representation, or
 * against one element of a multi-valued attribute (PATCH value filters such as
 * `emails[type eq "work"]`). It is also the oracle of the SQL side (lower.ts, then storage): SQL must return
 * exactly the resources this module accepts. Semantics: a multi-valued attribute matches when
 * any element does; an absent value fails every comparison except `ne`; case-insensitive
 * attributes compare after toLowerCase; ordering compares code points.
 */
import type { AttributeDef } from '../schema/types.ts';
import type { BoundFilter, BoundLiteral, FilterTarget } from './bind.ts';
import type { CompareOp } from './ast.ts';
import { compareCodePoints } from '../../text.ts';

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

function compareScalar(leaf: AttributeDef, actual: unknown, node: { readonly op: CompareOp; readonly value: BoundLiteral }): boolean {
  const { op, value } = node;
  if (leaf.type === 'boolean') {
    const eq = typeof actual === 'boolean' && actual === value;
    return op === 'ne' ? !eq : eq;
  }
  if (leaf.type === 'integer' || leaf.type === 'decimal') {
    if (typeof actual !== 'number' || typeof value !== 'number') return op === 'ne';
    const d = actual - value;
    const holds = { eq: d === 0, ne: d !== 0, gt: d > 0, ge: d >= 0, lt: d < 0, le: d <= 0, co: false, sw: false, ew: false };
    return holds[op];
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

function testScalar(leaf: AttributeDef, actual: unknown, node: BoundFilter): boolean {
  if (node.kind === 'present') return isPresent(actual);
  if (node.kind === 'compare') return compareScalar(leaf, actual, node);
  throw new Error(`unexpected ${node.kind} node in a scalar test`);
}

/** Whether one element (an object of sub-attributes) matches a bound value filter. */
export function matchesElement(filter: BoundFilter, element: unknown): boolean {
  switch (filter.kind) {
    case 'and':
      return matchesElement(filter.left, element) && matchesElement(filter.right, element);
    case 'or':
      return matchesElement(filter.left, element) || matchesElement(filter.right, element);
    case 'not':
      return !matchesElement(filter.filter, element);
    case 'compare':
    case 'present': {
      const sub = filter.target.sub;
      if (!sub) throw new Error(`a value filter's test names no sub-attribute of ${filter.target.attr.name}`);
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

/** The value of a target's attribute in a representation (under its extension URN if any). */
function attributeValue(target: FilterTarget, resource: Json): unknown {
  const container = target.extension !== undefined ? resource[target.extension] : resource;
  return isObject(container) ? container[target.attr.name] : undefined;
}

/** Whether a full representation (with `id`, `meta`, `groups` or `members`) matches a bound filter. */
export function matches(filter: BoundFilter, resource: Json): boolean {
  switch (filter.kind) {
    case 'and':
      return matches(filter.left, resource) && matches(filter.right, resource);
    case 'or':
      return matches(filter.left, resource) || matches(filter.right, resource);
    case 'not':
      return !matches(filter.filter, resource);
    case 'compare':
    case 'present': {
      const { attr, sub } = filter.target;
      const value = attributeValue(filter.target, resource);
      if (attr.multiValued) {
        const elements = elementsOf(attr, value);
        if (!sub) return filter.kind === 'present' ? elements.length > 0 : attr.type !== 'complex' && elements.some((e) => testScalar(attr, e, filter));
        return elements.some((e) => testScalar(sub, isObject(e) ? e[sub.name] : undefined, filter));
      }
      if (sub) return testScalar(sub, isObject(value) ? value[sub.name] : undefined, filter);
      return testScalar(attr, value, filter);
    }
    case 'valuePath':
      return elementsOf(filter.target.attr, attributeValue(filter.target, resource)).some((e) => matchesElement(filter.filter, e));
  }
}
