/**
 * The events' background work, owned by one app (never module state) and stopped when it closes:
 * the retention pruner (retention.ts) on a timer, and the push delivery worker (delivery.ts).
 * Timers are unref'd so they never keep a process alive on their own.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Storage } from '../storage/connect.ts';
import { pruneOnce } from './retention.ts';

export const PRUNE_INTERVAL_MS = 60_000;

export interface RuntimeOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly retentionDays: number;
  readonly pruneIntervalMs?: number;
}

/** Starts the pruner; it stops on the app's close, after a run in progress ends. */
export function startPruner(app: FastifyInstance, options: RuntimeOptions): void {
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    running = pruneOnce(options.storage.db, options.clock, options.retentionDays)
      .catch((error: unknown) => app.log.warn({ err: error }, 'event pruning failed; will try again'))
      .finally(() => {
        running = undefined;
      });
  }, options.pruneIntervalMs ?? PRUNE_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
