/**
 * What an SSF stream's delivery (push, delivery.ts; poll, poll.ts) sends of its team's feed
 * (issue 33, DESIGN.md section 14): the Shared Signals it wants (stream-config.ts `wantedBy`)
 * whose subject its receiver did not remove, and, for push, the receiver's Authorization header.
 *
 * Subjects (SSF 1.0 section 8.1.3): a stream carries every user of its team except those its
 * receiver removed (`ssf_subjects` included 0; included 1 adds one back). The removals are read
 * once per batch of feed rows, for the users of that batch only (repos/ssf-streams.ts removedAmong), never
 * per event: a removal committed while a batch is in hand applies from the next batch, so a push
 * may still send the SETs of at most one batch about a subject just removed, which SSF 1.0
 * section 9.3 allows (receivers must tolerate them). A stream's own events (verification,
 * stream-updated: resource type `Stream`) always go.
 *
 * The Authorization header (SSF 1.0 section 6.1.1 `authorization_header`) is stored sealed
 * (stream-config.ts `sealAuthorization`) and opened for each push; it is never logged, and the
 * delivery log keeps only the category `secret` when it cannot be opened.
 * It owns no SQL and no HTTP.
 */
import { SealError } from '../../keys/sealed.ts';
import type { SecretBox } from '../../keys/sealed.ts';
import type { EventRow } from '../../storage/repos/events.ts';
import { removedAmong } from '../../storage/repos/ssf-streams.ts';
import type { SubscriptionRow } from '../../storage/repos/subscriptions.ts';
import type { Executor } from '../../storage/types.ts';
import { SIGNAL } from '../feed.ts';
import { openAuthorization, streamConfigOf } from '../stream-config.ts';
import { isHeaderValue } from './stream-input.ts';

/** Whether a subscription delivers a feed row. */
export type Carries = (row: EventRow) => boolean;

/**
 * Which of `rows` the subscription delivers: the `wanted` ones, less, for an SSF stream, those
 * about a user its receiver removed. One read for a stream whose wanted rows name users; none for
 * any other subscription, whose answer is `wanted` itself.
 */
export async function carriedOf(ex: Executor, sub: Pick<SubscriptionRow, 'id' | 'format'>, wanted: Carries, rows: readonly EventRow[]): Promise<Carries> {
  if (sub.format !== 'ssf') return wanted;
  const users = new Set<string>();
  for (const row of rows) if (row.type === SIGNAL && row.resource_type === 'User' && wanted(row)) users.add(row.resource_id);
  if (users.size === 0) return wanted;
  const removed = new Set(await removedAmong(ex, sub.id, [...users]));
  if (removed.size === 0) return wanted;
  return (row) => wanted(row) && !(row.resource_type === 'User' && removed.has(row.resource_id));
}

/** A stream's sealed Authorization header cannot be used (another master key, or not a header value): the attempt fails as `secret`. */
export class StreamAuthorizationUnreadable extends Error {}

/**
 * The Authorization header a stream's pushes carry (opened with `box`, keys.box(STREAM_SECRETS)),
 * or undefined when its receiver gave none (and for every other subscription).
 */
export function pushAuthorization(box: SecretBox | undefined, sub: Pick<SubscriptionRow, 'id' | 'format' | 'ssf'>): string | undefined {
  const sealed = streamConfigOf(sub)?.authorizationHeader;
  if (sealed === undefined) return undefined;
  if (box === undefined) throw new StreamAuthorizationUnreadable(`stream ${sub.id}: no key to open its Authorization header`);
  let header: string;
  try {
    header = openAuthorization(box, sub.id, sealed);
  } catch (error) {
    if (error instanceof SealError) throw new StreamAuthorizationUnreadable(`stream ${sub.id}: its Authorization header cannot be opened with this master key`);
    throw error;
  }
  if (!isHeaderValue(header)) throw new StreamAuthorizationUnreadable(`stream ${sub.id}: its Authorization header is not a valid header value`);
  return header;
}
