/**
 * Team schema extensions (DESIGN.md section 10): reads an RFC 7643 section 7 schema a
 * team registers for Users or Groups, refuses what Rollcall cannot serve with a precise error
 * (the JSON location and the rule), checks its evolution against what the team declared before
 * (attributes may be added or removed, never change type), and builds the team's resource types
 * (core schema, the enterprise extension for Users, then the team's extensions) in the shape
 * every consumer already reads (types.ts). Pure: no storage, no HTTP.
 */
import { badRequest } from '../errors.ts';
import type { ScimError } from '../errors.ts';
import { groupResourceType, userResourceType } from './registry.ts';
import { attr } from './types.ts';
import type { Catalog } from './catalog.ts';
import type { AttributeDef, AttributeType, Mutability, ResourceTypeDef, Returned, SchemaDef, Uniqueness } from './types.ts';
import { ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from './urns.ts';

/** A team's resource types, as its requests see them. */
export interface TeamTypes {
  readonly User: ResourceTypeDef;
  readonly Group: ResourceTypeDef;
  /** The team's roles and entitlements (catalog.ts); absent when it declared none. */
  readonly catalog?: Catalog;
}

export const CORE_TYPES: TeamTypes = Object.freeze({ User: userResourceType, Group: groupResourceType });

/** An extension as a team declared it. */
export interface ExtensionDecl {
  readonly resourceType: 'User' | 'Group';
  readonly required: boolean;
  readonly schema: SchemaDef;
}

const TYPES: readonly AttributeType[] = ['string', 'boolean', 'decimal', 'integer', 'dateTime', 'reference', 'complex', 'binary'];
const MUTABILITY: readonly Mutability[] = ['readOnly', 'readWrite', 'immutable'];
const RETURNED: readonly Returned[] = ['always', 'never', 'default', 'request'];
const UNIQUENESS: readonly Uniqueness[] = ['none', 'server'];
const ATTRIBUTE_KEYS = new Set([
  'name', 'type', 'multiValued', 'description', 'required', 'canonicalValues', 'caseExact', 'mutability', 'returned', 'uniqueness', 'referenceTypes', 'subAttributes',
]);
const SCHEMA_KEYS = new Set(['id', 'name', 'description', 'attributes', 'schemas', 'meta']);

/** RFC 7643 2.1 ATTRNAME: ALPHA *(nameChar), nameChar = "-" / "_" / DIGIT / ALPHA. */
const ATTRNAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** RFC 8141 URN: `urn:` NID `:` NSS; kept to printable ASCII without spaces, and short. */
const URN = /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:[!-~]{1,250}$/;
/**
 * Characters RFC 8141 keeps out of a URN that a JSON path cannot name either (storage/dialect.ts
 * refuses them): a URN is a key of every resource document, read by paths and by expression
 * indexes shared with other teams. Refused by name, before the URN rule.
 */
const PATH_BREAKING = /["\\]/;
export const MAX_EXTENSION_ATTRIBUTES = 100;
const MAX_CANONICAL_VALUES = 100;

/** Schema URNs a team may not take: the core schemas, the enterprise extension, SCIM's messages. */
const reserved = (id: string): boolean => {
  const key = id.toLowerCase();
  return (
    [USER_SCHEMA, GROUP_SCHEMA, ENTERPRISE_USER_SCHEMA].some((u) => u.toLowerCase() === key) ||
    key.startsWith('urn:ietf:params:scim:api:') ||
    key.startsWith('urn:ietf:params:scim:schemas:core:')
  );
};

const problem = (where: string, why: string): ScimError => badRequest('invalidValue', `${where}: ${why}`);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

function optionalBoolean(o: Json, key: string, where: string, fallback: boolean): boolean {
  const v = o[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw problem(`${where}.${key}`, 'must be true or false');
  return v;
}

function oneOf<T extends string>(o: Json, key: string, where: string, allowed: readonly T[], fallback: T): T {
  const v = o[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !allowed.includes(v as T)) throw problem(`${where}.${key}`, `must be one of ${allowed.join(', ')}${typeof v === 'string' ? ` (got "${v.slice(0, 40)}")` : ''}`);
  return v as T;
}

function stringList(o: Json, key: string, where: string, max: number): string[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string' || x === '' || x.length > 256)) throw problem(`${where}.${key}`, 'must be an array of non-empty strings');
  if (v.length > max) throw problem(`${where}.${key}`, `at most ${max} values`);
  return v as string[];
}

function readAttribute(raw: unknown, where: string, nested: boolean): AttributeDef {
  if (!isObject(raw)) throw problem(where, 'must be an attribute object');
  for (const key of Object.keys(raw)) if (!ATTRIBUTE_KEYS.has(key)) throw problem(`${where}.${key}`, 'is not an attribute characteristic of RFC 7643 section 7');
  const name = raw.name;
  if (typeof name !== 'string' || !ATTRNAME.test(name)) throw problem(`${where}.name`, 'must be an attribute name (RFC 7643 2.1: a letter, then letters, digits, "-" or "_"; at most 64)');
  const at = `${where} (${name})`;
  const type = oneOf(raw, 'type', at, TYPES, 'string');
  if (raw.type === undefined) throw problem(`${at}.type`, `is required: one of ${TYPES.join(', ')}`);
  const multiValued = optionalBoolean(raw, 'multiValued', at, false);
  const mutability = raw.mutability === 'writeOnly' ? (() => { throw problem(`${at}.mutability`, 'writeOnly is not supported for extension attributes'); })() : oneOf(raw, 'mutability', at, MUTABILITY, 'readWrite');
  if (raw.uniqueness === 'global') throw problem(`${at}.uniqueness`, 'global uniqueness (across teams) is not supported; use server');
  const uniqueness = oneOf(raw, 'uniqueness', at, UNIQUENESS, 'none');
  if (uniqueness === 'server' && (type !== 'string' || multiValued || nested)) throw problem(`${at}.uniqueness`, 'server uniqueness applies to a single-valued string attribute');
  const canonicalValues = stringList(raw, 'canonicalValues', at, MAX_CANONICAL_VALUES);
  if (canonicalValues && type !== 'string' && type !== 'reference') throw problem(`${at}.canonicalValues`, 'apply to string attributes only');
  const referenceTypes = stringList(raw, 'referenceTypes', at, 20);
  if (referenceTypes && type !== 'reference') throw problem(`${at}.referenceTypes`, 'apply to reference attributes only');
  let subAttributes: AttributeDef[] | undefined;
  if (type === 'complex') {
    if (nested) throw problem(`${at}.type`, 'a sub-attribute cannot be complex (RFC 7643 2.3.8)');
    if (!Array.isArray(raw.subAttributes) || raw.subAttributes.length === 0) throw problem(`${at}.subAttributes`, 'a complex attribute needs an array of sub-attributes');
    if (raw.subAttributes.length > MAX_EXTENSION_ATTRIBUTES) throw problem(`${at}.subAttributes`, `at most ${MAX_EXTENSION_ATTRIBUTES}`);
    subAttributes = raw.subAttributes.map((s, i) => readAttribute(s, `${at}.subAttributes[${i}]`, true));
    duplicates(subAttributes, `${at}.subAttributes`);
  } else if (raw.subAttributes !== undefined) {
    throw problem(`${at}.subAttributes`, 'only a complex attribute has sub-attributes');
  }
  const description = raw.description;
  if (description !== undefined && (typeof description !== 'string' || description.length > 1024)) throw problem(`${at}.description`, 'must be a string of at most 1,024 characters');
  return attr(name, type, typeof description === 'string' ? description : '', {
    multiValued,
    required: optionalBoolean(raw, 'required', at, false),
    caseExact: optionalBoolean(raw, 'caseExact', at, false),
    mutability,
    returned: oneOf(raw, 'returned', at, RETURNED, 'default'),
    uniqueness,
    ...(canonicalValues ? { canonicalValues } : {}),
    ...(referenceTypes ? { referenceTypes } : {}),
    ...(subAttributes ? { subAttributes } : {}),
  });
}

function duplicates(attrs: readonly AttributeDef[], where: string): void {
  const seen = new Set<string>();
  for (const a of attrs) {
    const key = a.name.toLowerCase();
    if (seen.has(key)) throw problem(where, `"${a.name}" is declared twice (names compare case-insensitively)`);
    seen.add(key);
  }
}

/**
 * Reads an extension registration: `schema` is the RFC 7643 section 7 schema (id, name,
 * description, attributes). Errors are 400 `invalidValue` naming the JSON location.
 */
export function readExtension(resourceType: unknown, required: unknown, schema: unknown): ExtensionDecl {
  if (resourceType !== 'User' && resourceType !== 'Group') throw problem('resourceType', 'must be "User" or "Group"');
  if (required !== undefined && typeof required !== 'boolean') throw problem('required', 'must be true or false');
  if (!isObject(schema)) throw problem('schema', 'must be a JSON object (RFC 7643 section 7)');
  for (const key of Object.keys(schema)) if (!SCHEMA_KEYS.has(key)) throw problem(`schema.${key}`, 'is not a schema attribute of RFC 7643 section 7');
  const id = schema.id;
  const breaking = typeof id === 'string' ? PATH_BREAKING.exec(id) : null;
  if (breaking) throw problem('schema.id', `must not hold ${breaking[0]} (RFC 8141 allows neither " nor \\ in a URN)`);
  if (typeof id !== 'string' || !URN.test(id)) throw problem('schema.id', 'must be a URN (urn:<namespace>:<name>), printable ASCII, at most 300 characters');
  if (reserved(id)) throw problem('schema.id', `${id} is a schema Rollcall defines; choose your own URN`);
  const name = schema.name;
  if (name !== undefined && (typeof name !== 'string' || name.length > 256)) throw problem('schema.name', 'must be a string of at most 256 characters');
  const description = schema.description;
  if (description !== undefined && (typeof description !== 'string' || description.length > 1024)) throw problem('schema.description', 'must be a string of at most 1,024 characters');
  if (!Array.isArray(schema.attributes) || schema.attributes.length === 0) throw problem('schema.attributes', 'must be a non-empty array of attributes');
  if (schema.attributes.length > MAX_EXTENSION_ATTRIBUTES) throw problem('schema.attributes', `at most ${MAX_EXTENSION_ATTRIBUTES} attributes`);
  const attributes = schema.attributes.map((a, i) => readAttribute(a, `schema.attributes[${i}]`, false));
  duplicates(attributes, 'schema.attributes');
  return Object.freeze({
    resourceType,
    required: required === true,
    schema: Object.freeze({ id, name: typeof name === 'string' ? name : id.split(':').pop()!, description: typeof description === 'string' ? description : '', attributes }),
  });
}

/** Every attribute path an extension declares, lower-cased, with its type (`attr`, `attr.sub`). */
export function declaredTypes(schema: SchemaDef): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of schema.attributes) {
    out[a.name.toLowerCase()] = `${a.type}${a.multiValued ? '[]' : ''}`;
    for (const s of a.subAttributes ?? []) out[`${a.name}.${s.name}`.toLowerCase()] = `${s.type}${s.multiValued ? '[]' : ''}`;
  }
  return out;
}

/**
 * The evolution rule: a new definition may add attributes and leave some out (their data stays,
 * hidden), but an attribute declared before, even one removed since, keeps its type.
 */
export function checkEvolution(before: Record<string, string>, next: SchemaDef): Record<string, string> {
  const now = declaredTypes(next);
  for (const [path, type] of Object.entries(now)) {
    const was = before[path];
    if (was !== undefined && was !== type) {
      throw badRequest('invalidValue', `${next.id}: changing the type of "${path}" from ${was} to ${type} is refused (stored values would no longer match); declare a new attribute instead`);
    }
  }
  return { ...before, ...now };
}

/** The team's resource types: the core ones with the team's extensions after the built-in ones. */
export function teamTypes(extensions: readonly ExtensionDecl[]): TeamTypes {
  if (extensions.length === 0) return CORE_TYPES;
  const extend = (rt: ResourceTypeDef): ResourceTypeDef =>
    Object.freeze({
      ...rt,
      extensions: [...rt.extensions, ...extensions.filter((e) => e.resourceType === rt.name).map((e) => ({ schema: e.schema, required: e.required }))],
    });
  return Object.freeze({ User: extend(userResourceType), Group: extend(groupResourceType) });
}

/** A team schema as /Schemas shows it and `rollcall schema show` prints it. */
export const isTeamSchema = (types: TeamTypes, id: string): boolean =>
  [...types.User.extensions, ...types.Group.extensions].some((e) => e.schema.id.toLowerCase() === id.toLowerCase()) && !reserved(id);
