/**
 * A user's direct roles and entitlements (RFC 7643 4.1.2: `roles` and `entitlements`, multi-valued
 * complex attributes of `value`, `display`, `type`, `primary`) against the team's catalog
 * (DESIGN.md section 12, schema/catalog.ts), and what the user_grants rows hold of them. Pure: no
 * storage, no HTTP; users.ts calls `checkAssignments` after `validateResource`, grants.ts writes
 * `grantsOf` rows.
 *
 * The rules, for a team with a catalog (a team without one keeps free text, unchecked):
 * - each `roles[].value` newly assigned by the write names a catalog role, each
 *   `entitlements[].value` a catalog entitlement, and an entitlement's `type`, when sent, names
 *   its type (its name or its endpoint without the slash, case-insensitively). Values the user
 *   already held are kept as they are (a value stored before the team declared its catalog does
 *   not block the user's next write; removing a held catalog entry is refused or forced, so no
 *   other held value is unknown);
 * - a single-valued type held at most once; a required type held at least once by an active
 *   user; these checks run when the write assigns the attribute: on POST, and on a PUT or PATCH
 *   that changes it (a PATCH of `displayName`, or a PUT that only deactivates the user, is never
 *   refused for roles or entitlements it did not touch). `primary:
 *   true` on at most one element is validate.ts's rule, for every team.
 * Errors are 400 `invalidValue` naming the value and the catalog.
 *
 * It also makes a catalog team's `roles.value` and `entitlements.value` caseExact (catalog ids
 * compare exactly) and marks both attributes `grants`, so filters on them are answered from the
 * user_grants rows (filter/lower.ts).
 */
import { badRequest } from './errors.ts';
import { entitlementOf, hasCatalog, typeNamed } from './schema/catalog.ts';
import type { Catalog, CatalogEntry, EntitlementType } from './schema/catalog.ts';
import type { TeamTypes } from './schema/extensions.ts';
import type { AttributeDef, ResourceTypeDef } from './schema/types.ts';

type Json = Record<string, unknown>;

export type GrantKind = 'role' | 'entitlement';

/** The attribute of a user holding each kind. */
export const ATTRIBUTE_OF: Readonly<Record<GrantKind, 'roles' | 'entitlements'>> = Object.freeze({ role: 'roles', entitlement: 'entitlements' });

/** One user_grants row: an element of `roles` / `entitlements` (its `type` '' when absent). */
export interface Grant {
  readonly kind: GrantKind;
  readonly value: string;
  readonly type: string;
  readonly primary: boolean;
}

/**
 * The most characters of a value and a type a grants row holds (migration 023's columns), and the
 * most UTF-8 bytes (the row's key must fit one PostgreSQL index entry, at most ~2.7 KB).
 */
const MAX_VALUE = 1024;
const MAX_TYPE = 256;
const MAX_VALUE_BYTES = 1536;
const MAX_TYPE_BYTES = 512;
/** How many catalog values an unknown-value error lists. */
const LISTED = 20;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);
const codePoints = (text: string): number => [...text].length;
const elementsOf = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);
const invalid = (detail: string) => badRequest('invalidValue', detail);
const quoted = (text: string): string => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}...` : text);

/**
 * The grants rows of a stored document, as migration 023's backfill reads them: each element with
 * a string `value` of 1..1,024 characters and a string `type` of at most 256 (or none, ''), each
 * also bounded in bytes (MAX_VALUE_BYTES, MAX_TYPE_BYTES); duplicates collapsed, primary when any
 * duplicate is. None for an undefined document (a user that left every read). Ordered by kind,
 * value, type.
 */
export function grantsOf(document: Json | undefined): Grant[] {
  if (!document) return [];
  const byKey = new Map<string, Grant>();
  for (const kind of ['role', 'entitlement'] as const) {
    for (const e of elementsOf(document[ATTRIBUTE_OF[kind]])) {
      const { value, type } = e;
      if (typeof value !== 'string' || codePoints(value) < 1 || codePoints(value) > MAX_VALUE || Buffer.byteLength(value) > MAX_VALUE_BYTES) continue;
      if (type !== undefined && type !== null && typeof type !== 'string') continue;
      const t = typeof type === 'string' ? type : '';
      if (codePoints(t) > MAX_TYPE || Buffer.byteLength(t) > MAX_TYPE_BYTES) continue;
      const key = JSON.stringify([kind, value, t]);
      const primary = e.primary === true || byKey.get(key)?.primary === true;
      byKey.set(key, { kind, value, type: t, primary });
    }
  }
  return [...byKey.values()].sort((a, b) => cmp(a.kind, b.kind) || cmp(a.value, b.value) || cmp(a.type, b.type));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** JSON text with object keys sorted: PostgreSQL's jsonb gives a stored document's keys back in its own order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** Whether a write leaves an attribute as it was (whatever the order of its elements' keys). */
export const sameValue = (a: unknown, b: unknown): boolean => canonical(a) === canonical(b);

/** Whether two documents hold the same roles and entitlements, as sent. */
export const sameAssignments = (a: Json | undefined, b: Json | undefined): boolean => sameValue(a?.roles, b?.roles) && sameValue(a?.entitlements, b?.entitlements);

/** Whether a document holds any role or entitlement element at all. */
export const holdsAssignments = (document: Json | undefined): boolean =>
  document !== undefined && (elementsOf(document.roles).length > 0 || elementsOf(document.entitlements).length > 0);

function listed(values: readonly string[]): string {
  const shown = values.slice(0, LISTED).join(', ');
  return values.length > LISTED ? `${shown}, and ${values.length - LISTED} more` : shown;
}


/** A value a write assigns: a string naming an entry (the type of a role element is free text, bounded as its grants row is). */
function checkElementShape(attribute: string, e: Json): string {
  const { value } = e;
  if (typeof value !== 'string' || value === '') throw invalid(`${attribute}: each value needs a "value" naming an entry of the team's catalog`);
  if (typeof e.type === 'string' && (codePoints(e.type) > MAX_TYPE || Buffer.byteLength(e.type) > MAX_TYPE_BYTES)) {
    throw invalid(`${attribute}: a type is at most ${MAX_TYPE} characters and ${MAX_TYPE_BYTES} bytes`);
  }
  return value;
}

function checkRoles(catalog: Catalog, elements: readonly Json[], held: ReadonlySet<string>): void {
  const known = new Set(catalog.roles.map((r) => r.value));
  for (const e of elements) {
    const value = checkElementShape('roles', e);
    if (held.has(value) || known.has(value)) continue;
    const roles = catalog.roles.map((r) => r.value);
    throw invalid(roles.length === 0 ? `${quoted(value)} is not a role in the team's catalog (it declares no roles)` : `${quoted(value)} is not a role in the team's catalog (${listed(roles)})`);
  }
}

function checkEntitlements(catalog: Catalog, elements: readonly Json[], held: ReadonlySet<string>, requireTypes: boolean): void {
  const holding = new Map<EntitlementType, Set<string>>();
  for (const e of elements) {
    const value = checkElementShape('entitlements', e);
    const found = entitlementOf(catalog, value);
    if (!found) {
      if (held.has(value)) continue;
      const all = catalog.types.flatMap((t) => t.entitlements.map((x) => x.value));
      throw invalid(all.length === 0 ? `${quoted(value)} is not an entitlement in the team's catalog (it declares none)` : `${quoted(value)} is not an entitlement in the team's catalog (${listed(all)})`);
    }
    if (typeof e.type === 'string' && typeNamed(catalog, e.type) !== found.type) {
      throw invalid(`entitlements: ${quoted(value)} is a ${found.type.name} entitlement, not of type ${quoted(e.type)}`);
    }
    const of = holding.get(found.type) ?? holding.set(found.type, new Set()).get(found.type)!;
    of.add(value);
  }
  for (const [type, values] of holding) {
    if (!type.multiValued && values.size > 1) throw invalid(`entitlements: ${type.name} is single-valued; at most one may be held (got ${listed([...values].map(quoted))})`);
  }
  if (!requireTypes) return;
  for (const type of catalog.types) {
    if (type.required && !holding.has(type)) throw invalid(`entitlements: a ${type.name} entitlement is required (${listed(type.entitlements.map((x) => x.value)) || 'the catalog declares none yet'})`);
  }
}

/**
 * Checks the roles and entitlements a write leaves on a user against the team's catalog (see the
 * module header); `original` is the stored document (PUT and PATCH). Throws 400 `invalidValue`.
 */
export function checkAssignments(catalog: Catalog | undefined, write: 'create' | 'replace' | 'patch', document: Json, original?: Json): void {
  if (!hasCatalog(catalog)) return;
  const heldValues = (attribute: string) => new Set(elementsOf(original?.[attribute]).map((e) => e.value).filter((v): v is string => typeof v === 'string'));
  // A create assigns everything; a replace or a patch only what it changes (Okta's deactivation
  // is a PUT with the user's roles and entitlements as they were: it is never refused for them).
  const changes = (attribute: 'roles' | 'entitlements') => write === 'create' || !sameValue(document[attribute], original?.[attribute]);
  if (changes('roles')) checkRoles(catalog, elementsOf(document.roles), heldValues('roles'));
  // A required type binds the users who can act: a write leaving the user deactivated is not refused for it.
  if (changes('entitlements')) checkEntitlements(catalog, elementsOf(document.entitlements), heldValues('entitlements'), document.active !== false);
}

/** `attr` (roles or entitlements) as a catalog team sees it: its `value` caseExact, its rows the grants. */
function grantsAttribute(attr: AttributeDef, grant: GrantKind): AttributeDef {
  const subAttributes = attr.subAttributes?.map((s) => (s.name === 'value' ? Object.freeze({ ...s, caseExact: true }) : s));
  return Object.freeze({ ...attr, storage: { kind: 'grants' as const, grant }, ...(subAttributes ? { subAttributes } : {}) });
}

/** The team's types with its catalog: the User's `roles` and `entitlements` as grantsAttribute makes them. */
export function withCatalog(types: TeamTypes, catalog: Catalog): TeamTypes {
  const user: ResourceTypeDef = Object.freeze({
    ...types.User,
    schema: Object.freeze({
      ...types.User.schema,
      attributes: types.User.schema.attributes.map((a) => (a.name === 'roles' ? grantsAttribute(a, 'role') : a.name === 'entitlements' ? grantsAttribute(a, 'entitlement') : a)),
    }),
  });
  return Object.freeze({ ...types, User: user, catalog });
}
