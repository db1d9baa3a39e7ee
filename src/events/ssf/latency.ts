/**
 * How long a Shared Signal took from its commit to its acceptance by the receiver (issue 33's
 * deprovisioning promise): push observes it when the receiver answers 2xx, poll when the
 * receiver's acknowledgement moves the stream's cursor past it, each as `now - row.at` (the
 * row's time is taken in the write's transaction, just before its commit). The delivery code
 * reports to this interface; the HTTP layer exports it (http/metrics.ts
 * `rollcall_ssf_signal_delivery_seconds`). A replayed signal is observed again, with its age.
 * The console's overview shows the same measure per team from the delivery log (latencyFigures).
 */
import type { Clock } from '../../clock.ts';
import type { EventRow } from '../../storage/repos/events.ts';
import { acceptedSignalsSince } from '../../storage/repos/ssf-latency.ts';
import type { Executor } from '../../storage/types.ts';
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

/** The window and the rows the console's figure is computed over. */
export const FIGURE_WINDOW_MS = 60 * 60_000;
const FIGURE_ROWS = 10_000;

export interface LatencyFigures {
  /** Signals committed and accepted by push within the window (each once). */
  readonly count: number;
  /** Commit to acceptance, in milliseconds (nearest rank); undefined when count is 0. */
  readonly p50Ms: number | undefined;
  readonly p99Ms: number | undefined;
}

/** The nearest-rank percentile `p` (0-100) of ascending `sorted`. */
export const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/**
 * The team's deprovisioning figure for the console: of the Shared Signals committed in the last
 * hour and accepted by a push stream's receiver, the p50 and p99 from the commit (the row's
 * time) to the acceptance (the accepted attempt's start plus its request's latency), each
 * signal's first acceptance only. Read from the delivery log, so it covers every instance (the
 * Prometheus histogram is per process) but not poll streams, whose acknowledgements are not
 * logged. At most the newest FIGURE_ROWS acceptances are read.
 */
export async function latencyFigures(ex: Executor, clock: Clock, teamId: string): Promise<LatencyFigures> {
  const since = new Date(clock.now().getTime() - FIGURE_WINDOW_MS).toISOString();
  const first = new Map<string, number>();
  for (const row of await acceptedSignalsSince(ex, teamId, since, FIGURE_ROWS)) {
    const key = `${row.subscription_id} ${row.seq}`;
    const ms = Math.max(0, Date.parse(row.at) + row.latency_ms - Date.parse(row.event_at));
    // Newest first: a later row for the same signal is an earlier acceptance.
    first.set(key, ms);
  }
  const sorted = [...first.values()].sort((x, y) => x - y);
  return { count: sorted.length, p50Ms: sorted.length ? percentile(sorted, 50) : undefined, p99Ms: sorted.length ? percentile(sorted, 99) : undefined };
}
