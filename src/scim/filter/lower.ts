/**
 * Lowers a bound filter or sort (bind.ts) into a storage predicate or sort key
 * (src/storage/predicate.ts): the SCIM side's last word on a query. Every SCIM decision is made
 * here and nowhere below: which attributes live in an indexed column (the schema's `storage`
 * mapping) and which in the JSON document (extensions under their URN), case-exactness (RFC
 * 7643 2.1: case-insensitive attributes compare folded), multi-valued semantics (RFC 7644
 * 3.4.2.2: any element), `ne` as the complement of `eq`, memberships (a group's members, a
 * user's groups; which users a team sees), a catalog team's roles and entitlements read from
 * their grants rows where those answer alike, a multi-valued sort by its primary element. It writes
 * no SQL and imports nothing of Kysely or the dialect: storage compiles what it returns.
 */
import type { Predicate, ReadAs, RelatedUsers, Scalar, OrderKey } from '../../storage/predicate.ts';
import type { SchemaDef } from '../schema/types.ts';
import { ALWAYS } from '../../storage/predicate.ts';
import type { AttributeDef } from '../schema/types.ts';
import type { BoundFilter, BoundSort, FilterTarget } from './bind.ts';
import { leafOf } from './bind.ts';
import { foldCase, isCaseInsensitive } from './evaluate.ts';

export interface LowerOptions {
  /** Which users a team sees among a group's members (hidden deactivated users count for nothing). */
  readonly members: RelatedUsers;
  /** The team listed: with it, a catalog team's roles and entitlements are read from their grants rows. */
  readonly team?: string;
}

/** How storage reads a value of `leaf`. */
const readAs = (leaf: AttributeDef): ReadAs =>
  leaf.type === 'boolean' ? 'flag' : leaf.type === 'integer' || leaf.type === 'decimal' ? 'number' : 'text';

/** The JSON keys of an attribute inside the document: `[extension URN?, attribute]`. */
const docKeys = (target: FilterTarget): string[] =>
  target.extension !== undefined ? [target.extension, target.attr.name] : [target.attr.name];

const not = (predicate: Predicate): Predicate => ({ kind: 'not', predicate });

/** One test of one scalar, two-valued. */
function leafTest(node: BoundFilter, leaf: AttributeDef, scalar: Scalar): Predicate {
  if (node.kind === 'present') return { kind: 'known', scalar, as: readAs(leaf) };
  if (node.kind !== 'compare') throw new Error(`unexpected ${node.kind} node in a scalar test`);
  const negate = node.op === 'ne';
  let test: Predicate;
  if (leaf.type === 'boolean') {
    test = { kind: 'flag', scalar, value: node.value === true };
  } else if (readAs(leaf) === 'number') {
    const op = node.op === 'ne' ? 'eq' : node.op;
    if (op === 'co' || op === 'sw' || op === 'ew') throw new Error(`${op} on a number`);
    test = { kind: 'number', scalar, op, value: Number(node.value) };
  } else {
    const folded = isCaseInsensitive(leaf);
    const value = folded ? foldCase(String(node.value)) : String(node.value);
    test = { kind: 'text', scalar, op: node.op === 'ne' ? 'eq' : node.op, value, folded };
  }
  return negate ? not(test) : test;
}

/** A filter whose leaves are sub-attributes of one element, each read by `scalarOf`. */
function lowerElement(filter: BoundFilter, scalarOf: (sub: AttributeDef) => Scalar): Predicate {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return { kind: filter.kind, left: lowerElement(filter.left, scalarOf), right: lowerElement(filter.right, scalarOf) };
    case 'not':
      return not(lowerElement(filter.filter, scalarOf));
    case 'compare':
    case 'present': {
      const sub = filter.target.sub;
      if (!sub) throw new Error(`a value filter's test names no sub-attribute of ${filter.target.attr.name}`);
      return leafTest(filter, sub, scalarOf(sub));
    }
    case 'valuePath':
      throw new Error('value filters cannot be nested');
  }
}

const isMembership = (attr: AttributeDef): boolean => attr.storage?.kind === 'members' || attr.storage?.kind === 'groups';

/** A membership's sub-attributes in storage's words: `value` the related id, `display` its name. */
const relatedScalar = (sub: AttributeDef): Scalar => ({ at: 'related', field: sub.name === 'display' ? 'name' : 'id' });

/** Where a single-valued leaf lives: its column, or its place in the document. */
function scalarOfLeaf(target: FilterTarget): Scalar {
  const storage = leafOf(target).storage;
  if (storage?.kind === 'id') return { at: 'column', column: 'id' };
  if (storage?.kind === 'column') return { at: 'column', column: storage.column, ...(storage.lowerColumn ? { folded: storage.lowerColumn } : {}) };
  if (storage?.kind === 'meta') return { at: 'column', column: storage.column };
  return { at: 'document', keys: target.sub ? [...docKeys(target), target.sub.name] : docKeys(target) };
}

/**
 * Whether the grants rows answer `filter` on a catalog team's `roles` / `entitlements` exactly as
 * the document would: tests of `value` (caseExact there) and `type` only, none against "" (a row
 * keeps an absent type and "" alike), or the attribute's presence. Others (`display`,
 * `primary`) read the document.
 */
function grantsAnswer(filter: BoundFilter): boolean {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return grantsAnswer(filter.left) && grantsAnswer(filter.right);
    case 'not':
      return grantsAnswer(filter.filter);
    case 'present':
    case 'compare': {
      const sub = filter.target.sub;
      if (sub === undefined) return filter.kind === 'present';
      if (sub.name !== 'value' && sub.name !== 'type') return false;
      return filter.kind === 'present' || filter.value !== '';
    }
    case 'valuePath':
      return false;
  }
}

/** The grants predicate of a catalog team's roles or entitlements, when the rows answer `filter`. */
function grantedTest(target: FilterTarget, filter: BoundFilter, options: LowerOptions, where: () => Predicate): Predicate | undefined {
  const storage = target.attr.storage;
  if (storage?.kind !== 'grants' || options.team === undefined || !grantsAnswer(filter)) return undefined;
  return { kind: 'granted', team: options.team, grant: storage.grant, where: where() };
}

const grantScalar = (sub: AttributeDef): Scalar => ({ at: 'grant', field: sub.name === 'type' ? 'type' : 'value' });

function lowerTest(node: BoundFilter & { kind: 'compare' | 'present' }, options: LowerOptions): Predicate {
  const { target } = node;
  const { attr, sub } = target;
  const granted = grantedTest(target, node, options, () => (sub ? leafTest(node, sub, grantScalar(sub)) : ALWAYS));
  if (granted) return granted;
  if (isMembership(attr)) {
    return { kind: 'related', users: options.members, where: sub ? leafTest(node, sub, relatedScalar(sub)) : ALWAYS };
  }
  if (attr.multiValued && !(sub ?? attr).storage) {
    // Any element: its sub-attribute, or (a multi-valued simple attribute) the element itself.
    const where = sub ? leafTest(node, sub, { at: 'element', keys: [sub.name] }) : attr.type === 'complex' || node.kind === 'present' ? ALWAYS : leafTest(node, attr, { at: 'element', keys: [] });
    return { kind: 'anyElement', array: docKeys(target), where };
  }
  return leafTest(node, leafOf(target), scalarOfLeaf(target));
}

/** The storage predicate of a bound filter. */
export function lowerFilter(filter: BoundFilter, options: LowerOptions): Predicate {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return { kind: filter.kind, left: lowerFilter(filter.left, options), right: lowerFilter(filter.right, options) };
    case 'not':
      return not(lowerFilter(filter.filter, options));
    case 'compare':
    case 'present':
      return lowerTest(filter, options);
    case 'valuePath': {
      const { target } = filter;
      if (isMembership(target.attr)) return { kind: 'related', users: options.members, where: lowerElement(filter.filter, relatedScalar) };
      const granted = grantedTest(target, filter.filter, options, () => lowerElement(filter.filter, grantScalar));
      if (granted) return granted;
      if (target.attr.multiValued) {
        return { kind: 'anyElement', array: docKeys(target), where: lowerElement(filter.filter, (sub) => ({ at: 'element', keys: [sub.name] })) };
      }
      // A single-valued complex attribute (Entra's manager[value eq "..."]) is one element.
      const present: Predicate = { kind: 'known', scalar: { at: 'document', keys: docKeys(target) }, as: 'text' };
      const where = lowerElement(filter.filter, (sub) => ({ at: 'document', keys: [...docKeys(target), sub.name] }));
      return { kind: 'and', left: present, right: where };
    }
  }
}

/**
 * The storage sort key of a bound sortBy (RFC 7644 3.4.2.3): case-insensitive attributes by
 * their folded text; a multi-valued attribute by its primary (else first) element.
 */
export function lowerSort(sort: BoundSort): OrderKey {
  const { target } = sort;
  const leaf = leafOf(target);
  const as = readAs(leaf);
  const folded = as === 'text' && isCaseInsensitive(leaf);
  if (target.attr.multiValued && !leaf.storage) {
    const scalar: Scalar = { at: 'element', keys: target.sub ? [target.sub.name] : [] };
    return { kind: 'firstElement', array: docKeys(target), scalar, as, folded, ...(target.sub ? { preferred: ['primary'] } : {}) };
  }
  return { kind: 'scalar', scalar: scalarOfLeaf(target), as, folded };
}

/**
 * The values of an extension schema that get an expression index (docs/
 * SCHEMA-EXTENSIONS.md "Fast filters"): its single-valued string or reference attributes declared
 * `uniqueness: server`, the ones identity providers look resources up by. Each is the scalar an
 * `eq` on it lowers to (folded unless caseExact), so the index answers exactly that filter.
 */
export function indexedKeys(extension: SchemaDef): (OrderKey & { kind: 'scalar' })[] {
  return extension.attributes
    .filter((a) => a.uniqueness === 'server' && !a.multiValued && (a.type === 'string' || a.type === 'reference'))
    .map((a) => ({ kind: 'scalar', scalar: { at: 'document', keys: [extension.id, a.name] }, as: 'text', folded: isCaseInsensitive(a) }));
}
