/**
 * What a subscription wants from its team's feed, and an SSF stream's configuration (issue 33,
 * DESIGN.md section 14; migration 025).
 *
 * An SSF 1.0 stream is an event subscription of format `ssf` whose `ssf` column holds its
 * StreamConfig; it is delivered by the same push (delivery.ts) and poll (poll.ts) machinery as
 * every subscription, but it takes only the feed's Shared Signal rows (feed.ts `SIGNAL`): the
 * events it delivers, and its own verification and stream-updated events. Every other
 * subscription takes only SCIM events (its `events` filter, if any, over them). Which subjects a
 * stream carries (its receiver's added and removed subjects, `ssf_subjects`) is decided where the
 * subjects are known (events/ssf), not here.
 */
import type { SubscriptionRow } from '../storage/repos/subscriptions.ts';
import type { EventRow } from '../storage/repos/events.ts';
import type { SecretBox } from '../keys/sealed.ts';
import { isScimEvent, SIGNAL, signalOf } from './feed.ts';

/** An SSF stream's status (SSF 1.0 section 8.1.2): enabled, paused (events held), disabled (events dropped). */
export type StreamStatus = 'enabled' | 'paused' | 'disabled';

/** An SSF stream's configuration as the `ssf` column keeps it (JSON). */
export interface StreamConfig {
  /** The SETs' `aud`: one audience or several. */
  readonly aud: string | readonly string[];
  readonly description?: string;
  /** The event type URIs the receiver asked for. */
  readonly eventsRequested: readonly string[];
  /** Those of them the transmitter delivers (requested and supported). */
  readonly eventsDelivered: readonly string[];
  readonly status: StreamStatus;
  readonly reason?: string;
  /** The receiver's Authorization header for push (SSF 1.0 `authorization_header`), sealed (keys/sealed.ts). */
  readonly authorizationHeader?: string;
  /** Seconds a receiver must wait between verification requests. */
  readonly minVerificationInterval?: number;
  /** When the receiver last asked for a verification event. */
  readonly lastVerificationAt?: string;
}

/** The stream configuration of an `ssf` subscription (undefined for any other). */
export function streamConfigOf(sub: Pick<SubscriptionRow, 'format' | 'ssf'>): StreamConfig | undefined {
  return sub.format === 'ssf' && sub.ssf !== null ? (JSON.parse(sub.ssf) as StreamConfig) : undefined;
}

/**
 * Which of the team's feed rows a subscription delivers: an SSF stream the Shared Signals it
 * delivers and its own stream events; any other subscription the SCIM events its `events` filter
 * names (all when it names none), never a Shared Signal.
 */
export function wantedBy(sub: Pick<SubscriptionRow, 'id' | 'format' | 'ssf' | 'events'>): (row: EventRow) => boolean {
  const stream = streamConfigOf(sub);
  if (stream) {
    const delivered = new Set(stream.eventsDelivered);
    return (row) => {
      if (row.type !== SIGNAL) return false;
      const signal = signalOf(row);
      return signal.stream === undefined ? delivered.has(signal.event) : signal.stream === sub.id;
    };
  }
  const wanted = sub.events === null ? undefined : new Set(JSON.parse(sub.events) as string[]);
  return (row) => isScimEvent(row) && (wanted === undefined || wanted.has(row.type));
}

/** The `aud` of a subscription's SETs: an SSF stream's own, else `fallback` (the receiver URL, or the poll URL). */
export const audienceOf = (sub: Pick<SubscriptionRow, 'format' | 'ssf'>, fallback: string): string | readonly string[] => streamConfigOf(sub)?.aud ?? fallback;

/** The use the streams' push Authorization headers are sealed for (KeyStore.box). */
export const STREAM_SECRETS = 'ssf stream authorization';

/** What a sealed header is bound to: its stream, so a sealed value moved to another row does not open. */
const authorizationContext = (streamId: string): string => `event_subscriptions:${streamId}:ssf-authorization`;

/** The receiver's Authorization header sealed for the stream's configuration (`authorizationHeader`). */
export const sealAuthorization = (box: SecretBox, streamId: string, header: string): string => box.seal(authorizationContext(streamId), Buffer.from(header, 'utf8'));

/** The header `sealAuthorization` sealed; a SealError when it cannot be opened (another master key, another stream). */
export const openAuthorization = (box: SecretBox, streamId: string, sealed: string): string => box.open(authorizationContext(streamId), sealed).toString('utf8');
