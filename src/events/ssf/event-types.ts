/**
 * The event type URIs of the SSF transmitter (issue 33, DESIGN.md section 14): the user events
 * Rollcall derives from SCIM changes (RISC and CAEP), offered to every stream as its
 * `events_supported`, and SSF 1.0's own stream events (verification, stream-updated), which a
 * stream receives whatever it asked for (SSF 1.0 sections 8.1.4 and 8.1.5).
 *
 * USER_EVENT_URIS is the list the signals module derives (events/signals.ts SIGNAL_EVENT_URIS).
 */
import { SIGNAL_EVENT_URIS } from '../signals.ts';

const SSF = 'https://schemas.openid.net/secevent/ssf/event-type';

export const USER_EVENT_URIS: readonly string[] = SIGNAL_EVENT_URIS;

export const VERIFICATION_EVENT = `${SSF}/verification`;
export const STREAM_UPDATED_EVENT = `${SSF}/stream-updated`;

/** SSF 1.0 section 6's delivery method URIs. */
export const PUSH_METHOD = 'urn:ietf:rfc:8935';
export const POLL_METHOD = 'urn:ietf:rfc:8936';
