/**
 * A stream's own events (SSF 1.0 sections 8.1.4.1 and 8.1.5): the verification event a receiver
 * asks for, and the stream-updated event the transmitter sends when it changes a stream's status
 * on its own. Each is one Shared Signal feed row (feed.ts appendSignal) naming the stream, so
 * that stream alone delivers it (stream-config.ts wantedBy), in order with its other events,
 * through the same push or poll; its subject is the stream itself (`opaque`, the stream id).
 * Also the transmitter's re-enabling of a stream (an administrator resuming it through the
 * subscription API, the console or the CLI), which must send stream-updated. No SQL, no HTTP.
 */
import type { Actor } from '../../audit/events.ts';
import { iso } from '../../clock.ts';
import type { Clock } from '../../clock.ts';
import { lastSeq } from '../../storage/repos/events.ts';
import { streamForUpdate, updateStream } from '../../storage/repos/ssf-streams.ts';
import type { SubscriptionRow } from '../../storage/repos/subscriptions.ts';
import type { Executor } from '../../storage/types.ts';
import { appendSignal } from '../feed.ts';
import { streamConfigOf } from '../stream-config.ts';
import type { StreamConfig } from '../stream-config.ts';
import { STREAM_UPDATED_EVENT } from './event-types.ts';

/** Appends a stream's own event (`event` with `payload`) for that stream only, in the caller's transaction. */
export async function appendStreamEvent(deps: { readonly clock: Clock }, ex: Executor, stream: { readonly id: string; readonly teamId: string }, event: string, payload: Record<string, unknown>, by: { readonly actor: Actor; readonly requestId: string | null }): Promise<void> {
  await appendSignal(deps, ex, {
    teamId: stream.teamId,
    resourceType: 'Stream',
    resourceId: stream.id,
    version: 0,
    externalId: null,
    actor: by.actor,
    txn: by.requestId,
    event,
    subject: { format: 'opaque', id: stream.id },
    payload,
    stream: stream.id,
  });
}

/**
 * The transmitter enables a stream (an administrator resumed it): its status becomes enabled,
 * delivery starts now with a fresh retry budget, a disabled stream's cursor jumps to the feed's
 * end (a disabled stream holds nothing), and a stream-updated event tells the receiver (SSF 1.0
 * section 8.1.5: sent upon re-enabling). Answers the change's audit detail.
 */
export async function enableByTransmitter(deps: { readonly clock: Clock }, ex: Executor, read: SubscriptionRow, by: { readonly actor: Actor; readonly requestId: string | null; readonly credential?: { readonly tokenHash: string | null; readonly userId: string | null } }): Promise<Record<string, unknown>> {
  // Read again with the row locked, so a receiver's change at the same moment is not written over.
  const row = (await streamForUpdate(ex, read.team_id, read.id)) ?? read;
  const config = streamConfigOf(row)!;
  const was = config.status === 'enabled' && row.state === 'paused' ? 'paused' : config.status;
  const now = iso(deps.clock);
  const next: StreamConfig = { ...config, status: 'enabled', reason: 'enabled by an administrator of the transmitter' };
  await updateStream(ex, row.team_id, row.id, {
    ssf: JSON.stringify(next),
    state: 'active',
    paused_reason: null,
    failures: 0,
    failing_since: null,
    next_attempt_at: now,
    updated_at: now,
    ...(config.status === 'disabled' ? { cursor: await lastSeq(ex, row.team_id) } : {}),
  });
  if (was !== 'enabled') await appendStreamEvent(deps, ex, { id: row.id, teamId: row.team_id }, STREAM_UPDATED_EVENT, { status: 'enabled', reason: next.reason }, by);
  return { was, status: 'enabled' };
}
