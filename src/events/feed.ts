/**
 * The change feed (DESIGN.md section 8): what every SCIM write calls, next to its
 * audit event and with the same executor, so the event commits or rolls back with the change.
 * One compiled insert (on PostgreSQL the same statement as the audit row). The event names the
 * change's kind (RFC 9967 section 2.2's provisioning events: create, put, patch, delete,
 * activate, deactivate), the resource, its new version, the attribute names that changed, the
 * actor, and what the `:full` renderings need: the stored document (which never holds a
 * password: validate.ts takes it out) and the membership delta. It owns no SQL and no HTTP.
 * An asynchronous request's completion (RFC 9967 section 2.5.1.3) is a feed row of its own type,
 * `asyncresp`, appended by recordAsyncResponse (its columns are described there).
 */
import { auditRow } from '../audit/events.ts';
import type { Actor, AuditEvent, CatalogResourceType } from '../audit/events.ts';
import { iso } from '../clock.ts';
import type { Clock } from '../clock.ts';
import { appendAuditedEvent, appendEvent } from '../storage/repos/events.ts';
import type { EventRow } from '../storage/repos/events.ts';
import type { BumpedEvent, BumpRecord } from '../storage/repos/groups.ts';
import type { EventsTable, Executor } from '../storage/types.ts';

export const CHANGE_TYPES = ['create', 'put', 'patch', 'delete', 'activate', 'deactivate'] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

/** The feed row type of an RFC 9967 section 2.5.1.3 asynchronous response (recordAsyncResponse). */
export const ASYNC_RESPONSE = 'asyncresp';
/** Every type a feed row has, and a subscription may filter on: the changes, then the asynchronous response. */
export const EVENT_TYPES = [...CHANGE_TYPES, ASYNC_RESPONSE] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The SCIM endpoint of each resource type on the feed (RFC 9967 refs, webhook locations). */
const ENDPOINTS: Readonly<Record<Change['resourceType'], string>> = { User: 'Users', Group: 'Groups', Role: 'Roles', Entitlement: 'Entitlements', ResourceType: 'ResourceTypes' };

/** A feed resource's path under the SCIM base (`/Users/{id}`, `/Roles/{value}`), its id percent-encoded. */
export const resourcePath = (resourceType: string, id: string): string => `/${ENDPOINTS[resourceType as Change['resourceType']] ?? `${resourceType}s`}/${encodeURIComponent(id)}`;

/**
 * Which attribute a row's MembersDelta describes: a group's `members`, or the groups mapped to a
 * role or an entitlement (`groups`: one event per mapping added or removed, DESIGN.md section 12).
 */
export const deltaAttribute = (resourceType: string): 'members' | 'groups' => (resourceType === 'Role' || resourceType === 'Entitlement' ? 'groups' : 'members');

export interface MembersDelta {
  readonly cleared?: boolean;
  readonly added?: readonly string[];
  readonly removed?: readonly string[];
}

export interface Change {
  readonly teamId: string;
  readonly type: ChangeType;
  /** A SCIM resource, or a catalog entry or type (Role, Entitlement, ResourceType; the id its value or name). */
  readonly resourceType: 'User' | 'Group' | CatalogResourceType;
  readonly resourceId: string;
  readonly version: number;
  readonly changed: readonly string[];
  readonly actor: Actor;
  readonly txn: string | null;
  readonly externalId: string | null;
  /** The stored document after the change (before it, for a group's delete), as JSON text. */
  readonly data?: string;
  readonly members?: MembersDelta;
}

/** What a write needs to record its change: the clock (the statements come with the executor). */
export interface FeedDeps {
  readonly clock: Clock;
}

/**
 * A SCIM write's audit event and its feed event, in the caller's transaction: on PostgreSQL both
 * go with the write's other deferred writes in one statement (storage/pg-driver.ts), so
 * the feed adds no round trip to a write.
 * The event takes the team's next seq once committed (repos/events.ts).
 */
export async function recordAuditedChange(deps: FeedDeps, ex: Executor, audit: AuditEvent, change: Change): Promise<void> {
  await appendAuditedEvent(ex, auditRow(deps.clock, audit), eventRow(deps, change));
}

function eventRow(deps: FeedDeps, change: Change): Omit<EventsTable, 'seq'> {
  return { ...bumpedEventRow(deps, change), version: change.version, external_id: change.externalId, data: change.data ?? null };
}

/** An event but what the storage takes from the row it bumps: its version, externalId and document. */
function bumpedEventRow(deps: FeedDeps, change: BumpedChange): BumpedEvent {
  const members = change.members && (change.members.cleared || change.members.added?.length || change.members.removed?.length) ? change.members : undefined;
  return {
    team_id: change.teamId,
    at: iso(deps.clock),
    type: change.type,
    resource_type: change.resourceType,
    resource_id: change.resourceId,
    changed: JSON.stringify(change.changed),
    actor: JSON.stringify(change.actor),
    txn: change.txn,
    members: members ? JSON.stringify(members) : null,
  };
}

/** A change whose version, externalId and document the storage takes from the row as it bumps it. */
type BumpedChange = Omit<Change, 'version' | 'externalId' | 'data'>;

/** Who writes, as a SCIM request's context carries it. */
export interface WriteOrigin extends FeedDeps {
  readonly team: { readonly id: string };
  readonly actor: Actor;
  readonly requestId: string | null;
}

/** A stored resource row, as far as its feed event needs it. */
export interface ChangedRow {
  readonly id: string;
  readonly version: number;
  readonly external_id: string | null;
  readonly data: unknown;
}

/** What a write's audit event says beyond who wrote what: its action and detail. */
export interface AuditNote {
  readonly action: AuditEvent['action'];
  readonly detail: AuditEvent['detail'];
}

/**
 * Records a write to a stored user or group row (scim/users.ts and groups.ts): its audit event
 * and its feed event, together (recordAuditedChange).
 */
export const recordRowWrite = (
  origin: WriteOrigin,
  ex: Executor,
  note: AuditNote,
  type: ChangeType,
  resourceType: Change['resourceType'],
  row: ChangedRow,
  changed: readonly string[],
  members?: MembersDelta,
): Promise<void> =>
  recordAuditedChange(
    origin,
    ex,
    { teamId: origin.team.id, actor: origin.actor, requestId: origin.requestId, action: note.action, resourceType, resourceId: row.id, detail: note.detail },
    {
      teamId: origin.team.id,
      type,
      resourceType,
      resourceId: row.id,
      version: row.version,
      changed,
      actor: origin.actor,
      txn: origin.requestId,
      externalId: row.external_id,
      // The stored JSON as it is (text on SQLite): no parse and re-serialisation on the write path.
      data: typeof row.data === 'string' ? row.data : JSON.stringify(row.data),
      ...(members ? { members } : {}),
    },
  );

/**
 * What a write to a group records when the storage bumps the group's row in the write itself
 * (repos/groups.ts changeLoneMember): its audit event and its feed event, but for the version,
 * externalId and document, which the storage takes from the row it bumps.
 */
export function recordGroupBump(origin: WriteOrigin, note: AuditNote, type: ChangeType, groupId: string, changed: readonly string[], members: MembersDelta): BumpRecord {
  return {
    audit: auditRow(origin.clock, { teamId: origin.team.id, actor: origin.actor, requestId: origin.requestId, action: note.action, resourceType: 'Group', resourceId: groupId, detail: note.detail }),
    event: bumpedEventRow(origin, { teamId: origin.team.id, type, resourceType: 'Group', resourceId: groupId, changed, actor: origin.actor, txn: origin.requestId, members }),
  };
}

/**
 * The outcome of one asynchronous write (RFC 9967 section 2.5.1.3): the fields of one RFC 7644
 * section 3.7.3 BulkResponse operation. `status` is the HTTP status as a string; `response` is the
 * SCIM error body (RFC 7644 section 3.12) when the write failed.
 */
export interface AsyncOutcome {
  readonly method: string;
  readonly bulkId?: string;
  readonly version?: string;
  readonly location?: string;
  readonly status: string;
  readonly response?: unknown;
}

/** One asynchronous write's completion, as src/async records it. */
export interface AsyncResponseEvent {
  readonly teamId: string;
  /** The request's Set-Txn, or `<Set-Txn>:<i>` for operation i (its index in the request) of a Bulk. */
  readonly txn: string;
  readonly actor: Actor;
  readonly resourceType: 'User' | 'Group';
  /** null when the operation created nothing (a failed POST): the event then names the endpoint (/Users). */
  readonly resourceId: string | null;
  readonly outcome: AsyncOutcome;
}

/** The version number of a `W/"n"` ETag, or 0 when it is absent or not one. */
const versionNumber = (etag: string | undefined): number => {
  const m = etag === undefined ? null : /^W\/"(\d{1,15})"$/.exec(etag);
  return m ? Number(m[1]) : 0;
};

/**
 * Appends the asyncresp event of one asynchronous write to the team's feed, in the caller's
 * transaction (the write's own, or the one that records a failed write's step), so the event
 * commits exactly when the step does. No audit row: the write itself has its own.
 *
 * The row's columns: `type` 'asyncresp'; `resource_type` and `resource_id` the resource the write
 * touched ('' when it created nothing); `version` the outcome's version number when it has one
 * (else 0); `changed` '[]'; `external_id` and `members` null; `txn` the event's txn; `data` the
 * outcome as JSON (asyncOutcomeOf reads it back), which every rendering carries as it is.
 */
export async function recordAsyncResponse(deps: FeedDeps, ex: Executor, event: AsyncResponseEvent): Promise<void> {
  const o = event.outcome;
  const outcome: AsyncOutcome = {
    method: o.method,
    ...(o.bulkId !== undefined ? { bulkId: o.bulkId } : {}),
    ...(o.version !== undefined ? { version: o.version } : {}),
    ...(o.location !== undefined ? { location: o.location } : {}),
    status: o.status,
    ...(o.response !== undefined ? { response: o.response } : {}),
  };
  await appendEvent(ex, {
    team_id: event.teamId,
    at: iso(deps.clock),
    type: ASYNC_RESPONSE,
    resource_type: event.resourceType,
    resource_id: event.resourceId ?? '',
    version: versionNumber(o.version),
    changed: '[]',
    actor: JSON.stringify(event.actor),
    txn: event.txn,
    external_id: null,
    data: JSON.stringify(outcome),
    members: null,
  });
}

/** The outcome an asyncresp row carries (its `data`). */
export const asyncOutcomeOf = (row: Pick<EventRow, 'data'>): AsyncOutcome => (row.data === null ? { method: '', status: '' } : (JSON.parse(row.data) as AsyncOutcome));

/** What an asyncresp row's `sub_id.uri` names: the resource's path, or the endpoint (`/Users`) when the write created nothing. */
export const asyncSubjectPath = (row: Pick<EventRow, 'resource_type' | 'resource_id'>): string =>
  row.resource_id === '' ? `/${ENDPOINTS[row.resource_type as Change['resourceType']] ?? `${row.resource_type}s`}` : resourcePath(row.resource_type, row.resource_id);

/**
 * The feed row type of a Shared Signal (issue 33, DESIGN.md section 14): one OpenID SSF 1.0 SET
 * (a RISC or CAEP event about a user, or a stream's own verification or stream-updated event),
 * delivered only to SSF streams (subscriptions of format `ssf`, events/stream-config.ts). Every
 * other reader of the feed passes over these rows (`isScimEvent`): the SCIM listing, SET and
 * webhook subscriptions, poll, pending counts, delta query. So a team's SCIM events are strictly
 * increasing in seq, and gap-free unless the team has SSF streams.
 */
export const SIGNAL = 'ssf';

/** Whether a feed row is one of the SCIM events (a change or an asyncresp), not a Shared Signal. */
export const isScimEvent = (row: { readonly type: string }): boolean => row.type !== SIGNAL;

/**
 * One Shared Signal, as appendSignal stores it in the row's `data`: the event's URI, the SET's
 * `sub_id` (RFC 9493; SSF 1.0 puts it at the top level of the SET), the event's payload, and, for
 * a stream's own events (verification, stream-updated), the one stream it is for.
 */
export interface SignalData {
  readonly event: string;
  readonly subject: Readonly<Record<string, unknown>>;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly stream?: string;
}

export interface Signal extends SignalData {
  readonly teamId: string;
  /** `User` for a user's signals (`resourceId` its id), `Stream` for a stream's own events (its id). */
  readonly resourceType: 'User' | 'Stream';
  readonly resourceId: string;
  /** The user's version after the change (0 for a stream's events). */
  readonly version: number;
  readonly externalId: string | null;
  readonly actor: Actor;
  /** The request id of the change (the SET's `txn`). */
  readonly txn: string | null;
}

/**
 * Appends one Shared Signal to the team's feed in the caller's transaction (the SCIM write's own,
 * so the signal commits exactly when the change does). No audit row: the write has its own.
 */
export async function appendSignal(deps: FeedDeps, ex: Executor, signal: Signal): Promise<void> {
  const data: SignalData = { event: signal.event, subject: signal.subject, payload: signal.payload, ...(signal.stream !== undefined ? { stream: signal.stream } : {}) };
  await appendEvent(ex, {
    team_id: signal.teamId,
    at: iso(deps.clock),
    type: SIGNAL,
    resource_type: signal.resourceType,
    resource_id: signal.resourceId,
    version: signal.version,
    changed: '[]',
    actor: JSON.stringify(signal.actor),
    txn: signal.txn,
    external_id: signal.externalId,
    data: JSON.stringify(data),
    members: null,
  });
}

/** The signal a `ssf` row carries (its `data`). */
export const signalOf = (row: Pick<EventRow, 'data'>): SignalData => JSON.parse(row.data ?? '{}') as SignalData;
