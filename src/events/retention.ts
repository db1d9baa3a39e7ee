/**
 * Retention of the change feed and of the delivery log: events older
 * than the retention (EVENT_RETENTION_DAYS, default 30) and delivery attempts older than
 * ATTEMPT_RETENTION_DAYS are deleted in small batches, each its own short statement, with the
 * event loop turning between batches, so pruning never holds a long lock or blocks requests.
 * The app runs it on a timer (events/runtime.ts); it owns no SQL.
 */
import { inBatches } from '../batches.ts';
import type { Clock } from '../clock.ts';
import { pruneAttempts, pruneEvents } from '../storage/repos/events.ts';
import type { Db } from '../storage/types.ts';

export const PRUNE_BATCH = 500;
/** Delivery attempts are kept a week: enough to see why a subscription paused. */
export const ATTEMPT_RETENTION_DAYS = 7;
/** At most this many batches per run, so one run stays short; the next run continues. */
const MAX_BATCHES = 100;

export interface PruneResult {
  readonly events: number;
  readonly attempts: number;
}

const daysAgo = (clock: Clock, days: number): string => new Date(clock.now().getTime() - days * 86_400_000).toISOString();

export async function pruneOnce(db: Db, clock: Clock, retentionDays: number, batch = PRUNE_BATCH): Promise<PruneResult> {
  const eventsBefore = daysAgo(clock, retentionDays);
  const events = await inBatches(() => pruneEvents(db, eventsBefore, batch), batch, MAX_BATCHES);
  const attemptsBefore = daysAgo(clock, ATTEMPT_RETENTION_DAYS);
  const attempts = await inBatches(() => pruneAttempts(db, attemptsBefore, batch), batch, MAX_BATCHES);
  return { events, attempts };
}
