/**
 * SCIM 2.0 resource and message types (RFC 7643 core attributes, RFC 7644 messages, RFC 9865
 * cursor paging). Extensions are keyed by their schema URN: pass their shape as the `X` generic
 * (e.g. `User<{ [ENTERPRISE_USER]: EnterpriseUser }>`) or leave it as a record of unknowns.
 */

export const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_USER = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SEARCH_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const BULK_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
export const BULK_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:BulkResponse';
/** The schema of Rollcall's status document of an asynchronous request (GET /v2/scim/AsyncRequests/{txn}). */
export const ASYNC_REQUEST = 'urn:rollcall:params:scim:api:messages:2.0:AsyncRequest';

/** Extension attributes, keyed by schema URN. */
export type Extensions = { readonly [urn: `urn:${string}`]: object | undefined };

export interface Meta {
  readonly resourceType?: string;
  readonly created?: string;
  readonly lastModified?: string;
  readonly location?: string;
  readonly version?: string | null;
}

/** What every resource carries (RFC 7643 section 3.1). */
export interface ResourceBase {
  schemas?: string[];
  readonly id?: string;
  externalId?: string | null;
  readonly meta?: Meta;
}

export interface MultiValued<V = string> {
  value?: V;
  display?: string;
  type?: string;
  primary?: boolean;
  $ref?: string;
}

export interface Name {
  formatted?: string;
  familyName?: string;
  givenName?: string;
  middleName?: string;
  honorificPrefix?: string;
  honorificSuffix?: string;
}

export interface Address {
  formatted?: string;
  streetAddress?: string;
  locality?: string;
  region?: string;
  postalCode?: string;
  country?: string;
  type?: string;
  primary?: boolean;
}

/** RFC 7643 section 4.1 User. `X` types its extensions by URN. */
export type User<X extends Extensions = Extensions> = ResourceBase & {
  userName: string;
  name?: Name;
  displayName?: string;
  nickName?: string;
  profileUrl?: string;
  title?: string;
  userType?: string | null;
  preferredLanguage?: string;
  locale?: string;
  timezone?: string;
  active?: boolean;
  /** Write-only: never returned. */
  password?: string;
  emails?: MultiValued[];
  phoneNumbers?: MultiValued[];
  ims?: MultiValued[];
  photos?: MultiValued[];
  addresses?: Address[];
  readonly groups?: MultiValued[];
  entitlements?: MultiValued[];
  roles?: MultiValued[];
  x509Certificates?: MultiValued[];
} & Partial<X>;

/** RFC 7643 section 4.3 enterprise extension (under ENTERPRISE_USER). */
export interface EnterpriseUser {
  employeeNumber?: string;
  costCenter?: string;
  organization?: string;
  division?: string;
  department?: string;
  manager?: { value?: string; $ref?: string; displayName?: string };
}

/** A User with the enterprise extension typed. */
export type EnterpriseUserResource = User<{ [ENTERPRISE_USER]: EnterpriseUser }>;

export interface GroupMember {
  value: string;
  display?: string;
  type?: 'User' | 'Group' | string;
  $ref?: string;
}

/** RFC 7643 section 4.2 Group. */
export type Group<X extends Extensions = Extensions> = ResourceBase & {
  displayName?: string;
  members?: GroupMember[];
  /** The contract's Group attributes. */
  display?: string;
  active?: boolean;
} & Partial<X>;

/** Any resource of a type the team defines (/ResourceTypes). */
export type GenericResource = ResourceBase & Record<string, unknown>;

/** RFC 7644 section 3.5.2 PATCH operations. */
export type PatchOperation =
  | { op: 'add'; path?: string; value: unknown }
  | { op: 'replace'; path?: string; value: unknown }
  | { op: 'remove'; path: string; value?: unknown };

export interface PatchOp {
  schemas: [typeof PATCH_OP];
  Operations: PatchOperation[];
}

/** RFC 7644 section 3.4.2 ListResponse, with RFC 9865's cursors. */
export interface ListResponse<R> {
  schemas: string[];
  totalResults?: number;
  itemsPerPage?: number;
  startIndex?: number;
  nextCursor?: string;
  previousCursor?: string;
  Resources: R[];
}

/** Query parameters of a list / search (RFC 7644 3.4.2, RFC 9865). */
export interface ListQuery {
  /** A filter string, or a built filter (filter.ts). */
  filter?: string | { toString(): string };
  sortBy?: string;
  sortOrder?: 'ascending' | 'descending';
  startIndex?: number;
  /** RFC 9865: '' asks for the first page with cursor paging. */
  cursor?: string;
  count?: number;
  attributes?: string[];
  excludedAttributes?: string[];
}

/** RFC 7644 section 3.12 error body. */
export interface ScimErrorBody {
  schemas?: string[];
  status?: string;
  scimType?: string;
  detail?: string;
}

/** RFC 6749 section 5.2 error body. */
export interface OAuthErrorBody {
  error: string;
  error_description?: string;
}

/**
 * One operation of a BulkRequest (RFC 7644 section 3.7). `path` is relative to the SCIM root
 * (/Users, /Groups/{id}, /Users/{id}/activate); a later operation may name a resource created by
 * this request as `bulkId:<bulkId>`, in `path` or as a value anywhere in `data`.
 */
export type BulkOperation =
  | { method: 'POST'; path: string; bulkId?: string; data: object }
  | { method: 'PUT'; path: string; bulkId?: string; version?: string; data: object }
  | { method: 'PATCH'; path: string; bulkId?: string; version?: string; data: PatchOp }
  | { method: 'DELETE'; path: string; bulkId?: string; version?: string };

/** One operation's result in a BulkResponse, in request order (RFC 7644 section 3.7.3). */
export interface BulkOperationResult {
  readonly method: string;
  readonly bulkId?: string;
  /** The ETag after the write (absent for a failure and a group DELETE). */
  readonly version?: string;
  /** The resource's URL (absent for a failed POST). */
  readonly location?: string;
  /** The HTTP status the operation would have had alone, as a string ("201", "409"). */
  readonly status: string;
  /** On a failure: the SCIM error body (RFC 7644 section 3.12). */
  readonly response?: ScimErrorBody;
}

/** RFC 7644 section 3.7 BulkResponse. Operations left unrun by failOnErrors are absent. */
export interface BulkResponse {
  readonly schemas: string[];
  readonly Operations: BulkOperationResult[];
}

/** What a 202 to `Prefer: respond-async` gives (RFC 9967 section 2.5.1.1). */
export interface AsyncAccepted {
  /** The Set-Txn header: the txn of the request's asyncresp events (`<txn>:<i>` per Bulk operation). */
  readonly txn: string;
  /** The Location header: the status URL (GET it with `asyncRequest`). */
  readonly location: string;
}

/** Rollcall's status document of an asynchronous request (docs/bulk.md). */
export interface AsyncRequestStatus {
  readonly schemas: string[];
  /** The txn (Set-Txn). */
  readonly id: string;
  readonly status: 'queued' | 'running' | 'done';
  readonly method: string;
  /** The path the request was sent to, under the SCIM root (/Bulk, /Users, /Groups/{id}). */
  readonly path: string;
  /** Operations in the request (1 for a single write). */
  readonly operations: number;
  /** Operations finished so far. */
  readonly completed: number;
  readonly accepted: string;
  readonly finished?: string;
  /** When done: the BulkResponse of a Bulk, or a single write's result shaped as one BulkResponse operation. */
  readonly response?: BulkResponse | BulkOperationResult;
}
