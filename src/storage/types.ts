/**
 * The database schema as Kysely sees it (DESIGN.md section 3). Timestamps are ISO 8601 UTC
 * strings with milliseconds on both engines (they sort as text); booleans are 0/1 integers;
 * `data` is the resource's JSON document (text on SQLite, jsonb on PostgreSQL).
 */
import type { Kysely, Transaction } from 'kysely';

export interface TeamsTable {
  id: string;
  name: string;
  name_key: string;
  deactivated_users: 'hidden' | 'visible';
  created_at: string;
  /** Bumped by every change of the team's schema extensions (migration 009); 0 when never changed. */
  schema_version?: number;
  /** The operator's budget overrides, a JSON object of name -> value (migration 016, src/budgets.ts); NULL: all defaults. */
  limits?: string | null;
  /** Which schemas discovery shows for the team's catalog (migration 023): Okta's (default) or the IETF draft's. */
  catalog_schemas?: 'okta' | 'ietf';
  /** 1 when every admin of the team must pass a second factor to sign in (migration 029). */
  require_second_factor?: number;
}

/** A team's extension schema (migration 009). */
export interface SchemaExtensionsTable {
  team_id: string;
  schema_id: string;
  /** `schema_id` lower-cased: URNs compare case-insensitively. */
  schema_key: string;
  resource_type: 'User' | 'Group';
  required: number;
  /** The RFC 7643 section 7 schema as accepted (JSON). */
  definition: string;
  /** Every attribute ever declared, name (lower-cased) -> type (JSON). */
  declared: string;
  created_at: string;
  updated_at: string;
  removed_at: string | null;
}

/** Values of `uniqueness: server` extension attributes (migration 009). */
export interface ExtensionUniqueValuesTable {
  team_id: string;
  resource_type: 'User' | 'Group';
  /** `<schema URN>:<attribute>`, lower-cased. */
  attribute: string;
  value_key: string;
  resource_id: string;
}

export interface UsersTable {
  id: string;
  team_id: string;
  user_name: string;
  user_name_key: string;
  /** `user_name_key` while the user holds its userName, else NULL (migration 006, DESIGN.md 4). */
  user_name_claim: string | null;
  external_id: string | null;
  active: number;
  user_type: string | null;
  display_name: string | null;
  given_name: string | null;
  family_name: string | null;
  /**
   * The userName, given and family name as the console's search box compares them
   * (text.ts searchFold: case and accents ignored), indexed after the team (migration 032).
   * Never read by a SCIM filter.
   */
  user_name_search: string;
  given_name_search: string | null;
  family_name_search: string | null;
  password_hash: string | null;
  data: string;
  version: number;
  created_at: string;
  updated_at: string;
  /** When DELETE removed the user in a team that shows deactivated users (kept for audit and activate). */
  deleted_at: string | null;
}

export interface GroupsTable {
  id: string;
  team_id: string;
  display_name: string;
  display_name_key: string;
  /** The displayName as the console's search box compares it (text.ts searchFold), indexed after the team (migration 032). */
  display_name_search: string;
  external_id: string | null;
  active: number;
  data: string;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface GroupMembersTable {
  team_id: string;
  group_id: string;
  user_id: string;
  created_at: string;
  /** The member's accent-folded userName, as `users.user_name_search` (migration 034: a member search is a range of the group's index). */
  user_name_search: string;
}

export interface OAuthTokensTable {
  hash: string;
  kind: 'access' | 'refresh';
  family_id: string | null;
  client_id: string | null;
  user_id: string | null;
  team_id: string;
  scope: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  /** The client secret that authenticated the request that issued the token (null otherwise). */
  secret_id: string | null;
  /** The connection the token belongs to (migration 027); its user_id is then null. */
  connection_id: string | null;
}

export interface OAuthClientsTable {
  id: string;
  name: string;
  /** JSON array of the registered redirect URIs. */
  redirect_uris: string;
  team_id: string | null;
  created_at: string;
  updated_at: string;
  /** Seconds every access token of the client lives; null: the server's ACCESS_TOKEN_TTL. */
  token_lifetime: number | null;
  /** The connection the client belongs to (migration 027): its tokens are the connection's. */
  connection_id?: string | null;
}

/** One of a client's secrets (DESIGN.md section 11), kept only as its SHA-256. */
export interface OAuthClientSecretsTable {
  id: string;
  client_id: string;
  name: string;
  secret_hash: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface OAuthCodesTable {
  hash: string;
  /** The grant every token minted from this code belongs to (revoked on a second use). */
  family_id: string;
  client_id: string;
  user_id: string;
  team_id: string;
  redirect_uri: string;
  /** 1 when the authorization request carried redirect_uri (then the token request must repeat it). */
  redirect_uri_given: number;
  scope: string;
  code_challenge: string | null;
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

export interface SettingsTable {
  name: string;
  value: string;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the random session id the cookie carries. */
  id_hash: string;
  /** Which cookie opened it ('oauth' for the authorization pages; the console will have its own). */
  kind: string;
  user_id: string;
  team_id: string;
  /** SHA-256 of the user's password hash when the session began: a new password ends it. */
  credential: string;
  created_at: string;
  expires_at: string;
}

/** The name, id and last use of an access token an operator issued (migration 008). */
export interface ProvisioningTokensTable {
  id: string;
  team_id: string;
  /** The oauth_tokens row (its SHA-256) this describes. */
  token_hash: string;
  name: string;
  /** The user it acts as (an admin's own script token); null for a connection's token. */
  user_id: string | null;
  /** 'cli', or 'console:<user id>'. */
  issued_by: string;
  created_at: string;
  expires_at: string;
  last_used_at: string | null;
  /** The connection it belongs to (migration 027), or null for a user's own token. */
  connection_id?: string | null;
}

/** One SCIM request of a team (migration 008), redacted and bounded. */
export interface RequestLogTable {
  id: string;
  team_id: string;
  at: string;
  method: string;
  path: string;
  status: number;
  scim_type: string | null;
  latency_ms: number;
  client_id: string | null;
  /** The provisioning token's hash (joins provisioning_tokens), for requests without a client. */
  token_hash: string | null;
  request_id: string | null;
  body: string | null;
  /** The `detail` of a SCIM error answer, bounded (migration 028); null for a success. */
  detail?: string | null;
  /** The connection whose token or client made the request (migration 027). */
  connection_id?: string | null;
}

/** A team's provisioning connection (migration 027): a principal of its own, named uniquely per team. */
export interface ConnectionsTable {
  id: string;
  team_id: string;
  name: string;
  /** lower(trim(name)): unique per team. */
  name_key: string;
  /** 'entra', 'okta', 'generic', or null. */
  provider: string | null;
  created_at: string;
  /** Who made it: 'cli', 'console:<user id>', 'migration'. */
  created_by: string;
  last_used_at: string | null;
}

/** A one-time setup link (migration 028): only hashes of the link and of the session it opened. */
export interface SetupLinksTable {
  id: string;
  team_id: string;
  link_hash: string;
  /** Whom the admin made it for, as they wrote it (an email address or a name). */
  recipient: string;
  /** The admin who made it: `console:<user id>`. */
  created_by: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
  session_hash: string | null;
  session_expires_at: string | null;
  /** The connection made through the link's session, once made. */
  connection_id: string | null;
}

export interface KeysTable {
  id: string;
  /** What the key is for ('cookie'; later the events' signing keys). */
  purpose: string;
  created_at: string;
  /** Set when a newer key replaced it: still accepted for verification until then. */
  not_after: string | null;
  /** The key material, AES-256-GCM encrypted under the master key (keys/crypto.ts). */
  material: string;
}

export interface AuditEventsTable {
  id: string;
  team_id: string;
  at: string;
  /** JSON: who acted ({"via": "scim" | "oauth" | "cli", "clientId", "userId"}). */
  actor: string;
  request_id: string | null;
  action: string;
  resource_type: string;
  resource_id: string | null;
  /** JSON: a summary of what changed; never a secret. */
  detail: string;
  /** The connection that acted (migration 027), or null. */
  actor_connection_id?: string | null;
}

export interface EventCountersTable {
  team_id: string;
  /**
   * PostgreSQL: the last sequence number handed out (by its readers' numbering, migration 015;
   * its row lock orders them). Both engines: at least the end of the pruned prefix (pruneEvents);
   * the newest event tells the rest (repos/events.ts lastSeq). bigint: a string from
   * PostgreSQL, repos convert.
   */
  seq: number | string;
}

/** A team's counts, kept in each write's transaction (migration 010; repos/counters.ts). bigint: strings from PostgreSQL. */
export interface TeamCountersTable {
  team_id: string;
  /** 0: the whole team (bucket ''); 1: users by creation hour; 2: by creation second (the bucket is that prefix of created_at). */
  level: number;
  bucket: string;
  users_active: number | string;
  /** Deactivated and not deleted. */
  users_deactivated: number | string;
  /** Deleted (a showing team's DELETE keeps the row). */
  users_deleted: number | string;
  groups: number | string;
}

/** One change of the feed (migration 007; DESIGN.md section 8). */
export interface EventsTable {
  team_id: string;
  seq: number | string;
  at: string;
  /** create | put | patch | delete | activate | deactivate, asyncresp (an asynchronous request's completion), or ssf (a Shared Signal): events/feed.ts */
  type: string;
  resource_type: string;
  resource_id: string;
  version: number;
  /** JSON array of the attribute names that changed. */
  changed: string;
  /** JSON: who acted. */
  actor: string;
  /** The request id of the change (the SET's `txn`). */
  txn: string | null;
  external_id: string | null;
  /** JSON: the stored document after the change (never a password), for `:full` renderings. */
  data: string | null;
  /** JSON: the membership delta of a group change ({cleared?, added?, removed?}). */
  members: string | null;
}

export interface EventSubscriptionsTable {
  id: string;
  team_id: string;
  method: 'push' | 'poll';
  url: string | null;
  /** JSON array of event types wanted, or NULL for all. */
  events: string | null;
  full: number;
  state: 'active' | 'paused';
  paused_reason: string | null;
  /** The last seq delivered (push) or acknowledged (poll). */
  cursor: number | string;
  failures: number;
  failing_since: string | null;
  next_attempt_at: string;
  lease_owner: string | null;
  lease_until: string | null;
  /** SHA-256 of the poll credential. */
  secret_hash: string | null;
  created_at: string;
  updated_at: string;
  /** SHA-256 of the access token that created it (migration 018); NULL: the CLI, or a console session. */
  creator_token: string | null;
  /** The user who created it (the token's or the console admin's); NULL: the CLI. */
  creator_user: string | null;
  /** What a push sends (migration 022): RFC 8935 SETs, or Standard Webhooks JSON; `ssf` an SSF 1.0 stream's SETs (migration 025). */
  format: 'set' | 'webhook' | 'ssf';
  /** The webhook signing secret, sealed (keys/sealed.ts); NULL for `set`. */
  webhook_secret: string | null;
  /** The secret a rotation replaced, sealed, still signing until `webhook_previous_until`. */
  webhook_previous_secret: string | null;
  webhook_previous_until: string | null;
  /** An SSF stream's configuration as JSON (migration 025, events/stream-config.ts); NULL for other formats. */
  ssf: string | null;
}

/** A subject an SSF stream's receiver added (`included` 1) or removed (0), migration 025. */
export interface SsfSubjectsTable {
  subscription_id: string;
  team_id: string;
  user_id: string;
  included: number;
  created_at: string;
}

export interface EventAttemptsTable {
  id: string;
  subscription_id: string;
  seq: number | string;
  at: string;
  status: number | null;
  latency_ms: number;
  error: string | null;
}

/** A client's own public keys for private_key_jwt (migration 021): an inline JWK Set or a URL. */
export interface ClientKeysTable {
  id: string;
  client_id: string;
  team_id: string | null;
  /** The JWK Set as JSON (public keys only), or NULL when the keys are at `jwks_uri`. */
  jwks: string | null;
  jwks_uri: string | null;
  created_at: string;
}

/** An external issuer a team-bound client trusts (migration 021): workload identity federation. */
export interface ClientFederationsTable {
  id: string;
  client_id: string;
  team_id: string;
  issuer: string;
  subject: string;
  audience: string;
  /** Where the issuer's keys are; NULL: its OpenID configuration's `jwks_uri`. */
  jwks_uri: string | null;
  created_at: string;
}

/** An accepted assertion's id, remembered until the assertion expires (migration 021). */
export interface UsedAssertionsTable {
  /** SHA-256 of the issuer and the `jti`/`uti`. */
  key: string;
  expires_at: string;
}

/** A team's entitlement type (migration 023). */
export interface CatalogTypesTable {
  team_id: string;
  /** The SCIM resource type name (`License`); `name_key` lower-cased. */
  name: string;
  name_key: string;
  /** `/Licenses`; `endpoint_key` lower-cased. */
  endpoint: string;
  endpoint_key: string;
  description: string | null;
  required: number;
  multi_valued: number;
  created_at: string;
  updated_at: string;
}

/** A role (`kind` 'role', `type_key` '') or an entitlement of a type (migration 023). */
export interface CatalogEntriesTable {
  team_id: string;
  kind: 'role' | 'entitlement';
  type_key: string;
  /** The entry's SCIM `id`, what users' `roles[].value` / `entitlements[].value` hold; exact. */
  value: string;
  display_name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
}

/** One element of a user's `roles` or `entitlements`, as stored in the document (migration 023). */
export interface UserGrantsTable {
  team_id: string;
  kind: 'role' | 'entitlement';
  value: string;
  /** The element's `type`, '' when absent. */
  type: string;
  user_id: string;
  is_primary: number;
}

/** A group mapped to a role or an entitlement (migration 023); `type_key` '' for a role. */
export interface AccessMappingsTable {
  team_id: string;
  kind: 'role' | 'entitlement';
  type_key: string;
  value: string;
  group_id: string;
  created_at: string;
}

/** An asynchronous request (migration 024): a single write or a Bulk, queued per team. */
export interface AsyncRequestsTable {
  id: string;
  team_id: string;
  /** Orders the team's requests (a time-ordered id made on acceptance). */
  position: string;
  /** 'write' (one SCIM write) or 'bulk' (a BulkRequest). */
  kind: string;
  /** 'queued' | 'running' | 'done' */
  state: string;
  /** The accepting request's id: the outcome event's `txn`. */
  txn: string;
  /** JSON: who sent it (the audit actor). */
  actor: string;
  /** JSON: what the worker replays ({method, path, query, ifMatch, body}); '' once done (it may hold passwords). */
  request: string;
  /** The request body's size in bytes (the per-team cap counts them). */
  bytes: number;
  /** Operations in the request (1 for a single write). */
  operations: number;
  /** Operations run so far, committed or failed, in execution order. */
  steps_done: number;
  /** Operations that failed so far (failOnErrors counts them). */
  errors: number;
  lease_owner: string | null;
  lease_until: string | null;
  attempts: number;
  /** JSON: the answer once done ({status, body}); the BulkResponse for a Bulk. */
  outcome: string | null;
  /** The answer's HTTP status once done. */
  status: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** The request's method. */
  method: string;
  /** The request's path under the SCIM base. */
  path: string;
  /** The hash of the access token that queued it, null when none did. */
  token_hash: string | null;
  /** Failures not its own since its last recorded step. */
  failures: number;
}

/** One operation of an asynchronous request, run (migration 024): its BulkResponse entry as JSON. */
export interface AsyncRequestStepsTable {
  request_id: string;
  idx: number;
  outcome: string;
}

/** A one-time link that lets an admin set a new password (migration 030): its SHA-256 only. */
export interface AdminPasswordLinksTable {
  id: string;
  team_id: string;
  user_id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** The actor that made it (audit/events.ts Actor, as JSON). */
  created_by: string;
}

export interface Database {
  teams: TeamsTable;
  users: UsersTable;
  groups: GroupsTable;
  group_members: GroupMembersTable;
  oauth_tokens: OAuthTokensTable;
  oauth_clients: OAuthClientsTable;
  oauth_client_secrets: OAuthClientSecretsTable;
  oauth_codes: OAuthCodesTable;
  settings: SettingsTable;
  audit_events: AuditEventsTable;
  schema_extensions: SchemaExtensionsTable;
  extension_unique_values: ExtensionUniqueValuesTable;
  sessions: SessionsTable;
  keys: KeysTable;
  event_counters: EventCountersTable;
  team_counters: TeamCountersTable;
  events: EventsTable;
  event_subscriptions: EventSubscriptionsTable;
  event_attempts: EventAttemptsTable;
  ssf_subjects: SsfSubjectsTable;
  provisioning_tokens: ProvisioningTokensTable;
  request_log: RequestLogTable;
  connections: ConnectionsTable;
  client_keys: ClientKeysTable;
  client_federations: ClientFederationsTable;
  used_assertions: UsedAssertionsTable;
  catalog_types: CatalogTypesTable;
  catalog_entries: CatalogEntriesTable;
  user_grants: UserGrantsTable;
  access_mappings: AccessMappingsTable;
  async_requests: AsyncRequestsTable;
  async_request_steps: AsyncRequestStepsTable;
  admin_password_links: AdminPasswordLinksTable;
  setup_links: SetupLinksTable;
  passkeys: PasskeysTable;
  totp_factors: TotpFactorsTable;
  recovery_codes: RecoveryCodesTable;
  webauthn_challenges: WebauthnChallengesTable;
}

/** An admin's WebAuthn credential (migration 029): id and COSE public key in base64url. */
export interface PasskeysTable {
  id: string;
  team_id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: number | string;
  /** The transports the browser reported at registration, a JSON array; NULL when none. */
  transports: string | null;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** An admin's authenticator-app secret (RFC 6238), sealed (keys/sealed.ts); unconfirmed until a code proves it. */
export interface TotpFactorsTable {
  user_id: string;
  team_id: string;
  secret: string;
  created_at: string;
  confirmed_at: string | null;
  /** The last time step a code was accepted for: a code of that step or an earlier one is refused. */
  last_step: number | string | null;
}

/** A single-use recovery code, by its SHA-256 digest. */
export interface RecoveryCodesTable {
  user_id: string;
  code_hash: string;
  team_id: string;
  created_at: string;
  used_at: string | null;
}

/** A WebAuthn ceremony's challenge, by digest: one purpose, one user when known, consumed once. */
export interface WebauthnChallengesTable {
  challenge_hash: string;
  purpose: 'register' | 'sign_in';
  user_id: string | null;
  expires_at: string;
}

/** A column of a resource table: what a SCIM attribute's storage mapping and a predicate may name. */
export type ResourceColumn = keyof UsersTable | keyof GroupsTable;
/** A column every resource table has (the timestamps and version `meta` maps to). */
export type CommonColumn = keyof UsersTable & keyof GroupsTable;

export type Db = Kysely<Database>;
/** A database handle or an open transaction: what every repository function takes. */
export type Executor = Kysely<Database> | Transaction<Database>;
/** An open transaction (what a write's body runs on). */
export type Tx = Transaction<Database>;
