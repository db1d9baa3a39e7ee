/**
 * The audit trail (DESIGN.md sections 3 and 4; issue: every create, replace, patch, deactivate,
 * activate, delete, membership change, sign-in, token issue and revocation). Each event names
 * the actor (the client, user or connection behind the token, or the CLI), the request id, the resource and
 * a summary of what changed, and is written with the executor of the change itself, so the
 * event and the change commit or roll back together. Summaries name attributes, never values
 * of secrets.
 */
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import { insertAuditEvent } from '../storage/repos/audit.ts';
import type { AuditRow } from '../storage/repos/audit.ts';
import type { Executor } from '../storage/types.ts';

export interface Actor {
  readonly via: 'scim' | 'oauth' | 'cli' | 'console';
  readonly clientId: string | null;
  readonly userId: string | null;
  /** The connection whose token or client acted (oauth/connections.ts), if any. */
  readonly connectionId?: string | null;
  /** The one-time setup link whose restricted wizard session acted (console/setup-links.ts). */
  readonly setupLinkId?: string;
}

export const CLI_ACTOR: Actor = { via: 'cli', clientId: null, userId: null };

/** Every action an audit row may record (the audit story has a sentence for each: console/audit-story.ts). */
export const AUDIT_ACTIONS = [
  'create',
  'replace',
  'patch',
  'deactivate',
  'activate',
  'delete',
  'members',
  'sign_in',
  'sign_in_failed',
  'token_issued',
  'token_revoked',
  'grant_revoked',
  // Operator actions: credentials and settings changed by the CLI or console.
  'client_created',
  'client_secret_rotated',
  'client_secret_added',
  'client_secret_revoked',
  'client_updated',
  'client_deleted',
  // RFC 7523 trust of a client: its own keys (private_key_jwt), its federated credentials.
  'client_key_added',
  'client_key_removed',
  'client_federation_added',
  'client_federation_removed',
  'team_updated',
  'password_changed',
  // A CSV export from the console (console/exports.ts): who exported what, with which filters.
  'exported',
  // Event subscriptions: CLI, API and the console's Events page alike.
  'subscription_created',
  'subscription_paused',
  'subscription_resumed',
  'subscription_replayed',
  'subscription_deleted',
  'subscription_secret_rotated',
  // SSF streams (events/ssf/streams.ts): changes by their receivers through the SSF API.
  'stream_created',
  'stream_updated',
  'stream_replaced',
  'stream_deleted',
  'stream_status_changed',
  'stream_subject_added',
  'stream_subject_removed',
  'stream_verification_requested',
  // A team's schema extensions registered, replaced or removed (rollcall schema, /v2/admin/Schemas).
  'schema_added',
  'schema_removed',
  // A group mapped to, or unmapped from, a role or an entitlement (src/access/mappings.ts).
  'access_mapped',
  'access_unmapped',
  // A team's catalog of roles and entitlements (src/access/catalog.ts): each entry or type added,
  // changed or removed; a whole-catalog PUT's summary; the discovery schemas setting.
  'role_added',
  'role_updated',
  'role_removed',
  'entitlement_type_added',
  'entitlement_type_updated',
  'entitlement_type_removed',
  'entitlement_added',
  'entitlement_updated',
  'entitlement_removed',
  'catalog_replaced',
  'catalog_schemas_set',
  // A team's provisioning connections (src/oauth/connections.ts).
  'connection_created',
  'connection_renamed',
  'connection_deleted',
  // The console's Admins page (console/admins.ts): admins added and removed, one-time password
  // links made and used, and every token of an application revoked for the team.
  'admin_added',
  'admin_removed',
  'admin_password_link_issued',
  'admin_password_reset',
  'application_revoked',
  // One-time setup links of the connection wizard (console/setup-links.ts).
  'setup_link_created',
  'setup_link_used',
  'setup_link_revoked',
  // An admin's second factors (src/oauth/factors.ts, src/oauth/passkeys.ts).
  'passkey_added',
  'passkey_removed',
  'totp_enabled',
  'totp_removed',
  'recovery_codes_generated',
  'recovery_code_used',
  'second_factor_failed',
  // Every second factor of an admin removed by another admin or the operator (factors.ts resetSecondFactors).
  'second_factors_reset',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** The catalog's resources (DESIGN.md section 12): a role, an entitlement, an entitlement type. */
export type CatalogResourceType = 'Role' | 'Entitlement' | 'ResourceType';

export interface AuditEvent {
  readonly teamId: string;
  readonly actor: Actor;
  readonly requestId: string | null;
  readonly action: AuditAction;
  readonly resourceType: 'User' | 'Group' | 'Token' | 'Client' | 'Team' | 'Subscription' | 'Schema' | CatalogResourceType | 'Catalog' | 'Connection' | 'SetupLink';
  readonly resourceId: string | null;
  readonly detail: Readonly<Record<string, unknown>>;
}

export async function recordEvent(ex: Executor, clock: Clock, event: AuditEvent): Promise<void> {
  await insertAuditEvent(ex, auditRow(clock, event));
}

/** The stored row of `event`, stamped now (also written beside a feed event: events/feed.ts recordAuditedChange). */
export function auditRow(clock: Clock, event: AuditEvent): AuditRow {
  return {
    id: newId(),
    team_id: event.teamId,
    at: clock.now().toISOString(),
    actor: JSON.stringify(event.actor),
    request_id: event.requestId,
    action: event.action,
    resource_type: event.resourceType,
    resource_id: event.resourceId,
    detail: JSON.stringify(event.detail),
    actor_connection_id: event.actor.connectionId ?? null,
  };
}

/**
 * The attributes whose values differ between two documents: top-level names, and extension
 * attributes as `<urn>:<name>`. Only names: the values may hold personal data.
 */
export function changedAttributes(before: Readonly<Record<string, unknown>>, after: Readonly<Record<string, unknown>>): string[] {
  const changed: string[] = [];
  const visit = (a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>, prefix: string) => {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const x = a[key];
      const y = b[key];
      if (key.startsWith('urn:') && isObject(x ?? {}) && isObject(y ?? {})) {
        visit((x ?? {}) as Record<string, unknown>, (y ?? {}) as Record<string, unknown>, `${key}:`);
      } else if (!sameJson(x, y)) {
        changed.push(`${prefix}${key}`);
      }
    }
  };
  visit(before, after, '');
  return changed.sort();
}

const isObject = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether two JSON values are equal, whatever the order of their objects' keys (arrays compare in
 * order). PostgreSQL's jsonb gives a stored document's keys back in its own order, so a value
 * re-sent with its keys in another order is the same value, not a change. A key whose value is
 * `undefined` counts as absent (as JSON.stringify drops it). Walks without allocating strings:
 * it runs for every attribute of every write.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let defined = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key) || x[key] === undefined) continue;
    defined++;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
  }
  for (const key in y) if (Object.hasOwn(y, key) && y[key] !== undefined) defined--;
  return defined === 0;
}
