/**
 * The schemas of a team's catalog resources (DESIGN.md section 12), as data like user.ts: the
 * Role and Entitlement resources that `/Roles`, `/Entitlements` and each entitlement type's
 * endpoint (`/Licenses`) serve, in the two forms a team may choose (`Catalog.schemas`):
 *
 * - `okta`: `urn:okta:scim:schemas:core:1.0:Role` and `...:Entitlement`, the URNs Okta Identity
 *   Governance recognises (Okta's guide "Build a SCIM 2.0 server with entitlements"). Okta
 *   publishes no schema document for them (its guide says Okta knows them and needs none from
 *   /Schemas); the attributes here are those its guide's examples carry (`displayName`, and
 *   `type` on entitlements, besides the common `id`), plus `description`, which the catalog holds.
 * - `ietf`: `urn:ietf:params:scim:schemas:core:2.0:Role` and `...:Entitlement`, with the
 *   attributes of the schema samples of draft-ietf-scim-roles-entitlements-01 ("Schema samples"),
 *   as the draft writes them (its samples list `id` among the attributes, and it is kept).
 *
 * `catalogResourceTypes` lists the resource types a catalog adds (Role, then one per entitlement
 * type in Okta's form, or the draft's Entitlement in the IETF form), `catalogDocument` renders one catalog entry in a form's attributes (without `meta`, which the
 * service adds); it is the only place outside the definitions that names those attributes.
 * Pure data and functions: no storage, no HTTP.
 */
import { compareCodePoints } from '../../text.ts';
import type { Catalog, CatalogEntry, CatalogSchemas, EntitlementType } from './catalog.ts';
import { attr } from './types.ts';
import type { AttributeDef, SchemaDef } from './types.ts';

export const OKTA_ROLE_SCHEMA = 'urn:okta:scim:schemas:core:1.0:Role';
export const OKTA_ENTITLEMENT_SCHEMA = 'urn:okta:scim:schemas:core:1.0:Entitlement';
export const IETF_ROLE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Role';
export const IETF_ENTITLEMENT_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Entitlement';

export type CatalogKind = 'role' | 'entitlement';

/** Catalog resources are read-only through SCIM: every attribute is readOnly. */
const readOnly = (name: string, type: AttributeDef['type'], description: string, options: Partial<AttributeDef> = {}): AttributeDef =>
  attr(name, type, description, { mutability: 'readOnly', ...options });

const oktaRoleSchema: SchemaDef = {
  id: OKTA_ROLE_SCHEMA,
  name: 'Role',
  description: 'A role users of the application may hold (Okta Identity Governance)',
  attributes: [
    readOnly('displayName', 'string', 'The name of the role, suitable for display.', { required: true }),
    readOnly('description', 'string', 'What the role grants.'),
  ],
};

const oktaEntitlementSchema: SchemaDef = {
  id: OKTA_ENTITLEMENT_SCHEMA,
  name: 'Entitlement',
  description: 'An entitlement users of the application may hold (Okta Identity Governance)',
  attributes: [
    readOnly('displayName', 'string', 'The name of the entitlement, suitable for display.', { required: true }),
    readOnly('type', 'string', 'The entitlement type (its resource type name, e.g. License).', { required: true }),
    readOnly('description', 'string', 'What the entitlement grants.'),
  ],
};

/** The attributes both samples of draft-ietf-scim-roles-entitlements-01 declare, in its order. */
const ietfAttributes = (kind: CatalogKind): AttributeDef[] => {
  const role = kind === 'role';
  const noun = role ? 'role' : 'entitlement';
  const ro = (name: string, type: AttributeDef['type'], description: string, options: Partial<AttributeDef> = {}) =>
    readOnly(name, type, description, { returned: 'default', uniqueness: 'none', ...options });
  return [
    ro('id', 'string', role ? 'The unique identifier for the role.' : 'The unique identifier for the Entitlement.', { required: !role }),
    ro('value', 'string', role ? 'The value of a role.' : 'The value of an entitlement.', { required: role }),
    ro('display', 'string', 'A human-readable name, primarily used for display purposes.  READ-ONLY.'),
    ro('type', 'string', "A label indicating the attribute's function."),
    ro('primary', 'boolean', "A Boolean value indicating the 'primary' or preferred attribute value for this attribute.  The primary attribute value 'true' MUST appear no more than once."),
    ro('supported', 'boolean', `supported value for ${noun}`),
    ro('limitedAssignmentsPermitted', 'boolean', `if a limited number of users may be assigned this ${noun}.`),
    ro('totalAssignmentsPermitted', 'integer', `number of users may be assigned this ${noun}, either directly or inherited.`),
    ro('totalAssignmentsUsed', 'integer', `how many users are currently assigned this ${noun}, either directly or inherited.`),
    ro('containedBy', 'string', role
      ? 'A list of "parent" roles that contain a superset of permissions including those granted by this role.'
      : 'A list of "parent" entitlement that contain a superset of permissions including those granted by this entitlement.', { multiValued: true }),
    ro('contains', 'string', role ? 'A list of "child" roles that this role grants the rights of.' : 'A list of "child" roles that this entitlement grants the rights of.', { multiValued: true }),
  ];
};

const ietfRoleSchema: SchemaDef = { id: IETF_ROLE_SCHEMA, name: 'Role', description: 'Role schema', attributes: ietfAttributes('role') };
const ietfEntitlementSchema: SchemaDef = { id: IETF_ENTITLEMENT_SCHEMA, name: 'Entitlement', description: 'Entitlement schema', attributes: ietfAttributes('entitlement') };

const SCHEMAS: Record<CatalogSchemas, Record<CatalogKind, SchemaDef>> = {
  okta: { role: oktaRoleSchema, entitlement: oktaEntitlementSchema },
  ietf: { role: ietfRoleSchema, entitlement: ietfEntitlementSchema },
};

/** The schema of a kind of catalog resource in the team's chosen form. */
export const catalogSchema = (form: CatalogSchemas, kind: CatalogKind): SchemaDef => SCHEMAS[form][kind];

/** Every catalog schema Rollcall defines (a team may not register one of these URNs as its own). */
export const allCatalogSchemas: readonly SchemaDef[] = [oktaRoleSchema, oktaEntitlementSchema, ietfRoleSchema, ietfEntitlementSchema];

/**
 * One catalog entry as a SCIM resource of the form's schema, without `meta`: `id` is the entry's
 * value; an entitlement carries its type's name as `type`. The draft's form says the entry is
 * supported and its assignments unlimited (Rollcall puts no cap on holders).
 */
export function catalogDocument(form: CatalogSchemas, kind: CatalogKind, entry: CatalogEntry, typeName?: string): Record<string, unknown> {
  const schemas = [catalogSchema(form, kind).id];
  if (form === 'okta') {
    return {
      schemas,
      id: entry.value,
      displayName: entry.displayName,
      ...(typeName !== undefined ? { type: typeName } : {}),
      ...(entry.description !== undefined ? { description: entry.description } : {}),
    };
  }
  return {
    schemas,
    id: entry.value,
    value: entry.value,
    display: entry.displayName,
    ...(typeName !== undefined ? { type: typeName } : {}),
    supported: true,
    limitedAssignmentsPermitted: false,
  };
}

/** A resource type a catalog adds: `Role` at `/Roles`, or one entitlement type at its endpoint. */
export interface CatalogResourceType {
  readonly kind: CatalogKind;
  readonly name: string;
  readonly endpoint: string;
  readonly description: string;
  readonly schema: SchemaDef;
  /** The entitlement type (kind `entitlement`). */
  readonly type?: EntitlementType;
}

/** Ordered by code points (lower-cased for type names), the same on every engine. */
export const byValue = (a: CatalogEntry, b: CatalogEntry): number => compareCodePoints(a.value, b.value);
const byName = (a: EntitlementType, b: EntitlementType): number =>
  compareCodePoints(a.name.toLowerCase(), b.name.toLowerCase()) || compareCodePoints(a.name, b.name);

/** The team's entitlement types in the order discovery and `/Entitlements` list them. */
export const orderedTypes = (catalog: Catalog): EntitlementType[] => [...catalog.types].sort(byName);

/**
 * The resource types a catalog adds to /ResourceTypes. Role at `/Roles` always (for a team with a
 * catalog); then, in Okta's form, one per entitlement type (its name, its endpoint), ordered by
 * name, as Okta's guide lists them; in the IETF form, the one resource type the draft defines,
 * `Entitlement` at `/Entitlements` (draft-ietf-scim-roles-entitlements-01 section 3: "two new
 * resource types, /Roles and /Entitlements"; kinds told apart by the `type` attribute), when the
 * catalog has an entitlement type. Each type's own endpoint answers reads in both forms
 * (catalog-resources.ts); the IETF form just does not advertise it.
 */
export function catalogResourceTypes(catalog: Catalog): CatalogResourceType[] {
  const role: CatalogResourceType = { kind: 'role', name: 'Role', endpoint: '/Roles', description: 'Role', schema: catalogSchema(catalog.schemas, 'role') };
  if (catalog.schemas === 'ietf') {
    const entitlement: CatalogResourceType = { kind: 'entitlement', name: 'Entitlement', endpoint: '/Entitlements', description: 'Entitlement', schema: catalogSchema('ietf', 'entitlement') };
    return catalog.types.length > 0 ? [role, entitlement] : [role];
  }
  return [
    role,
    ...orderedTypes(catalog).map((type): CatalogResourceType => ({
      kind: 'entitlement',
      name: type.name,
      endpoint: type.endpoint,
      description: type.description ?? `${type.name} entitlements`,
      schema: catalogSchema(catalog.schemas, 'entitlement'),
      type,
    })),
  ];
}
