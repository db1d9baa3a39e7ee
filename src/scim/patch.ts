/**
 * The PATCH engine of RFC 7644 section 3.5.2, as a pure function: a stored document and a
 * PatchOp body in, the patched document out, plus the change to a Group's membership as a
 * delta (membership is rows; the service applies the delta with inserts and deletes, never by
 * rewriting a list). Operations apply in order and all or nothing: any fault throws a 400
 * ScimError and the caller writes nothing. Op names are case-insensitive; values are
 * normalized by validate.ts as they are written; the identity-provider shapes it accepts are
 * the named ones of compat.ts.
 */
import { clearsTarget, skippedInValueObject, stringBooleansInPath } from './compat.ts';
import { ScimError, badRequest } from './errors.ts';
import { bindElementFilter } from './filter/bind.ts';
import type { BoundFilter } from './filter/bind.ts';
import { matchesElement } from './filter/evaluate.ts';
import { parsePatchPath } from './filter/parse.ts';
import { extensionByUrn, extensionForPath, findAttribute, findSubAttribute, lower, resolvePath } from './schema/registry.ts';
import { commonAttributes } from './schema/common.ts';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from './schema/types.ts';
import { PATCH_OP } from './schema/urns.ts';
import { checkElementCount, coreLifted, memberIds, normalizeElement, normalizeValue } from './validate.ts';

type Json = Record<string, unknown>;
type Op = 'add' | 'remove' | 'replace';

/** Largest number of operations in one PATCH. */
export const MAX_OPERATIONS = 1000;

/** How a PATCH changes a Group's members: applied as `clear` (keeping `add`), then removes, then adds. */
export interface MemberDelta {
  readonly clear: boolean;
  readonly add: readonly string[];
  readonly remove: readonly string[];
}

export interface PatchResult {
  readonly document: Json;
  readonly members?: MemberDelta;
  /** Every operation addressed the members (none an attribute of the document): the outcome is the same for any stored document. */
  readonly membersOnly?: true;
}

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Member changes composed in order: a later add undoes an earlier remove and the reverse. */
class MemberChanges {
  clear = false;
  readonly add = new Set<string>();
  readonly remove = new Set<string>();
  touched = false;
  /** An operation addressed something other than the members (the document). */
  attributes = false;

  clearAll(): void {
    this.touched = true;
    this.clear = true;
    this.add.clear();
    this.remove.clear();
  }

  adding(ids: readonly string[]): void {
    this.touched = true;
    for (const id of ids) {
      this.add.add(id);
      this.remove.delete(id);
    }
  }

  removing(ids: readonly string[]): void {
    this.touched = true;
    for (const id of ids) {
      this.remove.add(id);
      this.add.delete(id);
    }
  }

  delta(): MemberDelta {
    return { clear: this.clear, add: [...this.add], remove: this.clear ? [] : [...this.remove] };
  }
}

/** Where an operation lands. */
interface Target {
  readonly attr: AttributeDef;
  readonly sub?: AttributeDef;
  readonly extension?: SchemaDef;
  /** A bound value filter selecting elements (`emails[type eq "work"]`). */
  readonly filter?: BoundFilter;
  readonly text: string;
  /** The path named an alias (Group `display`): a write the real name makes in the same PATCH wins. */
  readonly viaAlias?: boolean;
}

type Resolved = Target | { readonly wholeExtension: SchemaDef };

const invalidPath = (detail: string) => badRequest('invalidPath', detail);

function resolveTarget(rt: ResourceTypeDef, text: string): Resolved {
  const parsed = parsePatchPath(text);
  if (!parsed.filter) {
    const whole = extensionForPath(rt, parsed.path);
    if (whole) return { wholeExtension: whole };
  }
  const resolved = resolvePath(rt, parsed.path, 'invalidPath');
  let attr = resolved.attr;
  const viaAlias = attr.aliasOf !== undefined;
  if (attr.aliasOf !== undefined) {
    attr = findAttribute([...commonAttributes, ...rt.schema.attributes], attr.aliasOf) ?? attr;
  }
  let sub = resolved.sub;
  let filter: BoundFilter | undefined;
  if (parsed.filter) {
    if (attr.type !== 'complex') throw invalidPath(`"${text}": ${attr.name} is not complex and takes no value filter`);
    filter = bindElementFilter(attr, stringBooleansInPath(parsed.filter, (name) => findSubAttribute(attr, name)?.type === 'boolean'));
    if (parsed.subAfterFilter !== undefined) {
      sub = findSubAttribute(attr, parsed.subAfterFilter);
      if (!sub) throw invalidPath(`"${text}": ${attr.name} has no sub-attribute "${parsed.subAfterFilter}"`);
    }
  }
  return {
    attr,
    ...(sub ? { sub } : {}),
    ...(resolved.extension ? { extension: resolved.extension } : {}),
    ...(filter ? { filter } : {}),
    text,
    ...(viaAlias ? { viaAlias } : {}),
  };
}

function assertWritable(target: Target): void {
  if (target.attr.mutability === 'readOnly' || target.sub?.mutability === 'readOnly') {
    throw badRequest('mutability', `"${target.text}" is read-only`);
  }
}

/** The object an attribute lives in: the document, or its extension object (created on demand). */
function containerOf(document: Json, target: Target, create: boolean): Json | undefined {
  if (!target.extension) return document;
  const id = target.extension.id;
  if (!isObject(document[id])) {
    if (!create) return undefined;
    document[id] = {};
  }
  return document[id] as Json;
}

/**
 * Entra ID E8 / T9: the element a filtered write creates when none matches, made of the
 * filter's `eq` terms (`type eq "mobile"` -> `{type: "mobile"}`); undefined when the filter is
 * not a plain conjunction of equalities.
 */
function templateOf(filter: BoundFilter): Json | undefined {
  if (filter.kind === 'compare' && filter.op === 'eq' && filter.target.sub) return { [filter.target.sub.name]: filter.value };
  if (filter.kind === 'and') {
    const left = templateOf(filter.left);
    const right = templateOf(filter.right);
    return left && right ? { ...left, ...right } : undefined;
  }
  return undefined;
}

/**
 * The identity of an element for de-duplication: its JSON. Elements are canonical (validate.ts
 * orders sub-attributes by the schema), so equal values have equal keys.
 */
const keyOf = (element: unknown): string => JSON.stringify(element);

/**
 * Adds `elements` to a multi-valued attribute, skipping duplicates; a new primary demotes the old.
 * Linear: duplicates are found in a set of keys and the primary by its index (comparing every new
 * element with every existing one would hold the event loop for the product of their counts), and
 * the attribute never grows past its bound, so the operations of one PATCH stay linear too.
 */
function appendElements(container: Json, attr: AttributeDef, elements: unknown[]): void {
  const current = Array.isArray(container[attr.name]) ? [...(container[attr.name] as unknown[])] : [];
  const keys = new Set(current.map(keyOf));
  let primaries: number[] = [];
  current.forEach((e, i) => {
    if (isObject(e) && e.primary === true) primaries.push(i);
  });
  for (const element of elements) {
    const key = keyOf(element);
    if (keys.has(key)) continue;
    if (isObject(element) && element.primary === true) {
      for (const i of primaries) {
        const demoted = { ...(current[i] as Json), primary: false };
        keys.delete(keyOf(current[i]));
        keys.add(keyOf(demoted));
        current[i] = demoted;
      }
      primaries = [current.length];
    }
    keys.add(key);
    current.push(element);
  }
  // Checked as each operation adds, not only on the final document: otherwise a thousand
  // operations of a few dozen values each rebuild a growing key set a thousand times (seconds).
  checkElementCount(attr, current.length, attr.name);
  if (current.length > 0) container[attr.name] = current;
}

function setOrDelete(container: Json, name: string, value: unknown): void {
  if (value === undefined) delete container[name];
  else container[name] = value;
}

/** add / replace at a resolved target (RFC 7644 3.5.2.1 and 3.5.2.3). */
function write(op: 'add' | 'replace', document: Json, target: Target, value: unknown): void {
  assertWritable(target);
  if (clearsTarget(value)) {
    remove(document, target, undefined);
    return;
  }
  const { attr, sub, filter } = target;
  const container = containerOf(document, target, true)!;
  if (filter) {
    writeFiltered(op, container, target, value);
    return;
  }
  if (attr.multiValued) {
    if (sub) throw invalidPath(`"${target.text}": choose the ${attr.name} element with a value filter, e.g. ${attr.name}[type eq "work"].${sub.name}`);
    const elements = normalizeValue(attr, isObject(value) ? [value] : value, target.text) as unknown[] | undefined;
    if (op === 'replace') setOrDelete(container, attr.name, elements);
    else appendElements(container, attr, elements ?? []);
    return;
  }
  if (sub) {
    const parent = isObject(container[attr.name]) ? { ...(container[attr.name] as Json) } : {};
    setOrDelete(parent, sub.name, normalizeValue(sub, value, target.text));
    setOrDelete(container, attr.name, Object.keys(parent).length > 0 ? parent : undefined);
    return;
  }
  const normalized = normalizeValue(attr, value, target.text);
  if (attr.type === 'complex' && isObject(normalized) && isObject(container[attr.name])) {
    // A complex value replaces or adds the sub-attributes it names; the others stay (3.5.2.3).
    container[attr.name] = { ...(container[attr.name] as Json), ...normalized };
  } else {
    setOrDelete(container, attr.name, normalized);
  }
}

function writeFiltered(op: 'add' | 'replace', container: Json, target: Target, value: unknown): void {
  const { attr, sub, filter } = target;
  const elements = attr.multiValued ? (Array.isArray(container[attr.name]) ? [...(container[attr.name] as unknown[])] : []) : isObject(container[attr.name]) ? [container[attr.name]] : [];
  const matched = elements.map((e, i) => (matchesElement(filter!, e) ? i : -1)).filter((i) => i >= 0);
  const build = (base: Json): Json | undefined => {
    if (sub) return normalizeElement(attr, { ...base, [sub.name]: value }, target.text);
    if (!isObject(value)) throw badRequest('invalidValue', `"${target.text}" takes an object of ${attr.name} sub-attributes`);
    return normalizeElement(attr, op === 'add' ? { ...base, ...value } : value, target.text);
  };
  const written: number[] = [];
  if (matched.length === 0) {
    const template = attr.multiValued ? templateOf(filter!) : undefined;
    if (!template) throw badRequest('noTarget', `"${target.text}" matches no value`);
    const created = build(template);
    if (created) written.push(elements.push(created) - 1);
    checkElementCount(attr, elements.length, attr.name);
  } else {
    for (const i of matched) elements[i] = build(elements[i] as Json);
    written.push(...matched);
  }
  // RFC 7644 3.5.2: making a value primary makes every other value not primary.
  if (written.some((i) => isObject(elements[i]) && elements[i].primary === true)) {
    const writtenSet = new Set(written);
    for (let i = 0; i < elements.length; i++) {
      const e = elements[i];
      if (!writtenSet.has(i) && isObject(e) && e.primary === true) elements[i] = { ...e, primary: false };
    }
  }
  const kept = elements.filter((e) => e !== undefined);
  if (attr.multiValued) setOrDelete(container, attr.name, kept.length > 0 ? kept : undefined);
  else setOrDelete(container, attr.name, kept[0]);
}

/** remove at a resolved target (RFC 7644 3.5.2.2); `value` selects elements by their `value`. */
function remove(document: Json, target: Target, value: unknown): void {
  assertWritable(target);
  const { attr, sub, filter } = target;
  const container = containerOf(document, target, false);
  if (!container || container[attr.name] === undefined) return;
  if (filter || (attr.multiValued && value !== undefined && value !== null)) {
    const elements = attr.multiValued ? (container[attr.name] as unknown[]) : [container[attr.name]];
    const listed = filter ? undefined : normalizeValue(attr, isObject(value) ? [value] : value, target.text) as Json[] | undefined;
    // Listed elements select by their value, or whole when they have none: two sets, one pass.
    const values = new Set((listed ?? []).filter((l) => l.value !== undefined).map((l) => l.value));
    const wholes = new Set((listed ?? []).filter((l) => l.value === undefined).map(keyOf));
    const selected = (e: unknown) =>
      filter ? matchesElement(filter, e) : isObject(e) && ((e.value !== undefined && values.has(e.value)) || (wholes.size > 0 && wholes.has(keyOf(e))));
    const kept: unknown[] = [];
    for (const e of elements) {
      if (!selected(e)) kept.push(e);
      else if (sub && isObject(e)) {
        const { [sub.name]: _dropped, ...rest } = e;
        if (Object.keys(rest).length > 0) kept.push(rest);
      }
    }
    if (attr.multiValued) setOrDelete(container, attr.name, kept.length > 0 ? kept : undefined);
    else setOrDelete(container, attr.name, kept[0]);
    return;
  }
  if (sub) {
    const current = container[attr.name];
    if (Array.isArray(current)) {
      const kept = current
        .map((e) => (isObject(e) ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== sub.name)) : e))
        .filter((e) => !isObject(e) || Object.keys(e).length > 0);
      setOrDelete(container, attr.name, kept.length > 0 ? kept : undefined);
    } else if (isObject(current)) {
      const { [sub.name]: _dropped, ...rest } = current;
      setOrDelete(container, attr.name, Object.keys(rest).length > 0 ? rest : undefined);
    }
    return;
  }
  delete container[attr.name];
}

/** Member ids named by a removal filter: `value eq "id"`, or several joined by `or`. */
function memberIdsOf(filter: BoundFilter, text: string): string[] {
  if (filter.kind === 'compare' && filter.op === 'eq' && filter.target.sub?.name === 'value' && typeof filter.value === 'string') return [filter.value];
  if (filter.kind === 'or') return [...memberIdsOf(filter.left, text), ...memberIdsOf(filter.right, text)];
  throw invalidPath(`"${text}": members are selected with value eq "<user id>" (joined by or)`);
}

function patchMembers(op: Op, target: Target, value: unknown, members: MemberChanges): void {
  if (target.sub) throw badRequest('mutability', `"${target.text}": member sub-attributes cannot be changed; remove and add the member`);
  if (op === 'remove') {
    if (target.filter) members.removing(memberIdsOf(target.filter, target.text));
    else if (value === undefined || value === null) members.clearAll();
    else members.removing(memberIds(value));
    return;
  }
  if (target.filter) throw invalidPath(`"${target.text}": add members with path "members" and a value array`);
  if (op === 'replace') members.clearAll();
  members.adding(memberIds(value));
}

/**
 * DESIGN.md section 4: when one PATCH writes an attribute under its real name and under an alias
 * (`displayName` and `display`), the real name wins whatever the order. `named` holds the
 * attributes written under their real name so far.
 */
function aliasLoses(target: Target, op: Op, named: Set<string>): boolean {
  if (target.extension || target.sub) return false;
  if (target.viaAlias) return named.has(target.attr.name);
  if (op !== 'remove') named.add(target.attr.name);
  return false;
}

function applyOne(rt: ResourceTypeDef, document: Json, op: Op, target: Resolved, value: unknown, members: MemberChanges, named: Set<string>): void {
  if ('wholeExtension' in target || target.attr.storage?.kind !== 'members') members.attributes = true;
  if ('wholeExtension' in target) {
    const ext = target.wholeExtension;
    if (op === 'remove') {
      delete document[ext.id];
      return;
    }
    if (!isObject(value)) throw badRequest('invalidValue', `${ext.id} takes an object of its attributes`);
    if (op === 'replace') delete document[ext.id];
    for (const [key, v] of Object.entries(value)) {
      // RFC 7643 3: a `schemas` member repeated inside an extension object is not an attribute.
      if (lower(key) === 'schemas') continue;
      const attr = findAttribute(ext.attributes, key);
      if (!attr) throw invalidPath(`Unknown attribute "${key}" of ${ext.id}`);
      if (skippedInValueObject(attr)) continue;
      write(op, document, { attr, extension: ext, text: `${ext.id}:${attr.name}` }, v);
    }
    return;
  }
  if (target.attr.storage?.kind === 'members') {
    patchMembers(op, target, value, members);
    return;
  }
  if (aliasLoses(target, op, named)) return;
  if (op === 'remove') remove(document, target, value);
  else write(op, document, target, value);
}

/** add / replace without a path: each key of the value object is a path (3.5.2.1, 3.5.2.3). */
function applyValueObject(rt: ResourceTypeDef, document: Json, op: 'add' | 'replace', value: unknown, members: MemberChanges, named: Set<string>): void {
  if (!isObject(value)) throw badRequest('invalidValue', `An ${op} without a path takes an object of attributes`);
  for (const [key, v] of coreLifted(rt, value)) {
    if (lower(key) === 'schemas') continue;
    const extension = extensionByUrn(rt, key);
    const target = extension ? { wholeExtension: extension } : resolveTarget(rt, key);
    if (!('wholeExtension' in target) && (skippedInValueObject(target.attr) || (target.sub && skippedInValueObject(target.sub)))) continue;
    // An extension object in a no-path value merges into the stored one, whatever the op.
    applyOne(rt, document, extension ? 'add' : op, target, v, members, named);
  }
}

const field = (o: Json, name: string): unknown => {
  const key = Object.keys(o).find((k) => lower(k) === name);
  return key === undefined ? undefined : o[key];
};

/** Applies a PatchOp body to a copy of `document`. */
export function applyPatch(rt: ResourceTypeDef, document: Readonly<Json>, body: unknown): PatchResult {
  if (!isObject(body)) throw badRequest('invalidSyntax', 'A PATCH body must be a PatchOp object');
  const schemas = field(body, 'schemas');
  if (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && lower(s) === lower(PATCH_OP))) {
    throw badRequest('invalidSyntax', `A PATCH body's schemas must contain ${PATCH_OP}`);
  }
  const operations = field(body, 'operations');
  if (!Array.isArray(operations) || operations.length === 0) throw badRequest('invalidSyntax', 'A PATCH body needs a non-empty Operations array');
  if (operations.length > MAX_OPERATIONS) throw badRequest('tooMany', `A PATCH may carry at most ${MAX_OPERATIONS} operations`);

  const next = structuredClone(document) as Json;
  const members = new MemberChanges();
  const named = new Set<string>();
  for (const [i, raw] of operations.entries()) {
    if (!isObject(raw)) throw badRequest('invalidSyntax', `Operations[${i}] must be an object`);
    const opName = field(raw, 'op');
    const op = typeof opName === 'string' ? lower(opName) : undefined;
    if (op !== 'add' && op !== 'remove' && op !== 'replace') {
      throw badRequest('invalidSyntax', `Operations[${i}].op must be add, remove or replace`);
    }
    const path = field(raw, 'path');
    const value = field(raw, 'value');
    if (path !== undefined && path !== null && typeof path !== 'string') throw badRequest('invalidPath', `Operations[${i}].path must be a string`);
    if (op !== 'remove' && value === undefined) throw badRequest('invalidSyntax', `Operations[${i}]: ${op} needs a value`);
    if (path === undefined || path === null || path === '') {
      if (op === 'remove') throw badRequest('noTarget', `Operations[${i}]: remove needs a path`);
      applyValueObject(rt, next, op, value, members, named);
      continue;
    }
    applyOne(rt, next, op, resolveTarget(rt, path), value, members, named);
  }
  for (const ext of rt.extensions) {
    const id = ext.schema.id;
    if (isObject(next[id]) && Object.keys(next[id]).length === 0) delete next[id];
  }
  if (!members.touched) return { document: next };
  return members.attributes ? { document: next, members: members.delta() } : { document: next, members: members.delta(), membersOnly: true };
}

/**
 * The membership change of a PATCH that addresses a Group's members and nothing else: the same
 * whatever the stored document, so it is known before the group is read. Undefined for any other
 * PATCH, and for one that faults (the caller's full path answers that against the stored group).
 */
export function membersOnlyChange(rt: ResourceTypeDef, body: unknown): MemberDelta | undefined {
  try {
    const result = applyPatch(rt, {}, body);
    return result.membersOnly ? result.members : undefined;
  } catch (error) {
    if (error instanceof ScimError) return undefined;
    throw error;
  }
}
