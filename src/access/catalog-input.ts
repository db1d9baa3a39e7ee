/**
 * The input of a team's catalog (DESIGN.md section 12), as the CLI, the admin API's whole-catalog
 * PUT (`/v2/admin/Catalog`) and the console send it: roles, entitlement types and entitlements,
 * and the discovery schemas setting. Every rule of the catalog's values lives here; a refusal is a
 * SCIM 400 `invalidValue` naming the JSON location (`roles[2].value: ...`), like the extension
 * schema reader (scim/schema/extensions.ts). Pure: no storage, no HTTP.
 *
 * - A value (a role's or an entitlement's SCIM `id`): 1..256 characters, no control characters, no
 *   whitespace at either end; compared exactly. Unique per team among roles, and among all the
 *   team's entitlements whatever their type.
 * - displayName: 1..256 characters, required. description: at most 1,000 characters ("" is none).
 * - An entitlement type's name: a letter, then letters, digits, space, "_" or "-" (at most 64),
 *   not a SCIM resource type Rollcall serves; its endpoint `/Name`-like, not a SCIM endpoint.
 *   Both unique per team case-insensitively.
 */
import { badRequest } from '../scim/errors.ts';
import type { ScimError } from '../scim/errors.ts';
import type { CatalogSchemas } from '../scim/schema/catalog.ts';

export interface EntryInput {
  readonly value: string;
  readonly displayName: string;
  readonly description?: string;
}

export interface TypeInput {
  readonly name: string;
  readonly endpoint: string;
  readonly description?: string;
  readonly required: boolean;
  readonly multiValued: boolean;
}

export interface TypeDocument extends TypeInput {
  readonly entitlements: readonly EntryInput[];
}

/** The whole catalog as PUT /v2/admin/Catalog takes it (and GET shows it). */
export interface CatalogDocument {
  /** Absent: the team keeps its setting. */
  readonly schemas?: CatalogSchemas;
  readonly roles: readonly EntryInput[];
  readonly entitlementTypes: readonly TypeDocument[];
}

export const RESERVED_TYPE_NAMES: readonly string[] = ['User', 'Group', 'Role', 'Entitlement', 'Schema', 'ResourceType', 'ServiceProviderConfig', 'Bulk'];
export const RESERVED_ENDPOINTS: readonly string[] = ['/Users', '/Groups', '/Roles', '/Entitlements', '/Schemas', '/ResourceTypes', '/ServiceProviderConfig', '/ServiceProviderConfigs', '/Bulk', '/Me'];
export const CATALOG_SCHEMAS: readonly CatalogSchemas[] = ['okta', 'ietf'];

const TYPE_NAME = /^[A-Za-z][A-Za-z0-9 _-]{0,63}$/;
const ENDPOINT = /^\/[A-Za-z][A-Za-z0-9_-]{0,63}$/;
const CONTROL = /\p{Cc}/u;
const MAX_TEXT = 256;
const MAX_DESCRIPTION = 1000;

const problem = (where: string, why: string): ScimError => badRequest('invalidValue', `${where}: ${why}`);

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const quoted = (v: string): string => JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}...` : v);

function onlyKeys(o: Json, where: string, allowed: readonly string[]): void {
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key)) throw problem(where === '' ? key : `${where}.${key}`, `is not a member of a catalog ${where === '' ? 'document' : 'entry'} (allowed: ${allowed.join(', ')})`);
  }
}

const at = (where: string, key: string): string => (where === '' ? key : `${where}.${key}`);

/** A role's or an entitlement's value: its SCIM id. */
export function readValue(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_TEXT) throw problem(where, `must be a string of 1 to ${MAX_TEXT} characters`);
  if (CONTROL.test(raw)) throw problem(where, 'must not contain control characters');
  if (raw.trim() !== raw) throw problem(where, `must not begin or end with whitespace (got ${quoted(raw)})`);
  return raw;
}

function readDisplayName(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_TEXT) throw problem(where, `is required: a string of 1 to ${MAX_TEXT} characters`);
  if (CONTROL.test(raw)) throw problem(where, 'must not contain control characters');
  return raw;
}

function readDescription(raw: unknown, where: string): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > MAX_DESCRIPTION) throw problem(where, `must be a string of at most ${MAX_DESCRIPTION.toLocaleString('en-US')} characters`);
  return raw;
}

function readBoolean(raw: unknown, where: string, fallback: boolean): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== 'boolean') throw problem(where, 'must be true or false');
  return raw;
}

/** A role or an entitlement: `{value, displayName, description?}`. */
export function readEntry(raw: unknown, where = ''): EntryInput {
  if (!isObject(raw)) throw problem(where || 'body', 'must be an object {"value", "displayName", "description"?}');
  onlyKeys(raw, where, ['value', 'displayName', 'description']);
  const description = readDescription(raw.description, at(where, 'description'));
  return { value: readValue(raw.value, at(where, 'value')), displayName: readDisplayName(raw.displayName, at(where, 'displayName')), ...(description !== undefined ? { description } : {}) };
}

/** An entitlement type's name (`License`). */
export function readTypeName(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || !TYPE_NAME.test(raw)) throw problem(where, 'must be a letter, then letters, digits, spaces, "_" or "-" (at most 64 characters)');
  if (RESERVED_TYPE_NAMES.some((n) => n.toLowerCase() === raw.toLowerCase())) throw problem(where, `"${raw}" is a SCIM resource type Rollcall serves; the reserved names are ${RESERVED_TYPE_NAMES.join(', ')}`);
  return raw;
}

function readEndpoint(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || !ENDPOINT.test(raw)) throw problem(where, 'must be "/" then a letter, then letters, digits, "_" or "-" (at most 64 characters), e.g. "/Licenses"');
  if (RESERVED_ENDPOINTS.some((e) => e.toLowerCase() === raw.toLowerCase())) throw problem(where, `"${raw}" is a SCIM endpoint Rollcall serves; the reserved endpoints are ${RESERVED_ENDPOINTS.join(', ')}`);
  return raw;
}

const TYPE_KEYS = ['name', 'endpoint', 'description', 'required', 'multiValued'] as const;

function readTypeFields(raw: Json, where: string): TypeInput {
  const description = readDescription(raw.description, at(where, 'description'));
  return {
    name: readTypeName(raw.name, at(where, 'name')),
    endpoint: readEndpoint(raw.endpoint, at(where, 'endpoint')),
    ...(description !== undefined ? { description } : {}),
    required: readBoolean(raw.required, at(where, 'required'), false),
    multiValued: readBoolean(raw.multiValued, at(where, 'multiValued'), true),
  };
}

/** An entitlement type without its entitlements: `{name, endpoint, description?, required?, multiValued?}`. */
export function readType(raw: unknown, where = ''): TypeInput {
  if (!isObject(raw)) throw problem(where || 'body', 'must be an object {"name", "endpoint", "description"?, "required"?, "multiValued"?}');
  onlyKeys(raw, where, TYPE_KEYS);
  return readTypeFields(raw, where);
}

/** The discovery schemas setting: `okta` or `ietf`. */
export function readSchemas(raw: unknown, where = 'schemas'): CatalogSchemas {
  if (typeof raw !== 'string' || !CATALOG_SCHEMAS.includes(raw as CatalogSchemas)) throw problem(where, `must be one of ${CATALOG_SCHEMAS.join(', ')}`);
  return raw as CatalogSchemas;
}

function readArray(raw: unknown, where: string): unknown[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw problem(where, 'must be an array');
  return raw;
}

/**
 * The whole catalog document of PUT /v2/admin/Catalog: `{schemas?, roles, entitlementTypes}`, both
 * lists required (checked after their contents, so a bad element is named first), with role values unique, entitlement values unique across every type, type names and endpoints
 * unique case-insensitively.
 */
export function readCatalogDocument(raw: unknown): CatalogDocument {
  if (!isObject(raw)) throw problem('body', 'must be a catalog object {"schemas"?, "roles", "entitlementTypes"}');
  onlyKeys(raw, '', ['schemas', 'roles', 'entitlementTypes']);
  const schemas = raw.schemas === undefined || raw.schemas === null ? undefined : readSchemas(raw.schemas);
  const roles = readArray(raw.roles, 'roles').map((r, i) => readEntry(r, `roles[${i}]`));
  const roleValues = new Map<string, number>();
  roles.forEach((r, i) => {
    const first = roleValues.get(r.value);
    if (first !== undefined) throw problem(`roles[${i}].value`, `${quoted(r.value)} is already roles[${first}] (values compare exactly)`);
    roleValues.set(r.value, i);
  });
  const names = new Map<string, string>();
  const endpoints = new Map<string, string>();
  const values = new Map<string, string>();
  const entitlementTypes = readArray(raw.entitlementTypes, 'entitlementTypes').map((t, i): TypeDocument => {
    const where = `entitlementTypes[${i}]`;
    if (!isObject(t)) throw problem(where, 'must be an object {"name", "endpoint", "description"?, "required"?, "multiValued"?, "entitlements"}');
    onlyKeys(t, where, [...TYPE_KEYS, 'entitlements']);
    const type = readTypeFields(t, where);
    const sameName = names.get(type.name.toLowerCase());
    if (sameName) throw problem(`${where}.name`, `"${type.name}" is already ${sameName} (names compare case-insensitively)`);
    names.set(type.name.toLowerCase(), where);
    const sameEndpoint = endpoints.get(type.endpoint.toLowerCase());
    if (sameEndpoint) throw problem(`${where}.endpoint`, `"${type.endpoint}" is already the endpoint of ${sameEndpoint} (endpoints compare case-insensitively)`);
    endpoints.set(type.endpoint.toLowerCase(), where);
    const entitlements = readArray(t.entitlements, `${where}.entitlements`).map((e, j) => {
      const entry = readEntry(e, `${where}.entitlements[${j}]`);
      const first = values.get(entry.value);
      if (first) throw problem(`${where}.entitlements[${j}].value`, `${quoted(entry.value)} is already ${first} (an entitlement's value is unique across every type)`);
      values.set(entry.value, `${where}.entitlements[${j}]`);
      return entry;
    });
    return { ...type, entitlements };
  });
  // Both lists are the whole catalog: one absent (or null) is refused rather than read as empty,
  // so a document naming only `schemas` cannot wipe the catalog. [] means none.
  for (const member of ['roles', 'entitlementTypes'] as const) {
    if (raw[member] === undefined || raw[member] === null) throw problem(member, 'is required: the whole list (send [] for none); to change only "schemas", send the catalog as GET shows it with the new setting');
  }
  return { ...(schemas ? { schemas } : {}), roles, entitlementTypes };
}
