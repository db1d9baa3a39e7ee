/**
 * The receiver's JSON as the SSF 1.0 stream management API reads it (section 8.1.1): the
 * receiver-supplied properties (delivery, events_requested, description) checked, the
 * transmitter-supplied ones compared when sent back. Unknown properties are ignored, as SSF asks.
 * A push endpoint is judged by the egress policy of push subscriptions (receivers.ts). No SQL,
 * no HTTP.
 */
import { invalidValue } from '../errors.ts';
import type { ReceiverPolicy } from '../receivers.ts';
import { POLL_METHOD, PUSH_METHOD, USER_EVENT_URIS } from './event-types.ts';
import { pollUrl } from './stream-views.ts';
import type { StreamView } from './stream-views.ts';

/** The longest `description` kept (SSF 7.1.1 lets the transmitter truncate it). */
export const MAX_DESCRIPTION = 1_000;
const MAX_EVENTS_REQUESTED = 100;
const MAX_URI = 2_048;
const MAX_AUTHORIZATION = 4_096;

export type Body = Readonly<Record<string, unknown>>;

/**
 * A header value node:http sends as given (RFC 9110 field-value, without obs-text): visible
 * ASCII, spaces and tabs, no line breaks, not empty. A stream's Authorization header is checked
 * with it when the receiver gives it, and again when a push sends it (carriage.ts).
 */
export const isHeaderValue = (value: string): boolean => /^[\t\x20-\x7e]+$/.test(value);

/** A delivery as asked for, checked: push with its endpoint (and sealed-to-be header), or poll. */
export type Delivery = { readonly method: 'push'; readonly url: string; readonly authorization?: string } | { readonly method: 'poll' };

const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `stream_id` of a body or query: required, a string. */
export function streamIdOf(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalidValue('stream_id is required: the id of one of your streams');
  return value;
}

export function eventsRequestedOf(value: unknown): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw invalidValue('events_requested must be an array of event type URIs');
  if (value.length > MAX_EVENTS_REQUESTED) throw invalidValue(`events_requested names at most ${MAX_EVENTS_REQUESTED} event types`);
  if (value.some((v) => v.length > MAX_URI)) throw invalidValue(`an event type URI is at most ${MAX_URI} characters`);
  return [...new Set(value as string[])];
}

export const deliveredOf = (requested: readonly string[]): string[] => requested.filter((uri) => USER_EVENT_URIS.includes(uri));

export function descriptionOf(value: unknown): string {
  if (typeof value !== 'string') throw invalidValue('description must be a string');
  return value.slice(0, MAX_DESCRIPTION);
}

/**
 * The delivery of a request (SSF 1.0 section 6): push names the receiver's endpoint (judged by
 * the egress policy) and may carry the Authorization header the transmitter sends with each
 * push; poll's endpoint is the transmitter's (given back, it must be this stream's).
 */
export async function deliveryOf(deps: { readonly receivers: ReceiverPolicy; readonly issuer: string }, value: unknown, streamId: string | undefined): Promise<Delivery> {
  if (!isObject(value)) throw invalidValue('delivery must be an object with its method');
  const { method, endpoint_url: url, authorization_header: authorization } = value;
  if (method === PUSH_METHOD) {
    if (typeof url !== 'string') throw invalidValue('a push delivery (urn:ietf:rfc:8935) needs the endpoint_url SETs are pushed to');
    const problem = await deps.receivers.problem(url);
    if (problem) throw invalidValue(`endpoint_url: ${problem}`);
    if (authorization === undefined) return { method: 'push', url };
    if (typeof authorization !== 'string' || authorization.length > MAX_AUTHORIZATION || !isHeaderValue(authorization)) {
      throw invalidValue(`authorization_header must be a header value: one line of visible ASCII characters, spaces and tabs, at most ${MAX_AUTHORIZATION} of them`);
    }
    return { method: 'push', url, authorization };
  }
  if (method === POLL_METHOD) {
    if (authorization !== undefined) throw invalidValue('authorization_header is for push delivery: a poll receiver authenticates with its own bearer token');
    if (url !== undefined && (streamId === undefined || url !== pollUrl(deps.issuer, streamId))) throw invalidValue("a poll delivery's endpoint_url is supplied by the transmitter: leave it out");
    return { method: 'poll' };
  }
  throw invalidValue(`delivery method must be "${PUSH_METHOD}" (push) or "${POLL_METHOD}" (poll)`);
}

const sameSet = (a: unknown, b: readonly string[]): boolean =>
  Array.isArray(a) && a.length === b.length && a.every((v) => typeof v === 'string' && b.includes(v)) && new Set(a).size === a.length;

/**
 * SSF 1.0 sections 8.1.1.3 and 8.1.1.4: transmitter-supplied properties in an update or a
 * replacement may be present but must match (events_delivered before the change).
 */
export function checkTransmitterSupplied(body: Body, view: StreamView): void {
  const mismatch = (name: string) => invalidValue(`${name} is supplied by the transmitter and does not match this stream's`);
  if (body.iss !== undefined && body.iss !== view.iss) throw mismatch('iss');
  if (body.aud !== undefined && !(typeof view.aud === 'string' ? body.aud === view.aud || sameSet(body.aud, [view.aud]) : sameSet(body.aud, view.aud as string[]))) throw mismatch('aud');
  if (body.events_supported !== undefined && !sameSet(body.events_supported, view.events_supported)) throw mismatch('events_supported');
  if (body.events_delivered !== undefined && !sameSet(body.events_delivered, view.events_delivered)) throw mismatch('events_delivered');
  if (body.min_verification_interval !== undefined && body.min_verification_interval !== view.min_verification_interval) throw mismatch('min_verification_interval');
  if (body.inactivity_timeout !== undefined) throw mismatch('inactivity_timeout');
}
