/**
 * How the SSF 1.0 transmitter shows itself and its streams (sections 7.1, 8.1.1 and 8.1.2.1): the
 * Transmitter Configuration Metadata, a stream's configuration (never its sealed authorization
 * header) and its status. Pure functions of a stream's row; no SQL, no HTTP.
 */
import type { SubscriptionRow } from '../../storage/repos/subscriptions.ts';
import { streamConfigOf } from '../stream-config.ts';
import type { StreamStatus } from '../stream-config.ts';
import { POLL_METHOD, PUSH_METHOD, USER_EVENT_URIS } from './event-types.ts';

/** Seconds a receiver waits between two verification requests of one stream. */
export const MIN_VERIFICATION_INTERVAL = 30;

/** A stream's configuration as SSF 1.0 section 8.1.1 shows it (never the authorization header). */
export interface StreamView {
  readonly stream_id: string;
  readonly iss: string;
  readonly aud: string | readonly string[];
  readonly delivery: { readonly method: string; readonly endpoint_url: string };
  readonly events_supported: readonly string[];
  readonly events_requested?: readonly string[];
  readonly events_delivered: readonly string[];
  readonly description?: string;
  readonly min_verification_interval: number;
}

export interface StatusView {
  readonly stream_id: string;
  readonly status: StreamStatus;
  readonly reason?: string;
}

/** Where a poll stream's receiver fetches its SETs (RFC 8936; the SSF poll endpoint). */
export const pollUrl = (issuer: string, streamId: string): string => `${issuer}/v2/ssf/poll/${encodeURIComponent(streamId)}`;

/** The Transmitter Configuration Metadata (SSF 1.0 section 7.1), the same for every team. */
export function transmitterConfiguration(issuer: string): Record<string, unknown> {
  return {
    spec_version: '1_0',
    issuer,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    delivery_methods_supported: [PUSH_METHOD, POLL_METHOD],
    configuration_endpoint: `${issuer}/v2/ssf/stream`,
    status_endpoint: `${issuer}/v2/ssf/status`,
    add_subject_endpoint: `${issuer}/v2/ssf/subjects/add`,
    remove_subject_endpoint: `${issuer}/v2/ssf/subjects/remove`,
    verification_endpoint: `${issuer}/v2/ssf/verify`,
    authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
    default_subjects: 'ALL',
  };
}

export function streamView(row: SubscriptionRow, issuer: string): StreamView {
  const c = streamConfigOf(row)!;
  return {
    stream_id: row.id,
    iss: issuer,
    aud: c.aud,
    delivery: row.method === 'push' ? { method: PUSH_METHOD, endpoint_url: row.url! } : { method: POLL_METHOD, endpoint_url: pollUrl(issuer, row.id) },
    events_supported: USER_EVENT_URIS,
    ...(c.eventsRequested.length > 0 ? { events_requested: c.eventsRequested } : {}),
    events_delivered: c.eventsDelivered,
    ...(c.description !== undefined ? { description: c.description } : {}),
    min_verification_interval: c.minVerificationInterval ?? MIN_VERIFICATION_INTERVAL,
  };
}

/**
 * A stream's status as its receiver sees it: the status it set, except that an enabled stream
 * the transmitter's delivery paused (a receiver failing too long, its creator's token revoked)
 * reads paused, with the reason.
 */
export function statusView(row: SubscriptionRow): StatusView {
  const c = streamConfigOf(row)!;
  if (c.status === 'enabled' && row.state === 'paused') return { stream_id: row.id, status: 'paused', ...(row.paused_reason ? { reason: row.paused_reason } : {}) };
  return { stream_id: row.id, status: c.status, ...(c.reason !== undefined ? { reason: c.reason } : {}) };
}
