/**
 * Background WAL checkpoints for an SQLite file. SQLite's automatic checkpoint runs inside the
 * commit that crosses its threshold, fsyncs included, on the thread that answers requests: a
 * write request now and then pays for copying the WAL into the database. The serving connection
 * turns that off (`wal_autocheckpoint = 0`, sqlite-adapter.ts) and this module runs PASSIVE
 * checkpoints in a worker thread with its own connection (checkpointer-worker.ts), started by
 * connect() and stopped by the storage's close(). Durability is unchanged: a commit is in the
 * WAL before it is acknowledged, and the WAL is what recovery replays after a crash.
 *
 * The WAL starts over from its beginning only when a write transaction begins while every frame
 * has been copied and no checkpoint is running; under a steady stream of writes the worker's
 * checkpoints always trail the newest commit, so the WAL would grow without bound. So after each
 * of the worker's checkpoints (it reports, then sleeps until the next interval), once the WAL
 * holds more than `largeWalBytes` the serving connection runs a RESTART checkpoint between two
 * requests (`onLargeWal`; it gives up rather than wait, and the worker has just copied nearly
 * everything, so it costs little), after which its next write starts the WAL over, reusing the
 * file. The worker never runs RESTART or TRUNCATE itself: they take the write lock, and a serving
 * transaction that has read and then wants to write fails at once with SQLITE_BUSY instead of
 * waiting. Should the worker fail, the serving connection checkpoints on commit again
 * (`onFailure`).
 */
import { Worker } from 'node:worker_threads';

/** What the worker is told (workerData). */
export interface CheckpointerSettings {
  readonly path: string;
  /** Time between PASSIVE checkpoints. */
  readonly intervalMs: number;
}

/** One checkpoint's outcome: SQLite's wal_checkpoint row. */
export interface CheckpointReport {
  readonly busy: number;
  /** Frames in the WAL. */
  readonly log: number;
  /** Frames of the WAL now copied into the database. */
  readonly checkpointed: number;
  /** What the frames in the WAL take up. */
  readonly walBytes: number;
}

export const DEFAULT_CHECKPOINTS = {
  intervalMs: 250,
  // The journal_size_limit of sqlite-adapter.ts.
  largeWalBytes: 64 * 1024 * 1024,
} as const;

export interface Checkpointer {
  /** Stops the worker and closes its connection. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  readonly path: string;
  readonly intervalMs?: number;
  readonly largeWalBytes?: number;
  /** Called with every checkpoint's outcome (tests). */
  readonly onReport?: (report: CheckpointReport) => void;
  /**
   * The WAL passed `largeWalBytes`: the serving connection should let it start over. Answers
   * whether its RESTART checkpoint ran to its end.
   */
  readonly onLargeWal: () => boolean;
  /** The worker failed or ended unasked: the caller checkpoints by itself again. */
  readonly onFailure: (error: unknown) => void;
}

export function startCheckpointer(options: CheckpointerOptions): Checkpointer {
  const settings: CheckpointerSettings = {
    path: options.path,
    intervalMs: options.intervalMs ?? DEFAULT_CHECKPOINTS.intervalMs,
  };
  const largeWalBytes = options.largeWalBytes ?? DEFAULT_CHECKPOINTS.largeWalBytes;
  const worker = new Worker(new URL('./checkpointer-worker.ts', import.meta.url), { workerData: settings });
  // Never what keeps a process alive; close() stops it.
  worker.unref();
  let stopping = false;
  let failed = false;
  const fail = (error: unknown) => {
    if (failed || stopping) return;
    failed = true;
    options.onFailure(error);
  };
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', fail);
  worker.once('exit', (code) => fail(new Error(`the WAL checkpointer stopped (exit code ${code})`)));
  // After a RESTART checkpoint that ran to its end, the next write starts the WAL over; until
  // then the reports show it as it was, large (and reports queue while the serving thread is
  // busy): none of those asks for another RESTART, which would only repeat the finished one on
  // the serving thread. A report with another frame count comes after a write, so after the
  // start-over (the WAL may have grown since, even past its old size).
  let restartedAt: number | undefined;
  worker.on('message', (report: CheckpointReport) => {
    options.onReport?.(report);
    if (restartedAt !== undefined && report.log !== restartedAt) restartedAt = undefined;
    if (!stopping && restartedAt === undefined && report.walBytes > largeWalBytes && options.onLargeWal()) restartedAt = report.log;
  });
  return {
    async stop() {
      if (stopping) return exited;
      stopping = true;
      worker.postMessage('stop');
      const timeout = setTimeout(() => void worker.terminate(), 5000);
      try {
        await exited;
      } finally {
        clearTimeout(timeout);
      }
    },
  };
}
