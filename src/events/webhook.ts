/**
 * Plain signed webhooks (docs/events.md, "Plain signed webhooks"): what a `webhook`
 * subscription's push sends instead of a SET, per the Standard Webhooks specification 1.0. One
 * feed row renders as a JSON body `{type, timestamp, data}` (`user.created`, ...; the time of the
 * change; the event's seq, its RFC 9967 `:notice` URI, the request id, the resource, the
 * attributes changed and a group's membership delta `members: {cleared?, added?, removed?}`, or a
 * role's or entitlement's mapped groups `groups: {added?, removed?}` (`role.updated`; the catalog's
 * resources are `role.*`, `entitlement.*` and `resourcetype.*` for an entitlement type)), byte for
 * byte the same on every retry, with the headers `webhook-id`
 * (`evt_<team>_<seq>`, stable across retries and replays, the receiver's idempotency key),
 * `webhook-timestamp` (this attempt, unix seconds) and `webhook-signature`: `v1,<base64
 * HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` for every live secret, newest first (a rotated
 * secret signs beside the new one until its overlap ends).
 * An asyncresp row (an asynchronous request's completion) is `request.completed`, its outcome
 * in `data.outcome` (asyncWebhookBody).
 *
 * delivery.ts calls `WebhookSigner.render` for each attempt of a webhook subscription; the
 * ordering, retries, leases, fair share, egress checks and the attempt log are delivery.ts's, the
 * same as for SETs. The secrets are read (sealed) from the subscription's row at each attempt, so
 * a rotation made while this instance holds the subscription's lease signs the next attempt.
 * It owns no SQL and no HTTP.
 */
import { createHmac } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { EventRow } from '../storage/repos/events.ts';
import type { Db } from '../storage/types.ts';
import { ASYNC_RESPONSE, asyncOutcomeOf, asyncSubjectPath, deltaAttribute, resourcePath } from './feed.ts';
import type { ChangeType, MembersDelta } from './feed.ts';
import { ASYNC_RESPONSE_URI, eventUri } from './set.ts';
import { liveWebhookKeys } from './webhook-secrets.ts';
import type { SecretBox } from '../keys/sealed.ts';

/** The change type's past participle in a webhook's `type` (`user.created`, `group.updated`). */
const VERBS: Record<ChangeType, string> = { create: 'created', put: 'replaced', patch: 'updated', delete: 'deleted', activate: 'activated', deactivate: 'deactivated' };

const parse = <T>(text: string | null): T | undefined => (text === null ? undefined : (JSON.parse(text) as T));

/** The `webhook-id` of a feed row: the same on every retry and replay (no `.`, which the signed content delimits with). */
export const webhookId = (row: Pick<EventRow, 'team_id' | 'seq'>): string => `evt_${row.team_id}_${row.seq}`;

/** The webhook `type` of an asyncresp row: an asynchronous request (or one Bulk operation of it) completed. */
export const ASYNC_WEBHOOK_TYPE = 'request.completed';

/**
 * The body of an asyncresp row: `request.completed`, its seq, the RFC 9967 URI, the txn (the
 * request's Set-Txn, `:<i>` for Bulk operation i), the resource (`id` '' and `location` the
 * endpoint's URL when the write created nothing; `version` the outcome's, when it has one),
 * `changed` empty (as in the JSON feed, so a receiver reading it for every type still can), and
 * the outcome as the SET carries it.
 */
function asyncWebhookBody(row: EventRow, issuer: string): string {
  const outcome = asyncOutcomeOf(row);
  return JSON.stringify({
    type: ASYNC_WEBHOOK_TYPE,
    timestamp: new Date(row.at).toISOString(),
    data: {
      sequence: row.seq,
      event: ASYNC_RESPONSE_URI,
      ...(row.txn ? { transaction: row.txn } : {}),
      resource: {
        type: row.resource_type,
        id: row.resource_id,
        location: `${issuer}/v2/scim${asyncSubjectPath(row)}`,
        ...(outcome.version !== undefined ? { version: outcome.version } : {}),
      },
      changed: [],
      outcome,
    },
  });
}

/** The body (as sent and signed: compact JSON) of one feed row. */
export function webhookBody(row: EventRow, issuer: string): string {
  if (row.type === ASYNC_RESPONSE) return asyncWebhookBody(row, issuer);
  const type = row.type as ChangeType;
  // A group's membership delta (`members`), or the groups mapped to a role or an entitlement (`groups`).
  const members = row.resource_type === 'User' ? undefined : parse<MembersDelta>(row.members);
  // `cleared`: every earlier member left first (a PUT, or a PATCH removing path "members"), so a
  // receiver applying deltas must drop what it holds before adding `added`.
  const delta = {
    ...(members?.cleared ? { cleared: true } : {}),
    ...(members?.added?.length ? { added: members.added } : {}),
    ...(members?.removed?.length ? { removed: members.removed } : {}),
  };
  return JSON.stringify({
    type: `${row.resource_type.toLowerCase()}.${VERBS[type]}`,
    timestamp: new Date(row.at).toISOString(),
    data: {
      sequence: row.seq,
      event: eventUri(type, false),
      ...(row.txn ? { transaction: row.txn } : {}),
      resource: {
        type: row.resource_type,
        id: row.resource_id,
        ...(row.external_id ? { externalId: row.external_id } : {}),
        location: `${issuer}/v2/scim${resourcePath(row.resource_type, row.resource_id)}`,
        version: `W/"${row.version}"`,
      },
      changed: parse<string[]>(row.changed) ?? [],
      ...(Object.keys(delta).length > 0 ? { [deltaAttribute(row.resource_type)]: delta } : {}),
    },
  });
}

/** The `webhook-signature` value: one `v1,` signature per key, in the order given (newest first). */
export function webhookSignature(id: string, timestamp: number, body: string, keys: readonly Buffer[]): string {
  return keys.map((key) => `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`).join(' ');
}

/** What one attempt sends: the body and its headers. */
export interface Rendered {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface WebhookDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** Opens the sealed secrets (KeyStore.box(WEBHOOK_SECRETS)). */
  readonly box: SecretBox;
  readonly issuer: string;
}

/** Renders and signs the webhook attempts of a delivery worker. */
export class WebhookSigner {
  readonly #deps: WebhookDeps;

  constructor(deps: WebhookDeps) {
    this.#deps = deps;
  }

  /** One attempt of `row` for the subscription `subscriptionId`: signed with its live secrets now. */
  async render(subscriptionId: string, row: EventRow): Promise<Rendered> {
    const { db, clock, box, issuer } = this.#deps;
    const now = clock.now();
    const keys = await liveWebhookKeys(db, box, subscriptionId, now);
    const id = webhookId(row);
    const timestamp = Math.floor(now.getTime() / 1000);
    const body = webhookBody(row, issuer);
    return {
      body,
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': webhookSignature(id, timestamp, body, keys) },
    };
  }
}
