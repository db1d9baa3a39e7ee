/**
 * How long a Shared Signal took from its commit to its acceptance by the receiver (issue 33's
 * deprovisioning promise): push observes it when the receiver answers 2xx, poll when the
 * receiver's acknowledgement moves the stream's cursor past it, each as `now - row.at` (the
 * row's time is taken in the write's transaction, just before its commit). The delivery code
 * reports to this interface; the HTTP layer exports it (http/metrics.ts
 * `rollcall_ssf_signal_delivery_seconds`). A replayed signal is observed again, with its age.
 */
import type { Clock } from '../../clock.ts';
import type { EventRow } from '../../storage/repos/events.ts';
import { SIGNAL } from '../feed.ts';

export type SignalDelivery = 'push' | 'poll';

export interface SignalLatency {
  /** One Shared Signal accepted `seconds` after its commit. */
  signalAccepted(method: SignalDelivery, seconds: number): void;
}

/** Reports `row`'s commit-to-acceptance time when it is a Shared Signal (other rows are not). */
export function observeAccepted(latency: SignalLatency | undefined, clock: Clock, method: SignalDelivery, row: Pick<EventRow, 'type' | 'at'>): void {
  if (latency === undefined || row.type !== SIGNAL) return;
  latency.signalAccepted(method, Math.max(0, clock.now().getTime() - Date.parse(row.at)) / 1000);
}
