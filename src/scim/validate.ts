/**
 * Turns a request body (create, replace) or a patched document into the canonical stored
 * document, by the schema definitions alone (RFC 7643 sections 2 and 7; RFC 7644 3.3, 3.5.1):
 * attribute names matched case-insensitively and stored in their schema spelling, values
 * checked against their type and canonical values, null and "" meaning absent, readOnly input
 * ignored, immutable values kept, required attributes enforced, the write-only password and a
 * Group's member ids handed back beside the document (never stored in it). It throws 400
 * ScimErrors (`invalidSyntax` for shapes and unknown names, `invalidValue` for values and
 * values over their schema bounds, `mutability` for immutable changes); it never touches storage.
 * Bounds come from the attribute definitions (schema/types.ts boundsOf): string
 * length, UTF-8 bytes of indexed values, elements per multi-valued attribute, and the size of the
 * stored document.
 */
import { entraAppRole, isToleratedSchemaUrn, multiValuedShape, nullUnprefixedExtensionAttribute, singleComplexShape, stringBoolean } from './compat.ts';
import { badRequest } from './errors.ts';
import { parseAttrPath } from './path.ts';
import { commonAttributes } from './schema/common.ts';
import { extensionByUrn, findAttribute, findSubAttribute, lower, resolvePath, schemaByUrn } from './schema/registry.ts';
import { boundsOf, DEFAULT_BOUNDS } from './schema/types.ts';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from './schema/types.ts';

export type ValidationMode = 'create' | 'replace' | 'patch';

export interface ValidatedResource {
  /** The canonical document: core attributes, `externalId`, extension objects by URN. */
  readonly document: Record<string, unknown>;
  /** A new password (write-only, RFC 7643 4.1.1); undefined leaves the stored one unchanged. */
  readonly password?: string;
  /** A Group's member ids when the body names them (membership is rows, not document). */
  readonly members?: readonly string[];
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

const invalidValue = (detail: string) => badRequest('invalidValue', detail);

/** Whether `text` holds more than `max` code points (counted only when UTF-16 length says it may). */
function longerThan(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let n = 0;
  for (const _ of text) if (++n > max) return true;
  return false;
}

/**
 * A string over its attribute's bounds is refused, naming the attribute. The byte bound guards
 * indexed columns: PostgreSQL cannot index an entry over ~2,704 bytes, and case folding can
 * lengthen text (İ, 2 bytes, folds to i + U+0307, 3 bytes), so the folded key is measured too.
 */
function checkStringBounds(def: AttributeDef, value: string, label: string): void {
  const { maxLength, maxBytes } = boundsOf(def);
  if (longerThan(value, maxLength)) throw invalidValue(`${label} is longer than ${maxLength} characters`);
  if (maxBytes !== undefined && (Buffer.byteLength(value) > maxBytes || Buffer.byteLength(value.toLowerCase()) > maxBytes)) {
    throw invalidValue(`${label} takes more than ${maxBytes} bytes in UTF-8`);
  }
}

/** A multi-valued attribute holds at most its bound of elements (also checked by patch.ts as each operation adds). */
export function checkElementCount(attr: AttributeDef, count: number, label: string): void {
  const { maxElements } = boundsOf(attr);
  if (count > maxElements) throw invalidValue(`${label} holds more than ${maxElements} values`);
}

/** The stored document of one resource is at most DEFAULT_BOUNDS.maxResourceBytes of JSON. */
function checkResourceSize(rt: ResourceTypeDef, document: Json): void {
  const max = DEFAULT_BOUNDS.maxResourceBytes;
  if (Buffer.byteLength(JSON.stringify(document)) <= max) return;
  let largest = '';
  let largestBytes = -1;
  for (const [key, value] of Object.entries(document)) {
    const bytes = Buffer.byteLength(JSON.stringify(value));
    if (bytes > largestBytes) [largest, largestBytes] = [key, bytes];
  }
  throw invalidValue(`The ${rt.name} would take more than ${max / 1024} KiB stored; its largest attribute is ${largest} (${Math.ceil(largestBytes / 1024)} KiB)`);
}

/** A scalar of `def`'s type, or undefined for null / "" (absent). */
function normalizeScalar(def: AttributeDef, value: unknown, label: string): unknown {
  if (value === null || value === undefined || value === '') return undefined;
  switch (def.type) {
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      const coerced = stringBoolean(value);
      if (coerced === undefined) throw invalidValue(`${label} must be true or false`);
      return coerced;
    }
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalidValue(`${label} must be an integer`);
      return value;
    case 'decimal':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidValue(`${label} must be a number`);
      return value;
    case 'dateTime':
      if (typeof value !== 'string' || value.length > 64 || !/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(Date.parse(value))) {
        throw invalidValue(`${label} must be an ISO 8601 date and time`);
      }
      return value;
    case 'complex':
      throw invalidValue(`${label} must be an object`);
    default: {
      if (typeof value !== 'string') throw invalidValue(`${label} must be a string`);
      checkStringBounds(def, value, label);
      const canonical = def.canonicalValues;
      if (canonical && canonical.length > 0) {
        const match = canonical.find((c) => lower(c) === lower(value));
        if (match === undefined) throw invalidValue(`${label} must be one of ${canonical.join(', ')}; got "${value.slice(0, 50)}"`);
        return match;
      }
      return value;
    }
  }
}

/** One complex value (a single complex attribute, or one element of a multi-valued one). */
export function normalizeElement(attr: AttributeDef, sent: unknown, label: string): Json | undefined {
  if (sent === null || sent === undefined) return undefined;
  const value = entraAppRole(attr, sent);
  if (!isObject(value)) throw invalidValue(`${label} must be an object`);
  const out: Json = {};
  for (const [key, raw] of Object.entries(value)) {
    const sub = findSubAttribute(attr, key);
    if (!sub) throw badRequest('invalidSyntax', `Unknown sub-attribute "${key}" of ${attr.name}`);
    if (sub.mutability === 'readOnly') continue;
    if (sub.name in out && raw !== null) throw badRequest('invalidSyntax', `${attr.name}.${sub.name} is given twice`);
    const normalized = normalizeScalar(sub, raw, `${attr.name}.${sub.name}`);
    if (normalized !== undefined) out[sub.name] = normalized;
  }
  if (Object.keys(out).length === 0) return undefined;
  for (const sub of attr.subAttributes ?? []) {
    if (sub.defaultValue !== undefined && out[sub.name] === undefined) out[sub.name] = sub.defaultValue;
  }
  // Keep the schema's order of sub-attributes: documents compare equal however they arrived.
  const ordered: Json = {};
  for (const sub of attr.subAttributes ?? []) if (out[sub.name] !== undefined) ordered[sub.name] = out[sub.name];
  return ordered;
}

/**
 * A value of `attr` in canonical form, or undefined when it is absent (null, "", [], {}).
 * Used by validation and by the PATCH engine for every value it writes.
 */
export function normalizeValue(attr: AttributeDef, value: unknown, label: string = attr.name): unknown {
  if (value === null || value === undefined) return undefined;
  if (attr.multiValued) {
    if (!Array.isArray(value)) throw invalidValue(`${label} must be an array`);
    checkElementCount(attr, value.length, label);
    const elements: unknown[] = [];
    for (const element of value) {
      const normalized = attr.type === 'complex' ? normalizeElement(attr, element, label) : normalizeScalar(attr, element, label);
      if (normalized !== undefined) elements.push(normalized);
    }
    if (elements.filter((e) => isObject(e) && e.primary === true).length > 1) {
      throw invalidValue(`${label}: at most one value may be primary (RFC 7643 2.4)`);
    }
    return elements.length > 0 ? elements : undefined;
  }
  if (attr.type === 'complex') {
    const shaped = findSubAttribute(attr, 'value') ? singleComplexShape(value) : value;
    return normalizeElement(attr, shaped, label);
  }
  return normalizeScalar(attr, value, label);
}

/** A Group's `members` value as user ids (each element needs a string `value`). */
export function memberIds(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  const shaped = multiValuedShape(value);
  if (!Array.isArray(shaped)) throw invalidValue('members must be an array of {"value": "<user id>"}');
  const ids = new Set<string>();
  for (const element of shaped) {
    if (element === null) continue;
    if (!isObject(element)) throw invalidValue('members must be an array of {"value": "<user id>"}');
    const entry = Object.entries(element).find(([k]) => lower(k) === 'value');
    const id = entry?.[1];
    if (typeof id !== 'string' || id === '') throw invalidValue('every member needs a "value": the id of a User');
    ids.add(id);
  }
  return [...ids];
}

/** The attribute a top-level key names: core, common, or a URN-prefixed extension attribute. */
function attributeForKey(rt: ResourceTypeDef, key: string): { attr: AttributeDef; extension?: SchemaDef } | undefined {
  const core = findAttribute([...commonAttributes, ...rt.schema.attributes], key);
  if (core) return { attr: core };
  if (!/^urn:/i.test(key)) return undefined;
  try {
    const resolved = resolvePath(rt, parseAttrPath(key, 'invalidSyntax'), 'invalidSyntax');
    if (resolved.sub) return undefined;
    return resolved.extension ? { attr: resolved.attr, extension: resolved.extension } : { attr: resolved.attr };
  } catch {
    return undefined;
  }
}

function checkSchemas(rt: ResourceTypeDef, value: unknown): void {
  if (!Array.isArray(value) || !value.every((s) => typeof s === 'string')) {
    throw badRequest('invalidSyntax', 'schemas must be an array of schema URNs');
  }
  const known = [rt.schema.id, ...rt.extensions.map((e) => e.schema.id)].map(lower);
  for (const urn of value as string[]) {
    if (!known.includes(lower(urn)) && !isToleratedSchemaUrn(urn)) {
      throw invalidValue(`schemas names "${urn.slice(0, 300)}", which ${rt.name} does not use; declare the extension with rollcall schema add (or POST /v2/admin/Schemas) to accept it`);
    }
  }
  if (!(value as string[]).some((urn) => lower(urn) === lower(rt.schema.id))) {
    throw invalidValue(`schemas must contain ${rt.schema.id}`);
  }
}

/** Sets `name` in `target`, refusing the same attribute under two spellings. */
function put(target: Json, name: string, value: unknown, label: string): void {
  if (value === undefined) return;
  if (name in target && JSON.stringify(target[name]) !== JSON.stringify(value)) {
    throw badRequest('invalidSyntax', `${label} is given twice, with different values`);
  }
  target[name] = value;
}

function ordered(attrs: readonly AttributeDef[], source: Json): Json {
  const out: Json = {};
  for (const a of attrs) if (source[a.name] !== undefined) out[a.name] = source[a.name];
  return out;
}

/**
 * The body's members with core attributes nested under the core schema URN key lifted to the
 * top level (RFC 7644 3.10: an attribute may be named with its schema URN; `{"urn:...:core:2.0:
 * User": {"userName": ...}}` names the same attributes as the top level does).
 */
export function coreLifted(rt: ResourceTypeDef, body: Json): [string, unknown][] {
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(body)) {
    if (!/^urn:/i.test(key) || schemaByUrn(rt, key) !== rt.schema) {
      entries.push([key, value]);
      continue;
    }
    if (value === null) continue;
    if (!isObject(value)) throw invalidValue(`${rt.schema.id} must be an object of core attributes`);
    for (const [inner, innerValue] of Object.entries(value)) if (lower(inner) !== 'schemas') entries.push([inner, innerValue]);
  }
  return entries;
}

/**
 * Validates `body` as a whole resource of `rt`. `original` is the stored document (replace and
 * patch): immutable attributes may not change from it.
 */
export function validateResource(rt: ResourceTypeDef, body: unknown, mode: ValidationMode, original?: Json): ValidatedResource {
  if (!isObject(body)) throw badRequest('invalidSyntax', `The body must be a JSON object (a ${rt.name} resource)`);
  const core: Json = {};
  const extensions = new Map<SchemaDef, Json>();
  let password: string | undefined;
  let members: string[] | undefined;
  // Values sent under an alias (Group `display`), applied only when the real name is absent.
  const aliased = new Map<string, unknown>();

  const schemas = Object.entries(body).find(([key]) => lower(key) === 'schemas')?.[1];
  for (const [key, value] of coreLifted(rt, body)) {
    if (lower(key) === 'schemas') {
      if (mode !== 'patch' && value !== null) checkSchemas(rt, value);
      continue;
    }
    const extension = extensionByUrn(rt, key);
    if (extension) {
      if (value === null) continue;
      if (!isObject(value)) throw invalidValue(`${extension.id} must be an object`);
      const target = extensions.get(extension) ?? {};
      extensions.set(extension, target);
      for (const [subKey, subValue] of Object.entries(value)) {
        // RFC 7643 3: `schemas` belongs to the resource; clients also repeat it inside an extension.
        if (lower(subKey) === 'schemas') continue;
        const attr = findAttribute(extension.attributes, subKey);
        if (!attr) throw badRequest('invalidSyntax', `Unknown attribute "${subKey.slice(0, 100)}" of ${extension.id}; declare it with rollcall schema add (or POST /v2/admin/Schemas) to accept it`);
        if (attr.mutability === 'readOnly') continue;
        put(target, attr.name, normalizeValue(attr, subValue), attr.name);
      }
      continue;
    }
    const found = attributeForKey(rt, key);
    if (!found && nullUnprefixedExtensionAttribute(rt, key, value, schemas)) continue;
    if (!found) throw badRequest('invalidSyntax', `Unknown attribute "${key.slice(0, 300)}" for ${rt.name}; declare it with rollcall schema add (or POST /v2/admin/Schemas) to accept it`);
    const { attr } = found;
    if (attr.storage?.kind === 'members') {
      if (members !== undefined && value !== null) throw badRequest('invalidSyntax', 'members is given twice');
      members = memberIds(value);
      continue;
    }
    if (attr.aliasOf !== undefined) {
      const definition = findAttribute([...commonAttributes, ...rt.schema.attributes], attr.aliasOf);
      if (!definition || definition.mutability === 'readOnly') continue;
      const normalized = normalizeValue(definition, value, attr.name);
      if (normalized !== undefined) aliased.set(definition.name, normalized);
      continue;
    }
    if (attr.mutability === 'readOnly') continue;
    if (attr.mutability === 'writeOnly') {
      const normalized = normalizeScalar(attr, value, attr.name);
      if (normalized !== undefined) password = normalized as string;
      continue;
    }
    const target = found.extension ? (extensions.get(found.extension) ?? extensions.set(found.extension, {}).get(found.extension)!) : core;
    put(target, attr.name, normalizeValue(attr, value, attr.name), attr.name);
  }
  // DESIGN.md section 4: the real name wins over its alias (a GET body PUT back with only
  // displayName changed still carries the old display).
  for (const [name, value] of aliased) if (core[name] === undefined) core[name] = value;

  const document = ordered([...commonAttributes, ...rt.schema.attributes], core);
  for (const ext of rt.extensions) {
    const values = extensions.get(ext.schema);
    if (values && Object.keys(values).length > 0) document[ext.schema.id] = ordered(ext.schema.attributes, values);
  }

  for (const attr of rt.schema.attributes) {
    if (attr.required && document[attr.name] === undefined) throw invalidValue(`${attr.name} is required`);
  }
  checkExtensionsRequired(rt, document);
  if (original && mode !== 'create') keepHidden(rt, original, document);
  if (original && mode !== 'create') checkImmutable(rt, original, document);
  checkResourceSize(rt, document);
  return {
    document,
    ...(password !== undefined ? { password } : {}),
    ...(members !== undefined ? { members } : {}),
  };
}

/**
 * RFC 7643 section 6 `schemaExtensions.required`: a resource must carry a required extension;
 * an extension's required attributes must be there whenever the extension is.
 */
function checkExtensionsRequired(rt: ResourceTypeDef, document: Json): void {
  for (const ext of rt.extensions) {
    const values = document[ext.schema.id];
    if (!isObject(values)) {
      if (ext.required) throw invalidValue(`the extension ${ext.schema.id} is required for ${rt.name}`);
      continue;
    }
    for (const attr of ext.schema.attributes) {
      if (attr.required && values[attr.name] === undefined) throw invalidValue(`${ext.schema.id}:${attr.name} is required`);
    }
  }
}

/**
 * Schema evolution: values of an extension the team removed, or of attributes it left out
 * of a newer definition, stay stored though no request can see or change them; a replace or a
 * PATCH keeps them as they were.
 */
function keepHidden(rt: ResourceTypeDef, original: Json, document: Json): void {
  for (const [key, value] of Object.entries(original)) {
    if (!/^urn:/i.test(key) || !isObject(value)) continue;
    const ext = extensionByUrn(rt, key);
    if (!ext) {
      if (schemaByUrn(rt, key) === undefined) document[key] = value;
      continue;
    }
    const hidden = Object.entries(value).filter(([name]) => lower(name) !== 'schemas' && !findAttribute(ext.attributes, name));
    if (hidden.length === 0) continue;
    const current = isObject(document[ext.id]) ? (document[ext.id] as Json) : {};
    document[ext.id] = { ...current, ...Object.fromEntries(hidden) };
  }
}

/** `document` without the values of removed extensions and attributes (what a PATCH applies to). */
export function withoutHidden(rt: ResourceTypeDef, document: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(document)) {
    if (!/^urn:/i.test(key) || !isObject(value)) {
      out[key] = value;
      continue;
    }
    const ext = extensionByUrn(rt, key);
    if (!ext) {
      if (schemaByUrn(rt, key) !== undefined) out[key] = value;
      continue;
    }
    const shown = Object.entries(value).filter(([name]) => lower(name) === 'schemas' || findAttribute(ext.attributes, name));
    if (shown.length > 0) out[key] = Object.fromEntries(shown);
  }
  return out;
}

/** RFC 7643 2.2: an immutable attribute, once set, keeps its value. */
function checkImmutable(rt: ResourceTypeDef, original: Json, next: Json): void {
  const check = (attrs: readonly AttributeDef[], before: Json | undefined, after: Json | undefined, prefix: string) => {
    for (const attr of attrs) {
      if (attr.mutability !== 'immutable') continue;
      const was = before?.[attr.name];
      if (was !== undefined && JSON.stringify(was) !== JSON.stringify(after?.[attr.name])) {
        throw badRequest('mutability', `${prefix}${attr.name} is immutable`);
      }
    }
  };
  check([...commonAttributes, ...rt.schema.attributes], original, next, '');
  for (const ext of rt.extensions) {
    const id = ext.schema.id;
    check(ext.schema.attributes, original[id] as Json | undefined, next[id] as Json | undefined, `${id}:`);
  }
}
