/**
 * The shape of a SCIM attribute definition (RFC 7643 section 7) as Rollcall holds it: plain data,
 * the one source read by discovery, validation, projection, filters, PATCH and the storage
 * mapping. This module only declares types; it holds no attribute facts itself. A storage
 * mapping names its column by the table types (storage/types.ts), so a misspelt column fails to
 * compile.
 */
import type { CommonColumn, ResourceColumn } from '../../storage/types.ts';

export type AttributeType =
  | 'string'
  | 'boolean'
  | 'decimal'
  | 'integer'
  | 'dateTime'
  | 'reference'
  | 'complex'
  | 'binary';

export type Mutability = 'readOnly' | 'readWrite' | 'immutable' | 'writeOnly';
export type Returned = 'always' | 'never' | 'default' | 'request';
export type Uniqueness = 'none' | 'server' | 'global';

/**
 * Where a filterable value lives in storage. `column` names an indexed column of the resource's
 * table (the JSON copy in `data` stays authoritative for reads); `id` is the primary key;
 * `meta` is one of the timestamp/version columns; `members` and `groups` are membership rows;
 * `grants` marks a user's roles and entitlements that the user_grants rows also hold.
 * Attributes without a storage entry live only in the `data` JSON document.
 */
export type StorageMapping =
  | { readonly kind: 'column'; readonly column: ResourceColumn; readonly lowerColumn?: ResourceColumn }
  | { readonly kind: 'id' }
  | { readonly kind: 'meta'; readonly column: CommonColumn }
  | { readonly kind: 'members' }
  | { readonly kind: 'groups' }
  /** A user's `roles` / `entitlements` in a team with a catalog: also the user_grants rows (scim/assignments.ts). */
  | { readonly kind: 'grants'; readonly grant: 'role' | 'entitlement' };

export interface AttributeDef {
  readonly name: string;
  readonly type: AttributeType;
  readonly multiValued: boolean;
  readonly description: string;
  readonly required: boolean;
  readonly caseExact: boolean;
  readonly mutability: Mutability;
  readonly returned: Returned;
  readonly uniqueness: Uniqueness;
  readonly canonicalValues?: readonly string[];
  readonly referenceTypes?: readonly string[];
  readonly subAttributes?: readonly AttributeDef[];
  /** Rollcall only: how filters and sorts reach this attribute in SQL. */
  readonly storage?: StorageMapping;
  /**
   * Rollcall only: the attribute is another name for `aliasOf` (the contract's Group `display`
   * for `displayName`, Group `value` for `id`). Input under either name is accepted; both are
   * returned with the same value; only `aliasOf` is stored. An alias is accepted on input when
   * `aliasOf` is writable, whatever its own `mutability` (which is what /Schemas tells clients),
   * and a value sent under `aliasOf` in the same request wins over the alias's.
   */
  readonly aliasOf?: string;
  /**
   * Rollcall only: the value a sub-attribute takes when an element is written without it (the
   * contract returns a phone number sent without `type` as `work`).
   */
  readonly defaultValue?: string;
  /**
   * Rollcall only: the most characters (code points) a string value may hold;
   * DEFAULT_BOUNDS.maxLength when not given. See boundsOf.
   */
  readonly maxLength?: number;
  /**
   * Rollcall only: the most UTF-8 bytes a string value may take, as written and as case-folded,
   * for values copied into an indexed column (PostgreSQL refuses a btree entry over ~2,704 bytes).
   */
  readonly maxBytes?: number;
  /** Rollcall only: the most elements of a multi-valued attribute; DEFAULT_BOUNDS.maxElements when not given. */
  readonly maxElements?: number;
}

/**
 * Bounds every attribute has unless its definition says otherwise (DESIGN.md
 * section 4 "bounds"). A Group's members are rows, not document, and have no element bound.
 */
export const DEFAULT_BOUNDS = Object.freeze({
  maxLength: 4096,
  maxElements: 1000,
  /** The stored document (its JSON, UTF-8) of one resource. */
  maxResourceBytes: 256 * 1024,
});

/** Names, identifiers and keys copied into indexed columns: 2,048 characters, and 2,048 bytes. */
export const INDEXED_NAME_BOUNDS = Object.freeze({ maxLength: 2048, maxBytes: 2048 });

/** The bounds of `def`, defaults filled in. */
export const boundsOf = (def: AttributeDef): { readonly maxLength: number; readonly maxBytes?: number; readonly maxElements: number } => ({
  maxLength: def.maxLength ?? DEFAULT_BOUNDS.maxLength,
  ...(def.maxBytes !== undefined ? { maxBytes: def.maxBytes } : {}),
  maxElements: def.maxElements ?? DEFAULT_BOUNDS.maxElements,
});

export interface SchemaDef {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly attributes: readonly AttributeDef[];
}

export interface ResourceTypeDef {
  readonly name: 'User' | 'Group';
  readonly endpoint: '/Users' | '/Groups';
  readonly description: string;
  readonly schema: SchemaDef;
  readonly extensions: readonly { readonly schema: SchemaDef; readonly required: boolean }[];
}

/** Builds an attribute with RFC 7643 section 2.2 defaults for whatever is not given. */
export function attr(
  name: string,
  type: AttributeType,
  description: string,
  options: Partial<Omit<AttributeDef, 'name' | 'type' | 'description'>> = {},
): AttributeDef {
  return Object.freeze({
    name,
    type,
    description,
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: 'readWrite',
    returned: 'default',
    uniqueness: 'none',
    ...options,
  });
}
