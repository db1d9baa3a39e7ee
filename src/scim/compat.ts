/**
 * The identity-provider quirks Rollcall accepts, each named after who sends it and pinned by a
 * recorded request in test/conformance/fixtures (IDP-DIALECTS.md). Nothing here is a general
 * leniency: every function handles one shape that a real client sends, and the validator, the
 * PATCH engine and the filter parser call it by name at the one place the shape can appear.
 */

import type { Filter } from './filter/ast.ts';
import { findAttribute, lower } from './schema/registry.ts';
import type { ResourceTypeDef } from './schema/types.ts';

/** Schema URNs that clients list in `schemas` without sending an extension object for them. */
const TOLERATED_SCHEMA_URNS: readonly string[] = [
  // Entra ID E10 / T16: the legacy Active Directory group URN on POST /Groups.
  'http://schemas.microsoft.com/2006/11/resourcemanagement/adscim/2.0/group',
];

export const isToleratedSchemaUrn = (urn: string): boolean => TOLERATED_SCHEMA_URNS.includes(urn.toLowerCase());

/**
 * Entra ID E5 / T7, OneLogin N2, the Postman collection T23: booleans sent as the strings
 * "True" / "False" (any case). Returns the boolean, or undefined when `value` is not such a string.
 */
export function stringBoolean(value: unknown): boolean | undefined {
  if (typeof value !== 'string') return undefined;
  const lowered = value.trim().toLowerCase();
  if (lowered === 'true') return true;
  if (lowered === 'false') return false;
  return undefined;
}

/**
 * Entra ID E6 / T10: a single-valued complex attribute with a `value` sub-attribute (the
 * enterprise `manager`) arrives as a bare id string or as a one-element array of `{value, $ref}`.
 * Returns the object form, or the input unchanged.
 */
export function singleComplexShape(value: unknown): unknown {
  if (typeof value === 'string') return { value };
  if (Array.isArray(value) && value.length === 1) return value[0];
  return value;
}

/**
 * The Postman collection and some JumpCloud set-ups add a member as a bare id string
 * (`{"op":"add","path":"members","value":"<id>"}`), and send single objects where an array
 * belongs. Returns the array-of-objects form for a multi-valued complex attribute.
 */
export function multiValuedShape(value: unknown): unknown {
  if (typeof value === 'string') return [{ value }];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return [value];
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? { value: v } : v));
  return value;
}

/**
 * The Postman collection's filters carry unquoted string values
 * (`name.FamilyName eq User and (emails.Value co contoso.example)`). A bare word that is not
 * true, false, null or a number is taken as that string.
 */
export const unquotedFilterValue = (word: string): string => word;

/**
 * Entra ID E9 / T20 (the null-update test): PATCH sets an optional attribute to "" or null to
 * clear it. Such a value removes the target instead of storing an empty string.
 */
export const clearsTarget = (value: unknown): boolean => value === null || value === '';

/**
 * Okta O10: a no-path replace carries the group's own `id` beside the attributes it changes
 * (`{"id": "<g>", "displayName": "..."}`). Read-only attributes inside a no-path value object
 * are skipped; a PATCH whose `path` names one still fails with `mutability`.
 */
export const skippedInValueObject = (attr: { readonly mutability: string }): boolean => attr.mutability === 'readOnly';

/**
 * Entra ID E2 (older payloads, fixture entra-legacy.json): an extension attribute sent as `null`
 * at the top level without its URN (`"manager": null`) while `schemas` lists that extension.
 * The key is taken as "not set"; only `null` and only for an extension the body declares: any
 * other value without the URN stays an unknown attribute.
 */
export function nullUnprefixedExtensionAttribute(rt: ResourceTypeDef, key: string, value: unknown, schemas: unknown): boolean {
  if (value !== null || !Array.isArray(schemas)) return false;
  const declared = new Set(schemas.filter((s): s is string => typeof s === 'string').map(lower));
  return rt.extensions.some((e) => declared.has(lower(e.schema.id)) && findAttribute(e.schema.attributes, key) !== undefined);
}

/**
 * Entra ID E7 (Microsoft's "Provisioning a role to a SCIM app"; fixture
 * test/fixtures/roles/entra-app-roles.json): an app role in `roles` arrives
 * - from PATCH (SingleAppRoleAssignment and AppRoleAssignmentsComplex without the aadOptscim062020
 *   flag) as an element whose `value` is the assignment JSON-encoded,
 *   `{"id":"…","value":"Admin","displayName":"Admin"}`;
 * - from POST (AppRoleAssignmentsComplex) with the role's name under `displayName`, which
 *   `roles` does not have (RFC 7643 4.1.2 names it `display`).
 * Returns the element with the role's own `value` and its name as `display` (a `display` sent
 * beside it wins); any other element, and any other attribute's, unchanged.
 */
export function entraAppRole(attr: { readonly name: string }, element: unknown): unknown {
  if (attr.name !== 'roles' || element === null || typeof element !== 'object' || Array.isArray(element)) return element;
  const entries = Object.entries(element as Record<string, unknown>);
  const nameKey = entries.find(([k]) => k.toLowerCase() === 'displayname')?.[0];
  const { value, ...rest } = element as Record<string, unknown>;
  const decoded = typeof value === 'string' && value.startsWith('{') ? decodedAssignment(value) : undefined;
  if (nameKey === undefined && decoded === undefined) return element;
  const out: Record<string, unknown> = { ...rest, value: decoded?.value ?? value };
  const name = nameKey !== undefined ? out[nameKey] : decoded?.displayName;
  if (nameKey !== undefined) delete out[nameKey];
  const hasDisplay = Object.keys(out).some((k) => k.toLowerCase() === 'display');
  if (!hasDisplay && typeof name === 'string') out.display = name;
  return out;
}

/** `{"id":…,"value":"Admin","displayName":"Admin"}` read back, when it is such an object. */
function decodedAssignment(text: string): { value: string; displayName?: string } | undefined {
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (decoded === null || typeof decoded !== 'object' || typeof (decoded as Record<string, unknown>).value !== 'string') return undefined;
  const { value, displayName } = decoded as Record<string, unknown>;
  return { value: value as string, ...(typeof displayName === 'string' ? { displayName } : {}) };
}

/**
 * Entra ID (Microsoft's "Provisioning a role to a SCIM app": the SingleAppRoleAssignment
 * targets `roles[primary eq "True"].value`, `.display`, `.type`; fixture
 * test/fixtures/roles/entra-app-roles.json): a PATCH path's value filter that compares a boolean
 * sub-attribute with the string "True" / "False". Returns the filter with such literals as
 * booleans (`isBoolean` tells which sub-attributes are); only PATCH paths take it, list filters
 * keep refusing a quoted boolean.
 */
export function stringBooleansInPath(filter: Filter, isBoolean: (name: string) => boolean): Filter {
  switch (filter.kind) {
    case 'and':
    case 'or':
      return { ...filter, left: stringBooleansInPath(filter.left, isBoolean), right: stringBooleansInPath(filter.right, isBoolean) };
    case 'not':
      return { ...filter, filter: stringBooleansInPath(filter.filter, isBoolean) };
    case 'compare': {
      const flag = (filter.op === 'eq' || filter.op === 'ne') && filter.path.sub === undefined && isBoolean(filter.path.attr) ? stringBoolean(filter.value) : undefined;
      return flag === undefined ? filter : { ...filter, value: flag };
    }
    default:
      return filter;
  }
}
